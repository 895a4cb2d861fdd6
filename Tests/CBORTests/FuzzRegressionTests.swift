#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import CBOR

/// Inputs found while fuzzing (docs/fuzzing.md), each kept as a test of the fix.
@Suite struct FuzzRegressionTests {
    /// Definite-length arrays nested 31 deep, each claiming every remaining byte
    /// as an item (`9a 00ff fffb 9a 00ff fff6 …`, then zeros), 16 MiB in all.
    /// Each level used to reserve 40 bytes per claimed item before the item
    /// limit could stop it: about 20 GB of address space, which aborts the
    /// process under an address-space limit or strict overcommit. A 3 MiB
    /// payload (inside an event's size limit) asked for 3.6 GB.
    static func nestedClaimingArrays(size: Int, depth: Int = 31, map: Bool = false) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size)
        for level in 0..<depth {
            // Maps (all but the innermost level) hold `0: <next level>` and claim
            // a pair for every two remaining bytes; the innermost is an array of zeros.
            let isMap = map && level < depth - 1
            let remaining = UInt32(size - bytes.count - 5)
            bytes.append(isMap ? 0xba : 0x9a)
            bytes += withUnsafeBytes(of: (isMap ? remaining / 2 : remaining).bigEndian, Array.init)
            if isMap { bytes.append(0x00) }
        }
        bytes += [UInt8](repeating: 0, count: size - bytes.count)
        return bytes
    }

    /// Peak virtual memory of this process, from /proc (Linux), in bytes.
    static func peakVirtualBytes() -> Int? {
        #if canImport(Glibc)
        // Read with read(2): /proc files have no size for Foundation to go by.
        let descriptor = open("/proc/self/status", O_RDONLY)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            guard count > 0 else { break }
            status += buffer[0..<count]
        }
        for line in String(decoding: status, as: UTF8.self).split(separator: "\n") where line.hasPrefix("VmPeak:") {
            return line.split(whereSeparator: { $0 == " " || $0 == "\t" }).compactMap { Int($0) }.first.map { $0 * 1024 }
        }
        #endif
        return nil
    }

    @Test(arguments: [false, true])
    func nestedContainersClaimingTheWholeInputReserveBoundedMemory(map: Bool) throws {
        let input = Self.nestedClaimingArrays(size: 16 << 20, map: map)
        let before = Self.peakVirtualBytes()
        #expect(throws: CBORError.itemLimitExceeded(limit: CBORDecoder.Limits.default.maxItems)) {
            _ = try CBORDecoder().decode(input)
        }
        if let before, let after = Self.peakVirtualBytes() {
            // The item limit bounds each reservation: 31 levels × 100 000 items
            // × 40 bytes is at most 124 MB, against about 20 GB before the fix.
            // The margin leaves room for other tests of the same process
            // (thread stacks, malloc arenas) that run meanwhile.
            #expect(after - before < 8 << 30, "decoding reserved \((after - before) >> 20) MiB of address space")
        }
    }

    /// From the verify target's per-input heap budget (64 MB): definite arrays
    /// nested 31 deep, each claiming 39,321 items (`99 99 99`), then zeros.
    /// Every level reserved room for its claim, bounded only by the items
    /// still allowed, before reading any: 31 reservations of ~2.8 MB alive at
    /// once (83 MB for these 60 KB). Reservations are now at most
    /// `CBORDecoder.maxReservation` elements; the heap side is the fuzz
    /// target's to judge, this keeps the input and its typed refusal.
    @Test func nestedArrayHeadsAreRefusedWithoutReservingTheirClaims() {
        let input = [UInt8](repeating: 0x99, count: 3 * 31) + [UInt8](repeating: 0, count: 60_000)
        #expect(throws: CBORError.self) { _ = try CBORDecoder().decode(input) }
    }
}
