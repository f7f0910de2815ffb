import Foundation
import Progress
import TestSupport
import Testing

/// Typed throws must not make ordinary Swift awkward: `ProgressStore`'s calls in the shapes
/// apps write them (from outside the actor, every call is `async`).
@Suite("Progress call shapes")
struct ProgressCallShapeTests {
    /// An untyped context: the typed error converts to `any Error` with no ceremony.
    func untyped(_ store: ProgressStore, _ lesson: String) async throws -> Double? {
        try await store.progress(for: lesson)?.watchedFraction
    }

    func watched(_ seconds: Double) -> WatchProgress {
        var tracker = WatchTracker(deviceID: "ipad", duration: 100)
        tracker.handle(.play(at: 0), at: Date())
        tracker.handle(.pause(at: seconds), at: Date())
        return tracker.progress
    }

    @Test("merge, save, progress(for:), removeProgress: async let, untyped try, typed catch, try?, Task")
    func store() async throws {
        let folder = temporaryFolder("progress-shapes")
        let store = ProgressStore(directory: folder)
        async let merged = store.merge(watched(30), into: "salsa-1")
        #expect(try await merged.watchedFraction == 0.3)
        try await store.save(watched(40), for: "salsa-2")
        #expect(try await untyped(store, "salsa-2") == 0.4)
        #expect((try? await store.progress(for: "never")) == .some(nil))
        let background = Task { try await store.merge(watched(50), into: "salsa-1") }
        #expect(try await background.value.watchedFraction == 0.5)
        // A damaged file: the typed error says which kind, with no cast.
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where name.hasSuffix(".json") {
            try Data("{".utf8).write(to: folder.appendingPathComponent(name))
        }
        do {
            _ = try await store.progress(for: "salsa-1")
            Issue.record("read a damaged file")
        } catch {
            guard case .corrupted = error.kind else {
                Issue.record("\(error)")
                return
            }
        }
        try await store.removeProgress(for: "salsa-1")
        #expect(try await store.progress(for: "salsa-1") == nil)
    }
}
