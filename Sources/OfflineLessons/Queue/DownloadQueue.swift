public import Downloads
public import Foundation

/// A persistent queue of lessons to download into an ``OfflineLibrary``: a course or a section
/// enqueued in one call, in the learner's order, downloaded a few lessons at a time, on the
/// networks and within the storage its ``DownloadRequirements`` allow.
///
/// Every lesson has a state (``QueuedLessonState``) and a waiting lesson says why it waits: the
/// network, the free space, the quota, its turn, or the learner's pause. The queue decides with
/// one pure function of its lessons, the library's states and the conditions (`QueuePlanner`)
/// at every change: a lesson enqueued, moved, paused, resumed or removed, a download that ends,
/// the network that changes. Its lessons and requirements are saved at every change, before the
/// change is announced, so a relaunch (or a kill at any moment) goes on where it was: the
/// library keeps each partial download, and the queue starts it again.
///
/// <!-- example: download-queue -->
/// ```swift
/// let queue = DownloadQueue(
///     library: library, file: folder.appendingPathComponent("queue.json"),
///     requirements: DownloadRequirements(network: .notExpensive, reserveBytes: 100_000_000),  // Wi-Fi only
///     network: network,  // SystemNetworkPathMonitor() on Apple platforms
///     estimator: { url in try await downloader.estimateLesson(from: url) })
/// try await queue.start()
/// try await queue.enqueue(course.map { QueuedLesson(id: $0.id, remoteURL: $0.url, group: "course") })
/// for await (id, state) in queue.updates {
///     show(id, state)  // waiting for Wi-Fi, downloading, downloaded…
///     if await queue.allStates.values.allSatisfy(\.isDownloaded) { break }
/// }
/// ```
public actor DownloadQueue {
    /// Why the queue could not load or save its lessons.
    public struct QueueError: Error, Hashable, Sendable, CustomStringConvertible {
        /// What went wrong, with the system's `errno` when there is one.
        public enum Kind: Hashable, Sendable {
            /// The queue file could not be written.
            case saveFailed(reason: String, code: Int32?)
            /// The queue file is not one this version reads.
            case unreadable(reason: String)
            /// A lesson of this ID is in the queue already.
            case duplicate(id: String)
        }

        /// What went wrong.
        public var kind: Kind
        /// The queue file.
        public var path: String

        /// Creates an error.
        public init(_ kind: Kind, path: String) {
            self.kind = kind
            self.path = path
        }

        /// A sentence naming the file and what went wrong.
        public var description: String {
            switch kind {
            case .saveFailed(let reason, _): "The download queue could not be saved to \(path): \(reason)"
            case .unreadable(let reason): "The download queue at \(path) could not be read: \(reason)"
            case .duplicate(let id): "Lesson \(id) is in the download queue already"
            }
        }
    }

    /// What is saved.
    struct QueueFile: Codable {
        var version: Int
        var lessons: [QueuedLesson]
        var requirements: DownloadRequirements
        /// Lessons taken out of the queue whose files the library may still hold: a removal
        /// is saved here first, so that a kill before the library forgets the lesson is
        /// finished at the next start (absent in files written before it was kept).
        var removing: [String]?
        /// Failed lessons the learner asked to try again that have not started yet (absent in
        /// files written before it was kept).
        var retrying: [String]?
    }

    /// Estimates a lesson's size before its first byte.
    public typealias Estimator = @Sendable (_ remote: URL) async throws -> DownloadEstimate

    /// The library lessons are downloaded into.
    public nonisolated let library: OfflineLibrary
    /// The file the queue is saved in.
    public nonisolated let file: URL
    /// The most lessons downloading at once (the transfers within each are the engine's).
    public nonisolated let concurrency: Int
    let network: any NetworkPathMonitor
    let estimator: Estimator?
    let freeSpace: @Sendable (URL) -> UInt64?

    /// The lessons, in the order they are downloaded.
    public internal(set) var lessons: [QueuedLesson] = []
    /// What the queue needs before it downloads.
    public internal(set) var requirements: DownloadRequirements
    /// The network as last reported.
    public internal(set) var path: NetworkPath = .offline
    /// Failed lessons the learner asked to try again.
    var retrying: Set<String> = []
    /// Lessons removed from the queue whose removal from the library is not done yet.
    var removing: [String] = []
    var libraryStates: [String: OfflineLibrary.ItemState] = [:]
    /// Why lessons handed to background transfers wait (``OfflineLibrary/waitReason(of:)``).
    var backgroundWaits: [String: WaitReason] = [:]
    /// How many of the library's reports each lesson has had. A state the queue assumes after
    /// asking the library for a change is kept only when no report arrived since the decision
    /// to ask: a report is newer than the assumption, and overwriting it lost the lesson's last
    /// report (a lesson shown downloading forever after its download ended).
    var reports: [String: Int] = [:]
    var states: [String: QueuedLessonState] = [:]
    var watchers: [Task<Void, Never>] = []
    var isStarted = false
    /// Whether the saved queue was read (or there was none); no save happens before.
    var isLoaded = false
    /// The decisions being carried out, and whether another is asked for meanwhile.
    var planning: Task<Void, Never>?
    var planAgain = false
    /// Whether estimates are being made, and the lessons waiting for theirs.
    var isEstimating = false
    var toEstimate: [String] = []
    nonisolated let broadcast = Broadcast<(id: String, state: QueuedLessonState)>(key: { $0.id })

    /// Every change of a queued lesson's state: each reading is a subscriber of its own that
    /// starts with the current states.
    public nonisolated var updates: AsyncStream<(id: String, state: QueuedLessonState)> { broadcast.subscribe() }

    /// Creates a queue saved in `file` that downloads into `library`.
    ///
    /// - Parameters:
    ///   - library: The library lessons are downloaded into.
    ///   - file: Where the queue is saved (its lessons, order and requirements).
    ///   - requirements: The networks and storage downloads need (used when no saved queue has
    ///     its own).
    ///   - concurrency: The most lessons downloading at once (2 by default).
    ///   - network: Where the queue learns what network it has.
    ///   - estimator: Estimates a lesson's size before its first byte (for the storage and quota
    ///     checks and a group's size); `nil` to go without.
    ///   - freeSpace: The free bytes of a folder's volume (by default, the figure the library's
    ///     downloads check: the system's).
    public init(
        library: OfflineLibrary, file: URL, requirements: DownloadRequirements = DownloadRequirements(),
        concurrency: Int = 2, network: any NetworkPathMonitor, estimator: Estimator? = nil,
        freeSpace: (@Sendable (URL) -> UInt64?)? = nil
    ) {
        self.library = library
        self.file = file
        self.requirements = requirements
        self.concurrency = max(1, concurrency)
        self.network = network
        self.estimator = estimator
        let fileSystem = library.fileSystem
        self.freeSpace = freeSpace ?? { fileSystem.availableCapacity(in: $0) }
    }

    /// Loads the saved queue, then follows the library and the network and downloads what the
    /// requirements allow. Call it once; later calls do nothing.
    ///
    /// - Throws: ``QueueError`` of kind ``QueueError/Kind/unreadable(reason:)`` for a queue file
    ///   that cannot be read (it is left as it is).
    public func start() async throws(QueueError) {
        guard !isStarted else { return }
        try load()
        isStarted = true
        await finishRemovals()
        libraryStates = await library.states
        // Every report: a bounded stream that fell behind (during a long decision, which the
        // reading waits for) could lose a lesson's last report, and the queue would wait for it.
        let libraryUpdates = library.everyUpdate
        let progress = library.progressUpdates
        let waits = library.waitUpdates
        let paths = network.paths()
        // The first plan waits for the current path, so that a launch on Wi-Fi does not show
        // every lesson waiting for the network first.
        let (first, firstArrived) = AsyncStream<NetworkPath>.makeStream()
        watchers.append(
            Task { [weak self] in
                for await (id, state) in libraryUpdates { await self?.libraryChanged(id, state) }
            })
        watchers.append(
            Task { [weak self] in
                for await (id, report) in progress { await self?.progressed(id, report) }
            })
        watchers.append(
            Task { [weak self] in
                for await (id, reason) in waits { await self?.backgroundWaitChanged(id, reason) }
            })
        watchers.append(
            Task { [weak self] in
                var isFirst = true
                for await path in paths {
                    if isFirst {
                        isFirst = false
                        firstArrived.yield(path)
                        firstArrived.finish()
                    }
                    await self?.networkChanged(path)
                }
                firstArrived.finish()
            })
        for await current in first { path = current }
        await replan()
        if path != .offline { estimateUnestimated() }
    }

    /// Reads the saved queue once, before anything is saved over it; a file that cannot be
    /// read is never overwritten (every change throws its error instead).
    func load() throws(QueueError) {
        guard !isLoaded else { return }
        StateFileWriting.removeLeftover(of: file)
        if let data = try? Data(contentsOf: file) {
            do {
                let saved = try JSONDecoder().decode(QueueFile.self, from: data)
                guard saved.version == 1 else {
                    throw QueueError(.unreadable(reason: "version \(saved.version)"), path: file.path)
                }
                lessons = saved.lessons
                requirements = saved.requirements
                removing = saved.removing ?? []
                retrying = Set(saved.retrying ?? [])
            } catch let error as QueueError {
                throw error
            } catch {
                throw QueueError(.unreadable(reason: "\(error)"), path: file.path)
            }
        }
        isLoaded = true
    }

    /// Stops following the library and the network; downloads going on go on.
    public func stop() {
        for watcher in watchers { watcher.cancel() }
        watchers = []
    }

    /// Adds lessons at the end of the queue (or before the lesson `before` names), saves the
    /// queue, estimates the sizes not known, and starts what may start.
    ///
    /// - Throws: ``QueueError``: a lesson already queued, or a queue that cannot be saved (then
    ///   nothing is added).
    public func enqueue(_ added: [QueuedLesson], before: String? = nil) async throws(QueueError) {
        try load()
        var seen = Set(lessons.map(\.id))
        for lesson in added where !seen.insert(lesson.id).inserted {
            throw QueueError(.duplicate(id: lesson.id), path: file.path)
        }
        let before = before.flatMap { id in lessons.firstIndex { $0.id == id } } ?? lessons.count
        let previous = lessons
        lessons.insert(contentsOf: added, at: before)
        do {
            try save()
        } catch {
            lessons = previous
            throw error
        }
        await replan()
        await estimateSizes(of: added.filter { $0.estimate == nil }.map(\.id))
    }

    /// Moves lesson `id` to `index` in the queue's order (clamped to its bounds).
    ///
    /// - Throws: ``QueueError`` when the queue cannot be saved (the order is then as it was).
    public func move(_ id: String, to index: Int) async throws(QueueError) {
        try load()
        guard let from = lessons.firstIndex(where: { $0.id == id }) else { return }
        let previous = lessons
        let lesson = lessons.remove(at: from)
        lessons.insert(lesson, at: min(max(index, 0), lessons.count))
        try await commit(restoring: previous)
    }

    /// Pauses lesson `id` for the learner: it waits (its partial files kept) until resumed.
    ///
    /// - Throws: ``QueueError`` when the queue cannot be saved.
    public func pause(_ id: String) async throws(QueueError) {
        try await setPaused(id, true)
    }

    /// Resumes lesson `id`: paused by the learner, or failed (it is tried again).
    ///
    /// - Throws: ``QueueError`` when the queue cannot be saved.
    public func resume(_ id: String) async throws(QueueError) {
        try load()
        if case .failed? = states[id], !retrying.contains(id) {
            retrying.insert(id)
            do {
                try save()
            } catch {
                retrying.remove(id)
                throw error
            }
        }
        try await setPaused(id, false)
    }

    /// Pins lesson `id`: smart downloads never remove a pinned lesson.
    ///
    /// - Throws: ``QueueError`` when the queue cannot be saved.
    public func pin(_ id: String) async throws(QueueError) {
        try await setPinned(id, true)
    }

    /// Unpins lesson `id`: smart downloads may remove it again.
    ///
    /// - Throws: ``QueueError`` when the queue cannot be saved.
    public func unpin(_ id: String) async throws(QueueError) {
        try await setPinned(id, false)
    }

    func setPinned(_ id: String, _ pinned: Bool) async throws(QueueError) {
        try load()
        guard let index = lessons.firstIndex(where: { $0.id == id }), lessons[index].isPinned != pinned else { return }
        let previous = lessons
        lessons[index].isPinned = pinned
        try await commit(restoring: previous)
    }

    /// Keeps a course ready offline as `policy` says: the next lessons of `course` (in its
    /// order) that the learner has not watched are queued, the watched ones are removed, and
    /// when the quota would be passed the least recently watched go first; pinned lessons stay.
    /// Call it when the learner finishes a lesson, and at launch.
    ///
    /// - Parameters:
    ///   - course: Every lesson of the course, in its order (those not queued are queued as
    ///     they are given).
    ///   - policy: How many lessons to keep ahead, when a lesson counts as watched, and whether
    ///     watched lessons are removed.
    ///   - watched: What the learner has watched.
    /// - Returns: What the pass queued and removed.
    /// - Throws: ``QueueError`` when the queue cannot be saved.
    /// Under a quota, the lessons to queue whose sizes are not known are estimated first (with
    /// the queue's estimator), since what must go to make room depends on them.
    ///
    /// - Complexity: O(*n* log *n*) in the course's lessons, plus the queue's saves and the
    ///   estimates.
    @discardableResult
    public func keepReady(
        _ course: [QueuedLesson], policy: SmartDownloadPolicy = SmartDownloadPolicy(), watched: any WatchedLessons
    ) async throws(QueueError) -> SmartDownloadPass {
        try load()
        let records = await watched.watched(course.map(\.id))
        var used = await library.totalBytes
        var course = course
        // Decided from the queue as it is when called: after an await, from the queue as it is
        // then (a lesson pinned, queued or removed meanwhile counts).
        func plan() -> SmartDownloadPass {
            let queued = Dictionary(lessons.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            let entries = course.map { lesson in
                let known = queued[lesson.id] ?? lesson
                var downloaded: UInt64?
                if case .downloaded(_, let bytes)? = libraryStates[lesson.id] { downloaded = bytes }
                let waiting = queued[lesson.id] != nil && downloaded == nil
                return SmartDownloadPlanner.Lesson(lesson: known, downloadedBytes: downloaded, isQueued: waiting)
            }
            return SmartDownloadPlanner.plan(
                course: entries, watched: records, policy: policy, quota: requirements.quotaBytes, usedBytes: used)
        }
        var pass = plan()
        // Under a quota, what to remove depends on the sizes of the lessons to queue: those
        // not known yet are estimated first, and the pass decided again.
        if requirements.quotaBytes != nil, let estimator {
            var estimated = false
            for index in course.indices
            where pass.enqueued.contains(course[index].id) && course[index].estimate == nil {
                course[index].estimate =
                    (try? await estimator(course[index].remoteURL)) ?? DownloadEstimate(bytes: nil, basis: .unknown)
                estimated = true
            }
            if estimated {
                used = await library.totalBytes
                pass = plan()
            }
        }
        for id in pass.removed where lessons.first(where: { $0.id == id })?.isPinned != true {
            try await remove(id)
        }
        let queuedNow = Set(lessons.map(\.id))
        let adding = course.filter { pass.enqueued.contains($0.id) && !queuedNow.contains($0.id) }
        if !adding.isEmpty { try await enqueue(adding) }
        return pass
    }

    /// Removes lesson `id` from the queue and from the library, with every file it made.
    ///
    /// - Throws: ``QueueError`` when the queue cannot be saved.
    public func remove(_ id: String) async throws(QueueError) {
        try load()
        if lessons.contains(where: { $0.id == id }) {
            let previous = lessons
            lessons.removeAll { $0.id == id }
            removing.append(id)
            do {
                try save()
            } catch {
                lessons = previous
                removing.removeAll { $0 == id }
                throw error
            }
        }
        try? await library.delete(id)
        libraryStates[id] = nil
        states[id] = nil
        if let index = removing.firstIndex(of: id) {
            removing.remove(at: index)
            try? save()  // should this fail, the next start deletes the lesson again: a no-op
        }
        await replan()
    }

    /// Deletes from the library the lessons whose removal a kill interrupted.
    func finishRemovals() async {
        guard !removing.isEmpty else { return }
        for id in removing { try? await library.delete(id) }
        removing = []
        try? save()
    }

    /// Changes what downloads need; lessons start or stop at once as the new rules say.
    ///
    /// - Throws: ``QueueError`` when the queue cannot be saved.
    public func setRequirements(_ new: DownloadRequirements) async throws(QueueError) {
        try load()
        let previous = requirements
        requirements = new
        do {
            try save()
        } catch {
            requirements = previous
            throw error
        }
        await replan()
    }

    /// Decides again, for what the queue does not hear of by itself: chiefly free space, which
    /// no platform announces. Lessons waiting for space start when it is there now. Call it
    /// when the app comes to the foreground, or after the app frees space of its own.
    public func refresh() async {
        await replan()
    }

    /// Lesson `id`'s state, or `nil` when it is not queued.
    public func state(of id: String) -> QueuedLessonState? {
        states[id]
    }

    /// Every queued lesson's state.
    public var allStates: [String: QueuedLessonState] { states }

    /// Group `id`'s lessons as one row (a course's or a section's size, progress and state), or
    /// `nil` when no queued lesson belongs to it.
    ///
    /// - Complexity: O(*n*) in the queue's lessons.
    public func group(_ id: String) -> QueueGroupSummary? {
        let members = lessons.filter { $0.group == id }
        guard !members.isEmpty else { return nil }
        return QueueGroupSummary(id: id, lessons: members, states: states)
    }

    /// What the queue is waiting for, for a test that stalls: whether a decision is being
    /// carried out, the library's states as the queue knows them, and the reports counted.
    package var diagnosis: String {
        "planning: \(planning != nil), planAgain: \(planAgain), path: \(path), "
            + "library as known: \(libraryStates.sorted { $0.key < $1.key }), "
            + "reports: \(reports.sorted { $0.key < $1.key })"
    }
}
