import DemoKit
import Foundation

/// CPU time of processes on this machine, from /proc (Linux).
///
/// An end-to-end run shares the machine's cores between the worker processes,
/// PostgreSQL and this process (the mock broker, the load generator and the
/// outcome reader). Measuring all three shows where the cores went, so a
/// throughput that stops growing can be read as "the machine is full" rather
/// than guessed at.
enum ProcessCPU {
    /// utime + stime of `pid` in seconds (0 when it is gone); with
    /// `reapedChildren`, also the CPU of children it has waited for
    /// (cutime + cstime), which is where exited PostgreSQL backends and
    /// autovacuum workers end up.
    static func seconds(pid: pid_t, reapedChildren: Bool = false) -> Double {
        guard let fields = statFields(pid: pid), fields.count > 14,
              let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        var ticks = user + system
        if reapedChildren, let childUser = Double(fields[13]), let childSystem = Double(fields[14]) { ticks += childUser + childSystem }
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The scheduler's run time of `pid` in seconds, to the nanosecond
    /// (/proc/PID/schedstat; 0 when it is gone): a database backend's share of
    /// a few small statements is far below the 10 ms ticks of `seconds`.
    static func scheduledSeconds(pid: pid_t) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/schedstat", encoding: .utf8),
              let first = text.split(separator: " ").first, let nanoseconds = Double(first) else { return 0 }
        return nanoseconds / 1e9
    }

    /// utime + stime of this process in seconds, to the microsecond
    /// (getrusage): /proc counts in clock ticks (10 ms), and a quick bench's
    /// peak window can be shorter than one tick of the harness's CPU.
    static func ownSeconds() -> Double {
        var usage = rusage()
        guard getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage) == 0 else { return seconds(pid: getpid()) }
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    /// The CPU of `root` (with its reaped children) plus that of its live
    /// children: a postmaster and every backend it runs.
    static func treeSeconds(root: pid_t) -> Double {
        seconds(pid: root, reapedChildren: true) + children(of: root).reduce(0) { $0 + seconds(pid: $1) }
    }

    /// Processes whose parent is `parent`.
    static func children(of parent: pid_t) -> [pid_t] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        return entries.compactMap { pid_t($0) }.filter { pid in
            // Field 4 of stat, the first after the state, is the parent's pid.
            statFields(pid: pid).flatMap { $0.count > 1 ? pid_t($0[1]) : nil } == parent
        }
    }

    /// The fields of /proc/PID/stat after "(comm)", which may itself hold
    /// spaces and parentheses: fields[0] is the state (field 3).
    private static func statFields(pid: pid_t) -> [Substring]? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(after: close)...].split(separator: " ")
    }
}

/// CPU seconds so far of the three parts of an end-to-end run.
struct CPUSample {
    var worker: Double
    var postgres: Double
    var harness: Double

    static func - (end: CPUSample, start: CPUSample) -> CPUSample {
        CPUSample(worker: end.worker - start.worker, postgres: end.postgres - start.postgres, harness: end.harness - start.harness)
    }
}
