import CommandLineSupport
import Deployment
import Foundation
import Postgres
import Storage

/// `veridoc webhooks list|redeliver|enable --config FILE …`: what an
/// operator does about deliveries: see them (never their payloads), send dead
/// ones again, and take an endpoint back that answered 410 Gone.
enum WebhooksCommand {
    static func run(_ arguments: [String]) -> Int32 {
        ExitStatus.of {
            guard let action = arguments.first, ["list", "redeliver", "enable"].contains(action) else {
                throw UsageError("webhooks list | webhooks redeliver | webhooks enable, each with --config FILE")
            }
            let parsed = try ParsedArguments(Array(arguments.dropFirst()), options: ["--config", "--tenant", "--endpoint", "--state", "--limit", "--id"],
                                             flags: ["--dead"])
            let deployment = try ConfigFile.read(parsed)
            let tenant = parsed.options["--tenant"]
            switch action {
            case "list":
                let state = parsed.options["--state"]
                if let state, !["pending", "delivered", "dead"].contains(state) { throw UsageError("--state takes pending, delivered or dead") }
                guard let limit = Int(parsed.options["--limit"] ?? "50"), (1...10_000).contains(limit) else { throw UsageError("--limit takes 1 to 10000") }
                let connection = try RetentionCommands.connect(deployment)
                defer { connection.close() }
                print(render(try connection.execute(WebhookDeliveriesTable.list(state: state, tenant: tenant, limit: limit))), terminator: "")
            case "redeliver":
                let id = parsed.options["--id"]
                guard (id != nil) != parsed.flags.contains("--dead") else { throw UsageError("webhooks redeliver takes --id WEBHOOK_ID or --dead") }
                // One event goes to each endpoint of its tenant under the same id: --id names a tenant's deliveries of it.
                guard id == nil || tenant != nil else { throw UsageError("webhooks redeliver --id takes --tenant T too") }
                let connection = try RetentionCommands.connect(deployment)
                defer { connection.close() }
                let again = try connection.execute(WebhookDeliveriesTable.redeliverDead(tenant: tenant, webhookID: id))
                print("\(again.rowCount) dead deliveries pending again")
            default:
                guard let tenant, let endpoint = parsed.options["--endpoint"] else { throw UsageError("webhooks enable takes --tenant T --endpoint E") }
                guard deployment.webhooks.endpoints.contains(where: { $0.tenant == tenant && $0.id == endpoint }) else {
                    throw UsageError("tenant \(tenant) has no webhook endpoint \(endpoint) in this config")
                }
                let connection = try RetentionCommands.connect(deployment)
                defer { connection.close() }
                let resumed = try connection.execute(WebhookDeliveriesTable.enable(tenant: tenant, endpoint: endpoint))
                print("endpoint \(endpoint) of \(tenant) enabled; \(resumed.affectedRows) waiting deliveries are due now")
            }
        }
    }

    /// One line a delivery: no payload, no URL.
    static func render(_ rows: PostgresResult) -> String {
        var lines = ["tenant\tendpoint\twebhook_id\tevent_type\tstate\tattempts\tlast_status\tlast_error\tnext_attempt_at\tcreated_at"]
        for row in 0..<rows.rowCount {
            let fields: [String] = [
                rows.string(row, "tenant") ?? "", rows.string(row, "endpoint") ?? "", rows.string(row, "webhook_id") ?? "",
                rows.string(row, "event_type") ?? "", rows.string(row, "state") ?? "", rows.int(row, "attempts").map(String.init) ?? "",
                rows.int(row, "last_status").map(String.init) ?? "-", rows.string(row, "last_error") ?? "-",
                rows.string(row, "next_attempt_at") ?? "", rows.string(row, "created_at") ?? "",
            ]
            lines.append(fields.joined(separator: "\t"))
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
