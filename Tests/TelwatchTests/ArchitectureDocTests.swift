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
