import CommandLineSupport

/// `veridoc-dev <command> …`: the demo, benchmarks, load generator, fault
/// injection and mock broker. They link the test issuer, embedded PostgreSQL
/// and librdkafka's mock cluster, which the product binary must not carry.
CommandTable(usage: Usage.text, commands: [
    "demo": DemoCommand.run,
    "bench": BenchCommand.run,
    "loadgen": LoadgenCommand.run,
    "chaos": ChaosCommand.run,
    "dev-broker": DevBrokerCommand.run,
    "examples": ExamplesCommand.run,
    "catalogue": CatalogueCommand.run,
    "sandbox": SandboxCommand.run,
    "wallet": WalletCommand.run,
], details: Usage.details, version: { Version.text(of: "veridoc-dev") }).main()
