import DBus

extension Connection {
    /// A blocking method call whose body is given as values; returns the reply's body. An error
    /// reply is thrown, and the wait is bounded by `timeout`.
    @discardableResult
    public func callValues(_ destination: String, _ path: String, _ interface: String, _ member: String,
                           _ arguments: [DBusValue] = [], timeout: Double) throws -> [DBusValue] {
        let message = try Message.methodCall(destination: destination, path: try ObjectPath(path),
                                             interface: interface, member: member)
        try message.append(values: arguments)
        return try callBlocking(message, timeout: timeout).values()
    }
}
