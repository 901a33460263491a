import Foundation
import Glibc
import TestSupport

/// Which daemons and which telwatch the end-to-end tests run: the machine's own by default, or
/// others chosen by the environment (docs/modem-stacks.md §12 says why and how). This is the one
/// place that reads these variables and builds the commands from them:
///
///   TELWATCH_E2E_MODEMMANAGER_ROOT=NAME  ModemManager from the Debian root NAME, as
///                                        `scripts/debian-root run NAME /usr/sbin/ModemManager …`
///   TELWATCH_E2E_OFONO_ROOT=NAME         ofonod likewise (oFono conflicts with ModemManager,
///                                        so it has a root of its own)
///   TELWATCH_E2E_TELWATCH="WORDS…"       the command that is telwatch, split at blanks (no
///                                        quoting), in place of the built binary wherever a test
///                                        starts telwatch (`watch` and `log`); a relative first
///                                        word is taken from the repository's root, e.g.
///                                        "scripts/debian-root run trixie-arm64-run /usr/bin/telwatch"
///
/// Every step of `scripts/debian-root run` execs the next, so a daemon or telwatch started
/// through it keeps the PID the test kills it by, and the environment (OFONO_PHONESIM_CONFIG,
/// the bus address); the root sees this machine's /tmp, where every fixture lives.
enum StackUnderTest {
    static let debianRoot = Repository.path("scripts/debian-root")

    /// The Debian root `kind`'s daemon runs from, if one is chosen.
    static func root(_ kind: DaemonKind) -> String? {
        variable(kind == .modemManager ? "TELWATCH_E2E_MODEMMANAGER_ROOT" : "TELWATCH_E2E_OFONO_ROOT")
    }

    /// The words that start `kind`'s daemon; its options follow.
    static func daemonCommand(_ kind: DaemonKind) -> [String] {
        guard let root = root(kind) else { return [kind.executable] }
        return [debianRoot, "run", root, kind.executable]
    }

    /// The words that start telwatch; its subcommand and options follow.
    static let telwatchCommand: [String] = {
        guard let words = variable("TELWATCH_E2E_TELWATCH")?.split(whereSeparator: { $0 == " " || $0 == "\t" })
            .map(String.init), let first = words.first
        else { return [BuildProducts.path("telwatch")] }
        return [first.hasPrefix("/") || !first.contains("/") ? first : Repository.path(first)] + words.dropFirst()
    }()

    /// Throws unless `kind`'s daemon can be started as chosen: a root must be made already, since
    /// `debian-root run` would otherwise spend minutes making it inside a bounded start-up wait.
    static func checkDaemon(_ kind: DaemonKind, fixture: BusFixture) throws {
        guard let root = root(kind) else { return }
        let result = try fixture.run([debianRoot, "path", root], timeout: 10)
        let path = result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        guard result.status == .exited(0), !path.isEmpty, Files.exists(path + "/.telwatch-root-complete") else {
            throw FixtureError("the Debian root \(root) is not made (scripts/debian-root ensure \(root))\n"
                               + result.log)
        }
        guard access(path + kind.executable, X_OK) == 0 else {
            throw FixtureError("the Debian root \(root) has no \(kind.executable) (its kind has no '\(kind.package)')")
        }
    }

    /// The daemon's and telwatch's origin, for a failed test's log.
    static func describe(_ kind: DaemonKind) -> String {
        "\(daemonCommand(kind).joined(separator: " ")); telwatch: \(telwatchCommand.joined(separator: " "))"
    }

    private static func variable(_ name: String) -> String? {
        guard let value = getenv(name).map({ String(cString: $0) }), !value.isEmpty else { return nil }
        return value
    }
}
