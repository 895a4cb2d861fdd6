import Foundation

/// Starts a child with posix_spawn: stdin from /dev/null, stdout to a file,
/// stderr to another file or the same one. Never Foundation's `Process`: its
/// `waitUntilExit` can fail to return here (the child is left a zombie).
/// Output goes to files, not pipes: a server that inherits a pipe would hold
/// it open and its reader would never see end-of-file.
package enum Spawn {
    /// The child's pid, or nil if it could not be started. `append`: add to the
    /// files instead of truncating them.
    package static func start(_ executable: String, _ arguments: [String], stdout: String, stderr: String? = nil, append: Bool = false) -> pid_t? {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let flags = O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, flags, 0o644)
        if let stderr {
            posix_spawn_file_actions_addopen(&actions, 2, stderr, flags, 0o644)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        let argv = ([executable] + arguments).map { strdup($0) }
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        guard posix_spawn(&pid, executable, &actions, nil, argv + [nil], environ) == 0 else { return nil }
        return pid
    }
}
