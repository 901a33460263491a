/// A call's outcome, as Home Assistant's "Call" event entity reports it.
enum MQTTCallOutcome: String, CaseIterable {
    case rang, answered, missed, rejected, ended
}
