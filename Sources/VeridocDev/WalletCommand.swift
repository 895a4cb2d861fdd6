import CommandLineSupport
import DemoKit
import Foundation
import HTTPClient
import JSON
import MDoc
import TestIssuer
import Verification

/// `veridoc-dev wallet --sandbox DIR [--session FILE] [--url URL] [--api-key KEY] [--protocol P] [--disclose NS/ELEMENT,…] [--age N] [--fault NAME]`
///
/// Answers a session as a wallet (or, for iso-device-response, a reader app)
/// would, with the sandbox's test issuer: reads what `POST /v1/sessions`
/// answered (FILE, or stdin), makes the response for its flow and submits
/// it through serve's own route. Prints the submit's status and the session
/// id; exit 0 on 202.
enum WalletCommand {
    static func run(_ arguments: [String]) -> Int32 {
        ExitStatus.returning(usage: Usage.text, failure: "wallet failed") {
            let parsed = try ParsedArguments(arguments, options: ["--sandbox", "--session", "--url", "--api-key", "--protocol", "--disclose", "--age", "--fault"],
                                             flags: ["--production"])
            guard parsed.positional.isEmpty else { throw UsageError("wallet takes options only") }
            guard let sandbox = parsed.options["--sandbox"].map(URL.init(fileURLWithPath:)) else { throw UsageError("--sandbox DIR is required") }
            try Sandbox.requireOwn(sandbox)
            // A key of one's own goes only to a URL one names, never to one a file says.
            if parsed.options["--api-key"] != nil && parsed.options["--url"] == nil { throw UsageError("--api-key needs --url") }
            let environment = try Self.environment(sandbox)
            // The production tenant's key: the same answer, which it must reject (its trust is not the sandbox's issuer).
            let sandboxKey = parsed.flags.contains("--production") ? environment["VERIDOC_PRODUCTION_API_KEY"] : environment["VERIDOC_API_KEY"]
            guard let url = parsed.options["--url"] ?? environment["VERIDOC_URL"], let key = parsed.options["--api-key"] ?? sandboxKey else {
                throw UsageError("no --url or --api-key, and \(sandbox.path)/sandbox.env does not name them: is the sandbox running?")
            }
            let sessionText = try parsed.options["--session"].map { try Data(contentsOf: URL(fileURLWithPath: $0)) } ?? FileHandle.standardInput.readDataToEndOfFile()
            guard let session = try? JSONParser().parse(Array(sessionText)).objectValue, let id = session["id"]?.stringValue,
                  let flow = session["flow"]?.stringValue.flatMap(Flow.init(rawValue:))
            else { throw UsageError("the session is not what POST /v1/sessions answered (an object with id and flow)") }

            var factory = try LoadFixture.load(sandbox.appendingPathComponent("fixture"), now: Date(), seed: UInt64.random(in: 0...UInt64.max))
            if let age = parsed.options["--age"] {
                guard let years = Int(age), (0...125).contains(years) else { throw UsageError("--age must be 0…125") }
                factory.credential.setAge(years, now: Date())
            }
            let fault = try parsed.options["--fault"].map { name throws(UsageError) -> TestIssuer.Fault in
                guard let fault = TestIssuer.Fault(rawValue: name) else {
                    throw UsageError("--fault is one of \(TestIssuer.Fault.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                return fault
            }
            let disclosed = try parsed.options["--disclose"].map(Self.elements)
            let origin = environment["VERIDOC_ORIGIN"] ?? factory.merchant.origin
            let body = try Self.answer(to: session, flow: flow, protocolName: parsed.options["--protocol"], origin: origin, factory: &factory,
                                       disclosed: disclosed, fault: fault)
            let response = try HTTPClient().send("POST", "\(url)/v1/sessions/\(id)/response",
                                                 headers: [("Authorization", "Bearer \(key)"), ("Content-Type", "application/json")],
                                                 body: JSONValue.object(body).jsonBytes(keyOrder: .insertion))
            print("\(response.status) \(id)")
            if response.status != 202 { FileHandle.standardError.write(Data((String(decoding: response.body, as: UTF8.self) + "\n").utf8)) }
            return response.status == 202 ? ExitStatus.success : ExitStatus.failure
        }
    }

    /// The body of `POST /v1/sessions/{id}/response` a wallet's answer makes for this session.
    static func answer(to session: JSONObject, flow: Flow, protocolName: String?, origin: String, factory: inout TestIssuer.EventFactory,
                       disclosed: [RequestedElement]?, fault: TestIssuer.Fault?) throws -> JSONObject {
        switch flow {
        case .appleWalletApp:
            guard let nonce = session["nonce"]?.stringValue.flatMap(Base64.decodeStandard) else { throw UsageError("the app session has no nonce") }
            let payload = try factory.walletAnswer(appNonce: nonce, disclosing: disclosed, fault: fault)
            return ["payload": .string(Base64.encodeStandard(payload))]
        case .appleWalletWeb, .openID4VPDCAPI:
            let offered = session["credentialRequestOptions"]?["digital"]?["requests"]?.arrayValue?.compactMap(\.objectValue)
                ?? [session["request"]?.objectValue].compactMap { $0 }
            let wanted = protocolName ?? (flow == .appleWalletWeb ? "org-iso-mdoc" : "openid4vp")
            guard let request = offered.first(where: { $0["protocol"]?.stringValue?.hasPrefix(wanted) == true }),
                  let name = request["protocol"]?.stringValue
            else { throw UsageError("the session offers no \(wanted) request (it offers \(offered.compactMap { $0["protocol"]?.stringValue }))") }
            if name == "org-iso-mdoc" {
                guard let info = request["data"]?["encryptionInfo"]?.stringValue else { throw UsageError("the org-iso-mdoc request has no encryptionInfo") }
                let response = try factory.walletAnswer(encryptionInfo: info, origin: origin, disclosing: disclosed, fault: fault)
                return ["protocol": "org-iso-mdoc", "data": ["response": .string(Base64.encodeURL(response))]]
            }
            let data = try factory.walletAnswer(openID4VPRequest: request, origin: origin, disclosing: disclosed, fault: fault)
            return ["protocol": .string(name), "data": .object(data)]
        case .isoDeviceResponse:
            let answer = try factory.readerAnswer()
            return ["deviceResponse": .string(Base64.encodeStandard(answer.deviceResponse)), "sessionTranscript": .string(Base64.encodeStandard(answer.sessionTranscript))]
        }
    }

    /// `--disclose org.iso.18013.5.1/given_name,…`.
    static func elements(_ text: String) throws(UsageError) -> [RequestedElement] {
        try text.split(separator: ",").map { item throws(UsageError) -> RequestedElement in
            guard let slash = item.lastIndex(of: "/"), slash != item.startIndex, item.index(after: slash) != item.endIndex else {
                throw UsageError("--disclose takes NAMESPACE/ELEMENT,…")
            }
            return RequestedElement(namespace: String(item[..<slash]), element: String(item[item.index(after: slash)...]), retention: .willNotStore)
        }
    }

    /// `DIR/sandbox.env`'s `NAME=value` lines.
    static func environment(_ sandbox: URL) throws -> [String: String] {
        guard let text = try? String(contentsOf: sandbox.appendingPathComponent("sandbox.env"), encoding: .utf8) else { return [:] }
        var values: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            values[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return values
    }
}
