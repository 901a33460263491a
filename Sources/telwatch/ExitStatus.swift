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
    /// An act (`answer`, `hangup`, `deflect`, `tones`, `dial`): no live call has the id given, no
    /// call rings (or, for `tones`, none is active) when none is named, or no voice modem has the
    /// path given to `dial`.
    case noSuchCall = 6
    /// An act: the id given fits several live calls, several ring when none is named, or `dial`
    /// finds several voice modems and is given no `--modem`.
    case ambiguousCall = 7
    /// An act that only a ringing call takes (`answer`, `deflect`) asked of one that does not ring.
    case notRinging = 8
    /// An act this user may not ask: the bus policy or the stack (polkit) said no.
    case notPermitted = 9
    /// A number or tones with anything but dial characters, or an emergency number: refused before
    /// the stack saw it.
    case refusedNumber = 10
    /// The stack refused the act, did not answer in time, or went away.
    case stackFailed = 11

    /// As `exit(3)` takes it.
    var code: Int32 { rawValue }
}
