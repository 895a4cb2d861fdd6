import Foundation
import Testing
import TestSupport
@testable import Analytics

/// The report in a real browser: headless Chromium (Debian's `chromium`,
/// installed by `make setup`) loads the page with a probe added, and the test
/// reads back what the browser laid out and what went wrong.
///
/// How: the page is the product's, with one change, its Content-Security-Policy
/// also allowing inline scripts, so a probe can run while every external load
/// stays refused. The probe, a script first in <head> so it runs before
/// anything else, records errors, CSP violations and console.error/warn; on
/// `load` it measures every SVG, the time axis' bins and bars and the charts'
/// text, and writes it all as JSON into a <pre>. `--dump-dom` prints the DOM after
/// `load`, so the test parses that. Two channels, because each misses
/// something: the DOM probe gives sizes and script-visible errors, and
/// `--enable-logging=stderr` prints every console message of the page
/// (`:CONSOLE` lines, browser-made ones like a CSP refusal or a failed load
/// included) even when it comes too late for the probe. The product page has
/// no script of its own, so any console line at all is a failure.
/// `probeSeesFaults` runs the same probe on a broken page, so a Chromium whose
/// log format or behaviour changed fails here rather than passing vacuously.
@Suite(.enabled(if: Chromium.executable != nil || ProcessInfo.processInfo.environment["CI"] != nil,
                "chromium is not installed (make setup installs it); with CI set this test fails instead of skipping"))
struct ReportBrowserTests {
    @Test("charts have a size, the axis has every hour, labels are readable, no console errors")
    func reportRendersInChromium() throws {
        let page = try Chromium.load(Chromium.probed(ReportSample.html))
        #expect(page.console.isEmpty, "console: \(page.console)")
        #expect(page.probe.errors.isEmpty, "errors: \(page.probe.errors)")
        #expect(page.probe.charts.map(\.id) == ["timeline", "reason-bars", "latency-bars"])
        for chart in page.probe.charts { #expect(chart.width > 100 && chart.height > 50, "\(chart)") }
        #expect(page.probe.bins.count == 6 && page.probe.bins.allSatisfy { $0 > 10 }, "bin widths \(page.probe.bins)")
        #expect(page.probe.barHeights.contains { $0 > 0 }, "no bar was drawn")
        #expect((page.probe.smallestFontPixels ?? 0) >= 12)
        for fill in page.probe.textFills { #expect(Chromium.contrastOnWhite(fill) >= 4.5, "text colour \(fill) too light") }
        #expect(page.probe.pageWidth <= page.probe.viewportWidth, "the page scrolls sideways at 1200 px")
    }

    @Test("the probe reports a console error, a refused external load and a chart of no size")
    func probeSeesFaults() throws {
        let broken = """
            <!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="\(ReportHTML.contentSecurityPolicy)"></head>
            <body><img src="http://example.invalid/logo.png" alt=""><svg id="timeline" class="chart" width="0" height="0"></svg></body></html>
            """
        let page = try Chromium.load(Chromium.probed(broken))
        #expect(page.probe.charts.first?.width == 0)
        #expect(page.probe.errors.contains { $0.contains("example.invalid") }, "\(page.probe.errors)")
        #expect(page.console.contains { $0.contains("example.invalid") }, "stderr had no console line: \(page.console)")
    }
}

/// Headless Chromium as the tests drive it.
enum Chromium {
    static let executable = HeadlessChromium.executable

    struct Probe: Decodable {
        struct Chart: Decodable { let id: String; let width, height: Double }
        let charts: [Chart]
        let bins: [Double]
        let barHeights: [Double]
        /// Nil for a page without chart text.
        let smallestFontPixels: Double?
        let textFills: [String]
        let pageWidth, viewportWidth: Double
        let errors: [String]
    }

    struct Page {
        let probe: Probe
        /// The page's console messages, from Chromium's log.
        let console: [String]
    }

    static let probeHead = """
        <script>
        window.probeErrors = [];
        addEventListener('error', e => probeErrors.push('error: ' + (e.message || (e.target && (e.target.src || e.target.href)) || e.type)), true);
        addEventListener('securitypolicyviolation', e => probeErrors.push('csp: ' + e.blockedURI + ' ' + e.violatedDirective));
        for (const level of ['error', 'warn']) {
          const original = console[level];
          console[level] = (...args) => { probeErrors.push(level + ': ' + args.join(' ')); original.apply(console, args); };
        }
        addEventListener('load', () => {
          const box = element => element.getBoundingClientRect();
          const texts = [...document.querySelectorAll('svg text')];
          const result = {
            charts: [...document.querySelectorAll('svg')].map(svg => ({ id: svg.id, width: box(svg).width, height: box(svg).height })),
            bins: [...document.querySelectorAll('#timeline g.bin')].map(bin => box(bin).width),
            barHeights: [...document.querySelectorAll('#timeline rect.verified, #timeline rect.rejected')].map(bar => box(bar).height),
            smallestFontPixels: texts.length ? Math.min(...texts.map(text => parseFloat(getComputedStyle(text).fontSize))) : null,
            textFills: [...new Set(texts.map(text => getComputedStyle(text).fill))],
            pageWidth: document.documentElement.scrollWidth, viewportWidth: innerWidth, errors: probeErrors };
          const out = document.createElement('pre');
          out.id = 'browser-probe';
          out.textContent = JSON.stringify(result);
          document.body.appendChild(out);
        });
        </script>
        """

    /// The page with the probe first in its head and inline scripts allowed (the only change to its policy).
    static func probed(_ html: String) throws -> String {
        let policy = "content=\"\(ReportHTML.contentSecurityPolicy)\">"
        guard let meta = html.range(of: policy) else { throw TestFailure("the page has no Content-Security-Policy meta to extend") }
        var page = html
        page.replaceSubrange(meta, with: "content=\"\(ReportHTML.contentSecurityPolicy); script-src 'unsafe-inline'\">" + probeHead)
        return page
    }

    /// Loads `html` from a file at 1200×2000 and returns the probe and the console lines.
    static func load(_ html: String, timeout: TimeInterval = 30) throws -> Page {
        let executable = try #require(executable, "chromium is not installed and CI is set: run make setup")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("report-browser-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("report.html")
        try Data(html.utf8).write(to: file)

        let process = Process()
        process.executableURL = executable
        // --no-sandbox: the tests run as root in containers, where Chromium's sandbox cannot start.
        // A profile of its own: other runs of the test (or a user's browser) never share its lock.
        process.arguments = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
                             "--user-data-dir=\(folder.appendingPathComponent("profile").path)", "--window-size=1200,2000",
                             "--enable-logging=stderr", "--v=0", "--dump-dom", file.absoluteString]
        let stdout = folder.appendingPathComponent("dom.html"), stderr = folder.appendingPathComponent("log.txt")
        _ = FileManager.default.createFile(atPath: stdout.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stderr.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: stdout)
        process.standardError = try FileHandle(forWritingTo: stderr)
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
            throw TestFailure("chromium did not finish within \(Int(timeout)) s")
        }
        let dom = try String(contentsOf: stdout, encoding: .utf8)
        let log = try String(contentsOf: stderr, encoding: .utf8)
        guard let open = dom.range(of: "<pre id=\"browser-probe\">"), let close = dom.range(of: "</pre>", range: open.upperBound..<dom.endIndex) else {
            throw TestFailure("no probe in the DOM chromium dumped (status \(process.terminationStatus)):\n\(log.suffix(2000))")
        }
        let json = unescape(String(dom[open.upperBound..<close.lowerBound]))
        let probe = try JSONDecoder().decode(Probe.self, from: Data(json.utf8))
        return Page(probe: probe, console: log.split(separator: "\n").filter { $0.contains(":CONSOLE") }.map(String.init))
    }

    /// The text content as --dump-dom serialises it.
    static func unescape(_ text: String) -> String {
        text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&amp;", with: "&")
    }

    /// WCAG contrast ratio of a computed colour, "rgb(r, g, b)", on white.
    static func contrastOnWhite(_ colour: String) -> Double {
        let channels = colour.split { !$0.isNumber && $0 != "." }.prefix(3).compactMap { Double($0) }
        guard channels.count == 3 else { return 0 }
        let linear = channels.map { value -> Double in
            let c = value / 255
            return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
        }
        let luminance = 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
        return 1.05 / (luminance + 0.05)
    }
}
