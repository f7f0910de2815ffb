import Foundation
import Testing

/// A fenced code block in the README, a DocC article or a doc comment.
struct DocumentedBlock: Sendable, CustomTestStringConvertible {
    /// The file's path from the repository's root.
    var file: String
    /// The line of the opening fence, from 1.
    var line: Int
    /// What follows the opening fence (`swift`, `text`, `sh`…); empty for a bare fence.
    var language: String
    /// The name in an `<!-- example: NAME … -->` comment on the line before the fence.
    var example: String?
    /// The block's lines, without the doc comment's `///` and with trailing spaces removed.
    var lines: [String]

    var testDescription: String { "\(file):\(line)" + (example.map { " (\($0))" } ?? "") }
}

/// The lines between `// example: begin NAME` and `// example: end NAME` in a Swift file of
/// the tests or the sources, with their common indentation removed.
struct MirroredExample: Sendable {
    var name: String
    var file: String
    var line: Int
    var lines: [String]
}

/// Reads every fenced block the documentation shows and every example region the code keeps.
///
/// Each Swift block in the README, in an article (`Sources/*/*.docc/*.md`) or in a doc comment
/// (`///` in `Sources`) names an example; a region of that name in a Swift file of the tests (or,
/// for Apple-only adapters, of the sources) holds the same lines, where the compiler checks them
/// and a test runs them. Linear in the size of the files read.
enum DocumentationCorpus {
    /// The repository's root, found from this file's path.
    static var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    /// The files below `folder` (a path from the root) whose names end with `suffix`, sorted.
    static func files(under folder: String, endingWith suffix: String) -> [String] {
        let base = root.appendingPathComponent(folder)
        guard let walker = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil) else { return [] }
        var found: [String] = []
        for case let url as URL in walker where url.lastPathComponent.hasSuffix(suffix) {
            let path = url.standardizedFileURL.path
            let rootPath = root.standardizedFileURL.path + "/"
            found.append(path.hasPrefix(rootPath) ? String(path.dropFirst(rootPath.count)) : path)
        }
        return found.sorted()
    }

    static func text(_ path: String) -> String {
        (try? String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)) ?? ""
    }

    /// The markdown documents: the README and every DocC article.
    static var articles: [String] {
        ["README.md"] + files(under: "Sources", endingWith: ".md").filter { $0.contains(".docc/") }
    }

    /// Every fenced block of the README, the articles and the doc comments in `Sources`.
    static let blocks: [DocumentedBlock] = {
        var found: [DocumentedBlock] = []
        for path in articles {
            let lines = text(path).split(separator: "\n", omittingEmptySubsequences: false).enumerated()
                .map { (number: $0.offset + 1, text: String($0.element)) }
            found += fencedBlocks(in: lines, file: path)
        }
        for path in files(under: "Sources", endingWith: ".swift") {
            // Consecutive `///` lines form one doc comment, read as markdown.
            var comment: [(number: Int, text: String)] = []
            for (offset, raw) in text(path).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let trimmed = raw.drop { $0 == " " }
                if trimmed.hasPrefix("///") {
                    let body = trimmed.dropFirst(3)
                    comment.append((offset + 1, String(body.hasPrefix(" ") ? body.dropFirst() : body)))
                } else if !comment.isEmpty {
                    found += fencedBlocks(in: comment, file: path)
                    comment = []
                }
            }
        }
        return found
    }()

    /// The fenced blocks of one markdown text. Linear in its lines.
    static func fencedBlocks(in lines: [(number: Int, text: String)], file: String) -> [DocumentedBlock] {
        var blocks: [DocumentedBlock] = []
        var open: DocumentedBlock?
        var previous = ""
        for (number, line) in lines {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if var block = open {
                if trimmed == "```" {
                    blocks.append(block)
                    open = nil
                } else {
                    block.lines.append(trimmingTrailingSpaces(line))
                    open = block
                }
            } else if trimmed.hasPrefix("```") {
                open = DocumentedBlock(
                    file: file, line: number,
                    language: String(trimmed.dropFirst(3)).trimmingCharacters(in: .whitespaces),
                    example: exampleName(previous), lines: [])
            }
            previous = trimmed
        }
        return blocks
    }

    /// `NAME` from `<!-- example: NAME … -->`.
    static func exampleName(_ line: String) -> String? {
        let prefix = "<!-- example: "
        guard line.hasPrefix(prefix), line.hasSuffix("-->") else { return nil }
        return line.dropFirst(prefix.count).split(separator: " ").first.map(String.init)
    }

    static func trimmingTrailingSpaces(_ line: String) -> String {
        var line = Substring(line)
        while line.last == " " { line = line.dropLast() }
        return String(line)
    }

    /// Every example region in the Swift files of `Tests` and `Sources`.
    static let mirrors: [MirroredExample] = {
        let begin = "// example: " + "begin "
        let end = "// example: " + "end "
        var found: [MirroredExample] = []
        for path in files(under: "Tests", endingWith: ".swift") + files(under: "Sources", endingWith: ".swift") {
            var open: MirroredExample?
            for (offset, raw) in text(path).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let trimmed = raw.trimmingCharacters(in: .whitespaces)
                if trimmed.hasPrefix(begin) {
                    open = MirroredExample(
                        name: String(trimmed.dropFirst(begin.count)), file: path, line: offset + 1, lines: [])
                } else if let region = open, trimmed.hasPrefix(end) {
                    found.append(
                        MirroredExample(
                            name: region.name, file: path, line: region.line, lines: dedented(region.lines)))
                    open = nil
                } else if open != nil {
                    open?.lines.append(trimmingTrailingSpaces(String(raw)))
                }
            }
        }
        return found
    }()

    /// `lines` without the indentation their non-empty lines share.
    static func dedented(_ lines: [String]) -> [String] {
        let indents = lines.filter { !$0.isEmpty }.map { $0.prefix { $0 == " " }.count }
        let common = indents.min() ?? 0
        return lines.map { $0.isEmpty ? $0 : String($0.dropFirst(common)) }
    }
}

@Suite("Documentation examples compile and run")
struct DocumentationExampleTests {
    /// The Swift blocks that must be examples: all but the README's manifest fragment, which
    /// SwiftPM reads and no test can compile (`<!-- example: none … -->`, allowed in the README only).
    static let swiftBlocks = DocumentationCorpus.blocks.filter {
        $0.language == "swift" && !($0.file == "README.md" && $0.example == "none")
    }

    @Test("the README, every article and the doc comments are read: at least 25 Swift blocks, 20 regions")
    func corpusIsRead() {
        #expect(Self.swiftBlocks.count >= 25)
        #expect(DocumentationCorpus.mirrors.count >= 20)
        #expect(DocumentationCorpus.articles.count >= 10)
    }

    @Test(
        "every fenced block names its language, so no diagram is shown as code", arguments: DocumentationCorpus.blocks)
    func namesItsLanguage(block: DocumentedBlock) {
        #expect(!block.language.isEmpty, "\(block.testDescription) opens with a bare ``` fence")
    }

    @Test(
        "every Swift block is an example that a test compiles and runs, line for line",
        arguments: swiftBlocks)
    func mirrored(block: DocumentedBlock) throws {
        let name = try #require(
            block.example, "\(block.testDescription): no <!-- example: NAME --> comment before the fence")
        let regions = DocumentationCorpus.mirrors.filter { $0.name == name }
        #expect(regions.count == 1, "\(name): \(regions.count) regions named so in Tests or Sources")
        let region = try #require(regions.first)
        let shown = block.lines
        let tested = region.lines
        #expect(
            shown == tested,
            "\(block.testDescription) differs from \(region.file):\(region.line):\n\(Self.differences(shown, tested))")
    }

    /// The first three lines where `shown` and `tested` differ, side by side.
    static func differences(_ shown: [String], _ tested: [String]) -> String {
        let pairs = (0..<max(shown.count, tested.count)).map { index in
            (index < shown.count ? shown[index] : "∅", index < tested.count ? tested[index] : "∅")
        }
        return pairs.filter { $0.0 != $0.1 }.prefix(3).map { "shown:  \($0.0)\ntested: \($0.1)" }
            .joined(separator: "\n")
    }

    @Test("only the README's two manifest fragments (the dependency, the module alias) are exempt")
    func exemptions() {
        let exempt = DocumentationCorpus.blocks.filter { $0.example == "none" }
        #expect(exempt.map(\.file) == ["README.md", "README.md"])
        #expect(exempt.allSatisfy { $0.lines.contains { $0.contains(".package(") || $0.contains("moduleAliases") } })
    }

    @Test("every example region is shown by exactly one block, and names are unique")
    func noOrphanRegions() {
        let shown = Self.swiftBlocks.compactMap(\.example)
        #expect(Set(shown).count == shown.count, "two blocks share an example name")
        for region in DocumentationCorpus.mirrors {
            #expect(
                shown.contains(region.name), "\(region.file):\(region.line): region \(region.name) is shown nowhere")
        }
    }
}
