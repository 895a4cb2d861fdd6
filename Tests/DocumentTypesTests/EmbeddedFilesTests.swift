import CEmbeddedFiles
import Foundation
import Testing

/// What the binaries carry is the repository's files byte for byte: each
/// file is found at its index, whole (none holds the NUL byte that ends it).
@Suite struct EmbeddedFilesTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func embedded(_ index: Int) -> [UInt8] {
        var count = 0
        let start = veridoc_embedded_file(index, &count)
        return Array(UnsafeBufferPointer(start: start, count: count))
    }

    static func file(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: repository.appendingPathComponent(path)))
    }

    @Test func eachFileIsTheRepositorysFile() throws {
        let named = [(VERIDOC_EMBEDDED_SESSION_API_OPENAPI, "Schemas/session-api.openapi.json"),
                     (VERIDOC_EMBEDDED_CLIENT_JS, "Sources/SessionAPI/veridoc-client.v1.js"),
                     (VERIDOC_EMBEDDED_REASON_CODES, "Schemas/reason-codes.md")]
        for (index, path) in named {
            let expected = try Self.file(path)
            #expect(!expected.contains(0), "\(path) holds a NUL byte")
            #expect(Self.embedded(Int(index)) == expected, "\(path)")
        }
    }

    @Test func theCatalogueIsTheFolderWithItsNames() throws {
        let folder = Self.repository.appendingPathComponent("Sources/DocumentTypes/catalogue")
        let onDisk = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }
        let count = veridoc_embedded_catalogue_count()
        let names = (0..<count).map { String(cString: veridoc_embedded_catalogue_name($0)) }
        #expect(Set(names) == Set(onDisk) && names.count == onDisk.count, "embedded \(names), on disk \(onDisk)")
        for (index, name) in names.enumerated() {
            #expect(Self.embedded(Int(VERIDOC_EMBEDDED_CATALOGUE) + index) == (try Self.file("Sources/DocumentTypes/catalogue/\(name)")), "\(name)")
        }
    }
}
