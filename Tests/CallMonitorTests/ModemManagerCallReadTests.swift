import XCTest
@testable import CallMonitor

/// The stages of a ModemManager call's read, on their own (the backend's use of them is tested
/// against the real daemon and the dbusmock template).
final class ModemManagerCallReadTests: XCTestCase {
    private func change(_ state: ModemManagerCallState) -> ModemManagerCallUpdate {
        .properties(ModemManagerCallProperties(state: state))
    }

    func testChangesWaitWhileTheFirstReadIsOutAndTheFloodKeepsTheFirstAndTheNewest() {
        var read = ModemManagerCallRead.ringRead(.init(token: 7, queue: []), announced: true)
        XCTAssertTrue(read.enqueue(change(.ringingIn), limit: 3))
        for _ in 0..<10 { XCTAssertTrue(read.enqueue(change(.waiting), limit: 3)) }
        XCTAssertTrue(read.enqueue(change(.active), limit: 3))
        XCTAssertEqual(read.firstRead?.queue, [change(.ringingIn), change(.waiting), change(.active)])
        XCTAssertEqual(read.firstRead?.token, 7)
        XCTAssertTrue(read.isAnnounced)
        XCTAssertNil(read.follow { $0.terminated }, "nothing is followed before the first read answers")
    }

    func testOnlyASyncReadIsInitialAndOnlyTheResyncsIsResumed() {
        let first = ModemManagerCallRead.FirstRead(token: 1, queue: [])
        let sync = ModemManagerCallRead.syncRead(first, resumed: false)
        let resync = ModemManagerCallRead.syncRead(first, resumed: true)
        let ring = ModemManagerCallRead.ringRead(first, announced: true)
        let overdue = ModemManagerCallRead.ringOverdue(first, announced: false)
        XCTAssertEqual([sync, resync, ring, overdue].map(\.isInitial), [true, true, false, false])
        XCTAssertEqual([sync, resync, ring, overdue].map(\.isResumed), [false, true, false, false])
        XCTAssertEqual([sync, resync, ring, overdue].map(\.isAnnounced), [false, false, true, false])
        XCTAssertEqual([sync, resync, ring, overdue].map(\.isFirstReadOut), [true, true, true, true])
    }

    func testAReadCallIsFollowedAndAReadAgainKeepsItsTokenThroughItsChanges() {
        let live = ModemManagerCallRead.Followed(direction: .incoming, terminated: false)
        var read = ModemManagerCallRead.refreshing(live, token: 9)
        XCTAssertFalse(read.enqueue(change(.active), limit: 64), "a read call's changes apply at once")
        XCTAssertTrue(read.isFollowedLive)
        XCTAssertEqual(read.follow { followed -> Bool in
            followed.terminated = true
            return followed.direction == .incoming
        }, true)
        guard case .refreshing(let followed, let token) = read else { return XCTFail("not reading again: \(read)") }
        XCTAssertEqual(token, 9)
        XCTAssertTrue(followed.terminated)
        XCTAssertFalse(read.isFollowedLive, "a terminated call is not live")
        XCTAssertFalse(read.isFirstReadOut)
    }

    func testTheEndReasonsAreTheWordsTheEventStreamPrints() {
        XCTAssertEqual(CallEndReason.own.map(\.word), ["removed", "backend-lost", "modem-removed"])
    }

    func testAnUnknownModemIsCarriedAsAnEmptyPath() {
        XCTAssertEqual(ModemPath(""), .unknown)
        XCTAssertEqual(ModemPath.unknown.eventValue, "")
        XCTAssertEqual(ModemPath("/org/freedesktop/ModemManager1/Modem/0"), .path("/org/freedesktop/ModemManager1/Modem/0"))
        XCTAssertEqual(ModemPath("/org/freedesktop/ModemManager1/Modem/0").eventValue,
                       "/org/freedesktop/ModemManager1/Modem/0")
        XCTAssertFalse(ModemPath.unknown.isKnown)
    }
}
