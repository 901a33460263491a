import Glibc

/// A private bus playing a phone user's *session* bus (the stacks stay on the test's system
/// bus), with the phone session's services on it: Debian's real feedbackd, the project's
/// callaudiod template, dbusmock's notification server.
extension BusFixture {
    /// Debian's own feedbackd with one of the test themes (`Tests/Fixtures/feedbackd/`): `Dummy`
    /// feedbacks on short timers (the stock theme busy-loops with no sound card), settings in
    /// memory, a private home. Returns once it owns its name.
    @discardableResult
    public func startFeedbackd(theme: String = "theme.json") throws -> TestProcess {
        let home = directory + "/home"
        try Files.makeDirectory(home)
        let process = try start(
            ["/usr/libexec/feedbackd"],
            extraEnvironment: ["FEEDBACK_THEME=" + Repository.path("Tests/Fixtures/feedbackd/" + theme),
                               "GSETTINGS_BACKEND=memory", "HOME=" + home, "XDG_CONFIG_HOME=" + home + "/.config"],
            name: "feedbackd")
        try waitForName("org.sigxcpu.Feedback")
        return process
    }

    /// A python3-dbusmock service on this bus, returned once it owns `name`.
    @discardableResult
    public func startMock(template: String, owning name: String, parameters: String? = nil) throws -> TestProcess {
        let process = try startMock(template: template, parameters: parameters)
        try waitForName(name)
        return process
    }
}
