import Foundation
import Progress
import TestSupport
import Testing

/// The Swift examples of Progress's article and doc comments, compiled and run. The
/// architecture tests check that each shows exactly the lines between its `example` markers.
@Suite("Documentation examples")
struct DocumentationExampleTests {
    @Test("WatchTracker's doc comment: 0–15, back to 0, on to 20 is 20% watched")
    func watchTracker() {
        let now = Date()
        // example: begin watch-tracker
        var tracker = WatchTracker(deviceID: "ipad-7", duration: 100)
        tracker.handle(.play(at: 0), at: now)
        tracker.handle(.pause(at: 15), at: now)
        tracker.handle(.seek(to: 0), at: now)
        tracker.handle(.play(at: 0), at: now)
        tracker.handle(.pause(at: 20), at: now)
        let fraction = tracker.progress.watchedFraction  // 0.2
        // example: end watch-tracker
        #expect(fraction == 0.2)
    }

    @Test("IntervalSet's doc comment: overlapping inserts merge, the covered length is 25")
    func intervalSet() {
        // example: begin interval-set
        var watched = IntervalSet()
        watched.insert(0..<10)
        watched.insert(90..<100)
        watched.insert(5..<15)
        let intervals = watched.intervals  // [0.0..<15.0, 90.0..<100.0]
        let covered = watched.coveredLength  // 25.0
        // example: end interval-set
        #expect(intervals == [0..<15, 90..<100])
        #expect(covered == 25)
    }

    @Test("ProgressStore's doc comment: a merge is saved and read back")
    func progressStore() async throws {
        let applicationSupport = temporaryFolder("doc-store")
        let lesson = (id: "salsa-101", title: "Salsa")
        var tracker = WatchTracker(deviceID: "ipad", duration: 100)
        tracker.handle(.play(at: 0), at: Date())
        tracker.handle(.pause(at: 30), at: Date())
        // example: begin progress-store
        let store = ProgressStore(directory: applicationSupport.appending(path: "Progress"))
        try await store.merge(tracker.progress, into: lesson.id)
        let saved = try await store.progress(for: lesson.id)
        // example: end progress-store
        #expect(saved?.watchedFraction == 0.3)
    }

    /// A sync server that merges what it receives with what another device sent before.
    struct SyncServer {
        var stored: WatchProgress

        func exchange(_ progress: WatchProgress) async throws -> WatchProgress {
            var merged = stored
            merged.merge(progress)
            return merged
        }
    }

    @Test("the article's sync: the local store and a server merge, and the tracker takes the union")
    func progressSync() async throws {
        let progressFolder = temporaryFolder("doc-sync")
        let lessonID = "bachata-2"
        var phone = WatchTracker(deviceID: "phone", duration: 100)
        phone.handle(.play(at: 50), at: Date())
        phone.handle(.pause(at: 100), at: Date())
        let server = SyncServer(stored: phone.progress)
        var tracker = WatchTracker(deviceID: "ipad", duration: 100)
        tracker.handle(.play(at: 0), at: Date())
        tracker.handle(.pause(at: 20), at: Date())
        // example: begin progress-sync
        let store = ProgressStore(directory: progressFolder)
        let merged = try await store.merge(tracker.progress, into: lessonID)
        let remote = try await server.exchange(merged)  // the server merges too
        tracker.merge(remote)
        // example: end progress-sync
        #expect(tracker.progress.watched.intervals == [0..<20, 50..<100])
        #expect(tracker.progress.watchedFraction == 0.7)
    }
}
