import Foundation
import HTTPSupport
import TestSupport
import Testing

@testable import Downloads
@testable import OfflineLessons

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A file system whose process dies right after the `killAt`-th save of the queue's or the
/// library's state file (before the first when `killAt` is 0): no file operation happens after
/// it, and the folder as the kill left it is copied aside, to be opened by the next launch.
final class KillingFileSystem: DownloadFileSystem, Sendable {
    struct Killed: Error {}

    /// The state files whose saves are the queue's transitions.
    static let stateFiles: Set<String> = ["queue.json", "offline-library.json"]

    let killAt: Int?
    let folder: URL
    let snapshot: URL
    private let died: AsyncStream<Void>.Continuation
    /// Called as the process dies, before anything else (to note what it had asked for).
    private let onDeath: @Sendable () -> Void
    /// Dies before file operation `killBeforeOperation` of any kind (counted from 1), when set.
    let killBeforeOperation: Int?
    private let state = LockedState<(saves: Int, isDead: Bool, operations: Int)>((0, false, 0))

    /// A file system that dies after save `killAt` (never when `nil`), copies `folder` to
    /// `snapshot` as it dies, and then yields to `died`.
    init(
        killAt: Int?, folder: URL, snapshot: URL, died: AsyncStream<Void>.Continuation,
        killBeforeOperation: Int? = nil, onDeath: @escaping @Sendable () -> Void = {}
    ) {
        self.killBeforeOperation = killBeforeOperation
        self.onDeath = onDeath
        self.killAt = killAt
        self.folder = folder
        self.snapshot = snapshot
        self.died = died
    }

    /// The saves of state files seen so far.
    var saves: Int { state.withLock { $0.saves } }
    var isDead: Bool { state.withLock { $0.isDead } }
    /// The file operations asked for so far.
    var operations: Int { state.withLock { $0.operations } }

    func willPerform(_ operation: FileOperation, on file: URL) throws {
        if killAt == 0 { kill() }
        let reached = state.withLock { state in
            state.operations += 1
            return state.operations == killBeforeOperation
        }
        if reached { kill() }
        if isDead { throw Killed() }
    }

    func didPerform(_ operation: FileOperation, on file: URL) {
        guard operation == .write, Self.stateFiles.contains(file.lastPathComponent) else { return }
        let dies = state.withLock { state in
            guard !state.isDead else { return false }
            state.saves += 1
            guard state.saves == killAt else { return false }
            state.isDead = true
            return true
        }
        if dies { die() }
    }

    /// Kills the process now (when it has not died yet), copying the folder as it is.
    func kill() {
        let dies = state.withLock { state in
            defer { state.isDead = true }
            return !state.isDead
        }
        if dies { die() }
    }

    /// Copies the folder as the kill left it, then reports the death.
    private func die() {
        onDeath()
        copyFolder()
        died.yield()
    }

    func availableCapacity(in folder: URL) -> UInt64? { 100 << 30 }

    /// Copies the folder's files one by one (an atomic save under way may rename its
    /// temporary file meanwhile: a file that is gone is skipped, as the disk would show it).
    ///
    /// The state files are copied by name as well as by listing: a listing read while another
    /// task's save renames a state file over the old one may miss both (POSIX leaves `readdir`
    /// unspecified for entries changed meanwhile), yet on the disk a rename never leaves the
    /// name absent, so a real kill would find the old file or the new one.
    private func copyFolder() {
        try? FileManager.default.createDirectory(at: snapshot, withIntermediateDirectories: true)
        for name in Set(files(in: folder)).union(Self.stateFiles) {
            try? FileManager.default.copyItem(
                at: folder.appendingPathComponent(name), to: snapshot.appendingPathComponent(name))
        }
    }
}

/// The queue's durability: the process killed at each save of the queue or the library, over
/// a learner's whole session (a course enqueued, a lesson moved, paused, pinned and resumed, the
/// course downloaded, a lesson removed). Each relaunch goes on from what was saved, and ends with
/// every queued lesson byte-identical to a download of it alone and nothing else in the folder.
/// Once over the in-memory transport under a manual clock, once over a server on 127.0.0.1.
@Suite("The download queue killed at every saved transition")
struct QueueKillTests {
    let clock = ManualClock()
    let transport: InMemoryHTTPTransport<ManualClock>
    let lessons: [ServedLesson]

    let server: LoopbackHTTPServer
    /// Each lesson's first playlist on the loopback server.
    let loopbackEntries: [String: URL]

    /// Where the lessons come from: the in-memory transport under a manual clock, or a server
    /// on 127.0.0.1 through `URLSession`.
    enum Source: String, CaseIterable, Sendable {
        case inMemory, loopback
    }

    init() throws {
        transport = InMemoryHTTPTransport(clock: clock)
        lessons = try ["ts-heaac", "packed-aac", "cmaf"].map { try ServedLesson($0) }
        for lesson in lessons { lesson.serve(on: transport) }
        server = try LoopbackHTTPServer()
        var entries: [String: URL] = [:]
        for lesson in lessons { entries[lesson.name] = try serveLesson(lesson.name, on: server) }
        loopbackEntries = entries
    }

    /// The course as the learner queues it, from `source`.
    func course(from source: Source) -> [QueuedLesson] {
        lessons.map { lesson in
            let entry = source == .loopback ? loopbackEntries[lesson.name] ?? lesson.entry : lesson.entry
            return QueuedLesson(id: lesson.name, remoteURL: entry, group: "course")
        }
    }

    /// A library and its queue in `folder`, over `source`, writing through `fileSystem`.
    func queue(
        in folder: URL, from source: Source, fileSystem: any DownloadFileSystem = LocalFileSystem()
    ) -> DownloadQueue {
        let library: OfflineLibrary
        let estimator: DownloadQueue.Estimator
        switch source {
        case .inMemory:
            let downloader = MediaDownloader(
                engine: DownloadEngine(
                    concurrency: 2, retry: .none, clock: clock, fileSystem: fileSystem, transport: transport))
            library = OfflineLibrary(directory: folder, downloader: downloader, preferredLanguages: [])
            estimator = { url in try await downloader.estimateLesson(from: url, preferredLanguages: []) }
        case .loopback:
            let downloader = MediaDownloader(engine: loopbackEngine(fileSystem: fileSystem))
            library = OfflineLibrary(directory: folder, downloader: downloader, preferredLanguages: [])
            estimator = { url in try await downloader.estimateLesson(from: url, preferredLanguages: []) }
        }
        return DownloadQueue(
            library: library, file: folder.appendingPathComponent("queue.json"),
            requirements: DownloadRequirements(reserveBytes: 0), concurrency: 1,
            network: FixedNetworkPathMonitor(.unmetered), estimator: estimator, freeSpace: { _ in 100 << 30 })
    }

    /// A lesson as the queue keeps it, in what the learner decides.
    struct Shape: Hashable, CustomStringConvertible {
        var id: String
        var isPaused: Bool
        var isPinned: Bool

        init(_ id: String, paused: Bool = false, pinned: Bool = false) {
            self.id = id
            isPaused = paused
            isPinned = pinned
        }

        init(_ lesson: QueuedLesson) {
            self.init(lesson.id, paused: lesson.isPausedByLearner, pinned: lesson.isPinned)
        }

        var description: String { "\(id)\(isPaused ? " paused" : "")\(isPinned ? " pinned" : "")" }
    }

    /// The queue after each step of ``session(_:confirmed:)`` (none taken: empty).
    static let shapes: [[Shape]] = [
        [],
        [Shape("ts-heaac"), Shape("packed-aac"), Shape("cmaf")],
        [Shape("cmaf"), Shape("ts-heaac"), Shape("packed-aac")],
        [Shape("cmaf"), Shape("ts-heaac", paused: true), Shape("packed-aac")],
        [Shape("cmaf", pinned: true), Shape("ts-heaac", paused: true), Shape("packed-aac")],
        [Shape("cmaf", pinned: true), Shape("ts-heaac"), Shape("packed-aac")],
        [Shape("cmaf", pinned: true), Shape("ts-heaac")],
    ]

    /// The learner's session: each step a saved change, counted in `confirmed` when it has
    /// returned before the process died, then the wait until every queued lesson is
    /// downloaded. It ends at the first step that fails (the process is dead).
    func session(
        _ queue: DownloadQueue, course: [QueuedLesson], confirmed: LockedState<Int>, isDead: @escaping () -> Bool
    ) async {
        let steps: [@Sendable (DownloadQueue) async throws -> Void] = [
            { try await $0.enqueue(course) },
            { try await $0.move("cmaf", to: 0) },
            { try await $0.pause("ts-heaac") },
            { try await $0.pin("cmaf") },
            { try await $0.resume("ts-heaac") },
            // The course downloaded, a lesson the learner is done with is removed.
            { queue in
                await waitUntilDownloaded(queue)
                try await queue.remove("packed-aac")
            },
        ]
        do {
            try await queue.start()
            for step in steps {
                try await step(queue)
                confirmed.withLock { if !isDead() { $0 += 1 } }
            }
        } catch {
            return
        }
        await waitUntilDownloaded(queue)
    }

    /// Returns once every lesson in `queue` is downloaded or failed (or the task is cancelled),
    /// with the states then.
    @discardableResult
    func waitUntilDownloaded(_ queue: DownloadQueue) async -> [String: QueuedLessonState] {
        for await _ in queue.updates {
            let lessons = await queue.lessons
            let states = await queue.allStates
            let settled = lessons.allSatisfy { lesson in
                switch states[lesson.id] {
                case .downloaded?, .failed?: true
                default: false
                }
            }
            if settled { return states }
        }
        return await queue.allStates
    }

    /// Each lesson's file as a download of it alone writes it.
    func references() async throws -> [String: Data] {
        var files: [String: Data] = [:]
        let downloader = MediaDownloader(
            engine: DownloadEngine(concurrency: 2, retry: .none, clock: clock, transport: transport))
        for lesson in lessons {
            let destination = temporaryFolder("queue-kill-reference").appendingPathComponent("lesson")
            let result = try await downloader.downloadLesson(
                from: lesson.entry, to: destination, preferredLanguages: []
            ).result()
            files[lesson.name] = try Data(contentsOf: result.file)
        }
        return files
    }

    /// Runs the session in a fresh folder, killed at save `n` (or after its end when `nil`),
    /// and returns the folder as the kill left it with the steps that had returned.
    func killedSession(at n: Int?, from source: Source) async -> (snapshot: URL, confirmed: Int, saves: Int) {
        let folder = temporaryFolder("queue-kill")
        let snapshot = temporaryFolder("queue-kill-relaunch")
        let (died, dying) = AsyncStream<Void>.makeStream()
        let fileSystem = KillingFileSystem(killAt: n, folder: folder, snapshot: snapshot, died: dying)
        let queue = queue(in: folder, from: source, fileSystem: fileSystem)
        let confirmed = LockedState(0)
        let course = course(from: source)
        let run = Task {
            await session(queue, course: course, confirmed: confirmed, isDead: { fileSystem.isDead })
            dying.yield()
        }
        for await _ in died { break }
        let saves = fileSystem.saves
        fileSystem.kill()  // a session that ended is killed after it
        run.cancel()
        await run.value
        await queue.stop()
        return (snapshot, confirmed.withLock { $0 }, saves)
    }

    @Test(
        "killed at each save of the queue or the library, a relaunch shows what was saved and ends byte-identical, nothing left beside",
        arguments: Source.allCases)
    func killedAtEverySave(source: Source) async throws {
        defer { server.stop() }
        let references = try await references()
        let uninterrupted = await killedSession(at: nil, from: source)
        #expect(uninterrupted.confirmed == Self.shapes.count - 1)
        let total = uninterrupted.saves
        #expect(total >= 12, "the session's saves: \(total)")
        try await relaunch(
            uninterrupted.snapshot, from: source, confirmed: uninterrupted.confirmed, references, label: "after the end"
        )
        for n in 0...total {
            let killed = await killedSession(at: n, from: source)
            try await relaunch(
                killed.snapshot, from: source, confirmed: killed.confirmed, references, label: "killed at save \(n)")
        }
    }

    /// Opens the folder a kill left, checks the queue is as saved, resumes what the learner
    /// paused, and checks every queued lesson ends byte-identical with nothing else left.
    func relaunch(
        _ folder: URL, from source: Source, confirmed: Int, _ references: [String: Data], label: String
    ) async throws {
        let queue = queue(in: folder, from: source)
        try await queue.start()
        let shape = await queue.lessons.map(Shape.init)
        // What every step that returned before the kill saved is there; the next step's save,
        // under way when the process died, may be there too.
        let expected = Self.shapes[confirmed]
        let next = confirmed + 1 < Self.shapes.count ? Self.shapes[confirmed + 1] : expected
        #expect([expected, next].contains(shape), "\(label): \(shape), \(confirmed) steps returned")
        for lesson in await queue.lessons where lesson.isPausedByLearner { try await queue.resume(lesson.id) }
        if !shape.isEmpty {
            let states = await waitUntilDownloaded(queue)
            let allDownloaded = states.values.allSatisfy { $0.isDownloaded }
            #expect(allDownloaded, "\(label): \(states)")
        }
        var kept: Set<String> = ["queue.json", "offline-library.json"]
        for lesson in shape {
            let file = try #require(await queue.library.localFile(of: lesson.id), "\(label): \(lesson.id)")
            #expect(try Data(contentsOf: file) == references[lesson.id], "\(label): \(lesson.id)")
            kept.formUnion([file.lastPathComponent, ".\(file.lastPathComponent).item"])
        }
        // A lesson removed is gone with its files, even when the kill came between the queue's
        // save and the library's deletion.
        for removed in Set(references.keys).subtracting(shape.map(\.id)) {
            #expect(await queue.library.state(of: removed) == .notDownloaded, "\(label): \(removed)")
        }
        if shape.isEmpty { kept = Set(files(in: folder)).intersection(kept) }
        #expect(Set(files(in: folder)) == kept, "\(label)")
        await queue.stop()
    }

    /// The requests for media the lessons' origin received so far, from `source`: each path
    /// with its `Range` header.
    func fetchLog(_ source: Source) -> [(path: String, range: String?)] {
        switch source {
        case .inMemory:
            transport.requests.map { ($0.url?.path ?? "", $0.value(forHTTPHeaderField: "Range")) }
        case .loopback:
            server.requests.map { ($0.path, $0.headers["range"]) }
        }
    }

    /// The segments fetched in `requests`, by path and range: playlists aside (a relaunch
    /// reads them again), and the one-byte requests of the estimates (`bytes=N-N`, a first
    /// segment's size).
    /// The checkpoints a remux journal holds (its records after the header line), as the
    /// next run trusts them: 0 when there is none.
    static func checkpoints(in journal: URL) -> Int {
        guard let bytes = try? Data(contentsOf: journal), let newline = bytes.firstIndex(of: 0x0A) else { return 0 }
        return bytes.withUnsafeBytes { raw in
            var position = newline - bytes.startIndex + 1
            var count = 0
            while let frame = JournalFrame.decode(raw, at: position) {
                if frame.magic == 0x4D43_5243 { count += 1 }  // "MCRC", a checkpoint
                position = frame.end
            }
            return count
        }
    }

    static func segmentFetches(_ requests: some Sequence<(path: String, range: String?)>) -> [String: Int] {
        var counts: [String: Int] = [:]
        for (path, range) in requests where !path.hasSuffix(".m3u8") {
            if let bounds = range?.dropFirst("bytes=".count).split(separator: "-"), bounds.count == 2,
                bounds[0] == bounds[1]
            {
                continue
            }
            counts[path + (range.map { " \($0)" } ?? ""), default: 0] += 1
        }
        return counts
    }

    /// Where a course is killed: after each save of a state file, or before each file operation.
    enum KillPoint: String, CaseIterable, Sendable {
        case stateSaves, fileOperations
    }

    @Test(
        "a course killed after each save of the queue or the library, or before each file operation, and relaunched: byte-identical, and nothing fetched twice but what the running lesson had not yet vouched for in its journal (never a finished lesson's)",
        arguments: [
            (KillPoint.stateSaves, Source.inMemory), (.fileOperations, .inMemory), (.stateSaves, .loopback),
            (.fileOperations, .loopback),
        ])
    func relaunchMidCourseFetchesNothingTwice(at point: KillPoint, from source: Source) async throws {
        defer { server.stop() }
        let references = try await references()
        let course = course(from: source)
        // Over loopback, every third file operation: each run takes real time.
        let stride = source == .loopback && point == .fileOperations ? 3 : 1
        var total = 0
        for n in [Int?.none] + Array(Swift.stride(from: 0, through: 2_000, by: stride)).map(Optional.some) {
            if let n, n > total { break }
            let folder = temporaryFolder("queue-kill-course")
            let snapshot = temporaryFolder("queue-kill-course-relaunch")
            let (died, dying) = AsyncStream<Void>.makeStream()
            let start = fetchLog(source).count
            let atDeath = LockedState<Int?>(nil)
            let fileSystem = KillingFileSystem(
                killAt: point == .stateSaves ? n : nil, folder: folder, snapshot: snapshot, died: dying,
                killBeforeOperation: point == .fileOperations ? n : nil,
                onDeath: { [self] in
                    let count = fetchLog(source).count
                    atDeath.withLock { $0 = $0 ?? count }
                })
            let queue = queue(in: folder, from: source, fileSystem: fileSystem)
            let run = Task {
                do {
                    try await queue.start()
                    try await queue.enqueue(course)
                    await waitUntilDownloaded(queue)
                } catch {}
                dying.yield()
            }
            for await _ in died { break }
            fileSystem.kill()
            run.cancel()
            await run.value
            await queue.stop()
            let killedEnd = try #require(atDeath.withLock { $0 })
            if n == nil { total = point == .stateSaves ? fileSystem.saves : fileSystem.operations }
            let before = Self.segmentFetches(fetchLog(source)[start..<killedEnd])

            let left = files(in: snapshot)  // as the kill left it
            // What each lesson's journal vouched for then (the relaunch goes on in that folder),
            // found as the library names a download's files (an `.mp4` or, sound only, an `.m4a`).
            var vouchedAtKill: [String: Int] = [:]
            for lesson in lessons {
                let hidden = LibraryStore.files(of: lesson.name, remote: lesson.entry, among: left).hidden
                vouchedAtKill[lesson.name] = hidden.filter { $0.hasSuffix(".journal") }.reduce(0) { count, name in
                    count + Self.checkpoints(in: snapshot.appendingPathComponent(name))
                }
            }
            let relaunched = self.queue(in: snapshot, from: source)
            try await relaunched.start()
            let afterStart = fetchLog(source).count
            // The app enqueues the course again when the kill came before the queue saved it.
            if await relaunched.lessons.isEmpty { try await relaunched.enqueue(course) }
            await waitUntilDownloaded(relaunched)
            let after = Self.segmentFetches(fetchLog(source)[afterStart...])
            let label = n.map { "killed at \(point) \($0) of \(total)" } ?? "after the end"
            for lesson in lessons {
                let file = try #require(await relaunched.library.localFile(of: lesson.name), "\(label): \(lesson.name)")
                #expect(try Data(contentsOf: file) == references[lesson.name], "\(label): \(lesson.name)")
            }
            let twice = before.merging(after, uniquingKeysWith: +).filter { $0.value > 1 }
            #expect(twice.values.allSatisfy { $0 == 2 }, "\(label): \(twice)")
            // What was fetched again is what the lesson running at the kill had fetched and
            // not yet vouched for in its journal: one lesson at most (the queue runs one at a
            // time), never one whose finished file the kill left.
            let lessonsAgain = Set(twice.keys.compactMap { $0.split(separator: "/").first.map(String.init) })
            #expect(lessonsAgain.count <= 1, "\(label): fetched again \(twice.keys.sorted())")
            for lesson in lessons where lessonsAgain.contains(lesson.name) {
                let stem = (OfflineLibrary.fileName(for: lesson.name, remote: lesson.entry) as NSString)
                    .deletingPathExtension
                let finished = left.filter { $0.hasPrefix("\(stem).") && !$0.hasSuffix(".vtt") }
                #expect(finished.isEmpty, "\(label): \(lesson.name) fetched again beside its file \(finished)")
                // And of its media segments, only those its journal did not vouch for when the
                // kill came: one checkpoint per segment remuxed (initialization segments are
                // read again with any resume).
                let vouched = vouchedAtKill[lesson.name] ?? 0
                func isMedia(_ key: String) -> Bool { key.hasPrefix("/\(lesson.name)/") && !key.contains("init") }
                let media = Set(before.keys.filter(isMedia)).union(after.keys.filter(isMedia))
                let again = twice.keys.filter(isMedia)
                #expect(
                    again.count <= media.count - min(vouched, media.count),
                    "\(label): \(lesson.name) fetched \(again.sorted()) again, its journal vouching for \(vouched) of \(media.count) segments"
                )
            }
            await relaunched.stop()
        }
        #expect(total >= 6, "the course's \(point): \(total)")
    }
}
