/// `telwatch doctor` arguments.
enum DoctorCommand {
    /// The watch options `doctor` takes.
    static let acceptedOptions = OptionTable.accepted(by: .doctor)

    static func run(_ arguments: [String]) -> Int32 {
        var account: String?
        do {
            if let user = try DoctorAccount.requested(in: arguments), !arguments.contains(where: { $0 == "--help" || $0 == "-h" }) {
                account = try DoctorAccount.become(user)
            }
        } catch {
            warn("\(error)")
            return ExitStatus.usage.code
        }
        let options: WatchOptions
        // After `--user`: the service's configuration is found as that account.
        switch WatchArguments.parseOrExit(arguments, command: "doctor", accepting: acceptedOptions, help: Help.doctor,
                                          service: ServiceConfiguration.find(), own: { argument, cursor in
                                              guard argument == "--user" else { return false }
                                              _ = try cursor.value(for: argument)
                                              return true
                                          }) {
        case .success(let parsed): options = parsed
        case .failure(let exit): return exit.status
        }
        if let account { LineWriter(fd: 1).write(account) }
        var doctor = Doctor(options: options)
        return doctor.run()
    }
}
