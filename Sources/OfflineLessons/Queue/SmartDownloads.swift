import Downloads
public import Foundation

/// What the learner has watched of one lesson.
public struct WatchedLesson: Hashable, Sendable {
    /// The share of the lesson actually played, 0…1 (the union of the intervals played over
    /// its duration, as `Progress` measures it).
    public var fraction: Double
    /// When the learner last watched it, or `nil` when never.
    public var lastWatched: Date?

    /// Creates a record of what was watched.
    public init(fraction: Double, lastWatched: Date? = nil) {
        self.fraction = fraction.isFinite ? min(max(fraction, 0), 1) : 0
        self.lastWatched = lastWatched
    }
}

/// Where smart downloads learn what the learner watched: the app's progress store.
///
/// `Downloads` does not import `Progress` (each stands on its own, and the module graph has no
/// cycle): `Player`, which imports both, adapts a `ProgressStore` with `ProgressWatchedLessons`,
/// and an app with its own store conforms to this protocol directly.
public protocol WatchedLessons: Sendable {
    /// What was watched of each lesson of `ids` that has a record; a lesson without one was
    /// never watched.
    func watched(_ ids: [String]) async -> [String: WatchedLesson]
}

/// A course that keeps itself ready offline: the next lessons the learner has not watched are
/// downloaded, the ones watched are removed, and when the quota is reached the least recently
/// watched go first. Pinned lessons are never removed.
public struct SmartDownloadPolicy: Hashable, Sendable, Codable {
    /// How many unwatched lessons, in the course's order, are kept downloaded (3 by default).
    public var lessonsAhead: Int
    /// The share watched from which a lesson counts as watched (0.9 by default).
    public var watchedThreshold: Double
    /// Whether watched lessons are removed (true by default).
    public var removesWatched: Bool

    /// Creates a policy.
    public init(lessonsAhead: Int = 3, watchedThreshold: Double = 0.9, removesWatched: Bool = true) {
        self.lessonsAhead = max(0, lessonsAhead)
        self.watchedThreshold = watchedThreshold.isFinite ? min(max(watchedThreshold, 0), 1) : 0.9
        self.removesWatched = removesWatched
    }
}

/// What a smart-download pass did.
public struct SmartDownloadPass: Hashable, Sendable {
    /// The lessons it queued, in the course's order.
    public var enqueued: [String]
    /// The lessons it removed (their files deleted): watched ones first, then, for the quota,
    /// the least recently watched.
    public var removed: [String]

    /// Creates a pass's result.
    public init(enqueued: [String] = [], removed: [String] = []) {
        self.enqueued = enqueued
        self.removed = removed
    }
}

/// The decisions of a smart-download pass over one course, as a pure function.
///
/// - Complexity: O(*n* log *n*) in the course's lessons (the eviction order is a sort).
enum SmartDownloadPlanner {
    /// What a lesson of the course is in the library and the queue.
    struct Lesson: Hashable, Sendable {
        var lesson: QueuedLesson
        /// Its file's size when downloaded.
        var downloadedBytes: UInt64?
        /// Whether the queue holds it (downloading, waiting or failed).
        var isQueued: Bool
    }

    static func plan(
        course: [Lesson], watched: [String: WatchedLesson], policy: SmartDownloadPolicy, quota: UInt64?,
        usedBytes: UInt64
    ) -> SmartDownloadPass {
        func isWatched(_ id: String) -> Bool { (watched[id]?.fraction ?? 0) >= policy.watchedThreshold }
        let ahead = Set(course.lazy.filter { !isWatched($0.lesson.id) }.prefix(policy.lessonsAhead).map(\.lesson.id))
        var pass = SmartDownloadPass()
        var removed = Set<String>()
        var used = usedBytes
        if policy.removesWatched {
            for entry in course
            where isWatched(entry.lesson.id) && !entry.lesson.isPinned && !ahead.contains(entry.lesson.id)
                && (entry.downloadedBytes != nil || entry.isQueued)
            {
                pass.removed.append(entry.lesson.id)
                removed.insert(entry.lesson.id)
                used -= min(used, entry.downloadedBytes ?? 0)
            }
        }
        let wanted = course.filter {
            ahead.contains($0.lesson.id) && $0.downloadedBytes == nil && !$0.isQueued
        }
        pass.enqueued = wanted.map(\.lesson.id)
        guard let quota else { return pass }
        let needed = wanted.reduce(UInt64(0)) { QueuePlanner.saturatingAdd($0, $1.lesson.estimate?.bytes ?? 0) }
        guard QueuePlanner.saturatingAdd(used, needed) > quota else { return pass }
        // Over the quota: the least recently watched downloaded lessons go first (never watched
        // ones before any watched), never a pinned one nor one the learner is about to watch.
        // (`wanted` lessons of unknown size need nothing up front, as in the queue.)
        let evictable = course.filter {
            $0.downloadedBytes != nil && !$0.lesson.isPinned && !ahead.contains($0.lesson.id)
                && !removed.contains($0.lesson.id)
        }
        .sorted { first, second in
            let a = watched[first.lesson.id]?.lastWatched ?? .distantPast
            let b = watched[second.lesson.id]?.lastWatched ?? .distantPast
            return a == b ? first.lesson.id < second.lesson.id : a < b
        }
        // Only what lets a lesson in goes: the lessons to queue that would fit with every
        // evictable one gone (in the course's order); when none would, lessons go only to bring
        // a library over its quota (one the app lowered) back under it, as far as they can.
        let evictableBytes = evictable.reduce(UInt64(0)) { QueuePlanner.saturatingAdd($0, $1.downloadedBytes ?? 0) }
        var fitting: UInt64 = 0
        for entry in wanted {
            let next = QueuePlanner.saturatingAdd(fitting, entry.lesson.estimate?.bytes ?? 0)
            guard QueuePlanner.saturatingAdd(used - min(used, evictableBytes), next) <= quota else { break }
            fitting = next
        }
        guard fitting > 0 || used > quota else { return pass }
        for entry in evictable where QueuePlanner.saturatingAdd(used, fitting) > quota {
            pass.removed.append(entry.lesson.id)
            used -= min(used, entry.downloadedBytes ?? 0)
        }
        return pass
    }
}
