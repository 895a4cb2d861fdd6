import Foundation

/// The permission rule for secret key files (merchant private keys, the nonce
/// key, retention data keys): a file others can read is refused, and so is a
/// file its group can read unless that group is one of this process's own
/// groups (the Helm chart mounts secrets 0440 with the worker's fsGroup).
/// The mode is that of the file a symlink points to (Kubernetes secret
/// volumes are symlinks).
public enum KeyFile {
    /// nil when the file may hold a secret; otherwise why not, for the operator.
    /// `groups`: the groups this process is in (the rule's only input that
    /// is not the file's own), given by tests that judge a foreign group
    /// without needing root to make one.
    public static func permissionProblem(_ url: URL, groups: Set<gid_t>? = nil) -> String? {
        var info = stat()
        guard stat(url.path, &info) == 0 else { return nil }  // unreadable files fail later with their own message
        let mode = Int(info.st_mode) & 0o777
        let octal = String(mode, radix: 8)
        if mode & 0o007 != 0 {
            return "\(url.path) is readable by other users (mode \(octal)); chmod 600 it"
        }
        if mode & 0o070 != 0 && !(groups ?? processGroups()).contains(info.st_gid) {
            return "\(url.path) is readable by group \(info.st_gid), which this process does not belong to (mode \(octal)); chmod 600 it"
        }
        return nil
    }

    static func processGroups() -> Set<gid_t> {
        var groups = Set([getegid(), getgid()])
        let count = getgroups(0, nil)
        if count > 0 {
            var list = [gid_t](repeating: 0, count: Int(count))
            let filled = getgroups(count, &list)
            if filled > 0 { groups.formUnion(list.prefix(Int(filled))) }
        }
        return groups
    }
}
