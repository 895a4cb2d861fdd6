import Foundation
import Kafka

extension Thread {
    /// A worker thread for `role`, not yet started: "veridoc-ROLE" to Foundation
    /// and "vd-ROLE" to the OS (`top -H`, `/proc`), whose names hold 15 bytes.
    static func worker(_ role: String, _ body: @escaping @Sendable () -> Void) -> Thread {
        let thread = Thread {
            nameCurrentThreadForOS("vd-\(role)")
            body()
        }
        thread.name = "veridoc-\(role)"
        return thread
    }
}
