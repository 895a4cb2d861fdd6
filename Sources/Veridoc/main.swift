import CommandLineSupport

/// `veridoc <command> …`, what an operator runs. Exit codes: 0 success /
/// verified, 1 rejected, 2 usage or configuration error.
CommandTable(usage: Usage.text, commands: [
    "run": RunCommand.run,
    "migrate": RunCommand.migrateOnly,
    "serve": ServeCommand.run,
    "verify": VerifyCommand.run,
    "keys": KeysCommand.run,
    "purge": RetentionCommands.purge,
    "forget": RetentionCommands.forget,
    "stats": StatsCommand.run,
    "report": ReportCommand.run,
    "webhooks": WebhooksCommand.run,
], details: Usage.details, version: { Version.text(of: "veridoc") }).main()
