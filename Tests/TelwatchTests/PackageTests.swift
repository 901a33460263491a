import BGRunManager
import Glibc
import Loop
import TestSupport
import XCTest

/// The Debian package (scripts/package) as a user gets it: it builds, holds what docs/packaging.md
/// says, passes lintian with no error, its units pass `systemd-analyze verify`, and its binary runs
/// where the Swift toolchain is not. The package is built once for the whole class, from the
/// release binary `scripts/test` builds (without one, these tests are skipped and say so).
final class PackageTests: XCTestCase {
    private struct Built {
        let scratch: ScratchDirectory
        let deb: String
        /// The package's files, unpacked.
        let root: String
    }

    nonisolated(unsafe) private static var built: Result<Built, Error>?

    override class func tearDown() {
        if case .success(let package)? = built { package.scratch.remove() }
        built = nil
    }

    private func package() throws -> Built {
        if Self.built == nil { Self.built = Result { try Self.build() } }
        return try XCTUnwrap(Self.built).get()
    }

    private static func build() throws -> Built {
        // `swift test` holds the build directory's lock: a release build started from here would
        // wait for it forever, so the binary must exist already (scripts/test builds it).
        let release = Repository.path(".build/release/telwatch")
        guard Files.exists(release), let linked = try? Command.run(["ldd", release]),
              !linked.output.contains("libswift") else {
            throw XCTSkip("no release binary with the Swift runtime linked in: build it first with "
                          + "swift build -c release --static-swift-stdlib --product telwatch (scripts/test does)")
        }
        let scratch = try ScratchDirectory(prefix: "telwatch-package")
        do {
            return try build(from: release, in: scratch)
        } catch {
            scratch.remove()
            throw error
        }
    }

    private static func build(from release: String, in scratch: ScratchDirectory) throws -> Built {
        let packaged = try Command.run([Repository.path("scripts/package"), "--out", scratch.path, "--binary", release],
                                       timeout: 300)
        guard packaged.status == .exited(0), let deb = packaged.output.split(separator: "\n").last.map(String.init),
              deb.hasSuffix(".deb") else {
            throw FixtureError("scripts/package failed: \(String(describing: packaged.status))\n\(packaged.output)")
        }
        let root = scratch.path + "/root"
        let unpacked = try Command.run(["dpkg-deb", "-x", deb, root])
        guard unpacked.status == .exited(0) else { throw FixtureError("dpkg-deb -x: \(unpacked.output)") }
        return Built(scratch: scratch, deb: deb, root: root)
    }

    func testThePackageHoldsTheBinaryUnitsPoliciesAndAConffile() throws {
        let package = try package()
        let listing = try Command.run(["dpkg-deb", "-c", package.deb])
        XCTAssertEqual(listing.status, .exited(0), listing.output)
        let files = Set(listing.output.split(separator: "\n").compactMap { $0.split(separator: " ").last }
            .map { String($0.dropFirst()) })
        for expected in ["/usr/bin/telwatch", "/lib/systemd/system/telwatch.service",
                         "/usr/lib/systemd/user/telwatch.service", "/usr/lib/sysusers.d/telwatch.conf",
                         "/usr/lib/tmpfiles.d/telwatch.conf", "/usr/share/polkit-1/rules.d/50-telwatch.rules",
                         "/usr/share/polkit-1/actions/io.telwatch.policy",
                         "/usr/share/dbus-1/system.d/telwatch-ofono.conf",
                         "/usr/share/dbus-1/system.d/io.telwatch.Monitor1.conf",
                         "/usr/share/dbus-1/interfaces/io.telwatch.Monitor1.xml", "/etc/telwatch/telwatch.conf",
                         "/etc/telwatch/screening.conf",
                         "/usr/share/doc/telwatch/copyright", "/usr/share/doc/telwatch/changelog.gz",
                         "/usr/share/doc/telwatch/examples/hooks/missed",
                         "/usr/share/doc/telwatch/examples/openrc/telwatch"] {
            XCTAssertTrue(files.contains(expected), "\(expected) is not in the package:\n\(listing.output)")
        }
        // Part of the package whenever the project has them (generated from the option table).
        for page in Files.names(in: Repository.path("dist/man")) {
            let section = page.split(separator: ".").last.map(String.init) ?? ""
            XCTAssertTrue(files.contains("/usr/share/man/man\(section)/\(page).gz"), page)
        }
        let control = try Command.run(["dpkg-deb", "-I", package.deb, "conffiles"])
        XCTAssertEqual(control.output.split(separator: "\n").map(String.init).sorted(),
                       ["/etc/telwatch/screening.conf", "/etc/telwatch/telwatch.conf"])
        // Root's to edit (`sudo telwatch block`), everyone's to read: the service reads it as telwatch.
        let rules = listing.output.split(separator: "\n").first { $0.hasSuffix(" ./etc/telwatch/screening.conf") }
        XCTAssertEqual(rules?.split(separator: " ").prefix(2).joined(separator: " "), "-rw-r--r-- root/root",
                       String(describing: rules))
        let depends = try Command.run(["dpkg-deb", "-f", package.deb, "Depends"]).output
        for library in ["libc6", "libdbus-1-3", "libsqlite3-0"] {
            XCTAssertTrue(depends.contains(library), depends)
        }
        XCTAssertFalse(depends.contains("swift"), depends)
        // Loaded only when MQTT is on: a phone without it need not install it.
        XCTAssertFalse(depends.contains("libmosquitto1"), depends)
        let recommends = try Command.run(["dpkg-deb", "-f", package.deb, "Recommends"]).output
        XCTAssertTrue(recommends.contains("libmosquitto1"), recommends)
    }

    func testLintianFindsNoError() throws {
        let package = try package()
        let report = try Command.run(["lintian", "--no-tag-display-limit", package.deb], timeout: 300)
        let errors = report.output.split(separator: "\n").filter { $0.hasPrefix("E: ") }
        XCTAssertEqual(errors, [], report.output)
        XCTAssertNotEqual(report.status, nil, "lintian did not finish")
    }

    /// What the binary may load: libc and two of the C libraries telwatch wraps (the third,
    /// libmosquitto, is loaded when MQTT is on); the Swift runtime is inside.
    func testTheBinaryNeedsOnlyLibcAndTheWrappedLibraries() throws {
        let package = try package()
        let needed = try Command.run(["readelf", "-d", package.root + "/usr/bin/telwatch"]).output
            .split(separator: "\n").filter { $0.contains("(NEEDED)") }
            .compactMap { $0.split(separator: "[").last?.split(separator: "]").first.map(String.init) }
        let allowed: Set = ["libdbus-1.so.3", "libsqlite3.so.0", "libc.so.6", "libm.so.6",
                            "libstdc++.so.6", "libgcc_s.so.1", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"]
        XCTAssertFalse(needed.isEmpty)
        XCTAssertEqual(Set(needed).subtracting(allowed), [], "unexpected shared libraries: \(needed)")
    }

    /// The packaged binary in a mount namespace where the toolchain's directory is an empty one:
    /// what a phone without the toolchain sees. The test's own (debug) binary fails there, which
    /// shows the toolchain really is hidden.
    func testThePackagedBinaryRunsWithTheToolchainHidden() throws {
        guard getuid() == 0 else {
            throw XCTSkip("needs root for unshare -m and a bind mount; run the suite as root to check this")
        }
        let package = try package()
        let swift = try Command.run(["sh", "-c", "command -v swift"]).output
        // <toolchain>/usr/bin/swift, possibly through a symlink.
        let resolved = try XCTUnwrap(realpath(swift, nil).map { path in defer { free(path) }; return String(cString: path) })
        let toolchain = resolved.split(separator: "/").dropLast(3).map(String.init).joined(separator: "/")
        XCTAssertFalse(toolchain.isEmpty, resolved)
        let empty = package.scratch.path + "/empty"
        try Files.makeDirectory(empty)
        let hidden = "mount --bind \"$1\" \"$2\" && shift 2 && exec \"$@\""
        func run(_ arguments: [String]) throws -> (status: ChildExit?, output: String) {
            try Command.run(["unshare", "-m", "--propagation", "private", "sh", "-c", hidden, "sh", empty,
                             "/" + toolchain] + arguments, timeout: 60)
        }
        let binary = package.root + "/usr/bin/telwatch"
        let version = try run([binary, "--version"])
        XCTAssertEqual(version.status, .exited(0), version.output)
        XCTAssertTrue(version.output.hasPrefix("telwatch "), version.output)
        let demo = try run([binary, "demo", "--speed", "50"])
        XCTAssertEqual(demo.status, .exited(0), demo.output)
        XCTAssertTrue(demo.output.contains("incoming"), demo.output)
        XCTAssertTrue(demo.output.contains("the inhibitor lock is released"), demo.output)
        let toolchainBuilt = try run([BuildProducts.path("telwatch"), "--version"])
        XCTAssertEqual(toolchainBuilt.status, .exited(127), "the toolchain was not hidden: \(toolchainBuilt.output)")
    }

    /// Both units as packaged, with their ExecStart pointed at the packaged binary (verify checks it exists).
    func testSystemdAnalyzeVerifiesBothUnits() throws {
        let package = try package()
        let binary = package.root + "/usr/bin/telwatch"
        let runtime = package.scratch.path + "/runtime"
        try Files.makeDirectory(runtime)
        for (unit, user) in [("lib/systemd/system/telwatch.service", false),
                             ("usr/lib/systemd/user/telwatch.service", true)] {
            let text = try XCTUnwrap(Files.text(package.root + "/" + unit))
            XCTAssertTrue(text.contains("Type=notify"), unit)
            let copy = package.scratch.path + "/" + (user ? "user-" : "") + "telwatch.service"
            try Files.write(copy, text.replacingOccurrences(of: "/usr/bin/telwatch", with: binary))
            // Man pages are checked where they are: the package's, not this machine's.
            let verify = try Command.run(["env", "XDG_RUNTIME_DIR=" + runtime, "HOME=" + runtime, "systemd-analyze"]
                                         + (user ? ["--user"] : []) + ["verify", "--man=no", copy])
            XCTAssertEqual(verify.status, .exited(0), "\(unit):\n\(verify.output)")
            XCTAssertEqual(verify.output, "", unit)
        }
        let system = try XCTUnwrap(Files.text(package.root + "/lib/systemd/system/telwatch.service"))
        XCTAssertTrue(system.contains("CapabilityBoundingSet=CAP_BLOCK_SUSPEND"), "--wakelock needs it")
        let user = try XCTUnwrap(Files.text(package.root + "/usr/lib/systemd/user/telwatch.service"))
        XCTAssertFalse(user.split(separator: "\n").contains { $0.hasPrefix("StateDirectory=") }, "systemd 252 puts a user's StateDirectory= under ~/.config")
        XCTAssertTrue(user.contains("--state-dir %h/.local/state/telwatch"), "where plain `telwatch status` looks")
    }

    /// The user unit keeps its state where `telwatch status` and `log` look by default, so a user
    /// of the unit needs no `--state-dir` (systemd 252 would put a user StateDirectory= in ~/.config).
    func testTheUserUnitWritesWherePlainStatusLooks() throws {
        let unit = try XCTUnwrap(Files.text(Repository.path("dist/systemd/telwatch-user.service")))
        let given = try XCTUnwrap(unit.components(separatedBy: "--state-dir ").dropFirst().first?
            .split(whereSeparator: { $0 == " " || $0 == "\n" }).first.map(String.init))
        let home = "/home/phone"
        XCTAssertEqual(given.replacingOccurrences(of: "%h", with: home),
                       RunStateStore.defaultDirectory(environment: ["HOME=" + home]))
        XCTAssertTrue(unit.contains("ReadWritePaths=" + given), "the sandbox must leave it writable")
        XCTAssertTrue(unit.contains("mkdir -p " + given), "made before the sandbox needs it")
    }

    /// The oFono policy grants exactly the oFono methods the backend calls, nothing more: its
    /// listings and reads (`link.list`, `link.call`) and the hang-up of call screening's `reject`
    /// (`LinkedBackend.hangUp`, `Hangup` on the backend's call interface).
    func testTheOfonoPolicyGrantsExactlyTheCallsTelwatchMakes() throws {
        let policy = try XCTUnwrap(Files.text(Repository.path("dist/dbus-1/telwatch-ofono.conf")))
        /// An attribute's value in one `<allow …/>` line ("?" when it has none).
        func value(_ attribute: String, in line: Substring) -> String {
            let after = line.components(separatedBy: attribute + "=\"").last ?? ""
            guard let value = after.split(separator: "\"").first else { return "?" }
            return String(value)
        }
        let allows = policy.split(separator: "\n").filter { $0.contains("<allow ") }
        let granted = Set(allows.map { value("send_interface", in: $0) + "." + value("send_member", in: $0) })
        XCTAssertFalse(policy.contains("<allow send_destination=\"org.ofono\"/>"), "never all of oFono")
        XCTAssertEqual(policy.components(separatedBy: "<policy ").count, 2, "one policy, the group's")
        XCTAssertTrue(policy.contains("<policy group=\"telwatch\">"))

        let source = try XCTUnwrap(Files.text(Repository.path("Sources/CallMonitor/OfonoBackend.swift")))
        // OfonoBus's names: `static let voiceCall = "org.ofono.VoiceCall"`.
        let busNames = try XCTUnwrap(Files.text(Repository.path("Sources/CallMonitor/OfonoBus.swift")))
        var names: [String: String] = [:]
        for line in (busNames + source).split(separator: "\n") where line.contains("static let ") && line.contains(" = \"") {
            let words = line.components(separatedBy: "static let ").last?.components(separatedBy: " = \"") ?? []
            if words.count == 2, let value = words[1].split(separator: "\"").first { names[words[0]] = String(value) }
        }
        let called = Set(source.components(separatedBy: "link.").dropFirst()
            .filter { $0.hasPrefix("list(") || $0.hasPrefix("call(") }
            .compactMap { call -> String? in
                let arguments = call.prefix { $0 != "{" }
                guard let interface = arguments.components(separatedBy: "interface: OfonoBus.").dropFirst().first?
                        .prefix(while: { $0.isLetter }),
                      let member = arguments.components(separatedBy: "member: \"").dropFirst().first?.split(separator: "\"").first,
                      let name = names[String(interface)] else { return nil }
                return name + "." + member
            })
        let backend = try XCTUnwrap(Files.text(Repository.path("Sources/CallMonitor/LinkedBackend.swift")))
        XCTAssertTrue(backend.contains("interface: Self.callInterface, member: \"Hangup\""), "the hang-up screening sends")
        XCTAssertTrue(source.contains("static var callInterface: String { OfonoBus.voiceCall }"))
        let hangUp = try XCTUnwrap(names["voiceCall"]) + ".Hangup"
        XCTAssertEqual(called.union([hangUp]), ["org.ofono.Manager.GetModems", "org.ofono.VoiceCallManager.GetCalls",
                                                 "org.ofono.VoiceCallManager.GetProperties", "org.ofono.VoiceCall.Hangup"])
        // The acts on calls: `actCall(PATH, OfonoBus.INTERFACE, "MEMBER"…)`.
        let acts = try XCTUnwrap(Files.text(Repository.path("Sources/CallMonitor/OfonoActs.swift")))
        let acted = Set(acts.components(separatedBy: "actCall(").dropFirst().compactMap { call -> String? in
            guard let interface = call.components(separatedBy: "OfonoBus.").dropFirst().first?.prefix(while: { $0.isLetter }),
                  let member = call.components(separatedBy: ", \"").dropFirst().first?.split(separator: "\"").first,
                  let name = names[String(interface)] else { return nil }
            return name + "." + member
        })
        XCTAssertEqual(acted, ["org.ofono.VoiceCall.Answer", "org.ofono.VoiceCall.Hangup", "org.ofono.VoiceCall.Deflect",
                               "org.ofono.VoiceCallManager.SendTones", "org.ofono.VoiceCallManager.Dial"])
        XCTAssertEqual(granted, called.union([hangUp]).union(acted))
    }

    /// The polkit rule grants the telwatch user exactly its two actions: the sleep block lock and
    /// ModemManager's voice action (call screening's hang-up). Read as text here; the system test
    /// (Tests/System/checks.sh) has the real polkit apply it, to the telwatch user and to another.
    func testThePolkitRuleGrantsExactlyTheTwoActionsToTheTelwatchUser() throws {
        let rule = try XCTUnwrap(Files.text(Repository.path("dist/polkit-1/50-telwatch.rules")))
        let code = rule.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
            .joined(separator: "\n")
        let actions = Set(code.components(separatedBy: "action.id == \"").dropFirst()
            .compactMap { $0.split(separator: "\"").first.map(String.init) })
        XCTAssertEqual(actions, ["org.freedesktop.login1.inhibit-block-sleep", "org.freedesktop.ModemManager1.Voice"])
        XCTAssertEqual(code.components(separatedBy: "subject.user == \"telwatch\"").count, 2, "the telwatch user, once")
        XCTAssertFalse(code.contains("indexOf"), "no prefix match: exactly those actions")
        XCTAssertFalse(code.contains("subject.isInGroup"), "the user, not a group")
        XCTAssertEqual(code.components(separatedBy: "polkit.Result.YES").count, 2)
        XCTAssertTrue(code.contains("if (subject.user == \"telwatch\" && ("), "the user condition holds for both actions")
    }

    func testTheOpenRCScriptParses() throws {
        let script = Repository.path("dist/openrc/telwatch")
        XCTAssertEqual(Files.text(script)?.hasPrefix("#!/sbin/openrc-run\n"), true)
        let parsed = try Command.run(["sh", "-n", script])
        XCTAssertEqual(parsed.status, .exited(0), parsed.output)
    }
}

/// A command run to its end (bounded), stdout and stderr together; killed with its group on timeout.
enum Command {
    static func run(_ arguments: [String], timeout: Double = 60) throws -> (status: ChildExit?, output: String) {
        let loop = try EventLoop()
        let output = try LoopPipe(loop: loop)
        let pid = try Subprocess.spawn(["setpriv", "--pdeathsig", "KILL", "--"] + arguments,
                                       stdin: .null, stdout: .fd(output.writeFD), stderr: .fd(output.writeFD),
                                       newProcessGroup: true)
        var status: ChildExit?
        let child = try loop.child(pid) { status = $0 }
        if !loop.run(until: { status != nil }, timeout: timeout) {
            kill(-pid, SIGKILL)
            _ = loop.run(until: { status != nil }, timeout: 5)
        }
        // What the pipe still holds once the child is gone: ready now, read without waiting.
        loop.iterate(maxWait: 0)
        withExtendedLifetime(child) {}
        return (status, output.lines.joined(separator: "\n"))
    }
}
