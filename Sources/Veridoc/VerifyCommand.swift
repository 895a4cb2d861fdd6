import CommandLineSupport
import Deployment
import Foundation
import MDoc
import Revocation
import Settings
import Verification

/// `veridoc verify`: the worker's verification path without the database,
/// for one event or several judged under one loaded configuration.
enum VerifyCommand {
    /// A test tenant's mock response verified (`test_verified`): never 0.
    static let testVerified: Int32 = 3

    static func run(_ arguments: [String]) -> Int32 {
        do {
            let parsed = try ParsedArguments(arguments, options: ["--config", "--at"], flags: ["--json"])
            guard let configPath = parsed.options["--config"] else { throw UsageError("--config FILE is required") }
            guard !parsed.positional.isEmpty else { throw UsageError("an EVENT.json (or -) is required") }
            guard parsed.positional.filter({ $0 == "-" }).count <= 1 else { throw UsageError("standard input (-) can be read once") }
            var time = Date()
            if let at = parsed.options["--at"] {
                guard let parsedTime = RFC3339.date(from: at) else { throw UsageError("--at is not an RFC 3339 date-time") }
                time = parsedTime
            }
            let deployment = try Deployment.load(from: URL(fileURLWithPath: configPath), at: time)
            let status = StatusService(configuration: deployment.statusLists)
            defer { status.stop() }
            let verification = StandaloneVerification(tenants: deployment.tenants, replayKey: deployment.replayKey, at: time,
                                                      statusResolver: { queries, time in status.resolve(queries, at: time) })
            var results: [(verified: Bool, accepted: Bool)] = []
            for (index, path) in parsed.positional.enumerated() {
                // Each event is read as its turn comes, so a costly one is measured alone (callgrind --dump-before=…readEvent*).
                let result = verification.verify(eventJSON: try readEvent(path))
                if parsed.flags.contains("--json") {
                    print(verification.outcome(of: result).json())
                } else {
                    print((index > 0 ? "\n" : "") + HumanReport.render(result), terminator: "")
                }
                results.append((result.isVerified, result.isAccepted))
            }
            return exitStatus(results)
        } catch let error as UsageError {
            Console.error(error.report(otherwise: Usage.text))
        } catch let error as ConfigError {
            Console.error("config: \(error.message)")
        } catch {
            Console.error("\(error)")
        }
        return 2
    }

    /// 0 when every event verified, 1 when any was rejected, otherwise 3: a
    /// test verdict is never 0, for a script testing the status alone takes it for no pass.
    static func exitStatus(_ results: [(verified: Bool, accepted: Bool)]) -> Int32 {
        if results.allSatisfy(\.verified) { return ExitStatus.success }
        return results.allSatisfy(\.accepted) ? testVerified : ExitStatus.failure
    }

    private static func readEvent(_ path: String) throws(UsageError) -> [UInt8] {
        if path == "-" {
            return Array(FileHandle.standardInput.readDataToEndOfFile())
        }
        guard let data = FileManager.default.contents(atPath: path) else { throw UsageError("cannot read \(path)") }
        return Array(data)
    }
}

/// The readable per-check report of `veridoc verify`.
enum HumanReport {
    static func render(_ result: VerificationResult) -> String {
        var lines: [String] = []
        let flow = result.flow?.rawValue ?? "unknown flow"
        lines.append("Event \(result.requestID ?? "(no id)") — tenant \(result.tenant ?? "(unknown)"), \(flow), at \(RFC3339.string(from: result.verifiedAt))")
        if case .test(let kind) = result.assurance {
            lines.append("")
            lines.append("  *** TEST — not a real ID: \(Self.testKind(kind)). Apple: \"A mock mDL isn't visible in the Wallet app, so don't treat it as real.\" ***")
        }
        lines.append("")
        let reasons = result.report.reasons
        for check in result.report.checks {
            switch check.status {
            case .passed:
                lines.append("  ✓ \(check.name.rawValue)")
            case .skipped:
                lines.append("  – \(check.name.rawValue) (skipped)")
            case .failed:
                lines.append("  ✗ \(check.name.rawValue)")
            case .notApplicable:
                lines.append("  ○ \(check.name.rawValue) (not applicable to a test response: not checked)")
            }
        }
        lines.append("")
        if result.isVerified {
            lines.append("Verdict: VERIFIED")
        } else if result.isAccepted {
            lines.append("Verdict: TEST VERIFIED (test_verified) — a mock response, no production assurance")
        } else {
            lines.append(result.assurance.isTest ? "Verdict: TEST REJECTED (test_rejected)" : "Verdict: REJECTED")
            for reason in reasons {
                lines.append("  \(reason.code.rawValue): \(reason.detail)")
            }
        }
        for (index, document) in result.documents.enumerated() {
            lines.append("")
            lines.append("Document \(index): \(document.docType)")
            lines.append("  issuer:   \(document.issuerSubject ?? "—")\(document.issuerCountry.map { " (country \($0))" } ?? "")")
            let dates = [document.signed, document.validFrom, document.validUntil].map { $0.map(RFC3339.string(from:)) ?? "—" }
            lines.append("  MSO:      signed \(dates[0]), valid \(dates[1]) … \(dates[2])")
            if let status = document.status {
                lines.append("  status:   \(Self.describe(status))")
            }
            lines.append("  disclosed elements (names only; * untyped: the document catalogue does not know it):")
            lines += Self.byNamespace(document.elements.map { ($0.namespace, $0.identifier + ($0.isTyped ? "" : "*")) })
            if !document.deviceSignedElements.isEmpty {
                lines.append("  device-signed elements (not vouched for by the issuer; never answer a request):")
                lines += Self.byNamespace(document.deviceSignedElements.map { ($0.namespace, $0.identifier) })
            }
        }
        if !result.ageAnswers.isEmpty {
            lines.append("")
            lines.append("Age checks:")
            for age in result.ages {
                let answer = switch age.value {
                case .yes: "yes"
                case .no: "no"
                case .unknown: result.isAccepted ? "unknown (nothing returned answers it)" : "unknown (not verified)"
                }
                let source = age.element.map { " — from \(age.namespace ?? "")/\($0)\(age.isDerived ? ", derived" : "")" } ?? ""
                lines.append("  at least \(age.threshold): \(answer)\(source)")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// "    namespace: a, b, c" lines, namespaces in the order they first appear.
    private static func byNamespace(_ names: [(namespace: String, name: String)]) -> [String] {
        var grouped: [(String, [String])] = []
        for (namespace, name) in names {
            if let index = grouped.firstIndex(where: { $0.0 == namespace }) {
                grouped[index].1.append(name)
            } else {
                grouped.append((namespace, [name]))
            }
        }
        return grouped.map { "    \($0.0): \($0.1.joined(separator: ", "))" }
    }

    /// What the issuer's lists said of the document (docs/revocation.md).
    static func describe(_ status: CredentialStatus) -> String {
        switch status {
        case .none: "none (the MSO names no revocation list)"
        case .notChecked: "not checked (tenant status.mode off)"
        case .valid: "valid (not revoked)"
        case .revoked: "REVOKED by its issuer"
        case .suspended: "SUSPENDED by its issuer"
        case .undetermined(let cause): "undetermined (\(cause.step): \(cause.detail))"
        }
    }

    private static func testKind(_ kind: TestKind?) -> String {
        switch kind {
        case .simulator?: "Simulator response (issuer and device signatures are zeroes)"
        case .developerProfile?: "developer-profile response (mock data, no real issuer)"
        case nil: "test tenant; the response matched no test shape"
        }
    }
}
