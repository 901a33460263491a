import Foundation
import TestSupport
import XCTest

/// docs/ARCHITECTURE.md stays true of the code: every sink the sources define is a row of the
/// sink table (`WatchSinks.table`), and the pipeline's diagram lists those rows in their order.
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

    /// The rows of the sink table (`SinkRow("NAME"` in Sources/telwatch/WatchSinks.swift), in order.
    private func tableRows() throws -> [String] {
        let text = try XCTUnwrap(Files.text(Repository.path("Sources/telwatch/WatchSinks.swift")))
        return text.components(separatedBy: "SinkRow(\"").dropFirst().map { $0.components(separatedBy: "\"")[0] }
    }

    /// The sinks the docs' pipeline diagram names, in its order: what follows each line's last arrow.
    private func diagramSinks() throws -> [String] {
        let doc = try XCTUnwrap(Files.text(Repository.path("docs/ARCHITECTURE.md")))
        let start = try XCTUnwrap(doc.range(of: "## The pipeline"))
        let diagram = String(doc[start.upperBound...]).components(separatedBy: "```")[1]
        return diagram.split(separator: "\n").compactMap { line in
            guard let arrow = line.range(of: "► ", options: .backwards) else { return nil }
            let name = line[arrow.upperBound...].split(separator: " ").first.map(String.init)
            return name == "EventPipeline" ? nil : name
        }
    }

    func testTheDocsPipelineDiagramIsTheSinkTableInItsOrder() throws {
        let sinks = try sinkTypes()
        XCTAssertGreaterThanOrEqual(sinks.count, 10, "\(sinks)")
        let rows = try tableRows()
        XCTAssertEqual(Set(rows), sinks, "every EventSink of Sources/ is one row of WatchSinks.table")
        XCTAssertEqual(rows.count, sinks.count, "one row each: \(rows)")
        XCTAssertEqual(try diagramSinks(), rows, "docs/ARCHITECTURE.md's pipeline diagram lists the table's rows in order")
    }
}
