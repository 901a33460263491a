/// Where the read of one ModemManager call stands. A `CallAdded` carries only the call's path, so
/// its properties are read (docs/modem-stacks.md §2.3); what arrives for it while the first read
/// is out waits in that read's queue (`ModemManagerCallReplay`). Once read, the call is followed
/// from its signals, and after a resume it may be read again. A call the stack deleted, or that
/// nothing could place, has no record at all.
enum ModemManagerCallRead {
    /// The first read, sent by a sync: the call was live before we looked (or, in the resync after
    /// a resume, `resumed`: what the read finds is `learnedOnResume`).
    case syncRead(FirstRead, resumed: Bool)
    /// The first read, sent because a signal brought the call (a ring): it went before everything
    /// else. `announced`: its `CallAdded` announced it, so it holds the run while it is read.
    case ringRead(FirstRead, announced: Bool)
    /// A ring read that timed out: its answer is still awaited (a stack busy for a while), and a
    /// late one still reports the call, which stays what it was until then.
    case ringOverdue(FirstRead, announced: Bool)
    /// Read: followed from its signals.
    case followed(Followed)
    /// Followed, and read again by the resync after a resume (a change while the system slept has
    /// no signal telwatch saw): the answer that matches `token` comes last, as the newest word.
    case refreshing(Followed, token: UInt64)

    /// A first read in flight.
    struct FirstRead {
        /// Matches the answer to this read (a call's path can be read again for a new call).
        let token: UInt64
        /// What arrived for the call meanwhile, in order.
        var queue: [ModemManagerCallUpdate]
    }

    /// What following a read call needs.
    struct Followed {
        /// The call's last known direction: it decides what WAITING and UNKNOWN mean.
        var direction: ModemManagerCallDirection
        var terminated: Bool
        /// The last StateChanged applied: the PropertiesChanged that repeats it is skipped.
        var lastStateChange: (state: ModemManagerStateValue, reason: UInt32)?
    }

    /// The first read out, whatever sent it; nil once the call is read.
    var firstRead: FirstRead? {
        switch self {
        case .syncRead(let read, _), .ringRead(let read, _), .ringOverdue(let read, _): return read
        case .followed, .refreshing: return nil
        }
    }

    /// The call as followed once read; nil while its first read is out.
    var followed: Followed? {
        switch self {
        case .followed(let followed), .refreshing(let followed, _): return followed
        case .syncRead, .ringRead, .ringOverdue: return nil
        }
    }

    var isFirstReadOut: Bool { firstRead != nil }

    /// A read call that is not terminated: what a listing or a `CallAdded` finds already followed.
    var isFollowedLive: Bool { followed.map { !$0.terminated } ?? false }

    /// Found by a sync's listing: "live at start" (`initial`).
    var isInitial: Bool {
        if case .syncRead = self { return true }
        return false
    }

    var isResumed: Bool {
        if case .syncRead(_, resumed: true) = self { return true }
        return false
    }

    var isAnnounced: Bool {
        switch self {
        case .ringRead(_, let announced), .ringOverdue(_, let announced): return announced
        case .syncRead, .followed, .refreshing: return false
        }
    }

    /// Keeps `change` for the replay while the first read is out; an owner that floods a call it
    /// never answers for must not grow memory: the first change (it places the call) and the
    /// newest are kept, the read's answer is the truth anyway. False once the call is read.
    mutating func enqueue(_ change: ModemManagerCallUpdate, limit: Int) -> Bool {
        func queued(_ read: FirstRead) -> FirstRead {
            var read = read
            if read.queue.count >= limit { read.queue.remove(at: 1) }
            read.queue.append(change)
            return read
        }
        switch self {
        case .syncRead(let read, let resumed): self = .syncRead(queued(read), resumed: resumed)
        case .ringRead(let read, let announced): self = .ringRead(queued(read), announced: announced)
        case .ringOverdue(let read, let announced): self = .ringOverdue(queued(read), announced: announced)
        case .followed, .refreshing: return false
        }
        return true
    }

    /// Changes the followed call, keeping a read again in flight, and returns what `change` does;
    /// nil (and nothing changed) while the first read is out.
    mutating func follow<Result>(_ change: (inout Followed) -> Result) -> Result? {
        switch self {
        case .followed(var followed):
            defer { self = .followed(followed) }
            return change(&followed)
        case .refreshing(var followed, let token):
            defer { self = .refreshing(followed, token: token) }
            return change(&followed)
        case .syncRead, .ringRead, .ringOverdue:
            return nil
        }
    }
}
