import Downloads
import Foundation
import OfflineLessons
import Player
import Progress
import TestSupport
import Testing

/// Smart downloads read what was watched from a `ProgressStore` through `Player`, which
/// imports both modules: the share actually played, and when it was last watched.
@Suite("What was watched, for smart downloads")
struct ProgressWatchedLessonsTests {
    @Test(
        "the watched share is the union of the intervals over the duration, 1 once completed; the time is the resume point's"
    )
    func watched() async throws {
        let store = ProgressStore(directory: temporaryFolder("watched"))
        let when = Date(timeIntervalSince1970: 1_800_000_000)
        let resume = try #require(ResumePoint(position: 50, recordedAt: when, deviceID: "phone"))
        try await store.save(
            WatchProgress(watched: IntervalSet([0..<30, 20..<60]), duration: 100, resumePoint: resume), for: "a")
        try await store.save(WatchProgress(watched: IntervalSet([0..<5]), duration: 100, isCompleted: true), for: "b")
        let watched = await ProgressWatchedLessons(store: store).watched(["a", "b", "never"])
        #expect(watched["a"] == WatchedLesson(fraction: 0.6, lastWatched: when))
        #expect(watched["b"] == WatchedLesson(fraction: 1))
        #expect(watched["never"] == nil)
    }
}
