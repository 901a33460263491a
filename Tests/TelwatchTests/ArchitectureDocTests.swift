import Foundation
import TestSupport
import XCTest

/// docs/ARCHITECTURE.md stays true of the code: every sink the sources define is in the
/// pipeline's diagram and in WatchSession's list of sinks.
final class ArchitectureDocTests: XCTestCase {
    /// `class NAME: EventSink` across Sources/, found by a plain scan of the files.
    private func sinkTypes() throws -> Set<String> {
        let root = Repository.path("Sources")
        var sinks = Set<String>()
        let files = try XCTUnwrap(FileManager.default.enumerator(atPath: root))
        for case let file as String in files where file.hasSuffix(".swift") {
            let text = try XCTUnwrap(Files.text(root + "/" + file))
            for line in text.split(separator: "\n") where line.contains("class ") && line.contains(": EventSink") {
                let name = line.components(separatedBy: "class ")[1].components(separatedBy: ":")[0]
                sinks.insert(name.trimmingCharacters(in: .whitespaces))
            }
        }
        return sinks
    }

    func testEverySinkIsInTheDocsPipelineAndInWatchSessionsList() throws {
        let sinks = try sinkTypes()
        XCTAssertGreaterThanOrEqual(sinks.count, 10, "\(sinks)")
        let doc = try XCTUnwrap(Files.text(Repository.path("docs/ARCHITECTURE.md")))
        let start = try XCTUnwrap(doc.range(of: "## The pipeline"))
        let diagram = String(doc[start.upperBound...]).components(separatedBy: "```")[1]
        let session = try XCTUnwrap(Files.text(Repository.path("Sources/telwatch/WatchSession.swift")))
        let header = session.components(separatedBy: "final class WatchSession")[0]
        for sink in sinks.sorted() {
            XCTAssertTrue(diagram.contains(sink), "\(sink) is not in docs/ARCHITECTURE.md's pipeline diagram")
            XCTAssertTrue(header.contains(sink), "\(sink) is not in WatchSession's list of sinks")
        }
    }
}

/// docs/ARCHITECTURE.md's module table is the law of the imports: every `import` in Sources/ is a
/// module its module's row lists (SwiftPM itself lets a target import any module below it, listed
/// or not), or Glibc; and Package.swift's dependencies are exactly the rows'.
final class ModuleTableTests: XCTestCase {
    private static let systemModules: Set<String> = ["Glibc"]

    /// The modules each row of the table may import: the `quoted` names of its last column,
    /// leaving out what a parenthesis says about them.
    private func table() throws -> [String: Set<String>] {
        let doc = try XCTUnwrap(Files.text(Repository.path("docs/ARCHITECTURE.md")))
        let start = try XCTUnwrap(doc.range(of: "## Modules"))
        let section = String(doc[start.upperBound...]).components(separatedBy: "\n## ")[0]
        var rows: [String: Set<String>] = [:]
        for line in section.split(separator: "\n") where line.hasPrefix("| `") {
            let columns = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            guard columns.count >= 4, let module = Self.quoted(columns[1]).first else { continue }
            rows[module] = Set(Self.quoted(Self.outsideParentheses(columns[columns.count - 2])))
        }
        return rows
    }

    /// Each target of Package.swift with its sources in Sources/, and its dependencies.
    private func packageDependencies() throws -> [String: Set<String>] {
        let manifest = try XCTUnwrap(Files.text(Repository.path("Package.swift")))
        var targets: [String: Set<String>] = [:]
        for piece in manifest.components(separatedBy: "arget(name: \"").dropFirst() {
            let name = piece.components(separatedBy: "\"")[0]
            let call = piece.components(separatedBy: ")")[0]
            guard !call.contains("path:"), Files.exists(Repository.path("Sources/" + name)) else { continue }
            let list = call.components(separatedBy: "dependencies: [").dropFirst().first?.components(separatedBy: "]")[0] ?? ""
            let quotes = list.split(separator: "\"", omittingEmptySubsequences: false)
            targets[name] = Set(quotes.enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) })
        }
        return targets
    }

    func testEverySourceFileImportsOnlyWhatItsModulesRowAllows() throws {
        let rows = try table()
        XCTAssertGreaterThanOrEqual(rows.count, 15, "\(rows.keys.sorted())")
        let root = Repository.path("Sources")
        let modules = Set(Files.names(in: root))
        var checked = 0
        for module in modules.sorted() {
            let files = try XCTUnwrap(FileManager.default.enumerator(atPath: root + "/" + module))
            for case let file as String in files where file.hasSuffix(".swift") {
                guard let allowed = rows[module] else {
                    XCTFail("Sources/\(module) has no row in docs/ARCHITECTURE.md's module table")
                    break
                }
                let path = "Sources/\(module)/\(file)"
                let text = try XCTUnwrap(Files.text(Repository.path(path)))
                for imported in Self.imports(in: text) {
                    checked += 1
                    if modules.contains(imported) {
                        XCTAssertTrue(allowed.contains(imported),
                                      "\(path) imports \(imported): docs/ARCHITECTURE.md's table does not let \(module) import it")
                    } else {
                        XCTAssertTrue(Self.systemModules.contains(imported),
                                      "\(path) imports \(imported): from outside the package only Glibc is imported in Sources/")
                    }
                }
            }
        }
        XCTAssertGreaterThan(checked, 200)
    }

    func testPackageSwiftListsExactlyTheTablesDependencies() throws {
        let rows = try table()
        let targets = try packageDependencies()
        XCTAssertGreaterThanOrEqual(targets.count, 12, "\(targets.keys.sorted())")
        for (target, dependencies) in targets.sorted(by: { $0.key < $1.key }) {
            guard let allowed = rows[target] else {
                XCTFail("Package.swift's target \(target) has no row in docs/ARCHITECTURE.md's module table")
                continue
            }
            for extra in dependencies.subtracting(allowed).sorted() {
                XCTFail("Package.swift lets \(target) import \(extra), which docs/ARCHITECTURE.md's table does not")
            }
            for missing in allowed.subtracting(dependencies).sorted() {
                XCTFail("docs/ARCHITECTURE.md's table lets \(target) import \(missing), which Package.swift does not list")
            }
        }
    }

    /// The reader of the table and the imports reads what it should.
    func testTheImportReaderAndTheTableReaderReadTheirFormats() throws {
        XCTAssertEqual(Self.imports(in: "import Loop\n@testable import DBus\npublic import struct Glibc.stat\n// import X\n"),
                       ["Loop", "DBus", "Glibc"])
        XCTAssertEqual(Self.quoted(Self.outsideParentheses("`A`, `B` (its `package` part), `C`")), ["A", "B", "C"])
    }

    /// The module of every `import` line (with any attribute, access level or kind before it).
    private static func imports(in text: String) -> [String] {
        text.split(separator: "\n").compactMap { line -> String? in
            let words = line.split(separator: " ").filter { !$0.hasPrefix("@") }
            guard let index = words.firstIndex(of: "import"), index <= 1,
                  index == 0 || ["public", "package", "internal", "fileprivate", "private"].contains(words[0]),
                  index + 1 < words.count else { return nil }
            let kinds: Set<Substring> = ["struct", "class", "enum", "protocol", "typealias", "func", "var", "let"]
            let target = kinds.contains(words[index + 1]) && index + 2 < words.count ? words[index + 2] : words[index + 1]
            return String(target.split(separator: ".")[0])
        }
    }

    private static func quoted(_ text: String) -> [String] {
        text.split(separator: "`", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    private static func outsideParentheses(_ text: String) -> String {
        var depth = 0
        return String(text.filter { character in
            if character == "(" { depth += 1 } else if character == ")" { depth = max(0, depth - 1); return false }
            return depth == 0
        })
    }
}
