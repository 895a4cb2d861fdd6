import Crypto
import Testing

@Suite struct RandomTests {
    @Test func lengthsAndDistinctOutputs() {
        #expect(secureRandomBytes(0).isEmpty)
        let first = secureRandomBytes(32)
        let second = secureRandomBytes(32)
        #expect(first.count == 32)
        #expect(first != second)
    }
}
