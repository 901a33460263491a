import Foundation
import TestSupport
import XCTest

/// A reader who follows a relative link in the README or in docs/ lands somewhere: the file
/// exists, and a `#anchor` names a heading of it, spelled as GitHub spells heading anchors.
final class DocLinkTests: XCTestCase {
    /// The pages read from the repository's front door.
    private func pages() throws -> [String] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: Repository.path("docs"))
            .filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
        XCTAssertGreaterThanOrEqual(docs.count, 10, "\(docs)")
        return ["README.md", "bench/README.md"] + docs
    }

    /// The text outside fenced code blocks, line by line (a `# comment` in a block is no heading).
    private func prose(_ text: String) -> [Substring] {
        var inFence = false
        return text.split(separator: "\n", omittingEmptySubsequences: false).filter { line in
            if line.hasPrefix("```") {
                inFence.toggle()
                return false
            }
            return !inFence
        }
    }

    /// GitHub's anchor of a heading: lower case, every character but letters, digits, `-`, `_`
    /// and spaces dropped, spaces made `-`; a repeated anchor gets `-1`, `-2`, ….
    private func anchors(of text: String) -> Set<String> {
        var seen: [String: Int] = [:]
        var anchors = Set<String>()
        for line in prose(text) {
            guard let hashes = line.firstIndex(where: { $0 != "#" }), hashes != line.startIndex,
                  line.distance(from: line.startIndex, to: hashes) <= 6, line[hashes] == " " else { continue }
            let title = line[hashes...].trimmingCharacters(in: .whitespaces).lowercased()
            let kept = title.filter { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == " " }
            let anchor = String(kept.map { $0 == " " ? "-" : $0 })
            let count = seen[anchor, default: 0]
            seen[anchor] = count + 1
            anchors.insert(count == 0 ? anchor : anchor + "-\(count)")
        }
        return anchors
    }

    /// `](target)` of every inline link outside code blocks.
    private func links(in text: String) -> [String] {
        prose(text).flatMap { line -> [String] in
            line.components(separatedBy: "](").dropFirst().compactMap { rest in
                guard let end = rest.firstIndex(of: ")") else { return nil }
                return String(rest[..<end])
            }
        }
    }

    /// `target` as written in a page of `directory`, as a path from the repository's root.
    private func resolved(_ target: String, from directory: String) -> String {
        var parts = directory.split(separator: "/").map(String.init)
        for part in target.split(separator: "/").map(String.init) where part != "." {
            if part == "..", !parts.isEmpty { parts.removeLast() } else { parts.append(part) }
        }
        return parts.joined(separator: "/")
    }

    func testEveryRelativeLinkLeadsToAFileAndItsHeading() throws {
        var checked = 0
        for page in try pages() {
            let text = try XCTUnwrap(Files.text(Repository.path(page)), page)
            let directory = (page as NSString).deletingLastPathComponent
            for link in links(in: text) where !link.contains("://") && !link.hasPrefix("mailto:") {
                checked += 1
                let parts = link.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                let file = parts[0].isEmpty ? page : resolved(String(parts[0]), from: directory)
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: Repository.path(file), isDirectory: &isDirectory) else {
                    XCTFail("\(page): \(link): no file \(file)")
                    continue
                }
                guard parts.count == 2, file.hasSuffix(".md"), !isDirectory.boolValue else { continue }
                let target = try XCTUnwrap(Files.text(Repository.path(file)), file)
                XCTAssertTrue(anchors(of: target).contains(String(parts[1])), "\(page): \(link): no such heading in \(file)")
            }
        }
        XCTAssertGreaterThan(checked, 100, "the links were not found")
    }

    /// The anchors are GitHub's: a link written as GitHub renders it must be found.
    func testAnchorsAreSpelledAsGitHubSpellsThem() {
        let text = """
            ## 1.8 A call that outlives telwatch
            ## `--feedback`: feedbackd
            ## Call-scoped commands: which to use for what
            ```
            # not a heading
            ```
            ## Notes
            ## Notes
            """
        XCTAssertEqual(anchors(of: text), [
            "18-a-call-that-outlives-telwatch", "--feedback-feedbackd", "call-scoped-commands-which-to-use-for-what",
            "notes", "notes-1",
        ])
    }
}
