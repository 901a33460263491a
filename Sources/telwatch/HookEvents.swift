/// The events that run hooks (`DIR/EVENT`, `DIR/EVENT.d/*`, `hook.EVENT = …`), in the order
/// `telwatch(1)` lists them.
enum HookEvents {
    static let names = ["incoming", "dialing", "connected", "disconnected", "missed", "updated", "screened",
                        "run-started", "run-stopped", "run-expired"]
}
