import Foundation
import HTTPService
import JSON
import Synchronization
import TestIssuer
import TestSupport
import Testing
import Verification

/// The browser client (`/client/v1/veridoc.js`, as serve serves it) in real
/// headless Chromium, end to end: a page of an integrator's own origin
/// imports it, its backend (this test's server) creates a web session through
/// serve with the API key, the page calls `navigator.credentials.get`, which
/// the page replaces with a stub that hands the request to the test issuer's
/// wallet (here), and the client posts the credential back and waits for the
/// worker's verdict. Once per protocol the browser may choose, and for a
/// cancelled request, a wallet's error and an answer made for another origin.
@Suite(.serialized, .enabled(if: Services.available && (HeadlessChromium.executable != nil || ProcessInfo.processInfo.environment["CI"] != nil),
                              "needs the test services and chromium (make test starts the one, make setup installs the other); with CI set it fails instead of skipping"))
struct BrowserClientTests {
    /// The page: the stub wallet, then the client with a backend under /veridoc; it posts what it saw to /result.
    static let page = """
        <!doctype html><meta charset="utf-8"><title>checkout</title><body><script type="module">
        import { verifyWithWallet, backend, version } from "/veridoc/client/v1/veridoc.js";
        const mode = new URLSearchParams(location.search);
        if (mode.get("variant") === "no-api") delete window.DigitalCredential;
        navigator.credentials.get = async (options) => {
          if (mode.get("variant") === "cancel") throw new DOMException("The user closed the sheet", "NotAllowedError");
          const offered = options.digital.requests.map((r) => r.protocol);
          const wanted = options.digital.requests.find((r) => mode.get("protocol") === "org-iso-mdoc" ? r.protocol === "org-iso-mdoc" : r.protocol.startsWith("openid4vp"));
          const answer = await fetch("/wallet?" + mode, { method: "POST", body: JSON.stringify({ request: wanted, offered }) });
          return await answer.json();
        };
        const seen = [];
        const result = await verifyWithWallet({ ...backend("/veridoc"), onState: (state) => seen.push(state) });
        await fetch("/result", { method: "POST", body: JSON.stringify({ version, states: seen, state: result.state, error: result.error,
          reasons: (result.session?.outcome?.reasons ?? []).map((r) => r.code) }) });
        </script>
        """

    /// The integrator's side: the page, its backend forwarding to serve with
    /// the API key, the wallet, and what the page reported. It listens before
    /// serve starts (the tenant's origin is its own), and learns serve's port
    /// and the wallet afterwards.
    final class Site: Sendable {
        /// What the handler threads and the test share.
        final class Shared: Sendable {
            let servePort = Mutex(0)
            let sitePort = Mutex(0)
            let wallet = Mutex<TestIssuer.EventFactory?>(nil)
            /// What each page load reported, by the page's URL.
            let reports = Mutex<[String: [String: String]]>([:])
            /// The protocols the last request offered, in order.
            let offered = Mutex<[String]>([])
            /// Sessions the backend created.
            let sessionsCreated = Mutex(0)
        }

        let daemon: HTTPDaemon
        let port: Int
        let shared = Shared()

        init() throws {
            let shared = shared
            daemon = try HTTPDaemon(port: 0, loopbackOnly: true, limits: HTTPDaemon.Limits(maxBodyBytes: 1 << 20, connectionLimit: 64)) { request in
                let origin = "http://127.0.0.1:\(shared.sitePort.withLock { $0 })"
                switch request.path {
                case "/page.html":
                    return .text(200, BrowserClientTests.page, contentType: "text/html; charset=utf-8")
                case "/wallet":
                    guard let object = try? JSONParser().parse(request.body).objectValue, let entry = object["request"]?.objectValue else {
                        return .text(400, "no request")
                    }
                    shared.offered.withLock { $0 = object["offered"]?.arrayValue?.compactMap(\.stringValue) ?? [] }
                    let variant = request.query["variant"] ?? ""
                    let walletOrigin = variant == "other-origin" ? "https://elsewhere.example" : origin
                    do {
                        let protocolName = entry["protocol"]?.stringValue ?? ""
                        let data: JSONValue
                        if variant == "error" {
                            data = ["error": "access_denied"]
                        } else if protocolName == "org-iso-mdoc" {
                            guard let info = entry["data"]?["encryptionInfo"]?.stringValue else { return .text(400, "no encryptionInfo") }
                            let response = try shared.wallet.withLock { factory throws -> [UInt8] in
                                guard var made = factory else { throw TestFailure("no wallet yet") }
                                defer { factory = made }
                                return try made.walletAnswer(encryptionInfo: info, origin: walletOrigin)
                            }
                            data = ["response": .string(Base64.encodeURL(response))]
                        } else {
                            data = .object(try shared.wallet.withLock { factory throws -> JSONObject in
                                guard var made = factory else { throw TestFailure("no wallet yet") }
                                defer { factory = made }
                                return try made.walletAnswer(openID4VPRequest: entry, origin: walletOrigin, checkingOrigins: variant != "other-origin")
                            })
                        }
                        return HTTPResponse(status: 200, headers: [("Content-Type", "application/json")],
                                            body: JSONValue.object(["protocol": .string(protocolName), "data": data]).jsonBytes())
                    } catch {
                        return .text(500, "wallet: \(error)")
                    }
                case "/result":
                    guard let object = try? JSONParser().parse(request.body).objectValue else { return .text(400, "not JSON") }
                    var report: [String: String] = [:]
                    for member in object.members { report[member.key] = member.value.stringValue ?? member.value.jsonString() }
                    shared.reports.withLock { $0[request.headers["referer"] ?? "?"] = report }
                    return .text(204, "")
                default:
                    guard request.path.hasPrefix("/veridoc/") else { return .text(404, "not found") }
                    // The backend: serve's routes under /veridoc, with the tenant's API key added here, never in the page.
                    let query = request.query.map { "\($0.key)=\($0.value)" }.joined(separator: "&")
                    let path = String(request.path.dropFirst("/veridoc".count)) + (query.isEmpty ? "" : "?" + query)
                    var headers = [("Authorization", "Bearer \(SessionRoundTripTests.key)")]
                    if !request.body.isEmpty { headers.append(("Content-Type", "application/json")) }
                    // What is asked is the backend's to decide: a new session's body is written here, whatever the page sent.
                    var body = request.body
                    if path == "/v1/sessions" {
                        shared.sessionsCreated.withLock { $0 += 1 }
                        body = JSONValue.object([
                            "flow": "apple-wallet-web", "origin": .string(origin),
                            "requestedElements": [["namespace": "org.iso.18013.5.1", "element": "family_name", "retention": ["intent": "willNotStore"]]],
                        ]).jsonBytes()
                    }
                    guard let answer = try? RawHTTP.request(request.method, path, port: shared.servePort.withLock { $0 }, headers: headers,
                                                            body: body, timeout: 40)
                    else { return .text(502, "serve did not answer") }
                    return HTTPResponse(status: UInt32(answer.status), headers: [("Content-Type", answer.headers["content-type"] ?? "application/json")],
                                        body: Array(answer.body.utf8))
                }
            }
            port = daemon.port
            shared.sitePort.withLock { $0 = daemon.port }
        }

        var origin: String { "http://127.0.0.1:\(port)" }

        /// Opens the page with `query` in Chromium and returns what it reported (within 90 s).
        func run(_ query: String) throws -> [String: String] {
            let url = "\(origin)/page.html?\(query)"
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("browser-client-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let process = Process()
            guard let executable = HeadlessChromium.executable else { throw TestFailure("chromium is not installed and CI is set: run make setup") }
            process.executableURL = executable
            // --no-sandbox: the tests run as root in containers, where Chromium's sandbox cannot start.
            process.arguments = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
                                 "--user-data-dir=\(folder.appendingPathComponent("profile").path)", "--enable-logging=stderr", "--v=0",
                                 "--remote-debugging-port=0", url]
            let log = folder.appendingPathComponent("log.txt")
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            process.standardOutput = FileHandle.nullDevice
            process.standardError = try FileHandle(forWritingTo: log)
            try process.run()
            defer {
                if process.isRunning { process.terminate() }
                process.waitUntilExit()
            }
            var report: [String: String]?
            _ = eventually(90, every: 0.05) {
                report = shared.reports.withLock { $0[url] }
                return report != nil || !process.isRunning
            }
            guard let report else {
                throw TestFailure("the page reported nothing for \(query): \((try? String(contentsOf: log, encoding: .utf8))?.suffix(3000) ?? "")")
            }
            return report
        }
    }

    @Test func oneRequestForBothBrowsersReachesEachVerdict() throws {
        let site = try Site()
        let stack = try SessionRoundTripTests.Stack(origins: [site.origin])
        site.shared.servePort.withLock { $0 = stack.port }
        site.shared.wallet.withLock { $0 = stack.fixture.factory }

        // The module the page imports is the one serve serves, byte for byte.
        let served = try RawHTTP.request("GET", "/client/v1/veridoc.js", port: stack.port)
        #expect(served.status == 200 && served.headers["content-type"] == "text/javascript; charset=utf-8")
        #expect(served.body.contains("export async function verifyWithWallet"))

        for protocolName in ["org-iso-mdoc", "openid4vp"] {
            let report = try site.run("protocol=\(protocolName)")
            #expect(report["state"] == "verified", "\(protocolName): \(report) \(stack.worker.log.suffix(1500))")
            #expect(report["states"] == #"["requesting","waiting-for-wallet","submitting","verifying","verified"]"#, "\(report)")
            #expect(report["version"] == "1")
        }
        // One request offered both protocols, Annex C first (the tenant's default order).
        #expect(site.shared.offered.withLock { $0 } == ["org-iso-mdoc", "openid4vp-v1-signed"])

        // Without the Digital Credentials API no session is made.
        let before = site.shared.sessionsCreated.withLock { $0 }
        let unsupported = try site.run("protocol=openid4vp&variant=no-api")
        #expect(unsupported["state"] == "unsupported" && unsupported["states"] == #"["unsupported"]"#, "\(unsupported)")
        #expect(site.shared.sessionsCreated.withLock { $0 } == before)

        let cancelled = try site.run("protocol=openid4vp&variant=cancel")
        #expect(cancelled["state"] == "cancelled" && cancelled["states"] == #"["requesting","waiting-for-wallet","cancelled"]"#, "\(cancelled)")
        let declined = try site.run("protocol=openid4vp&variant=error")
        #expect(declined["state"] == "rejected" && declined["reasons"] == #"["response.wallet_error"]"#, "\(declined)")
        // The wallet bound its answer to another origin than the page's: the transcript no longer matches.
        let elsewhere = try site.run("protocol=org-iso-mdoc&variant=other-origin")
        #expect(elsewhere["state"] == "rejected" && elsewhere["reasons"] == #"["decryption.failed"]"#, "\(elsewhere)")
        let elsewhereOpenID = try site.run("protocol=openid4vp&variant=other-origin")
        #expect(elsewhereOpenID["state"] == "rejected" && elsewhereOpenID["reasons"] == #"["device.signature_invalid"]"#, "\(elsewhereOpenID)")
    }
}
