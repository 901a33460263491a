import Glibc

/// `doctor --user NAME`: the checks run as the account the service runs as, not as the root who
/// typed the command. Doctor is one-shot and needs nothing of root after this, so it gives root
/// up for good (supplementary groups, gid, uid, in that order) before it opens the bus or reads
/// a file: the bus policy, polkit, oFono's policy and every file access then see that account,
/// as they will see the service.
enum DoctorAccount {
    /// Becomes `name`; returns the line doctor prints first. Not root: only one's own name works.
    static func become(_ name: String) throws -> String {
        guard let entry = getpwnam(name) else { throw UsageError("doctor --user: no user \(Parse.quoted(name))") }
        let uid = entry.pointee.pw_uid
        let gid = entry.pointee.pw_gid
        let home = String(cString: entry.pointee.pw_dir)
        if geteuid() != 0 {
            guard uid == geteuid() else {
                throw UsageError("doctor --user \(name) needs root, to check as that account: sudo telwatch doctor --user \(name)")
            }
            return "checking as \(name) (uid \(uid))"
        }
        guard initgroups(name, gid) == 0, setgid(gid) == 0, setuid(uid) == 0, getuid() == uid, geteuid() == uid else {
            throw UsageError("doctor --user \(name): cannot become uid \(uid): \(String(cString: strerror(errno)))")
        }
        // The service's own environment: its home from the password database, no XDG directories
        // of the root session (systemd's User= does the same; its StateDirectory= sets STATE_DIRECTORY).
        setenv("HOME", home, 1)
        unsetenv("XDG_STATE_HOME")
        unsetenv("XDG_RUNTIME_DIR")
        return "checking as \(name) (uid \(uid), gid \(gid), groups \(groups()))"
    }

    private static func groups() -> String {
        var list = [gid_t](repeating: 0, count: 64)
        let count = getgroups(Int32(list.count), &list)
        guard count >= 0 else { return "?" }
        return list.prefix(Int(count)).map { gid in
            guard let group = getgrgid(gid), let name = group.pointee.gr_name else { return String(gid) }
            return String(cString: name)
        }.joined(separator: ",")
    }

    /// `--user NAME` or `--user=NAME` among doctor's arguments, found before anything is parsed
    /// (the config file is read as that account too).
    static func requested(in arguments: [String]) throws -> String? {
        var cursor = ArgumentCursor(arguments)
        var user: String?
        while let argument = cursor.next(), argument != "--" {
            if argument == "--user" { user = try cursor.value(for: argument) }
        }
        return user
    }
}
