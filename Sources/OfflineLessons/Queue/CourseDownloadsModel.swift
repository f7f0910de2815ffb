import Downloads
public import Foundation
public import Observation

/// A course as its offline screen lists it: sections of lessons, in the course's order.
public struct OfflineCourse: Hashable, Sendable, Identifiable {
    /// One lesson.
    public struct Lesson: Hashable, Sendable, Identifiable {
        /// Its ID in the library and the queue.
        public var id: String
        /// Its title, as the screen shows it.
        public var title: String
        /// Where it is downloaded from.
        public var remoteURL: URL

        /// Creates a lesson.
        public init(id: String, title: String, remoteURL: URL) {
            self.id = id
            self.title = title
            self.remoteURL = remoteURL
        }
    }

    /// One section: a group of the queue.
    public struct Section: Hashable, Sendable, Identifiable {
        /// Its ID, the queue group of its lessons.
        public var id: String
        /// Its title.
        public var title: String
        /// Its lessons, in order.
        public var lessons: [Lesson]

        /// Creates a section.
        public init(id: String, title: String, lessons: [Lesson]) {
            self.id = id
            self.title = title
            self.lessons = lessons
        }
    }

    /// The course's ID.
    public var id: String
    /// Its title.
    public var title: String
    /// Its sections, in order.
    public var sections: [Section]

    /// Creates a course.
    public init(id: String, title: String, sections: [Section]) {
        self.id = id
        self.title = title
        self.sections = sections
    }
}

/// The model of a course's offline screen: a row per section and per lesson with its state and
/// size, the course's bytes and progress, the time left (an estimate until the sizes are known
/// and the transfers have run a while), the storage used against the quota, and the actions
/// (download the course, pause, resume, remove, pin). A view draws what it says.
///
/// <!-- example: course-downloads-model -->
/// ```swift
/// let model = CourseDownloadsModel(queue: queue, course: course)
/// Task { await model.observe() }  // follows the queue until the task is cancelled
/// try await model.downloadCourse()
/// // A view reads model.sections, model.fraction, model.remainingTime, model.usedBytes…
/// ```
@MainActor
@Observable
public final class CourseDownloadsModel {
    /// A lesson's row.
    public struct Row: Hashable, Sendable, Identifiable {
        /// The lesson's ID.
        public var id: String
        /// Its title.
        public var title: String
        /// Its state in the queue; `nil` when it is not queued.
        public var state: QueuedLessonState?
        /// Its size: its file's once downloaded, else its estimate; `nil` while unknown.
        public var bytes: UInt64?
        /// Whether ``bytes`` is exact.
        public var isExactSize: Bool
        /// Whether the learner pinned it.
        public var isPinned: Bool
        /// Whether its size is being estimated: the row says "estimating" until ``bytes`` is known.
        public var isEstimating = false
        /// Whether it continues in the system's background transfers
        /// (``OfflineLibrary/isHandedOver(_:)``): its fraction moves as their tasks report their bytes and end.
        public var isInBackground = false
    }

    /// A section's rows, with its summary once any of its lessons is queued.
    public struct SectionRows: Hashable, Sendable, Identifiable {
        /// The section's ID.
        public var id: String
        /// Its title.
        public var title: String
        /// Its lessons' rows.
        public var rows: [Row]
        /// Its lessons as one row; `nil` while none is queued.
        public var summary: QueueGroupSummary?
    }

    /// The course shown.
    public let course: OfflineCourse
    /// The rows, section by section.
    public private(set) var sections: [SectionRows] = []
    /// The course's bytes: downloaded files and the others' estimates.
    public private(set) var totalBytes: UInt64 = 0
    /// Whether ``totalBytes`` is an estimate.
    public private(set) var isEstimate = true
    /// The share of the course downloaded, 0…1, weighted by size.
    public private(set) var fraction: Double = 0
    /// The time left at the rate observed so far, or `nil` before it can be told (nothing is
    /// downloading, or the transfers have not run a second yet).
    public private(set) var remainingTime: Duration?
    /// The bytes the library's downloads take.
    public private(set) var usedBytes: UInt64 = 0
    /// How many of the course's lessons continue in the system's background transfers.
    public private(set) var lessonsInBackground = 0
    /// The library's quota, if any.
    public private(set) var quotaBytes: UInt64?

    @ObservationIgnored private let queue: DownloadQueue
    @ObservationIgnored private let elapsed: () -> Duration
    /// The first sample of the current run: when, and the bytes done then.
    @ObservationIgnored private var firstSample: (time: Duration, bytes: Double)?

    /// A model of `course`'s lessons in `queue`, timing the remaining time on `clock`.
    public init<C: Clock>(queue: DownloadQueue, course: OfflineCourse, clock: C) where C.Duration == Duration {
        self.queue = queue
        self.course = course
        let start = clock.now
        elapsed = { start.duration(to: clock.now) }
        sections = course.sections.map { section in
            SectionRows(
                id: section.id, title: section.title,
                rows: section.lessons.map {
                    Row(id: $0.id, title: $0.title, state: nil, bytes: nil, isExactSize: false, isPinned: false)
                })
        }
    }

    /// A model of `course`'s lessons in `queue`.
    public convenience init(queue: DownloadQueue, course: OfflineCourse) {
        self.init(queue: queue, course: course, clock: ContinuousClock())
    }

    /// Follows the queue until the calling task is cancelled.
    public func observe() async {
        await refresh()
        for await _ in queue.updates {
            await refresh()
        }
    }

    /// Queues every lesson of the course not queued yet, section by section, and returns once
    /// they are queued: their sizes are estimated afterwards, a few at a time, each row
    /// ``Row/isEstimating`` until its size is known.
    ///
    /// - Throws: ``DownloadQueue/QueueError`` when the queue cannot be saved.
    public func downloadCourse() async throws(DownloadQueue.QueueError) {
        let queued = Set(await queue.lessons.map(\.id))
        let lessons = course.sections.flatMap { section in
            section.lessons.filter { !queued.contains($0.id) }.map {
                QueuedLesson(id: $0.id, remoteURL: $0.remoteURL, group: section.id)
            }
        }
        if !lessons.isEmpty { try await queue.enqueue(lessons, before: nil, waitingForEstimates: false) }
        await refresh()
    }

    /// Pauses lesson `id` (or, with `nil`, every lesson of the course).
    ///
    /// - Throws: ``DownloadQueue/QueueError`` when the queue cannot be saved.
    public func pause(_ id: String? = nil) async throws(DownloadQueue.QueueError) {
        for lesson in lessons(id) { try await queue.pause(lesson) }
        await refresh()
    }

    /// Resumes lesson `id` (or, with `nil`, every lesson of the course): paused or failed.
    ///
    /// - Throws: ``DownloadQueue/QueueError`` when the queue cannot be saved.
    public func resume(_ id: String? = nil) async throws(DownloadQueue.QueueError) {
        for lesson in lessons(id) { try await queue.resume(lesson) }
        await refresh()
    }

    /// Removes lesson `id` (or, with `nil`, the whole course) from the queue and the device.
    ///
    /// - Throws: ``DownloadQueue/QueueError`` when the queue cannot be saved.
    public func remove(_ id: String? = nil) async throws(DownloadQueue.QueueError) {
        for lesson in lessons(id) { try await queue.remove(lesson) }
        await refresh()
    }

    /// Pins lesson `id`: smart downloads never remove it.
    ///
    /// - Throws: ``DownloadQueue/QueueError`` when the queue cannot be saved.
    public func pin(_ id: String) async throws(DownloadQueue.QueueError) {
        try await queue.pin(id)
        await refresh()
    }

    /// Unpins lesson `id`: smart downloads may remove it again.
    ///
    /// - Throws: ``DownloadQueue/QueueError`` when the queue cannot be saved.
    public func unpin(_ id: String) async throws(DownloadQueue.QueueError) {
        try await queue.unpin(id)
        await refresh()
    }

    /// Waits until the queue has nothing under way (``DownloadQueue/waitUntilSettled()``) and
    /// every figure shows how it ended: for tests and previews, which then check ``sections``
    /// without polling or sleeping.
    public func waitUntilSettled() async {
        await queue.waitUntilSettled()
        await refresh()
    }

    /// Reads the queue again and updates every figure.
    public func refresh() async {
        var states = await queue.allStates
        // A lesson the library holds downloaded shows so, queued or not (a queue file that was
        // damaged and started again empty loses nothing the learner sees).
        for (id, state) in await queue.library.states where states[id] == nil {
            if case .downloaded(_, let byteCount) = state { states[id] = .downloaded(byteCount: byteCount) }
        }
        let queued = Dictionary(await queue.lessons.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var estimating: Set<String> = []
        var inBackground: Set<String> = []
        for section in course.sections {
            for lesson in section.lessons {
                if await queue.isEstimating(lesson.id) { estimating.insert(lesson.id) }
                if await queue.library.isHandedOver(lesson.id) { inBackground.insert(lesson.id) }
            }
        }
        lessonsInBackground = inBackground.count
        var groups: [String: QueueGroupSummary] = [:]
        for section in course.sections { groups[section.id] = await queue.group(section.id) }
        usedBytes = await queue.library.totalBytes
        quotaBytes = await queue.requirements.quotaBytes
        var all: [QueuedLesson] = []
        sections = course.sections.map { section in
            SectionRows(
                id: section.id, title: section.title,
                rows: section.lessons.map { lesson in
                    let entry = queued[lesson.id]
                    if let entry { all.append(entry) }
                    var bytes = entry?.estimate?.bytes
                    var exact = entry?.estimate?.isExact ?? false
                    if case .downloaded(let count)? = states[lesson.id] {
                        bytes = count
                        exact = true
                    }
                    return Row(
                        id: lesson.id, title: lesson.title, state: states[lesson.id], bytes: bytes, isExactSize: exact,
                        isPinned: entry?.isPinned ?? false,
                        isEstimating: bytes == nil && estimating.contains(lesson.id),
                        isInBackground: inBackground.contains(lesson.id))
                }, summary: groups[section.id])
        }
        let whole = QueueGroupSummary(id: course.id, lessons: all, states: states)
        totalBytes = whole.bytes
        isEstimate = whole.isEstimate || all.count < course.sections.reduce(0) { $0 + $1.lessons.count }
        fraction = all.isEmpty ? 0 : whole.fraction
        let done = Double(totalBytes) * fraction
        let now = elapsed()
        let downloading = states.values.contains {
            if case .downloading = $0 { return true }
            return false
        }
        if !downloading {
            firstSample = nil
        } else if firstSample == nil {
            firstSample = (now, done)
        }
        remainingTime = firstSample.flatMap {
            Self.remainingTime(total: Double(totalBytes), done: done, since: $0, now: now)
        }
    }

    /// The time left to bring `done` bytes to `total` at the rate since `since`, or `nil` when
    /// less than a second has passed or nothing moved.
    ///
    /// - Complexity: O(1).
    nonisolated static func remainingTime(
        total: Double, done: Double, since: (time: Duration, bytes: Double), now: Duration
    ) -> Duration? {
        let seconds = (now - since.time) / .seconds(1)
        guard seconds >= 1, done > since.bytes, total > done else { return total > 0 && done >= total ? .zero : nil }
        let rate = (done - since.bytes) / seconds
        return .seconds((total - done) / rate)
    }

    /// Lesson `id`, or every lesson of the course.
    private func lessons(_ id: String?) -> [String] {
        id.map { [$0] } ?? course.sections.flatMap { $0.lessons.map(\.id) }
    }
}
