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
            /// The queue file is there but could not be read just now (a file protected until
            /// the first unlock, an I/O error): it is left as it is and read again at the next
            /// call. (A damaged file is moved aside instead: ``DownloadQueue/Notice``.)
            case unreadable(reason: String)
            /// The queue file was written by a newer version of MediaCore: it is kept as it is,
            /// never saved over, and every change refuses with this error.
            case newerVersion(Int)
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
            case .newerVersion(let version):
                "The download queue at \(path) was written by a newer version (\(version)); it is kept as it is"
            case .duplicate(let id): "Lesson \(id) is in the download queue already"
            }
        }
    }

    /// Something the queue did by itself that the app should know about.
    public enum Notice: Hashable, Sendable {
        /// The queue file could not be read (`reason` says what the decoder found): it was moved
        /// to `movedTo`, kept for a report, and the queue started again empty. The library's
        /// lessons are as they were: enqueue the course again (``CourseDownloadsModel/downloadCourse()``)
        /// and each shows as it is, a downloaded one downloaded.
        case queueFileRecovered(reason: String, movedTo: URL)
    }

    /// What the queue did by itself since it was created (a queue file it recovered from).
    public internal(set) var notices: [Notice] = []

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
        /// The estimator's own figure of each lesson, kept when the download refines its
        /// estimate, so that its measured size says how far off the estimator was for its
        /// siblings (absent in files written before it was kept).
        var estimated: [String: DownloadEstimate]?
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
    /// The estimator's own figure of each lesson (``QueueFile/estimated``).
    var estimated: [String: DownloadEstimate] = [:]
    /// The bytes each download in progress has written, as its latest report says.
    var written: [String: UInt64] = [:]
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
    /// The lessons whose estimate is being made now.
    var estimatingNow: Set<String> = []
    /// Callers of ``waitUntilSettled()`` waiting for the estimates under way.
    var estimateWaiters: [CheckedContinuation<Void, Never>] = []
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
    ///   that cannot be read now, ``QueueError/Kind/newerVersion(_:)`` for one a newer version
    ///   wrote (either is left as it is). A damaged one is moved aside: see ``notices``.
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

    /// Reads the saved queue once, before anything is saved over it. A file that cannot be
    /// read now, or that a newer version wrote, is never overwritten (every change throws its
    /// error instead); a damaged one (cut short, not JSON, an unknown earlier version) is moved
    /// aside, kept for a report, and the queue starts again empty, with a ``Notice``: the
    /// library still holds every lesson, and enqueuing the course again shows each as it is.
    func load() throws(QueueError) {
        guard !isLoaded else { return }
        StateFileWriting.removeLeftover(of: file)
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            guard FileManager.default.fileExists(atPath: file.path) else {
                isLoaded = true
                return
            }
            throw QueueError(.unreadable(reason: error.localizedDescription), path: file.path)
        }
        // The version first: a newer version's file may not decode as this one's.
        struct Header: Decodable { var version: Int }
        if let header = try? JSONDecoder().decode(Header.self, from: data), header.version > 1 {
            throw QueueError(.newerVersion(header.version), path: file.path)
        }
        let saved: QueueFile
        do {
            saved = try JSONDecoder().decode(QueueFile.self, from: data)
        } catch {
            try recover(reason: String(describing: error))
            return
        }
        guard saved.version == 1 else {
            try recover(reason: "version \(saved.version) is not one this app reads")
            return
        }
        lessons = saved.lessons
        requirements = saved.requirements
        removing = saved.removing ?? []
        retrying = Set(saved.retrying ?? [])
        estimated = saved.estimated ?? [:]
        isLoaded = true
    }

    /// Moves a damaged queue file aside, as `queue.json.damaged-N` beside it, and starts empty;
    /// when it cannot be moved, refuses (it is left as it is, and read again at the next call).
    private func recover(reason: String) throws(QueueError) {
        guard let aside = StateFileWriting.moveAside(file) else {
            throw QueueError(.unreadable(reason: reason), path: file.path)
        }
        notices.append(.queueFileRecovered(reason: reason, movedTo: aside))
        isLoaded = true
    }

    /// Waits until the queue has nothing under way: no decision being carried out, no estimate
    /// being made, and no lesson downloading in the foreground (each has ended, and the queue
    /// has taken in how). For tests and previews, which then check ``allStates`` without
    /// polling or sleeping:
    ///
    /// <!-- example: queue-wait-until-settled -->
    /// ```swift
    /// try await queue.enqueue(course)
    /// await queue.waitUntilSettled()
    /// let states = await queue.allStates
    /// #expect(states.values.allSatisfy { $0.isDownloaded })
    /// ```
    ///
    /// A lesson waiting (for a network, for room) or continuing in the system's background
    /// transfers is settled: nothing in this process will move it until the world changes.
    public func waitUntilSettled() async {
        while true {
            if let planning {
                await planning.value
                continue
            }
            if isEstimating {
                await withCheckedContinuation { estimateWaiters.append($0) }
                continue
            }
            let running = states.filter { if case .downloading = $0.value { true } else { false } }.keys.sorted()
            var moved = false
            for id in running {
                await library.waitForDownload(id)
                let now = await library.state(of: id)
                // Still downloading with no run of its own: the background transfers' now.
                if case .downloading = now { continue }
                await libraryChanged(id, now)
                moved = true
            }
            if !moved { return }
        }
    }

    deinit {
        for watcher in watchers { watcher.cancel() }
        planning?.cancel()
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
        try await enqueue(added, before: before, waitingForEstimates: true)
    }

    /// Whether lesson `id` waits for its size to be estimated: queued, not estimated, and its
    /// estimate asked for or being made.
    public func isEstimating(_ id: String) -> Bool {
        toEstimate.contains(id) || estimatingNow.contains(id)
    }

    /// Adds lessons as ``enqueue(_:before:)`` does; without `waitingForEstimates`, it returns
    /// once they are queued and the estimates go on in a task the queue owns.
    func enqueue(_ added: [QueuedLesson], before: String?, waitingForEstimates: Bool) async throws(QueueError) {
        try load()
        var seen = Set(lessons.map(\.id))
        for lesson in added where !seen.insert(lesson.id).inserted {
            throw QueueError(.duplicate(id: lesson.id), path: file.path)
        }
        let before = before.flatMap { id in lessons.firstIndex { $0.id == id } } ?? lessons.count
        let previous = lessons
        lessons.insert(contentsOf: added, at: before)
        for lesson in added where estimated[lesson.id] == nil {
            if let estimate = lesson.estimate, estimate.basis != .refined { estimated[lesson.id] = estimate }
        }
        do {
            try save()
        } catch {
            lessons = previous
            throw error
        }
        let unestimated = added.filter { $0.estimate == nil }.map(\.id)
        // Marked as estimating before the first plan decides on them.
        if estimator != nil { toEstimate.append(contentsOf: unestimated.filter { !toEstimate.contains($0) }) }
        await replan()
        if waitingForEstimates {
            await estimateSizes(of: unestimated)
        } else {
            estimateInBackground(unestimated)
        }
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
            estimated[id] = nil
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
