/// Tones the far end pressed during a call (ModemManager's `Call.DtmfReceived`,
/// docs/modem-stacks.md §14): input the caller controls, so only the sixteen DTMF tones are kept,
/// at most `limit` an event, and what was left out is counted, never shown.
public struct HeardTones: Sendable, Equatable {
    /// The most tones one event carries; a burst beyond it is counted in `dropped`.
    public static let limit = 64

    /// The call, as the tracker had it when the tones were heard.
    public var call: CallSnapshot
    /// Only `0`–`9`, `*`, `#`, `A`–`D`, in the order heard; at most `limit`.
    public var tones: String
    /// Characters left out since the call's previous `tones` event: not a tone, or past `limit`.
    public var dropped: Int

    public init(call: CallSnapshot, tones: String, dropped: Int) {
        self.call = call
        self.tones = tones
        self.dropped = dropped
    }
}
