import DBus
import Glibc
import Loop
import TestSupport
import XCTest

/// `telwatch doctor --screening FILE`: one line on the rules file and on whether the stack would
/// let this user hang up, as `reject` does (docs/screening.md, "Permissions"). ModemManager's
/// answer is polkit's (dbusmock's `polkitd`, told what to allow); oFono's is the bus's policy,
/// probed at the real ofonod on a bus whose policy refuses `VoiceCall.Hangup` to all but root.
final class DoctorScreeningTests: CommandTestCase {
    static let voiceAction = "org.freedesktop.ModemManager1.Voice"

    private func rules(_ text: String) throws -> String {
        let path = logind.directory + "/screening.conf"
        try Files.write(path, text)
        return path
    }

    private func doctor(_ rules: String, backend: String = "modemmanager") throws -> (status: ChildExit?, output: String, errors: String) {
        try runToEnd(["doctor", "--bus", fixture.address, "--backend", backend, "--state-dir", stateDirectory,
                      "--inhibit", "none", "--screening", rules])
    }

    /// dbusmock's polkit, allowing exactly `actions`.
    private func startPolkit(allowing actions: [String]) throws {
        _ = try fixture.startMock(template: "polkitd")
        try fixture.waitForName("org.freedesktop.PolicyKit1")
        _ = try logind.observer.callValues("org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
                                           "org.freedesktop.DBus.Mock", "SetAllowed",
                                           [.array(elementSignature: "s", actions.map { .string($0) })], timeout: 10)
    }

    private func screeningLine(_ output: String) -> String? {
        output.split(separator: "\n").first { $0.hasPrefix("✔ screening") || $0.hasPrefix("✘ screening") }.map(String.init)
    }

    func testWhenPolkitAllowsTheVoiceActionDoctorSaysScreeningMayHangUp() throws {
        try startModemManager()
        try startPolkit(allowing: [Self.voiceAction])
        let path = try rules("block +1900* +15550100\n")
        let result = try doctor(path)
        XCTAssertEqual(result.status, .exited(0), result.output + result.errors)
        XCTAssertEqual(screeningLine(result.output),
                       "✔ screening \(path): rules read (2 numbers or prefixes listed); it may hang up calls as this "
                           + "user (polkit allows ModemManager's \(Self.voiceAction))", result.output)
    }

    func testWhenPolkitRefusesTheVoiceActionDoctorSaysARejectedCallWouldRingAndNamesTheRule() throws {
        try startModemManager()
        try startPolkit(allowing: ["org.freedesktop.login1.inhibit-block-sleep"])
        let path = try rules("block +15550100\n")
        let result = try doctor(path)
        XCTAssertEqual(result.status, .exited(4), result.output + result.errors)
        XCTAssertEqual(screeningLine(result.output),
                       "✘ screening \(path): rules read (1 number or prefix listed); it may not hang up calls as "
                           + "this user: polkit does not allow ModemManager's \(Self.voiceAction): a rejected call would ring",
                       result.output)
        let fix = result.output.components(separatedBy: "a rejected call would ring\n").last ?? ""
        XCTAssertTrue(fix.hasPrefix("    fix: the package's polkit rule (/usr/share/polkit-1/rules.d/50-telwatch.rules) "
                                    + "grants \(Self.voiceAction) to the telwatch user"), result.output)

        // Rules that never reject need no hang-up: the same refusal is said, and is no problem.
        let quiet = try rules("block silence +15550100\nunknown ignore\n")
        let silent = try doctor(quiet)
        XCTAssertEqual(silent.status, .exited(0), silent.output)
        XCTAssertTrue(screeningLine(silent.output)?.hasPrefix("✔ screening \(quiet): rules read") == true, silent.output)
        XCTAssertTrue(silent.output.contains("polkit does not allow ModemManager's \(Self.voiceAction) "
                                             + "(no rule rejects, so none is needed)\n"), silent.output)
    }

    func testWithoutPolkitOnTheBusDoctorSaysModemManagerCannotAuthorizeAHangUp() throws {
        try startModemManager()
        let path = try rules("withheld reject\n")
        let result = try doctor(path)
        XCTAssertEqual(result.status, .exited(4), result.output)
        let line = try XCTUnwrap(screeningLine(result.output), result.output)
        XCTAssertTrue(line.hasPrefix("✘ screening \(path): rules read (0 numbers or prefixes listed); it may not hang "
                                     + "up calls: polkit is not on this bus"), line)
        XCTAssertTrue(result.output.contains("    fix: start polkit (systemctl start polkit)"), result.output)
    }

    func testABrokenRulesFileIsOneLineWithItsFileAndLine() throws {
        try startModemManager()
        try startPolkit(allowing: [Self.voiceAction])
        let path = try rules("block +15550100\nblock 0900 then some\n")
        let result = try doctor(path)
        XCTAssertEqual(result.status, .exited(4), result.output)
        let line = try XCTUnwrap(screeningLine(result.output), result.output)
        XCTAssertTrue(line.hasPrefix("✘ screening: \(path):2: "), line)
        XCTAssertTrue(line.hasSuffix("; screening is off until it is fixed: every call rings"), line)
        XCTAssertEqual(result.output.split(separator: "\n").filter { $0.contains("screening") && !$0.hasPrefix("    fix:") }.count,
                       1, "one line, and its fix: \(result.output)")

        let missing = try doctor(logind.directory + "/no-such-rules.conf")
        XCTAssertEqual(missing.status, .exited(4), missing.output)
        XCTAssertTrue(screeningLine(missing.output)?.hasPrefix("✘ screening: cannot read \(logind.directory)/no-such-rules.conf: ")
                      == true, missing.output)
    }

    func testWithoutScreeningDoctorSaysNothingOfIt() throws {
        try startModemManager()
        let result = try runToEnd(["doctor", "--bus", fixture.address, "--backend", "modemmanager",
                                   "--state-dir", stateDirectory, "--inhibit", "none"])
        XCTAssertEqual(result.status, .exited(0), result.output)
        XCTAssertFalse(result.output.contains("screening"), result.output)
    }

    /// oFono: root, whom the bus's policy lets call `VoiceCall.Hangup`, may hang up; nobody may
    /// not, and the fix names the packaged policy and its group. The probe touched no call: the
    /// real ofonod answered the hang-up sent to `/` with UnknownMethod.
    func testOnOfonoTheBussPolicyDecidesAndDoctorSaysSo() throws {
        guard geteuid() == 0 else { throw XCTSkip("needs root: doctor is run as nobody with setpriv --reuid") }
        let bus = try BusFixture(config: Repository.path("Tests/Fixtures/bus-ofono-hangup-policy.conf"), openToOtherUsers: true)
        defer { bus.stop() }
        _ = try bus.start(["/usr/sbin/ofonod", "-n", "-d", "-p", "phonesim"], name: "ofonod")
        try bus.waitForName("org.ofono")
        chmod(bus.directory, 0o711)
        let path = bus.directory + "/screening.conf"
        try Files.write(path, "block +15550100\n", mode: 0o644)
        let doctor = [Self.telwatch, "doctor", "--bus", bus.address, "--backend", "ofono", "--inhibit", "none",
                      "--no-history", "--state-dir", bus.directory + "/state", "--screening", path]

        let root = try bus.run(doctor, timeout: 20)
        XCTAssertEqual(screeningLine(root.output),
                       "✔ screening \(path): rules read (1 number or prefix listed); it may hang up calls as this "
                           + "user (oFono's bus policy lets VoiceCall.Hangup through)", root.output + root.log)

        let nobody = try bus.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"] + doctor, timeout: 20)
        XCTAssertEqual(nobody.status, .exited(4), nobody.output + nobody.log)
        XCTAssertTrue(nobody.output.contains("✔ oFono running as"), "the listing is allowed: \(nobody.output)")
        XCTAssertEqual(screeningLine(nobody.output),
                       "✘ screening \(path): rules read (1 number or prefix listed); it may not hang up calls as "
                           + "this user: the bus's policy for oFono refuses VoiceCall.Hangup: a rejected call would ring",
                       nobody.output)
        XCTAssertTrue(nobody.output.contains("    fix: the package's D-Bus policy (/usr/share/dbus-1/system.d/telwatch-ofono.conf) "
                                             + "allows VoiceCall.Hangup to the telwatch group: add the user to it"), nobody.output)
    }
}
