import Testing
@testable import Kafka

@Suite struct KafkaStatisticsTests {
    @Test func consumerLagPerPartition() {
        let json = """
        {"name":"c#consumer-1","type":"consumer","topics":{"veridoc.requests":{"topic":"veridoc.requests","partitions":{
          "0":{"partition":0,"desired":true,"hi_offset":120,"app_offset":100,"committed_offset":90,"consumer_lag":30,"consumer_lag_stored":-1},
          "1":{"partition":1,"desired":true,"hi_offset":50,"app_offset":45,"committed_offset":-1001,"consumer_lag":-1},
          "2":{"partition":2,"desired":false,"hi_offset":50,"app_offset":-1001,"consumer_lag":-1},
          "3":{"partition":3,"desired":true,"hi_offset":-1,"app_offset":-1001,"consumer_lag":-1},
          "-1":{"partition":-1,"desired":false,"hi_offset":-1,"consumer_lag":-1}}}}}
        """
        let statistics = KafkaStatistics(json: json)
        #expect(statistics.consumerLag == [TopicPartition("veridoc.requests", 0): 30, TopicPartition("veridoc.requests", 1): 5])
        #expect(KafkaStatistics(json: "not json").consumerLag.isEmpty)
    }
}
