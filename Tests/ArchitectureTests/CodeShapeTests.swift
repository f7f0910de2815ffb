import Foundation
import Testing

/// The shape of the sources that a reader relies on: files sized by feature, one lock type, and
/// each `@unchecked Sendable` with its reason beside it.
@Suite("The sources keep their shape")
struct CodeShapeTests {
    /// Every Swift file under `Sources`, with its text.
    static func sourceFiles() throws -> [(path: String, text: String)] {
        let root = ModuleGraphTests.sources
        let files = try #require(FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil))
        var found: [(String, String)] = []
        for case let file as URL in files where file.pathExtension == "swift" {
            let path = String(file.path.dropFirst(root.path.count + 1))
            found.append((path, try String(contentsOf: file, encoding: .utf8)))
        }
        return found.sorted { $0.0 < $1.0 }
    }

    /// The lines that are code: comments left out, so that prose may name what code may not.
    static func codeLines(_ text: String) -> [(number: Int, line: Substring)] {
        text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().compactMap { index, line in
            line.trimmingCharacters(in: .whitespaces).hasPrefix("//") ? nil : (index + 1, line)
        }
    }

    @Test("no file in Sources is over 900 lines: a big type is split by feature into +Feature files")
    func fileSizes() throws {
        let files = try Self.sourceFiles()
        #expect(files.count > 100)
        for file in files {
            let lines = file.text.split(separator: "\n", omittingEmptySubsequences: false).count
            #expect(lines <= 900, "\(file.path) has \(lines) lines")
        }
    }

    @Test("at most six @unchecked Sendable types, each with its reason written beside it")
    func uncheckedSendable() throws {
        var count = 0
        for file in try Self.sourceFiles() {
            let lines = file.text.split(separator: "\n", omittingEmptySubsequences: false)
            for (number, line) in Self.codeLines(file.text) where line.contains("@unchecked Sendable") {
                count += 1
                // The reason: a comment naming `@unchecked` within the lines just before or after.
                let around = lines[max(0, number - 6)..<min(lines.count, number + 2)]
                let reasoned = around.contains { line in
                    line.trimmingCharacters(in: .whitespaces).hasPrefix("//") && line.contains("`@unchecked")
                }
                #expect(reasoned, "\(file.path):\(number) gives no reason for @unchecked Sendable")
            }
        }
        #expect(count <= 6, "\(count) @unchecked Sendable types")
    }

    @Test("NSLock only inside the lock box (Sources/Locking), at most two")
    func locks() throws {
        var count = 0
        for file in try Self.sourceFiles() {
            for (number, line) in Self.codeLines(file.text) where line.contains("NSLock") {
                count += 1
                #expect(file.path.hasPrefix("Locking/"), "\(file.path):\(number) uses NSLock outside the lock box")
            }
        }
        #expect(count <= 2)
    }

    @Test("no global mutable state in the library: no top-level or static var outside a type's instances")
    func noGlobalRegistries() throws {
        for file in try Self.sourceFiles() {
            for (number, line) in Self.codeLines(file.text) {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                let words = trimmed.split(separator: " ")
                let isStaticVar =
                    words.contains("static") && words.contains("var")
                    && (words.firstIndex(of: "static") ?? 0) < (words.firstIndex(of: "var") ?? 0)
                // A computed static property (`static var x: T {`) holds nothing.
                let declaration = trimmed.split(separator: "{", maxSplits: 1).first ?? ""
                let isComputed = trimmed.contains("{") && !declaration.contains("=")
                let isTopLevelVar = line.hasPrefix("var ") || line.hasPrefix("nonisolated(unsafe) var ")
                #expect(
                    !(isStaticVar && !isComputed) && !isTopLevelVar,
                    "\(file.path):\(number): \(trimmed)")
            }
        }
    }
}
