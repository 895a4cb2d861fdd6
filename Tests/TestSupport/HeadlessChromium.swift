import Foundation

/// Debian's `chromium` on the PATH, which the browser tests drive headless.
public enum HeadlessChromium {
    public static let executable: URL? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent("chromium") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()
}
