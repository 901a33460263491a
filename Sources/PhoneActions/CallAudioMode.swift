/// callaudiod's audio modes (`SelectMode(u)`).
enum CallAudioMode: UInt32 {
    case `default` = 0
    case call = 1
}
