import Foundation
import Testing

/// The package's module graph as the README's table states it: which MediaCore modules each
/// module may import. Read from the sources themselves, so a stray import fails here.
@Suite("Module graph")
struct ModuleGraphTests {
    /// Every module of MediaCore and the MediaCore modules it may import.
    static let allowed: [String: Set<String>] = [
        "DecimalFormatting": [],
        "Locking": [],
        "HTTPSupport": ["Locking"],
        "HLS": ["DecimalFormatting"],
        "Progress": ["DecimalFormatting"],
        "Gestures": [],
        "MediaContainers": [],
        "Downloads": ["HLS", "HTTPSupport", "Locking", "MediaContainers"],
        // Not Progress: smart downloads read what was watched through OfflineLessons' own
        // WatchedLessons protocol, which Player (above both) adapts to a ProgressStore.
        "OfflineLessons": ["Downloads", "HTTPSupport", "Locking"],
        "Player": ["Downloads", "OfflineLessons", "Progress"],
        "Catalog": ["HTTPSupport", "Locking"],
        "SliderFlow": ["HTTPSupport"],
    ]

    /// What the toolchain ships and any module may import.
    static let toolchain: Set<String> = [
        "Foundation", "FoundationNetworking", "Dispatch", "Observation", "Synchronization", "Swift",
    ]

    /// Apple-only frameworks a module may import for its adapters, only in a file that guards
    /// the import with `#if canImport(…)`, so that Linux builds skip it. No UI framework.
    static let appleAdapters: [String: Set<String>] = [
        "Player": ["AVFoundation"], "Gestures": ["CoreGraphics"], "OfflineLessons": ["Network"],
    ]

    /// The package-internal target that holds the Apple-only examples of the documentation. It
    /// is no module of the graph: no product exports it and no module imports it.
    static let examples = "AppleExamples"

    /// The testing library, a product an app links into its tests only: no module of the graph,
    /// since no module imports it (``testingLibrary()``).
    static let testing = "OfflineLessonsTesting"

    /// What the Apple examples may import besides MediaCore's modules and the toolchain's.
    static let exampleFrameworks: Set<String> = ["SwiftUI", "UIKit", "AVFoundation", "AVKit", "CoreGraphics"]

    /// The repository's `Sources` folder, found from this file's path.
    static var sources: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources")
    }

    /// The modules `module`'s Swift files import, each with a file that imports it.
    static func imports(of module: String) throws -> [String: String] {
        let folder = sources.appendingPathComponent(module)
        var found: [String: String] = [:]
        let files = try #require(FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil))
        for case let file as URL in files where file.pathExtension == "swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            for line in text.split(separator: "\n") {
                let words = line.split(separator: " ").map(String.init)
                guard let index = words.firstIndex(of: "import"), index + 1 < words.count,
                    words[..<index].allSatisfy({ ["public", "internal", "package", "@testable"].contains($0) })
                else { continue }
                let imported = words[index + 1]
                if text.contains("#if canImport(\(imported))"),
                    Self.appleAdapters[module, default: []].contains(imported)
                {
                    continue  // Apple-only glue, compiled only where the framework exists
                }
                found[imported, default: file.lastPathComponent] = file.lastPathComponent
            }
        }
        return found
    }

    @Test(
        "every module imports only the toolchain and the MediaCore modules its role allows",
        arguments: allowed.keys.sorted())
    func imports(module: String) throws {
        let allowedModules = try #require(Self.allowed[module])
        for (imported, file) in try Self.imports(of: module) where !Self.toolchain.contains(imported) {
            #expect(allowedModules.contains(imported), "\(module)/\(file) imports \(imported)")
        }
    }

    @Test(
        "every dependency the table (and so Package.swift and the figure) gives a module is imported by one of its files",
        arguments: allowed.keys.sorted())
    func dependenciesUsed(module: String) throws {
        let imported = Set(try Self.imports(of: module).keys)
        for dependency in Self.allowed[module] ?? [] {
            #expect(imported.contains(dependency), "\(module) may import \(dependency) but no file does")
        }
    }

    @Test(
        "watched progress reaches smart downloads without an import: OfflineLessons declares WatchedLessons, Player adapts Progress to it"
    )
    func watchedProgressLink() throws {
        #expect(try Self.imports(of: "OfflineLessons")["Progress"] == nil)
        #expect(try Self.imports(of: "Downloads")["Progress"] == nil)
        #expect(try Self.imports(of: "Progress")["Downloads"] == nil)
        #expect(try Self.imports(of: "Progress")["OfflineLessons"] == nil)
        let adapter = try String(
            contentsOf: Self.sources.appendingPathComponent("Player/Offline/ProgressWatchedLessons.swift"),
            encoding: .utf8)
        #expect(adapter.contains("struct ProgressWatchedLessons: WatchedLessons"))
    }

    @Test(
        "the graph has no cycle, and every source folder is a module of the table, the Apple examples or the testing library"
    )
    func acyclic() throws {
        let folders = try FileManager.default.contentsOfDirectory(atPath: Self.sources.path).filter {
            !$0.hasPrefix(".")
        }
        #expect(Set(folders) == Set(Self.allowed.keys).union([Self.examples, Self.testing]))
        // Depth-first search for a back edge.
        var state: [String: Int] = [:]  // 1: on the path, 2: done
        func visit(_ module: String) -> Bool {
            if state[module] == 1 { return false }
            if state[module] == 2 { return true }
            state[module] = 1
            for next in Self.allowed[module] ?? [] where !visit(next) { return false }
            state[module] = 2
            return true
        }
        for module in Self.allowed.keys { #expect(visit(module), "a cycle through \(module)") }
    }

    @Test(
        "the Apple examples import MediaCore's modules and Apple's UI frameworks, each file under #if canImport")
    func appleExamples() throws {
        let folder = Self.sources.appendingPathComponent(Self.examples)
        let files = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "swift" }
        #expect(!files.isEmpty)
        for file in files {
            let code = try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
                .filter { !$0.hasPrefix("//") && !$0.trimmingCharacters(in: .whitespaces).isEmpty }
            // Linux compiles nothing of an example: the whole file is one canImport block.
            #expect(
                code.first?.hasPrefix("#if canImport(") == true && code.last == "#endif",
                "\(file.lastPathComponent) is not wrapped in one #if canImport(…) block")
        }
        let library = Set(Self.allowed.keys)
        for (imported, file) in try Self.imports(of: Self.examples) {
            #expect(
                library.contains(imported) || Self.toolchain.contains(imported)
                    || Self.exampleFrameworks.contains(imported),
                "\(Self.examples)/\(file) imports \(imported)")
        }
        for module in library {
            #expect(try Self.imports(of: module)[Self.examples] == nil, "\(module) imports the examples")
        }
    }

    @Test("no example region lives in a test file: an Apple-only one would be compiled by no check here")
    func noExampleInAppleOnlyTests() throws {
        let tests = Self.sources.deletingLastPathComponent().appendingPathComponent("Tests")
        let walker = try #require(FileManager.default.enumerator(at: tests, includingPropertiesForKeys: nil))
        for case let file as URL in walker where file.pathExtension == "swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            guard text.contains("// example: " + "begin") else { continue }
            for framework in ["SwiftUI", "AVFoundation", "AVKit", "UIKit", "AppKit"] {
                #expect(
                    !text.contains("#if canImport(" + framework),
                    "\(file.lastPathComponent) keeps an example that compiles only with \(framework)")
            }
        }
    }
}

extension ModuleGraphTests {
    @Test(
        "the testing library OfflineLessonsTesting imports OfflineLessons, Downloads, HTTPSupport and Locking, and no module imports it"
    )
    func testingLibrary() throws {
        let imported = Set(try Self.imports(of: "OfflineLessonsTesting").keys)
        #expect(imported.subtracting(Self.toolchain) == ["OfflineLessons", "Downloads", "HTTPSupport", "Locking"])
        for module in Self.allowed.keys {
            #expect(try Self.imports(of: module)["OfflineLessonsTesting"] == nil, "\(module)")
        }
    }
}
