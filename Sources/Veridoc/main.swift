import Foundation

/// `veridoc <command> …`. Exit codes: 0 success / verified, 1 rejected,
/// 2 usage or configuration error.
let arguments = Array(CommandLine.arguments.dropFirst())
let status: Int32
switch arguments.first {
case "verify": status = VerifyCommand.run(Array(arguments.dropFirst()))
case "keys": status = KeysCommand.run(Array(arguments.dropFirst()))
case "run": status = RunCommand.run(Array(arguments.dropFirst()))
case "migrate": status = RunCommand.migrateOnly(Array(arguments.dropFirst()))
case "demo": status = DemoCommand.run(Array(arguments.dropFirst()))
case "bench": status = BenchCommand.run(Array(arguments.dropFirst()))
case "loadgen": status = LoadgenCommand.run(Array(arguments.dropFirst()))
case "dev-broker": status = DevBrokerCommand.run(Array(arguments.dropFirst()))
case "purge": status = RetentionCommands.purge(Array(arguments.dropFirst()))
case "forget": status = RetentionCommands.forget(Array(arguments.dropFirst()))
case "stats": status = StatsCommand.run(Array(arguments.dropFirst()))
case "report": status = ReportCommand.run(Array(arguments.dropFirst()))
case "chaos": status = ChaosCommand.run(Array(arguments.dropFirst()))
case "help", "--help", "-h", nil:
    print(Usage.text)
    status = arguments.isEmpty ? 2 : 0
default:
    Console.error("unknown command \(arguments[0])\n\n\(Usage.text)")
    status = 2
}
exit(status)
