import Glibc

/// A message the broker delivered on a subscribed topic.
struct MQTTMessage {
    var topic: String
    var payload: [UInt8]
    /// A retained message: the broker's copy of an old one, not something sent now.
    var retained: Bool
}
