import Foundation

/// What every Prometheus client library exports about its process
/// (`process_*`, read from Linux's /proc at scrape time), and the build
/// (`veridoc_build_info`), so a dashboard can tell a restart, a leak or a
/// rollout from a change in load.
public enum ProcessMetrics {
    public static func register(in registry: MetricsRegistry, version: String) {
        registry.gauge("veridoc_build_info", help: "Always 1; the labels say which build runs.", labels: ["version"]).set(1, version)
        // Taken when the metrics are registered, at start: close enough to exec for restarts to show.
        let started = Date().timeIntervalSince1970
        registry.gauge("process_start_time_seconds", help: "When the process started (Unix time).").sample { started }
        registry.sampledCounter("process_cpu_seconds_total", help: "User and system CPU time the process has used, in seconds.") {
            var usage = rusage()
            guard getrusage(RUSAGE_SELF.rawValue, &usage) == 0 else { return 0 }
            return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1_000_000
        }
        registry.gauge("process_resident_memory_bytes", help: "Resident memory of the process, in bytes.").sample {
            // /proc/self/statm: size resident shared … in pages.
            guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
            let fields = text.split(separator: " ")
            guard fields.count > 1, let pages = Double(fields[1]) else { return 0 }
            return pages * Double(sysconf(Int32(_SC_PAGESIZE)))
        }
        registry.gauge("process_open_fds", help: "File descriptors the process holds open.").sample {
            // The listing's own descriptor is one of them.
            Double(max(0, ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"))?.count ?? 1) - 1))
        }
        registry.gauge("process_max_fds", help: "The most file descriptors the process may open (RLIMIT_NOFILE).").sample {
            var limit = rlimit()
            guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
            return Double(limit.rlim_cur)
        }
    }
}
