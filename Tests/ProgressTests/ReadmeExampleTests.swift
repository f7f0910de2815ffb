import Foundation
import Progress
import Testing

/// The README's Progress example, compiled and run. `DocumentationExampleTests` checks that
/// the README shows exactly the lines between the `example` markers.
@Suite("README examples")
struct ReadmeExampleTests {
    @Test("the Progress example computes what the README says")
    func progressExample() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("readme-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        // example: begin Progress
        var tracker = WatchTracker(deviceID: "ipad-7", duration: 100)
        let now = Date()
        tracker.handle(.play(at: 0), at: now)
        tracker.handle(.pause(at: 15), at: now)
        tracker.handle(.seek(to: 0), at: now)  // back to the start: no new coverage
        tracker.handle(.play(at: 0), at: now)
        tracker.handle(.pause(at: 20), at: now)

        let fraction = tracker.progress.watchedFraction  // 0.2 (nil until the duration is known)
        let resume = tracker.progress.resumePosition  // 20
        let xapi = PlayedSegments.format(tracker.progress.watched)  // "0[.]20"

        let store = ProgressStore(directory: folder)
        try await store.merge(tracker.progress, into: "salsa-101")
        // example: end Progress
        #expect(fraction == 0.2)
        #expect(resume == 20)
        #expect(xapi == "0[.]20")
        #expect(try await store.progress(for: "salsa-101") == tracker.progress)
    }
}
