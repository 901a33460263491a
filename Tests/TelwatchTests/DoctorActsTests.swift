import DBus
import Loop
import Foundation
import MonitorAPI
import TestSupport
import XCTest

/// Who may act on calls through the D-Bus API: the package's polkit policy declares exactly the
/// actions telwatch asks for, granted to the active console user and nobody else, and `doctor`
/// says what polkit answers for this user (dbusmock's `polkitd`, told what to allow).
final class DoctorActsTests: CommandTestCase {
    private func doctor() throws -> (status: ChildExit?, output: String, errors: String) {
        try runToEnd(["doctor", "--bus", fixture.address, "--backend", "modemmanager", "--state-dir", stateDirectory,
                      "--inhibit", "none"])
    }

    private func startPolkit(allowing actions: [String]) throws {
        _ = try fixture.startMock(template: "polkitd")
        try fixture.waitForName("org.freedesktop.PolicyKit1")
        _ = try logind.observer.callValues("org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
                                           "org.freedesktop.DBus.Mock", "SetAllowed",
                                           [.array(elementSignature: "s", actions.map { .string($0) })], timeout: 10)
    }

    private func actsLine(_ output: String) -> String? {
        output.split(separator: "\n").first { $0.contains("acts on calls") }.map(String.init)
    }

    func testDoctorSaysWhichActsPolkitAllowsThisUser() throws {
        try startModemManager()
        try startPolkit(allowing: ["io.telwatch.answer-hangup"])
        let partly = try doctor()
        XCTAssertEqual(partly.status, .exited(0), "a user not granted every act is no problem: " + partly.output)
        XCTAssertEqual(actsLine(partly.output),
                       "  acts on calls (D-Bus API): polkit allows this user to answer, hang up and silence calls "
                           + "(io.telwatch.answer-hangup), but does not allow it to dial, deflect and send tones "
                           + "(io.telwatch.dial); the package grants them to root and the user at the active console "
                           + "(/usr/share/polkit-1/actions/io.telwatch.policy)", partly.output)

        _ = try logind.observer.callValues("org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
                                           "org.freedesktop.DBus.Mock", "AllowUnknown", [.bool(true)], timeout: 10)
        let all = try doctor()
        XCTAssertEqual(actsLine(all.output),
                       "✔ acts on calls (D-Bus API): polkit allows this user to answer, hang up and silence calls "
                           + "(io.telwatch.answer-hangup) and to dial, deflect and send tones (io.telwatch.dial)", all.output)
    }

    /// The policy's actions are the ones telwatch asks polkit about, each for the active console
    /// user only (polkit allows root by itself).
    func testThePackagedPolicyGrantsEachActToTheActiveConsoleUserOnly() throws {
        let policy = try XCTUnwrap(Files.text(Repository.path("dist/polkit-1/io.telwatch.policy")))
        let actions = policy.components(separatedBy: "<action id=\"").dropFirst()
        XCTAssertEqual(actions.compactMap { $0.split(separator: "\"").first.map(String.init) },
                       ActAction.allCases.map(\.rawValue))
        for action in actions {
            XCTAssertTrue(action.contains("<allow_any>no</allow_any>"), action)
            XCTAssertTrue(action.contains("<allow_inactive>no</allow_inactive>"), action)
            XCTAssertTrue(action.contains("<allow_active>yes</allow_active>"), action)
        }
        let install = try XCTUnwrap(Files.text(Repository.path("debian/telwatch.install")))
        XCTAssertTrue(install.contains("dist/polkit-1/io.telwatch.policy usr/share/polkit-1/actions\n"), install)
    }
}
