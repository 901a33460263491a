import CallMonitor
import DBus
import Glibc
import Loop
@testable import PhoneActions
import TestSupport
import XCTest

/// `--notify` against python3-dbusmock's own `notification_daemon` template.
final class NotifyActionTests: PhoneActionTestCase {
    /// A missed call is one notification (category `call.missed`, the number); the same number's
    /// next missed call replaces it; that number's next answered call withdraws it.
    func testAMissedCallIsNotifiedReplacedAndWithdrawnWhenThatNumberIsAnswered() throws {
        try session.startMock(template: "notification_daemon", owning: "org.freedesktop.Notifications")
        try startModemManager()
        let telwatch = try startWatchWithActions(["--notify"])

        let (first, _) = try ringSeen("+15551230001")
        try setStateSeen(first, .terminated, reason: .terminated)
        XCTAssertNotNil(nextEvent(telwatch, "missed"))
        let notify = try XCTUnwrap(sessionTraffic.waitFor(isCall("Notify")))
        XCTAssertEqual(notify.arguments.prefix(4), [#"string "telwatch""#, "uint32 0", #"string "call-missed-symbolic""#,
                                                    #"string "Missed call""#])
        XCTAssertTrue(notify.arguments[4].hasPrefix(#"string "+15551230001 at "#), notify.arguments[4])
        XCTAssertTrue(notify.arguments.contains { $0.hasSuffix(#"string "call.missed""#) }, "no category: \(notify.arguments)")
        let id = try XCTUnwrap(sessionTraffic.reply(to: notify)?.firstUInt32)

        // Another number's missed call is a notification of its own.
        let (other, _) = try ringSeen("+15551230009")
        try setStateSeen(other, .terminated, reason: .terminated)
        XCTAssertEqual(sessionTraffic.waitFor(isCall("Notify"))?.arguments[1], "uint32 0")

        let (again, _) = try ringSeen("+15551230001")
        try setStateSeen(again, .terminated, reason: .terminated)
        let replacing = sessionTraffic.waitFor(isCall("Notify"))
        XCTAssertEqual(replacing?.arguments[1], "uint32 \(id)", "the same number's notification is replaced")

        let (answered, _) = try ringSeen("+15551230001")
        let answer = try setStateSeen(answered, .active, reason: .accepted)
        let close = sessionTraffic.waitFor(isCall("CloseNotification"))
        assertPrompt(close, after: answer, "the notification withdrawn on answer")
        XCTAssertEqual(close?.firstUInt32, id)
        XCTAssertEqual(close.flatMap { sessionTraffic.reply(to: $0) }?.kind, "method return")
        XCTAssertEqual(telwatch.log(), "")
    }

    /// A caller id or contact name is the network's (or a file's): markup and control characters
    /// are escaped before a notification server reads them.
    func testHostileNamesAndNumbersAreEscapedInTheBody() {
        var call = CallSnapshot(id: CallID.random(), key: CallKey(backend: .modemManager, path: "/c"), modem: "",
                                direction: .incoming, number: "+1<b>\u{1b}[2J", name: "Eve <a href='x'>&\n",
                                state: .disconnected, detail: nil, firstSeen: 0)
        let body = NotifyAction.body(call, name: call.name)
        XCTAssertTrue(body.hasPrefix(#"Eve &lt;a href=&apos;x&apos;&gt;&amp;\u{a} (+1&lt;b&gt;\u{1b}[2J) at "#), body)
        call.number = ""
        XCTAssertTrue(NotifyAction.body(call, name: "").hasPrefix("unknown number at "))
    }

    /// With `--contacts`, the notification names the caller as the user's own contacts do, and a
    /// call back from the same number written nationally withdraws it.
    func testAMissedCallShowsTheContactsNameAndTheNationalFormWithdrawsIt() throws {
        let contacts = session.directory + "/contacts.vcf"
        try Files.write(contacts, "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Alice <Smith>\r\nTEL;TYPE=CELL:(555) 123-0001\r\n"
                        + "END:VCARD\r\n")
        try session.startMock(template: "notification_daemon", owning: "org.freedesktop.Notifications")
        try startModemManager()
        let telwatch = try startWatchWithActions(["--notify", "--contacts", contacts])

        let (missed, _) = try ringSeen("+15551230001")
        try setStateSeen(missed, .terminated, reason: .terminated)
        let notify = try XCTUnwrap(sessionTraffic.waitFor(isCall("Notify")))
        XCTAssertTrue(notify.arguments[4].hasPrefix(#"string "Alice &lt;Smith&gt; (+15551230001) at "#),
                      notify.arguments[4])
        let id = try XCTUnwrap(sessionTraffic.reply(to: notify)?.firstUInt32)

        let (answered, _) = try ringSeen("5551230001")
        let answer = try setStateSeen(answered, .active, reason: .accepted)
        let close = sessionTraffic.waitFor(isCall("CloseNotification"))
        assertPrompt(close, after: answer, "the notification withdrawn when the national form is answered")
        XCTAssertEqual(close?.firstUInt32, id)
        XCTAssertEqual(telwatch.log(), "")
    }

    /// A NotificationClosed that is not (id, reason) is not used, and said once however often it
    /// comes; the notifications go on.
    func testANotificationClosedOfAnotherShapeIsSaidOnce() throws {
        try session.startMock(template: "notification_daemon", owning: "org.freedesktop.Notifications")
        try startModemManager()
        let telwatch = try startWatchWithActions(["--notify"])
        let loop = try EventLoop()
        let client = try Connection(.address(session.address), loop: loop)
        defer { client.close() }
        func emitMalformedClosed() throws {
            try client.callValues("org.freedesktop.Notifications", "/org/freedesktop/Notifications",
                                  "org.freedesktop.DBus.Mock", "EmitSignal",
                                  [.string("org.freedesktop.Notifications"), .string("NotificationClosed"), .string("u"),
                                   .array(elementSignature: "v", [.variant(.uint32(1))])], timeout: 10)
        }

        // Once a missed call was notified, telwatch listens for NotificationClosed.
        let (missed, _) = try ringSeen("+15551230001")
        try setStateSeen(missed, .terminated, reason: .terminated)
        XCTAssertNotNil(sessionTraffic.waitFor(isCall("Notify")))
        try emitMalformedClosed()
        XCTAssertTrue(Files.waitUntil(telwatch.logPath ?? "", timeout: 10) { !telwatch.log().isEmpty }, "nothing said")
        try emitMalformedClosed()

        // The same number's next missed call and its answer: the notification is still withdrawn,
        // and telwatch read the second signal before that Notify's answer (the server sent it first).
        let (again, _) = try ringSeen("+15551230001")
        try setStateSeen(again, .terminated, reason: .terminated)
        XCTAssertNotNil(sessionTraffic.waitFor(isCall("Notify")))
        let (answered, _) = try ringSeen("+15551230001")
        try setStateSeen(answered, .active, reason: .accepted)
        XCTAssertNotNil(sessionTraffic.waitFor(isCall("CloseNotification")), "the notification was not withdrawn")
        XCTAssertEqual(telwatch.log(), "telwatch: notify: NotificationClosed came as 'u', not 'uu': not used (said once)\n")
    }
}
