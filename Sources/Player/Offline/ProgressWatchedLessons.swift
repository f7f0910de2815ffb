import Foundation
public import OfflineLessons
public import Progress

/// What the learner watched, read from a `ProgressStore`, for a download queue's smart
/// downloads (`DownloadQueue.keepReady(_:policy:watched:)`).
///
/// It lives in `Player`, which imports both `Downloads` and `Progress`, so that neither of those
/// imports the other: the module graph keeps no cycle.
///
/// A lesson's watched share is its `WatchProgress.watchedFraction` (1 once it is
/// completed; 0 while its duration is unknown), and when it was last watched is its resume
/// point's time.
public struct ProgressWatchedLessons: WatchedLessons {
    /// The store read.
    public let store: ProgressStore

    /// Reads what was watched from `store`.
    public init(store: ProgressStore) {
        self.store = store
    }

    /// What was watched of each lesson of `ids` the store has progress for; a lesson whose
    /// progress cannot be read counts as never watched.
    ///
    /// - Complexity: O(*n*) store reads for *n* lessons.
    public func watched(_ ids: [String]) async -> [String: WatchedLesson] {
        var found: [String: WatchedLesson] = [:]
        for id in ids {
            guard let progress = try? await store.progress(for: id) else { continue }
            found[id] = WatchedLesson(
                fraction: progress.isCompleted ? 1 : progress.watchedFraction ?? 0,
                lastWatched: progress.resumePoint?.recordedAt)
        }
        return found
    }
}
