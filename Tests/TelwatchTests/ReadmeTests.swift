import Foundation
import TestSupport
import XCTest

/// The README is the project's front door: short, its two commands the ones CI runs, and the
/// output it shows what telwatch prints.
final class ReadmeTests: CommandTestCase {
    private func readme() throws -> String {
        try XCTUnwrap(Files.text(Repository.path("README.md")))
    }

    /// The code blocks of the README's section `heading`, each with its language.
    private func blocks(under heading: String, in text: String) throws -> [(language: String, body: String)] {
        let start = try XCTUnwrap(text.range(of: "\n## " + heading + "\n"), heading)
        let section = text[start.upperBound...].components(separatedBy: "\n## ")[0]
        let pieces = section.components(separatedBy: "```")
        return stride(from: 1, to: pieces.count - 1, by: 2).map { index in
            let block = pieces[index]
            let newline = block.firstIndex(of: "\n") ?? block.endIndex
            return (String(block[..<newline]), String(block[newline...]).trimmingCharacters(in: .newlines))
        }
    }

    func testTheReadmeIsShortAndLeavesTheRestToDocs() throws {
        let text = try readme()
        XCTAssertLessThanOrEqual(text.utf8.count, 10_000, "the README is for a newcomer's three minutes: the rest goes to docs/")
        XCTAssertTrue(text.contains("(docs/user-guide.md)"), "the README points to the user guide")
    }

    func testTheTwoCommandsAreTheOnesCIRuns() throws {
        let commands = try blocks(under: "Two commands", in: readme())
        XCTAssertEqual(commands.map(\.language), ["sh", "sh"])
        XCTAssertEqual(commands.map(\.body), ["./scripts/setup && swift run -c release telwatch demo", "./scripts/test"])
        let ci = try XCTUnwrap(Files.text(Repository.path(".ci/run")))
        XCTAssertTrue(ci.split(separator: "\n").contains("exec ./scripts/test"), ci)
    }

    /// A line with what changes from run to run masked: the clock, short ids, durations, the
    /// bus's unique names.
    private func masked(_ line: String) -> String {
        let masks = [(#"\d\d:\d\d:\d\d\.\d{3}"#, "TIME"), (#"\b[0-9a-f]{8}\b"#, "ID"), (#"\d+\.\d s"#, "N s"),
                     (#":1\.\d+"#, ":1.N")]
        return masks.reduce(line) { text, mask in
            text.replacingOccurrences(of: mask.0, with: mask.1, options: .regularExpression)
        }
    }

    func testTheOutputShownIsWhatTheDemoPrints() throws {
        let shown = try blocks(under: "What it prints", in: readme())
        XCTAssertEqual(shown.map(\.language), ["", "json"])
        let text = shown[0].body.split(separator: "\n").map { masked(String($0)) }
        XCTAssertGreaterThanOrEqual(text.count, 5)

        let demo = try runToEnd(["demo", "--speed", "20"], timeout: 60)
        XCTAssertEqual(demo.status, .exited(0), demo.errors)
        let printed = demo.output.split(separator: "\n").map { masked(String($0)) }
        // The README's lines, in the order the demo printed them (the README may stop early).
        XCTAssertEqual(Array(printed.prefix(text.count)), text, demo.output)

        let json = try runToEnd(["demo", "--json", "--speed", "20"], timeout: 60)
        XCTAssertEqual(json.status, .exited(0), json.errors)
        let example = try JSONValue.parse(shown[1].body)
        let event = try XCTUnwrap(example["event"]?.string, shown[1].body)
        let first = try XCTUnwrap(json.output.split(separator: "\n").lazy
            .compactMap { try? JSONValue.parse(String($0)) }
            .first { $0["event"]?.string == event }, json.output)
        XCTAssertGreaterThan(example.keys.count, 10)
        XCTAssertEqual(example.keys, first.keys, "the README's \(event) line has the keys the demo prints, in order")
    }
}
