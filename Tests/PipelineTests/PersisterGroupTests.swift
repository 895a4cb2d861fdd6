import Kafka
@testable import Pipeline
import Testing

/// A partition's batches must all be written by one persister, in order:
/// the position a batch stores covers only that partition's own completions.
@Suite struct PersisterGroupTests {
    @Test func aPartitionAlwaysGoesToTheSamePersister() {
        for count in 1...4 {
            for partition in Int32(0)..<64 {
                let first = PersisterGroup.index(of: TopicPartition("veridoc.requests", partition), among: count)
                #expect((0..<count).contains(first))
                // Asked again: the same persister.
                #expect(PersisterGroup.index(of: TopicPartition("veridoc.requests", partition), among: count) == first)
            }
        }
    }

    @Test func partitionsSpreadEvenly() {
        let counts = (Int32(0)..<12).reduce(into: [Int: Int]()) { counts, partition in
            counts[PersisterGroup.index(of: TopicPartition("t", partition), among: 3), default: 0] += 1
        }
        #expect(counts == [0: 4, 1: 4, 2: 4])
    }
}
