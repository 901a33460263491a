import DBus
import Glibc

/// The demo's stand-ins for a phone session's services, on the demo's private bus: feedbackd,
/// callaudiod and a notification server with the real names, paths and methods
/// (docs/phone-actions.md). They do nothing but answer as the real ones do and say what they were
/// asked, so `telwatch demo --feedback --call-audio --notify` shows what a phone would do, when.
public final class SimulatedPhoneSession {
    private let connection: Connection
    private let say: (String) -> Void
    private var nextFeedback: UInt32 = 1
    private var nextNotification: UInt32 = 1

    public init(connection: Connection, say: @escaping (String) -> Void) throws {
        self.connection = connection
        self.say = say
        try exportFeedbackd()
        try exportCallAudio()
        try exportNotifications()
    }

    private func exportFeedbackd() throws {
        let feedback = try ExportedInterface("org.sigxcpu.Feedback")
        try feedback.addMethod("TriggerFeedback", in: "ssa{sv}i", out: "u") { [unowned self] call in
            let (_, event, _, timeout) = try call.decode(String.self, String.self, PropertyMap.self, Int32.self)
            let id = self.nextFeedback
            self.nextFeedback += 1
            self.say("feedbackd: \(event) " + (timeout == -1 ? "plays once" : "sounds (feedback \(id))"))
            return [.uint32(id)]
        }
        try feedback.addMethod("EndFeedback", in: "u") { [unowned self] call in
            let id = try call.decode(UInt32.self)
            self.say("feedbackd: feedback \(id) ends")
            try self.connection.emit(path: "/org/sigxcpu/Feedback", interface: "org.sigxcpu.Feedback",
                                     member: "FeedbackEnded", id, UInt32(0))
            return []
        }
        try feedback.addSignal("FeedbackEnded", signature: "uu")
        connection.export(ExportedObject(path: "/org/sigxcpu/Feedback", interfaces: [feedback]))
        _ = try connection.requestName("org.sigxcpu.Feedback")
    }

    private func exportCallAudio() throws {
        let audio = try ExportedInterface("org.mobian_project.CallAudio")
        try audio.addMethod("SelectMode", in: "u", out: "b") { [unowned self] call in
            let mode = try call.decode(UInt32.self)
            self.say("callaudiod: " + (mode == 1 ? "call audio mode" : "default audio mode"))
            return [.bool(true)]
        }
        connection.export(ExportedObject(path: "/org/mobian_project/CallAudio", interfaces: [audio]))
        _ = try connection.requestName("org.mobian_project.CallAudio")
    }

    private func exportNotifications() throws {
        let notifications = try ExportedInterface("org.freedesktop.Notifications")
        try notifications.addMethod("Notify", in: "susssasa{sv}i", out: "u") { [unowned self] call in
            // The first five of Notify's eight arguments (its signature was checked by `in:`).
            var reader = call.reader()
            _ = try reader.read(String.self)
            let replaces = try reader.read(UInt32.self)
            _ = try reader.read(String.self)
            let summary = try reader.read(String.self), body = try reader.read(String.self)
            let id = replaces != 0 ? replaces : self.nextNotification
            if replaces == 0 { self.nextNotification += 1 }
            self.say("notification \(id)\(replaces != 0 ? " (replaced)" : ""): \(summary): \(body)")
            return [.uint32(id)]
        }
        try notifications.addMethod("CloseNotification", in: "u") { [unowned self] call in
            let id = try call.decode(UInt32.self)
            self.say("notification \(id) withdrawn")
            try self.connection.emit(path: "/org/freedesktop/Notifications", interface: "org.freedesktop.Notifications",
                                     member: "NotificationClosed", id, UInt32(3))
            return []
        }
        try notifications.addSignal("NotificationClosed", signature: "uu")
        connection.export(ExportedObject(path: "/org/freedesktop/Notifications", interfaces: [notifications]))
        _ = try connection.requestName("org.freedesktop.Notifications")
    }
}
