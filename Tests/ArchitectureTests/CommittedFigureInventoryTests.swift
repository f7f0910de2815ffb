import Foundation
import TestSupport
import Testing

/// Every SVG in a DocC catalog is one a test draws: shown in an article of its catalog, with its
/// dark twin, and named by a figure test, so that no hand-drawn or orphaned figure can stay.
@Suite("Committed figures")
struct CommittedFigureInventoryTests {
    /// Each catalog's light figures, as (catalog folder, file name without `.svg`).
    static func figures() throws -> [(catalog: URL, name: String)] {
        let sources = CommittedFigure.root.appendingPathComponent("Sources")
        var found: [(URL, String)] = []
        for module in try FileManager.default.contentsOfDirectory(atPath: sources.path).sorted() {
            let catalog = sources.appendingPathComponent(module).appendingPathComponent("\(module).docc")
            let resources = catalog.appendingPathComponent("Resources")
            let files = (try? FileManager.default.contentsOfDirectory(atPath: resources.path)) ?? []
            for file in files.sorted() where file.hasSuffix(".svg") && !file.contains("~dark") {
                found.append((catalog, String(file.dropLast(4))))
            }
        }
        return found
    }

    /// The text of every Swift file of the test targets that compares figures with the committed
    /// ones (through ``CommittedFigure``), this one aside.
    static func figureTestSources() throws -> String {
        let tests = CommittedFigure.root.appendingPathComponent("Tests")
        let files = try #require(FileManager.default.enumerator(at: tests, includingPropertiesForKeys: nil))
        var text = ""
        for case let file as URL in files
        where file.pathExtension == "swift" && file.lastPathComponent != "CommittedFigureInventoryTests.swift" {
            let source = try String(contentsOf: file, encoding: .utf8)
            if source.contains("CommittedFigure.") { text += source }
        }
        return text
    }

    @Test("every figure in a catalog is drawn by a test, has a dark twin, and an article of its catalog shows it")
    func everyFigureIsDrawnAndShown() throws {
        let figures = try Self.figures()
        #expect(figures.count >= 12)
        let tests = try Self.figureTestSources()
        for (catalog, name) in figures {
            let dark = catalog.appendingPathComponent("Resources/\(name)~dark.svg")
            #expect(FileManager.default.fileExists(atPath: dark.path), "\(name)~dark.svg is missing")
            #expect(tests.contains("\"\(name)\""), "no figure test names \(name).svg")
            let articles = try FileManager.default.contentsOfDirectory(atPath: catalog.path).filter {
                $0.hasSuffix(".md")
            }
            let shown = try articles.contains { article in
                try String(contentsOf: catalog.appendingPathComponent(article), encoding: .utf8)
                    .contains("@Image(source: \"\(name).svg\"")
            }
            #expect(shown, "no article of \(catalog.lastPathComponent) shows \(name).svg")
        }
    }
}
