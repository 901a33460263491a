import Glibc

/// Where the broker is: `mqtt://HOST[:PORT]` (1883) or `mqtts://HOST[:PORT]` (8883, TLS).
public struct MQTTBroker: Equatable, Sendable {
    public var host: String
    public var port: Int
    public var tls: Bool

    public init(host: String, port: Int, tls: Bool) {
        self.host = host
        self.port = port
        self.tls = tls
    }

    /// nil for anything but `mqtt://` or `mqtts://` with a host and an optional port 1…65535.
    /// An IPv6 address is written in brackets (`mqtt://[::1]:1883`).
    public init?(url: String) {
        let tls: Bool
        let rest: Substring
        if url.hasPrefix("mqtt://") {
            tls = false
            rest = url.dropFirst(7)
        } else if url.hasPrefix("mqtts://") {
            tls = true
            rest = url.dropFirst(8)
        } else {
            return nil
        }
        // No path, no user info: credentials never ride on the command line.
        guard !rest.isEmpty, !rest.contains("/"), !rest.contains("@"), !rest.contains(" ") else { return nil }
        var host = String(rest)
        var port = tls ? 8883 : 1883
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            host = String(rest[rest.index(after: rest.startIndex)..<close])
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let number = Int(after.dropFirst()) else { return nil }
                port = number
            }
        } else if let colon = rest.lastIndex(of: ":") {
            guard let number = Int(rest[rest.index(after: colon)...]) else { return nil }
            host = String(rest[..<colon])
            port = number
        }
        guard !host.isEmpty, (1...65535).contains(port) else { return nil }
        self.init(host: host, port: port, tls: tls)
    }

    public var url: String {
        (tls ? "mqtts://" : "mqtt://") + (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
    }
}
