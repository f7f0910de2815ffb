import Foundation
import Testing

/// The package supports iOS 17 and macOS 14, and Linux has no availability checks: code that
/// builds here can still fail to compile for an iPhone. These tests read the sources for the
/// standard library and Foundation APIs that need a newer system (their `@available` says
/// iOS 18 / macOS 15 or later), so that such a call is caught on Linux too.
@Suite("Deployment target")
struct DeploymentTargetTests {
    /// An API that needs a newer system than the package supports, and the text that uses it.
    struct NewerAPI: CustomTestStringConvertible, Sendable {
        var pattern: String
        var api: String
        var introduced: String

        var testDescription: String { "\(api) (\(introduced))" }
    }

    /// APIs of the Swift 6 toolchain that need iOS 18 / macOS 15 or later, as a source shows them.
    static let newerAPIs: [NewerAPI] = [
        NewerAPI(pattern: #"String\(validating:"#, api: "String(validating:as:)", introduced: "iOS 18, macOS 15"),
        NewerAPI(pattern: #"import Synchronization"#, api: "Synchronization", introduced: "iOS 18, macOS 15"),
        NewerAPI(pattern: #"\bMutex<"#, api: "Mutex", introduced: "iOS 18, macOS 15"),
        NewerAPI(pattern: #"\bAtomic<"#, api: "Atomic", introduced: "iOS 18, macOS 15"),
        NewerAPI(pattern: #"\bU?Int128\b"#, api: "Int128 and UInt128", introduced: "iOS 18, macOS 15"),
        NewerAPI(pattern: #"\bRangeSet<"#, api: "RangeSet", introduced: "iOS 18, macOS 15"),
        NewerAPI(pattern: #"\.indices\(where:"#, api: "indices(where:)", introduced: "iOS 18, macOS 15"),
        NewerAPI(pattern: #"\.removeSubranges\("#, api: "removeSubranges(_:)", introduced: "iOS 18, macOS 15"),
        NewerAPI(pattern: #"\bTaskExecutor\b"#, api: "TaskExecutor", introduced: "iOS 18, macOS 15"),
        NewerAPI(pattern: #"\bInlineArray<"#, api: "InlineArray", introduced: "iOS 26, macOS 26"),
        // `Span` alone is also `PlayCounts.Span`, so the standard library's is looked for by its
        // generic argument.
        NewerAPI(
            pattern: #"\b(Raw|UTF8|Mutable)Span\b|\bSpan<"#, api: "Span and its kin", introduced: "iOS 26, macOS 26"),
        NewerAPI(pattern: #"\b(Task|addTask|addTaskUnlessCancelled)\(name:"#, api: "named tasks", introduced: "iOS 26"),
        NewerAPI(
            pattern: #"withTaskPriorityEscalationHandler"#, api: "withTaskPriorityEscalationHandler",
            introduced: "iOS 26"),
        NewerAPI(pattern: #"\bObservations\b"#, api: "Observations", introduced: "iOS 26, macOS 26"),
    ]

    /// The repository's `Sources` folder, found from this file's path.
    static var sources: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources")
    }

    /// Every Swift file under `Sources`, with its path relative to the folder and its lines
    /// outside comments.
    static func sourceLines() throws -> [(path: String, line: Int, text: String)] {
        let root = sources.standardizedFileURL.path
        guard let files = FileManager.default.enumerator(atPath: root) else { return [] }
        var found: [(String, Int, String)] = []
        for case let path as String in files where path.hasSuffix(".swift") {
            let text = try String(contentsOfFile: root + "/" + path, encoding: .utf8)
            for (index, line) in text.components(separatedBy: "\n").enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces)
                guard !code.hasPrefix("//") else { continue }
                found.append((path, index + 1, code))
            }
        }
        return found
    }

    @Test("the package's platforms are still iOS 17 and macOS 14, which the list below is for")
    func platforms() throws {
        let manifest = Self.sources.deletingLastPathComponent().appendingPathComponent("Package.swift")
        let text = try String(contentsOf: manifest, encoding: .utf8)
        #expect(text.contains("platforms: [.iOS(.v17), .macOS(.v14)]"))
    }

    @Test("no source calls an API newer than the deployment target", arguments: newerAPIs)
    func noNewerAPI(_ api: NewerAPI) throws {
        let pattern = try NSRegularExpression(pattern: api.pattern)
        let uses = try Self.sourceLines().filter { entry in
            pattern.firstMatch(in: entry.text, range: NSRange(entry.text.startIndex..., in: entry.text)) != nil
        }
        #expect(uses.isEmpty, "\(api.api) needs \(api.introduced): \(uses.map { "\($0.path):\($0.line)" })")
    }

    @Test("the check finds a newer API where one is written")
    func checkFindsUses() throws {
        let pattern = try NSRegularExpression(pattern: Self.newerAPIs[0].pattern)
        let line = "let text = String(validating: bytes, as: UTF8.self)"
        #expect(pattern.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)) != nil)
    }

    /// The `Hashable` types of a source text that store CoreGraphics geometry (a stored property
    /// or an enum case's value of `CGPoint`, `CGSize`, `CGRect` or `CGVector`, optional or not),
    /// each paired with whether the text gives it a `hash(into:)` of its own (in its body, or in
    /// an extension of the type).
    ///
    /// A rough reading of declarations, enough for this package's style: a type's body runs from
    /// its `{` to the matching `}`, and its members are the body's lines indented one level more
    /// than the declaration. Linear in the text's length per type.
    static func hashableGeometryTypes(in text: String) -> [(name: String, hashesItself: Bool)] {
        let declaration =
            #/(?m)^\s*(?:public |package |private |fileprivate |internal )?(?:struct|enum) (\w+)[^{]*\bHashable\b[^{]*\{/#
        // A stored property (no `{` after its type on its line: not a computed one) or a case.
        let geometry =
            #/^\s*(?:public |package |private(?:\(set\))? |internal )*(?:(?:var|let) \w+: CG(?:Point|Size|Rect|Vector)\??[^{]*$|case \w+\([^)]*\bCG(?:Point|Size|Rect|Vector)\b)/#
        var found: [(String, Bool)] = []
        for match in text.matches(of: declaration) {
            let name = String(match.output.1)
            // The body, by brace matching from the declaration's `{`.
            var depth = 0
            var end = match.range.upperBound
            var index = text.index(before: match.range.upperBound)
            while index < text.endIndex {
                if text[index] == "{" { depth += 1 }
                if text[index] == "}" {
                    depth -= 1
                    if depth == 0 {
                        end = index
                        break
                    }
                }
                index = text.index(after: index)
            }
            let body = text[match.range.upperBound..<end]
            // Its own members: the lines one level in (not a nested type's, nor a method's locals).
            let indent = match.output.0.drop { $0 == "\n" }.prefix { $0 == " " }.count + 4
            let members = body.split(separator: "\n").filter { line in
                line.prefix { $0 == " " }.count == indent && !line.contains("static ")
            }
            guard members.contains(where: { $0.contains(geometry) }) else { continue }
            let ownHash = body.contains("func hash(into")
            let extensionHash = text.ranges(of: "extension ").contains { start in
                let line = text[start.upperBound...].prefix { $0 != "{" }
                let extended = line.split(separator: ".").last?.trimmingCharacters(in: .whitespaces)
                guard extended == name else { return false }
                let rest = text[start.upperBound...]
                let close = rest.firstRange(of: "\n}")?.lowerBound ?? rest.endIndex
                return rest[..<close].contains("func hash(into")
            }
            found.append((name, ownHash || extensionHash))
        }
        return found
    }

    @Test(
        "a Hashable type that stores CoreGraphics geometry hashes it itself: CGPoint, CGSize, CGRect and CGVector are Hashable only from iOS 18 and macOS 15"
    )
    func geometryHashedByHand() throws {
        let root = Self.sources.standardizedFileURL.path
        let files = try #require(FileManager.default.enumerator(atPath: root))
        var checked = 0
        for case let path as String in files where path.hasSuffix(".swift") {
            let text = try String(contentsOfFile: root + "/" + path, encoding: .utf8)
            for type in Self.hashableGeometryTypes(in: text) {
                checked += 1
                #expect(type.hashesItself, "\(path): \(type.name) synthesizes hash(into:) over CoreGraphics geometry")
            }
            #expect(!text.contains(#/Set<CG(?:Point|Size|Rect|Vector)>|\[CG(?:Point|Size|Rect|Vector):/#), "\(path)")
        }
        #expect(checked >= 6)  // TouchSample, VelocityEstimate, FloatingLayout, SnapDecision, SnapAnimation…
    }

    @Test("the geometry rule finds a synthesized hash, and accepts a hand-written one")
    func geometryRuleFindsSynthesis() {
        let synthesized = "public struct Mark: Sendable, Hashable {\n    public var at: CGPoint\n}\n"
        let written = synthesized + "extension Mark {\n    public func hash(into hasher: inout Hasher) {}\n}\n"
        let plain = "public struct Plain: Hashable {\n    var x: Double\n}\n"
        #expect(Self.hashableGeometryTypes(in: synthesized).map(\.hashesItself) == [false])
        #expect(Self.hashableGeometryTypes(in: written).map(\.hashesItself) == [true])
        #expect(Self.hashableGeometryTypes(in: plain).isEmpty)
    }
}
