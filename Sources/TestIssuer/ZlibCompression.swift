import CZlib

extension TestIssuer {
    /// zlib (RFC 1950) compression for the lists the test issuer publishes:
    /// the draft's step 4, "DEFLATE with the ZLIB data format", highest level.
    public enum Zlib {
        /// `bytes` compressed in one call (`compress2`).
        public static func compress(_ bytes: [UInt8]) throws -> [UInt8] {
            var length = compressBound(uLong(bytes.count))
            var out = [UInt8](repeating: 0, count: Int(length))
            let code = compress2(&out, &length, bytes, uLong(bytes.count), Z_BEST_COMPRESSION)
            guard code == Z_OK else { throw FixtureError("zlib compress2 failed (\(code))") }
            out.removeSubrange(Int(length)...)
            return out
        }

        /// `count` zero bytes compressed, without ever holding them: the zlib
        /// bomb a hostile list server would send. The stream is fed one
        /// zeroed piece at a time, so a gigabyte costs a megabyte here.
        public static func compressedZeros(count: Int) throws -> [UInt8] {
            var stream = z_stream()
            var code = deflateInit_(&stream, Z_BEST_COMPRESSION, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
            guard code == Z_OK else { throw FixtureError("zlib deflateInit failed (\(code))") }
            defer { deflateEnd(&stream) }
            var zeros = [UInt8](repeating: 0, count: 1 << 20)
            var piece = [UInt8](repeating: 0, count: 1 << 16)
            var out: [UInt8] = []
            var remaining = count
            repeat {
                let size = min(remaining, zeros.count)
                remaining -= size
                let flush = remaining == 0 ? Z_FINISH : Z_NO_FLUSH
                zeros.withUnsafeMutableBufferPointer { input in
                    stream.next_in = input.baseAddress
                    stream.avail_in = UInt32(size)
                    // Drain the output until this piece of input is taken (and, at the end, the stream finished).
                    repeat {
                        piece.withUnsafeMutableBufferPointer { buffer in
                            stream.next_out = buffer.baseAddress
                            stream.avail_out = UInt32(buffer.count)
                            code = deflate(&stream, flush)
                            // No progress possible is not an error for deflate: it only had nothing left to do.
                            if code == Z_BUF_ERROR { code = Z_OK }
                            out.append(contentsOf: buffer[0..<(buffer.count - Int(stream.avail_out))])
                        }
                    } while code >= 0 && (stream.avail_out == 0 || (flush == Z_FINISH && code != Z_STREAM_END))
                }
                guard code >= 0 else { throw FixtureError("zlib deflate failed (\(code))") }
            } while remaining > 0
            guard code == Z_STREAM_END else { throw FixtureError("zlib deflate did not finish (\(code))") }
            return out
        }
    }
}
