import DBus
import TestSupport
import XCTest

final class NameOwnerTests: BusTestCase {
    func testWatchSeesANameAppearChangeOwnerAndVanish() throws {
        var events: [NameOwnerEvent] = []
        let watch = try connection.watchName("org.example.Modem") { events.append($0) }
        waitFor("the initial answer") { watch.isResolved }
        XCTAssertEqual(events, [.absent])
        XCTAssertNil(watch.owner)

        let first = try Connection(.address(fixture.address), loop: loop)
        try first.requestName("org.example.Modem", allowReplacement: true)
        waitFor("the first owner") { events.count == 2 }
        XCTAssertEqual(events.last, .appeared(first.uniqueName))
        XCTAssertTrue(watch.isOwner(first.uniqueName))

        let second = try Connection(.address(fixture.address), loop: loop)
        XCTAssertEqual(try second.requestName("org.example.Modem", replaceExisting: true), .primaryOwner)
        waitFor("the owner change") { events.count == 4 }
        XCTAssertEqual(Array(events.suffix(2)), [.vanished(first.uniqueName), .appeared(second.uniqueName)])
        XCTAssertFalse(watch.isOwner(first.uniqueName), "the old owner is no longer trusted")
        XCTAssertTrue(watch.isOwner(second.uniqueName))

        second.close()
        waitFor("the name to vanish") { events.count == 5 }
        XCTAssertEqual(events.last, .vanished(second.uniqueName))
        XCTAssertNil(watch.owner)
        first.close()
    }

    func testWatchStartedWhileTheNameIsOwnedReportsTheOwner() throws {
        let owner = try Connection(.address(fixture.address), loop: loop)
        defer { owner.close() }
        try owner.requestName("org.example.Modem")
        var events: [NameOwnerEvent] = []
        let watch = try connection.watchName("org.example.Modem") { events.append($0) }
        waitFor("the initial answer") { watch.isResolved }
        XCTAssertEqual(events, [.appeared(owner.uniqueName)])
    }

    func testSubscriptionTiedToAnOwnerRejectsOtherSenders() throws {
        let owner = try Connection(.address(fixture.address), loop: loop)
        defer { owner.close() }
        try owner.requestName("org.example.Modem")
        let watch = try connection.watchName("org.example.Modem") { _ in }
        waitFor("the owner") { watch.owner != nil }
        var accepted: [String] = []
        var rejected: [String] = []
        connection.subscribe(MatchRule(interface: "org.example.Modem"), owner: watch,
                             onRejected: { rejected.append($0.member ?? "") }) { accepted.append($0.member ?? "") }
        _ = try runTool(["gdbus", "emit", "--system", "--object-path", "/m", "--signal", "org.example.Modem.Spoofed"])
        try owner.emit(path: "/m", interface: "org.example.Modem", member: "Real", "x")
        waitFor("both signals") { accepted.count + rejected.count == 2 }
        XCTAssertEqual(accepted, ["Real"])
        XCTAssertEqual(rejected, ["Spoofed"])
    }

    func testLosingTheBusIsReportedOnce() throws {
        var lost = 0
        connection.onDisconnect = { lost += 1 }
        fixture.stop()
        waitFor("the disconnect") { lost == 1 }
        XCTAssertFalse(connection.isConnected)
        let call = try Message.methodCall(destination: "org.example.X", path: "/x", interface: "org.example.X", member: "Y")
        XCTAssertThrowsError(try connection.callBlocking(call)) { XCTAssertEqual($0 as? DBusError, .disconnected) }
        var result: Result<Message, DBusError>?
        connection.call(call) { result = $0 }
        waitFor("the failed call") { result != nil }
        loop.run(until: { false }, timeout: 0.1)
        XCTAssertEqual(lost, 1)
    }
}
