/// What one `DtmfReceived(s)` says (docs/modem-stacks.md §14). ModemManager passes on what the
/// modem's URC held: one tone character for Huawei (`^DDTMF`), SIMCom (`+RXDTMF`) and u-blox
/// (`+UUDTMFD`), and for Quectel (`+QTONEDET`, since 1.24) the tone's ASCII code in decimal
/// (`49` for `1`, `35` for `#`). Anything else is not a tone and is counted, never kept.
enum ModemManagerTones {
    /// The tones in `raw` (at most `HeardTones.limit`) and how many characters were left out.
    static func decode(_ raw: String) -> (tones: String, dropped: Int) {
        if let quectel = asciiCode(raw) { return (String(quectel), 0) }
        var tones = ""
        var dropped = 0
        for scalar in raw.unicodeScalars {
            if tones.utf8.count < HeardTones.limit, let tone = tone(scalar) {
                tones.unicodeScalars.append(tone)
            } else {
                dropped += 1
            }
        }
        return (tones, dropped)
    }

    /// A tone as the sixteen DTMF keys name it, as every plugin's pattern writes it: a lowercase
    /// letter is no modem's and is dropped with the rest (`reboot` holds no `B`).
    static func tone(_ scalar: Unicode.Scalar) -> Unicode.Scalar? {
        switch scalar {
        case "0"..."9", "*", "#", "A"..."D": return scalar
        default: return nil
        }
    }

    /// Quectel's form: two or three decimal digits naming a tone's ASCII code. Two digits that are
    /// a code are read as one (`35` is `#`, never `3` then `5`): no plugin reports two tones in one
    /// signal.
    private static func asciiCode(_ raw: String) -> Unicode.Scalar? {
        let bytes = raw.utf8
        guard (2...3).contains(bytes.count), bytes.allSatisfy({ (0x30...0x39).contains($0) }),
              let code = UInt32(raw), let scalar = Unicode.Scalar(code)
        else { return nil }
        return tone(scalar)
    }
}
