import DBus
import Glibc
import PhoneActions
import TestSupport
import XCTest
@testable import telwatch

/// The phone actions' flags and config keys, parsed in-process.
final class PhoneActionOptionTests: XCTestCase {
    func testTheActionsAreOffByDefaultAndTheFlagsTurnThemOn() throws {
        let defaults = try XCTUnwrap(WatchArguments.parse([]))
        XCTAssertFalse(defaults.actions.isAnyOn)
        XCTAssertEqual(defaults.actions.bus, .session)
        let on = try XCTUnwrap(WatchArguments.parse(["--feedback", "--call-audio", "--notify",
                                                     "--session-bus", "unix:path=/run/user/1000/bus"]))
        XCTAssertTrue(on.actions.feedback && on.actions.callAudio && on.actions.notify)
        XCTAssertEqual(on.actions.bus, .address("unix:path=/run/user/1000/bus"))
    }

    func testTheConfigFileTakesTheSameKeysAndARestartIsNeededToChangeThem() throws {
        var options = WatchOptions()
        try options.set("feedback", "true")
        try options.set("call-audio", "yes")
        try options.set("notify", "on")
        try options.set("session-bus", "session")
        XCTAssertTrue(options.actions.feedback && options.actions.callAudio && options.actions.notify)
        XCTAssertEqual(WatchOptions().settingsNeedingARestart(comparedWith: options), ["phone actions"])
    }

    func testTheSystemBusOrNonsenseIsNoSessionBus() {
        for value in ["system", "nonsense"] {
            var options = WatchOptions()
            XCTAssertThrowsError(try options.set("session-bus", value)) { error in
                XCTAssertTrue("\(error)".hasPrefix("--session-bus takes session or a D-Bus address"), "\(error)")
            }
        }
    }
}
