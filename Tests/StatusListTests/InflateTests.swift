import Foundation
import StatusList
import TestIssuer
import Testing

/// Bounded inflation: what a hostile list server could send instead of a list.
struct InflateTests {
    /// A gigabyte of zeros, compressed once for every test that needs it (about a megabyte).
    static let bomb: [UInt8] = try! TestIssuer.Zlib.compressedZeros(count: 1 << 30)

    func inflateError(_ data: [UInt8], maxOutput: Int) -> InflateError? {
        do {
            _ = try Inflate.zlib(data, maxOutput: maxOutput)
            return nil
        } catch {
            return error
        }
    }

    @Test func roundTrip() throws {
        var random = TestIssuer.SeededRandom(seed: 7)
        let data = random.bytes(200_000) + [UInt8](repeating: 0, count: 300_000)
        #expect(try Inflate.zlib(TestIssuer.Zlib.compress(data), maxOutput: data.count) == data)
        #expect(try Inflate.zlib(TestIssuer.Zlib.compress([]), maxOutput: 0) == [])
    }

    /// The bound is exact: its own size passes, one byte less does not.
    @Test func boundIsExact() throws {
        let compressed = try TestIssuer.Zlib.compress([UInt8](repeating: 9, count: 100_000))
        #expect(try Inflate.zlib(compressed, maxOutput: 100_000).count == 100_000)
        #expect(inflateError(compressed, maxOutput: 99_999) == .tooLarge(limit: 99_999))
    }

    /// 1 GiB of zeros against the 16 MiB list bound: refused once the bound
    /// is passed, never inflated to the end.
    @Test func zlibBombIsRefused() throws {
        #expect(Self.bomb.count < 4 << 20)
        #expect(inflateError(Self.bomb, maxOutput: 16 << 20) == .tooLarge(limit: 16 << 20))
    }

    @Test func bombInAToken() throws {
        let world = try ListWorld()
        let token = try world.token(world.publisher(.statusList, .compressedStatuses(bits: 1, lst: Self.bomb)))
        let error = listError { () throws(StatusListError) in _ = try ListToken(bytes: token, kind: .statusList) }
        #expect(error?.step == "decompression")
        // A lower bound is the caller's to choose.
        let small = listError { () throws(StatusListError) in
            _ = try ListToken(bytes: try! world.token(world.publisher(.statusList, .statuses(bits: 8, [UInt8](repeating: 1, count: 5_000)))),
                              kind: .statusList, limits: ListLimits(maxListBytes: 4_096))
        }
        #expect(small?.step == "decompression")
    }

    @Test func trailingBytesAreRefused() throws {
        let compressed = try TestIssuer.Zlib.compress([1, 2, 3])
        #expect(inflateError(compressed + [0], maxOutput: 100) == .trailingBytes)
        #expect(inflateError(compressed + compressed, maxOutput: 100) == .trailingBytes)
    }

    @Test func truncatedStreams() throws {
        let compressed = try TestIssuer.Zlib.compress([UInt8](repeating: 5, count: 1_000))
        #expect(inflateError(Array(compressed.dropLast(4)), maxOutput: 10_000) == .truncated)
        #expect(inflateError(Array(compressed.prefix(2)), maxOutput: 10_000) == .truncated)
        #expect(inflateError([], maxOutput: 10_000) == .truncated)
    }

    @Test func notZlib() throws {
        guard case .malformed = inflateError([0x01, 0x02, 0x03, 0x04], maxOutput: 100) else {
            Issue.record("bytes that are no zlib header inflated")
            return
        }
        // gzip (RFC 1952) is not the zlib format the draft names.
        let gzip: [UInt8] = [0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]
        guard case .malformed = inflateError(gzip, maxOutput: 100) else {
            Issue.record("a gzip stream inflated as zlib")
            return
        }
        // A header that asks for a preset dictionary (FDICT), which no list has.
        let dictionary: [UInt8] = [0x78, 0xbb, 0x00, 0x00, 0x00, 0x01, 0x03, 0x00]
        #expect(inflateError(dictionary, maxOutput: 100) == .malformed("the stream needs a preset dictionary"))
    }

    /// Input that is not contiguous storage reads the same.
    @Test func anyCollection() throws {
        let compressed = try TestIssuer.Zlib.compress([7, 7, 7])
        #expect(try Inflate.zlib(compressed.lazy.map { $0 }, maxOutput: 3) == [7, 7, 7])
    }
}
