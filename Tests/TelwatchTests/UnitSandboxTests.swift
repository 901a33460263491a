import Glibc
import TestSupport
import XCTest

/// The shipped systemd units against what the binary does: a configuration error stops the unit
/// rather than restarting it for ever, and the sandbox lets the MQTT export the shipped
/// configuration suggests reach its broker (docs/packaging.md, "systemd the way it expects").
final class UnitSandboxTests: CommandTestCase {
    static let units = ["dist/systemd/telwatch.service", "dist/systemd/telwatch-user.service"]

    /// The values of `key=` in a unit (every line of it, words split).
    private func values(_ key: String, in unit: String) throws -> [String] {
        let text = try XCTUnwrap(Files.text(Repository.path(unit)), unit)
        return text.split(separator: "\n").filter { $0.hasPrefix(key + "=") }
            .flatMap { $0.dropFirst(key.count + 1).split(separator: " ").map(String.init) }
    }

    func testABadConfigurationStopsTheUnitWithItsMessageInsteadOfRestartingForEver() throws {
        let config = logind.directory + "/bad.conf"
        try Files.write(config, "inhibit = sometimes\n")
        let bad = try runToEnd(["watch", "--config", config, "--bus", fixture.address, "--state-dir", stateDirectory])
        guard case .exited(let status)? = bad.status else { return XCTFail("did not exit: \(String(describing: bad.status))") }
        XCTAssertNotEqual(status, 0)
        XCTAssertTrue(bad.errors.contains("inhibit"), "the message names the bad setting: \(bad.errors)")
        for unit in Self.units {
            XCTAssertEqual(try values("Restart", in: unit), ["on-failure"], unit)
            let prevented = try values("RestartPreventExitStatus", in: unit)
            XCTAssertTrue(prevented.contains(String(status)),
                          "\(unit): exit \(status) (bad configuration) would be restarted for ever: \(prevented)")
            // A lost bus is what a restart mends.
            XCTAssertFalse(prevented.contains("3"), "\(unit): a lost bus (exit 3) must still be restarted")
        }
    }

    func testTheSandboxAllowsWhatTheShippedMQTTSettingConnectsWith() throws {
        let config = try XCTUnwrap(Files.text(Repository.path("dist/telwatch.conf")))
        let line = try XCTUnwrap(config.split(separator: "\n").first { $0.hasPrefix("#mqtt = mqtt://") })
        let host = try XCTUnwrap(line.components(separatedBy: "://").last?.split(separator: ":").first.map(String.init))
        // The families the broker's name resolves to are what the MQTT connection's socket uses.
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        XCTAssertEqual(getaddrinfo(host, "1883", &hints, &found), 0, host)
        defer { freeaddrinfo(found) }
        var families: Set<String> = []
        var entry = found
        while let current = entry {
            switch current.pointee.ai_family {
            case AF_INET: families.insert("AF_INET")
            case AF_INET6: families.insert("AF_INET6")
            default: break
            }
            entry = current.pointee.ai_next
        }
        XCTAssertFalse(families.isEmpty, "\(host) resolved to no internet address")
        for unit in Self.units {
            let allowed = Set(try values("RestrictAddressFamilies", in: unit))
            XCTAssertTrue(allowed.contains("AF_UNIX"), "\(unit): the bus")
            // A broker elsewhere may be either family, whatever localhost resolves to here.
            XCTAssertTrue(allowed.isSuperset(of: families.union(["AF_INET", "AF_INET6"])),
                          "\(unit) forbids the MQTT export's sockets: \(allowed.sorted())")
        }
    }
}
