import Glibc

/// Exit statuses, documented in `telwatch --help` and telwatch(1) (`ManualFacts.meaning`, which
/// must name every case) and relied on by the systemd units (`RestartPreventExitStatus=`).
enum ExitStatus: Int32, CaseIterable {
    case success = 0
    /// Something failed at run time (a hook directory that cannot be read, a failed simulation, a
    /// history or a service this user may not read…).
    case failure = 1
    /// A bad flag, a bad value, a missing or malformed config file: starting again cannot mend it.
    case usage = 2
    /// The bus could not be reached, or was lost while watching: a supervisor should restart telwatch.
    case busUnavailable = 3
    /// `doctor` found at least one problem.
    case problemsFound = 4
    /// Another telwatch owns io.telwatch.Monitor1 on the API's bus (`--no-api` runs a second one).
    case apiNameTaken = 5

    /// As `exit(3)` takes it.
    var code: Int32 { rawValue }
}
