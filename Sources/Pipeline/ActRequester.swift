/// Who asked for an act on a call (the `acted` event's `by`): the command line, another program
/// through the D-Bus API, an MQTT command, or a screening rule of telwatch's own.
public enum ActRequester: String, Sendable {
    case cli, api, mqtt, rule
}
