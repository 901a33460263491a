/// How telwatch meets a system sleep.
public struct SleepSettings: Equatable, Sendable {
    /// Hold a `sleep` `delay` inhibitor while awake: logind then waits (a few seconds at most)
    /// for telwatch to record the sleep and write its lines before the system sleeps. It is
    /// released the moment `PrepareForSleep(true)` has been handled, and taken again after resume.
    public var delayLock: Bool
    /// After a resume, hold a `sleep` `block` inhibitor this many seconds, so that a call that
    /// woke the system is seen (and its run started) before it can sleep again; nil for none.
    public var resumeGrace: Double?
    public var who: String

    public init(delayLock: Bool = false, resumeGrace: Double? = nil, who: String = "telwatch") {
        self.delayLock = delayLock
        self.resumeGrace = resumeGrace
        self.who = who
    }

    public var delayRequest: InhibitorRequest {
        InhibitorRequest(what: "sleep", who: who, why: "telwatch records its state before the system sleeps",
                         mode: "delay")
    }

    public var graceRequest: InhibitorRequest {
        InhibitorRequest(what: "sleep", who: who, why: "telwatch looks at the calls after a resume", mode: "block")
    }
}
