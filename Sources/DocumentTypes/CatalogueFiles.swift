import CEmbeddedFiles

/// The catalogue's files as compiled in (CEmbeddedFiles embeds each; a file
/// added to the folder is listed there).
enum CatalogueFiles {
    static let all: [(name: String, bytes: [UInt8])] = (0..<veridoc_embedded_catalogue_count()).map { index in
        var count = 0
        let start = veridoc_embedded_file(VERIDOC_EMBEDDED_CATALOGUE + index, &count)
        return (String(cString: veridoc_embedded_catalogue_name(index)), Array(UnsafeBufferPointer(start: start, count: count)))
    }
}
