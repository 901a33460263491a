/// What `telwatch demo` plays on the simulator: a few calls of every kind, told as they happen.
public enum DemoStory {
    public static let calls = """
    echo an incoming call rings, and is answered
    ring +15551230001
    sleep 1.5
    answer c1
    sleep 1.5
    echo a second call waits; the first is put on hold and the second answered
    waiting +15551230002
    sleep 1.5
    hold c1
    answer c2
    sleep 1.5
    remote-hangup c2
    resume c1
    sleep 1
    hangup c1
    sleep 1.5
    echo a call rings with no caller id at first, then gives up unanswered
    ring -
    sleep 0.5
    clip last +15551230003
    sleep 1.5
    missed last
    sleep 1.5
    echo an outgoing call: dialing, ringing at the far end, answered, hung up
    dial +15551230004
    sleep 1
    alerting last
    sleep 1.5
    answer last
    sleep 1.5
    hangup last
    """

    /// With `--notify`: the missed caller calls again and is answered, which withdraws the
    /// notification of the missed call.
    public static let callBack = """
    echo the missed caller calls again, and is answered
    ring +15551230003
    sleep 1
    answer last
    sleep 1.5
    remote-hangup last
    """
}
