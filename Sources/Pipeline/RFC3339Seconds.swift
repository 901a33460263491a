import Glibc

/// The last few whole seconds written as RFC 3339 (`2026-11-29T14:03:12`): a line's event time,
/// its call's first sight and its answer are usually among them, so a storm's lines skip `gmtime_r`.
public final class RFC3339Seconds {
    private static let size = 4
    private var wholeSeconds = [Int64](repeating: .min, count: size)
    private var texts = [[UInt8]](repeating: [], count: size)
    private var next = 0

    public init() {}

    func append(_ seconds: Double, to bytes: inout [UInt8]) {
        guard seconds.isFinite, seconds >= 0, seconds < 253_402_300_800 else {
            return JSONObject.appendRFC3339(seconds, to: &bytes)
        }
        let milliseconds = Int64((seconds * 1000).rounded(.down))
        let second = milliseconds / 1000
        var slot = 0
        while slot < RFC3339Seconds.size, wholeSeconds[slot] != second { slot += 1 }
        if slot == RFC3339Seconds.size {
            slot = next
            next = (next + 1) % RFC3339Seconds.size
            var text: [UInt8] = []
            JSONObject.appendRFC3339(Double(second), to: &text)
            text.removeLast(5)  // ".000Z"
            wholeSeconds[slot] = second
            texts[slot] = text
        }
        bytes.append(contentsOf: texts[slot])
        bytes.append(UInt8(ascii: "."))
        JSONObject.appendDigits(Int(milliseconds % 1000), width: 3, to: &bytes)
        bytes.append(UInt8(ascii: "Z"))
    }
}
