import TestSupport
import XCTest
@testable import telwatch

/// Which configuration `block`, `allow`, `doctor` and `log` take when given none: the one the
/// shipped units give the service, found by one rule (`ServiceConfiguration`).
final class ServiceConfigurationTests: XCTestCase {
    private func unitText(_ path: String) throws -> String { try XCTUnwrap(Files.text(Repository.path(path)), path) }

    func testRootAndTheServiceAccountTakeTheSystemServiceAndAUserItsOwnInstance() {
        let system = ServiceConfiguration.system(configFile: "/etc/telwatch/telwatch.conf")
        XCTAssertEqual(ServiceConfiguration.find(euid: 0, serviceUID: 998, environment: ["HOME=/root"]), system)
        XCTAssertEqual(ServiceConfiguration.find(euid: 998, serviceUID: 998, environment: []), system,
                       "doctor --user telwatch")
        XCTAssertEqual(ServiceConfiguration.find(euid: 1000, serviceUID: 998, environment: ["HOME=/home/ann"]),
                       .user(rulesFile: "/home/ann/.config/telwatch/screening.conf"))
        XCTAssertEqual(ServiceConfiguration.find(euid: 1000, serviceUID: nil,
                                                 environment: ["HOME=/home/ann", "XDG_CONFIG_HOME=/cfg"]),
                       .user(rulesFile: "/cfg/telwatch/screening.conf"))
        XCTAssertEqual(ServiceConfiguration.find(euid: 1000, serviceUID: nil,
                                                 environment: ["HOME=/home/ann", "XDG_CONFIG_HOME=rel"]),
                       .user(rulesFile: "/home/ann/.config/telwatch/screening.conf"), "a relative XDG directory is ignored")
        XCTAssertNil(ServiceConfiguration.find(euid: 1000, serviceUID: nil, environment: []))
    }

    /// The rule's files are the ones the shipped units, configuration and package name.
    func testTheRuleNamesWhatTheUnitsAndThePackageGiveTheService() throws {
        XCTAssertTrue(try unitText("dist/systemd/telwatch.service")
            .contains("ExecStart=/usr/bin/telwatch watch --config \(ServiceConfiguration.systemConfigFile)\n"))
        XCTAssertTrue(try unitText("dist/openrc/telwatch").contains("--config \(ServiceConfiguration.systemConfigFile) "))
        XCTAssertTrue(try unitText("dist/systemd/telwatch.service").contains("User=\(ServiceConfiguration.serviceAccount)\n"))
        let user = try unitText("dist/systemd/telwatch-user.service")
        XCTAssertTrue(user.contains("--screening %E/\(ServiceConfiguration.userRulesFile)"), user)
        XCTAssertTrue(user.contains("/usr/bin/touch -a %E/\(ServiceConfiguration.userRulesFile)\n"),
                      "the user unit makes its empty rules file, so its first start says nothing of a missing one")

        let options = try XCTUnwrap(WatchArguments.parse(["--config", Repository.path("dist/telwatch.conf")]))
        let rules = try XCTUnwrap(options.screeningFile, "the packaged configuration names a rules file")
        XCTAssertEqual(rules, "/etc/telwatch/screening.conf")
        let install = try unitText("debian/telwatch.install")
        XCTAssertTrue(install.contains("dist/screening.conf etc/telwatch\n"), install)
        let packaged = Array(try unitText("dist/screening.conf").utf8)
        guard case .success(let read) = WatchScreening.rules(packaged, path: rules) else {
            return XCTFail("the packaged rules file does not parse")
        }
        XCTAssertEqual(read.numberCount, 0, "as packaged it screens nothing")
        XCTAssertNil(read.withheld)
        XCTAssertNil(read.unknown)
        XCTAssertTrue(read.quiet.isEmpty)
    }
}
