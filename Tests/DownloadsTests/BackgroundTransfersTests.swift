import Foundation
import HTTPSupport
import Locking
import OfflineLessonsTesting
import TestSupport
import Testing

@testable import Downloads
@testable import OfflineLessons

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A download's remaining parts handed to a background session that behaves as Apple documents
/// (``SimulatedBackgroundDaemon``): tasks that end in any order, an app killed and relaunched
/// between any two events, a force-quit, a server error and a missing part. Each scenario ends
/// with the download's next run reading what was staged: the same bytes as an uninterrupted
/// download, and no part fetched twice.
@Suite("Background transfers")
struct BackgroundTransfersTests {
    let clock = ManualClock()
    let transport: InMemoryHTTPTransport<ManualClock>
    /// Six segments, each a resource of its own, then four adjacent ranges of one file.
    let parts: [DownloadPart]
    let expected: Data

    init() {
        transport = InMemoryHTTPTransport(clock: clock)
        var parts: [DownloadPart] = []
        var expected = Data()
        for index in 0..<6 {
            let url = URL(literal: "https://media.example/lesson/segment.ts").deletingLastPathComponent()
                .appendingPathComponent("segment-\(index).ts")
            let bytes = resourceBytes(3_000 + index, seed: UInt64(index) + 40)
            transport.stub(url, reply: .resource(bytes, headers: ["ETag": "\"s\(index)\""]))
            parts.append(DownloadPart(url: url))
            expected.append(bytes)
        }
        let file = URL(literal: "https://media.example/lesson/main.bin")
        let whole = resourceBytes(20_000, seed: 50)
        transport.stub(file, reply: .resource(whole, headers: ["ETag": "\"m\""]))
        for index in 0..<4 {
            parts.append(DownloadPart(url: file, byteRange: ByteRange(length: 5_000, offset: UInt64(index) * 5_000)))
        }
        expected.append(whole)
        self.parts = parts
        self.expected = expected
    }

    /// The parts after the first two, as a running download hands them over.
    var remaining: [BackgroundBatch.Part] {
        (2..<parts.count).map { index in
            BackgroundBatch.Part(
                index: index, part: parts[index], expectedBytes: parts[index].byteRange?.length ?? 4_000)
        }
    }

    func transfers(_ session: any BackgroundTransferSession, in folder: URL, free: UInt64 = 1 << 40)
        -> BackgroundTransfers
    {
        BackgroundTransfers(
            session: session, folder: folder, retry: RetryPolicy(maximumAttempts: 3), freeSpace: { _ in free })
    }

    /// The download's next run, reading what was staged: its bytes, and the requests it sent.
    func finalRun(to destination: URL) async throws -> (Data, [URLRequest]) {
        let before = transport.requests.count
        let staged = BackgroundTransfers.stagedBodies(for: destination)
        let engine = DownloadEngine(
            concurrency: 2, retry: .none, clock: clock, transport: StagedBodyTransport(base: transport, staged: staged))
        _ = try await engine.start(parts, to: destination).result()
        return (try Data(contentsOf: destination), Array(transport.requests.dropFirst(before)))
    }

    /// A file system whose writes of the journal fail for a full disk while `diskFull` holds.
    static func journalFileSystem() -> (TestFileSystem, diskFull: LockedBox<Bool>) {
        let diskFull = LockedBox(false)
        let fileSystem = TestFileSystem(plan: { operation, file in
            if operation == .write, file.lastPathComponent == "background-transfers.json", diskFull.update({ $0 }) {
                throw CocoaError(.fileWriteOutOfSpace)
            }
        })
        return (fileSystem, diskFull)
    }

    /// Reads the next `count` events of `events` into `transfers`.
    func deliver(
        _ count: Int, from events: inout AsyncStream<BackgroundTransferEvent>.Iterator,
        to transfers: BackgroundTransfers
    ) async {
        for _ in 0..<count {
            guard let event = await events.next() else { return }
            await transfers.handle(event)
        }
    }

    @Test(
        "tasks end in any order, the app killed and relaunched between events: every body staged, the run byte-identical, nothing fetched twice",
        arguments: 0..<12)
    func anyOrderWithRelaunches(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        let folder = temporaryFolder("background-order")
        let destination = folder.appendingPathComponent("lesson.mp4")
        let daemon = SimulatedBackgroundDaemon(transport: transport, scratch: folder.appendingPathComponent("daemon"))
        let landing = folder.appendingPathComponent("landing")
        var session = daemon.launch(landing: landing)
        var coordinator = transfers(session, in: folder)
        try await coordinator.handOver("lesson", destination: destination, parts: remaining)
        // Four segments of their own, and the four adjacent ranges merged into one task.
        #expect(daemon.running.count == 5)
        var events = session.events.makeAsyncIterator()
        var running = true
        for label in daemon.running.shuffled(using: &random) {
            try await daemon.complete(label)
            if running {
                await deliver(1, from: &events, to: coordinator)
            }
            if Bool.random(using: &random) {
                daemon.killApp()
                running = false
            } else if !running {
                // Relaunched in the background: a new process, a new coordinator from the journal.
                session = daemon.launch(landing: landing)
                coordinator = transfers(session, in: folder)
                events = session.events.makeAsyncIterator()
                running = true
                await drain(&events, into: coordinator)
            }
        }
        if !running {
            let waited = daemon.hasWaitingEvents
            session = daemon.launch(landing: landing)
            coordinator = transfers(session, in: folder)
            events = session.events.makeAsyncIterator()
            if waited { await drain(&events, into: coordinator) }
        }
        #expect(await coordinator.handovers.first?.requests.isEmpty == true)
        let (bytes, requests) = try await finalRun(to: destination)
        #expect(bytes == expected)
        // Only the two parts the foreground had not handed over.
        #expect(requests.compactMap(\.url?.lastPathComponent).sorted() == ["segment-0.ts", "segment-1.ts"])
        // Every resource fetched once in all.
        let fetched = transport.requests.compactMap(\.url?.lastPathComponent)
        #expect(Dictionary(grouping: fetched, by: { $0 }).mapValues(\.count).values.allSatisfy { $0 == 1 })
        #expect(BackgroundTransfers.stagedBodies(for: destination).entries.isEmpty)
        await coordinator.finish("lesson")
        #expect(files(in: folder).sorted() == ["background-transfers.json", "daemon", "landing", "lesson.mp4"])
    }

    @Test(
        "a force-quit cancels every task: it shows at the next launch, and each is submitted again with its resume data"
    )
    func forceQuit() async throws {
        let folder = temporaryFolder("background-force-quit")
        let destination = folder.appendingPathComponent("lesson.mp4")
        let daemon = SimulatedBackgroundDaemon(transport: transport, scratch: folder.appendingPathComponent("daemon"))
        let landing = folder.appendingPathComponent("landing")
        var session = daemon.launch(landing: landing)
        var coordinator = transfers(session, in: folder)
        try await coordinator.handOver("lesson", destination: destination, parts: remaining)
        var events = session.events.makeAsyncIterator()
        let labels = daemon.running
        for label in labels.prefix(2) {
            try await daemon.complete(label)
            await deliver(1, from: &events, to: coordinator)
        }
        try await daemon.forceQuit()
        #expect(daemon.running.isEmpty)
        session = daemon.launch(landing: landing)
        coordinator = transfers(session, in: folder)
        events = session.events.makeAsyncIterator()
        await drain(&events, into: coordinator)
        // Nothing is lost: the three cancelled requests go on from their resume data as their
        // events arrive, and a resubmission at the launch adds nothing.
        let waiting = try #require(await coordinator.handovers.first).requests
        #expect(waiting.map(\.label) == Array(labels.dropFirst(2)))
        #expect(waiting.allSatisfy { $0.state == .submitted })
        await coordinator.resubmit()
        #expect(daemon.running == Array(labels.dropFirst(2)))
        #expect(daemon.resumedWith == labels.dropFirst(2).map { Data("resume \($0)".utf8) })
        for label in labels.dropFirst(2) {
            try await daemon.complete(label)
            await deliver(1, from: &events, to: coordinator)
        }
        let (bytes, _) = try await finalRun(to: destination)
        #expect(bytes == expected)
        #expect(daemon.submitted == 8)
    }

    @Test(
        "a 503 on one part is submitted again and staged; a network failure is retried up to the policy's attempts, then given up as offline"
    )
    func serverErrorRetried() async throws {
        let folder = temporaryFolder("background-503")
        let destination = folder.appendingPathComponent("lesson.mp4")
        let failing = parts[3].url
        let body = resourceBytes(3_003, seed: 43)
        transport.stub(
            failing,
            replies: [.response(status: 503, body: Data("busy".utf8)), .resource(body, headers: ["ETag": "\"s3\""])])
        let daemon = SimulatedBackgroundDaemon(transport: transport, scratch: folder.appendingPathComponent("daemon"))
        let session = daemon.launch(landing: folder.appendingPathComponent("landing"))
        let coordinator = transfers(session, in: folder)
        try await coordinator.handOver("lesson", destination: destination, parts: remaining)
        var events = session.events.makeAsyncIterator()
        let label = try #require(daemon.running.first { BackgroundTaskLabel(parsing: $0)?.parts == [3] })
        try await daemon.complete(label)
        await deliver(1, from: &events, to: coordinator)
        // The 503's body (the server's page) is never staged: the request went out again.
        #expect(daemon.running.filter { $0 == label }.count == 1)
        try await daemon.complete(label)
        await deliver(1, from: &events, to: coordinator)
        #expect(await coordinator.handovers.first?.requests.contains { $0.label == label } == false)

        // Another part fails on the network three times: the policy's three attempts, then offline.
        let offline = try #require(daemon.running.first)
        for attempt in 1...3 {
            #expect(daemon.running.contains(offline), "attempt \(attempt)")
            daemon.fail(offline, .network(code: URLError.Code.networkConnectionLost.rawValue))
            await deliver(1, from: &events, to: coordinator)
        }
        #expect(!daemon.running.contains(offline))
        let given = await coordinator.handovers.first?.requests.first { $0.label == offline }
        #expect(given?.failure == .offline)
        #expect(given?.attempts == 3)
    }

    @Test(
        "a journal that cannot be saved (a full disk) is reported, the transfers go on, the events' files stay for the next launch, which records them: byte-identical, nothing fetched twice"
    )
    func journalSaveFailure() async throws {
        let folder = temporaryFolder("background-journal-full")
        let destination = folder.appendingPathComponent("lesson.mp4")
        let landing = folder.appendingPathComponent("landing")
        let (fileSystem, diskFull) = Self.journalFileSystem()
        let daemon = SimulatedBackgroundDaemon(transport: transport, scratch: folder.appendingPathComponent("daemon"))
        var session = daemon.launch(landing: landing)
        var coordinator = BackgroundTransfers(
            session: session, folder: folder, retry: RetryPolicy(maximumAttempts: 3), freeSpace: { _ in 1 << 40 },
            fileSystem: fileSystem)
        try await coordinator.handOver("lesson", destination: destination, parts: remaining)
        #expect(await coordinator.saveFailure == nil)
        var events = session.events.makeAsyncIterator()
        let labels = daemon.running
        diskFull.update { $0 = true }
        for label in labels.prefix(2) {
            try await daemon.complete(label)
            await deliver(1, from: &events, to: coordinator)
        }
        let failure = try #require(await coordinator.saveFailure)
        guard case .saveFailed = failure.kind else {
            Issue.record("not a save failure: \(failure)")
            return
        }
        #expect(failure.path == folder.appendingPathComponent("background-transfers.json").path)
        // Staged all the same; the landed files stay, since the journal on disk does not hold
        // their events.
        #expect(BackgroundTransfers.stagedBodies(for: destination).entries.count == 2)
        #expect(files(in: landing).count == 2)

        // Killed before any save succeeds; the next launch has room again, and records the
        // events from their files.
        daemon.killApp()
        diskFull.update { $0 = false }
        session = daemon.launch(landing: landing)
        coordinator = BackgroundTransfers(
            session: session, folder: folder, retry: RetryPolicy(maximumAttempts: 3), freeSpace: { _ in 1 << 40 },
            fileSystem: fileSystem)
        await coordinator.start()
        var settled = coordinator.settled.makeAsyncIterator()
        try await daemon.completeAll()
        #expect(await settled.next()?.key == "lesson")
        #expect(await coordinator.saveFailure == nil)
        #expect(files(in: landing).isEmpty)
        let (bytes, requests) = try await finalRun(to: destination)
        #expect(bytes == expected)
        #expect(requests.compactMap(\.url?.lastPathComponent).sorted() == ["segment-0.ts", "segment-1.ts"])
        let fetched = transport.requests.compactMap(\.url?.lastPathComponent)
        #expect(Dictionary(grouping: fetched, by: { $0 }).mapValues(\.count).values.allSatisfy { $0 == 1 })
    }

    @Test("a save of the journal that succeeds again clears the failure, and the library reports it")
    func journalSaveRecovers() async throws {
        let folder = temporaryFolder("background-journal-recovers")
        let destination = folder.appendingPathComponent("lesson.mp4")
        let (fileSystem, diskFull) = Self.journalFileSystem()
        let daemon = SimulatedBackgroundDaemon(transport: transport, scratch: folder.appendingPathComponent("daemon"))
        let session = daemon.launch(landing: folder.appendingPathComponent("landing"))
        let coordinator = BackgroundTransfers(
            session: session, folder: folder, retry: RetryPolicy(maximumAttempts: 3), freeSpace: { _ in 1 << 40 },
            fileSystem: fileSystem)
        let downloader = MediaDownloader(
            engine: DownloadEngine(concurrency: 1, retry: .none, clock: clock, transport: transport))
        let library = OfflineLibrary(
            directory: folder, fileOptions: OfflineFileOptions(), fileSystem: fileSystem, background: coordinator
        ) { remote, destination in downloader.downloadLesson(from: remote, to: destination, preferredLanguages: []) }
        #expect(await library.backgroundSaveFailure == nil)
        try await coordinator.handOver("lesson", destination: destination, parts: remaining)
        var events = session.events.makeAsyncIterator()
        let labels = daemon.running
        diskFull.update { $0 = true }
        try await daemon.complete(labels[0])
        await deliver(1, from: &events, to: coordinator)
        #expect(await library.backgroundSaveFailure?.path.hasSuffix("background-transfers.json") == true)
        diskFull.update { $0 = false }
        try await daemon.complete(labels[1])
        await deliver(1, from: &events, to: coordinator)
        #expect(await library.backgroundSaveFailure == nil)
    }

    @Test("a 404 on one part is given up at once with its category; the other parts are staged")
    func missingPart() async throws {
        let folder = temporaryFolder("background-404")
        let destination = folder.appendingPathComponent("lesson.mp4")
        transport.stub(parts[4].url, reply: .response(status: 404, body: Data("gone".utf8)))
        let daemon = SimulatedBackgroundDaemon(transport: transport, scratch: folder.appendingPathComponent("daemon"))
        let session = daemon.launch(landing: folder.appendingPathComponent("landing"))
        let coordinator = transfers(session, in: folder)
        try await coordinator.handOver("lesson", destination: destination, parts: remaining)
        var events = session.events.makeAsyncIterator()
        for label in daemon.running {
            try await daemon.complete(label)
            await deliver(1, from: &events, to: coordinator)
        }
        #expect(daemon.submitted == 5)
        let left = try #require(await coordinator.handovers.first).requests
        #expect(left.count == 1)
        #expect(left.first?.failure == .notFound)
        #expect(BackgroundTransfers.stagedBodies(for: destination).entries.count == 4)
        // Nothing of the error page is kept.
        #expect(files(in: folder.appendingPathComponent("landing")).isEmpty)
    }

    @Test("too little free space is a typed error before anything is submitted or saved")
    func insufficientStorage() async throws {
        let folder = temporaryFolder("background-space")
        let daemon = SimulatedBackgroundDaemon(transport: transport, scratch: folder.appendingPathComponent("daemon"))
        let coordinator = transfers(daemon.launch(landing: folder), in: folder, free: 10_000)
        let needed = remaining.reduce(UInt64(0)) { $0 + ($1.expectedBytes ?? 0) }
        await #expect(throws: BackgroundTransfers.HandoverError.insufficientStorage(needed: needed, available: 10_000))
        {
            try await coordinator.handOver(
                "lesson", destination: folder.appendingPathComponent("lesson.mp4"), parts: remaining)
        }
        #expect(daemon.submitted == 0)
        #expect(files(in: folder).isEmpty)
    }

    @Test(
        "the free space is checked against every hand-over outstanding: a second download that fits alone but not beside the first's remaining bytes is refused"
    )
    func storageSharedAcrossHandovers() async throws {
        let folder = temporaryFolder("background-space-shared")
        let daemon = SimulatedBackgroundDaemon(transport: transport, scratch: folder.appendingPathComponent("daemon"))
        let each = remaining.reduce(UInt64(0)) { $0 + ($1.expectedBytes ?? 0) }
        let coordinator = transfers(daemon.launch(landing: folder), in: folder, free: 2 * each - 1)
        try await coordinator.handOver(
            "first", destination: folder.appendingPathComponent("first.mp4"), parts: remaining)
        await #expect(
            throws: BackgroundTransfers.HandoverError.insufficientStorage(needed: 2 * each, available: 2 * each - 1)
        ) {
            try await coordinator.handOver(
                "second", destination: folder.appendingPathComponent("second.mp4"), parts: remaining)
        }
        #expect(daemon.submitted == daemon.running.count)
        #expect(await coordinator.handovers.map(\.key) == ["first"])
    }

    @Test("the system's completion handler is called once the wake-up's events are recorded, not before")
    func completionHandlerAfterEvents() async throws {
        let folder = temporaryFolder("background-handler")
        let destination = folder.appendingPathComponent("lesson.mp4")
        let daemon = SimulatedBackgroundDaemon(transport: transport, scratch: folder.appendingPathComponent("daemon"))
        let landing = folder.appendingPathComponent("landing")
        let first = transfers(daemon.launch(landing: landing), in: folder)
        try await first.handOver("lesson", destination: destination, parts: remaining)
        daemon.killApp()
        for label in daemon.running { try await daemon.complete(label) }
        // Relaunched in the background: the app delegate hands over the handler, then the
        // session is recreated and its events arrive.
        let coordinator = transfers(daemon.launch(landing: landing), in: folder)
        let (called, calling) = AsyncStream<Void>.makeStream()
        await coordinator.handleEvents { calling.yield() }
        await coordinator.start()
        for await _ in called { break }
        // By then every body is staged and the journal says so on disk.
        let reread = transfers(
            SimulatedBackgroundSession(
                daemon: daemon, events: AsyncStream { $0.finish() }, leftovers: [],
                landing: folder.appendingPathComponent("landing")),
            in: folder)
        #expect(await reread.handovers.first?.requests.isEmpty == true)
        #expect(BackgroundTransfers.stagedBodies(for: destination).entries.count == 5)
    }

    @Test(
        "at a launch, a task that ended while the app was gone (its events still to come) is never submitted again; one a kill kept from being submitted is"
    )
    func resubmitWithEventsPending() async throws {
        let folder = temporaryFolder("background-pending")
        let destination = folder.appendingPathComponent("lesson.mp4")
        let daemon = SimulatedBackgroundDaemon(transport: transport, scratch: folder.appendingPathComponent("daemon"))
        let landing = folder.appendingPathComponent("landing")
        let first = transfers(daemon.launch(landing: landing), in: folder)
        try await first.handOver("lesson", destination: destination, parts: remaining)
        daemon.killApp()
        let labels = daemon.running
        for label in labels { try await daemon.complete(label) }
        // Launched in the foreground: getAllTasks lists none, the events have not arrived yet.
        let session = daemon.launch(landing: landing)
        let coordinator = transfers(session, in: folder)
        await coordinator.resubmit()
        #expect(daemon.submitted == 5)
        var events = session.events.makeAsyncIterator()
        await drain(&events, into: coordinator)
        #expect(await coordinator.handovers.first?.requests.isEmpty == true)

        // A hand-over saved but killed before its submission is submitted at the next launch.
        let other = folder.appendingPathComponent("other.mp4")
        let unsubmitted = BackgroundTransfers(
            session: SimulatedBackgroundSession(
                daemon: daemon, events: AsyncStream { $0.finish() }, leftovers: [],
                landing: folder.appendingPathComponent("landing")),
            folder: folder,
            freeSpace: { _ in 1 << 40 })
        try await unsubmitted.handOver("other", destination: other, parts: Array(remaining.prefix(1)))
        #expect(daemon.submitted == 6)
        #expect(await unsubmitted.handovers.last?.requests.allSatisfy { $0.state == .submitted } == true)
    }

    @Test(
        "a body staged just before a kill, its journal not saved yet: the relaunch counts it done, never fetched again")
    func killBetweenStageAndSave() async throws {
        let folder = temporaryFolder("background-stage-kill")
        let destination = folder.appendingPathComponent("lesson.mp4")
        let daemon = SimulatedBackgroundDaemon(transport: transport, scratch: folder.appendingPathComponent("daemon"))
        let coordinator = transfers(daemon.launch(landing: folder.appendingPathComponent("landing")), in: folder)
        try await coordinator.handOver("lesson", destination: destination, parts: remaining)
        let handed = try #require(await coordinator.handovers.first?.requests.first)
        // What `handle` stages before it saves, then the kill.
        var request = URLRequest(url: handed.url)
        if let range = handed.range { request.setValue(range.httpRangeHeader, forHTTPHeaderField: "Range") }
        let (body, _) = try await transport.send(request)
        let file = folder.appendingPathComponent("body")
        try body.write(to: file)
        try BackgroundTransfers.stagedBodies(for: destination).stage(
            file, url: handed.url, range: handed.range, headers: [:])
        let relaunched = transfers(daemon.launch(landing: folder.appendingPathComponent("landing")), in: folder)
        let left = try #require(await relaunched.handovers.first).requests
        #expect(left.count == 4)
        #expect(!left.contains { $0.label == handed.label })
    }

    @Test(
        "the handler given after the wake-up's events is called at once; a later event clears that, so the next wake-up's handler waits for its own"
    )
    func handlerAfterEvents() async throws {
        let folder = temporaryFolder("background-late-handler")
        let destination = folder.appendingPathComponent("lesson.mp4")
        let daemon = SimulatedBackgroundDaemon(transport: transport, scratch: folder.appendingPathComponent("daemon"))
        let coordinator = transfers(daemon.launch(landing: folder), in: folder)
        try await coordinator.handOver("lesson", destination: destination, parts: remaining)
        await coordinator.handle(.eventsDelivered)
        let calls = Locked(0)
        await coordinator.handleEvents { calls.withLock { $0 += 1 } }
        #expect(calls.withLock { $0 } == 1)
        await coordinator.handle(.eventsDelivered)
        let label = try #require(daemon.running.first)
        daemon.fail(label, .cancelled)
        await coordinator.handle(.failed(taskDescription: label, failure: .cancelled, resumeData: nil))
        await coordinator.handleEvents { calls.withLock { $0 += 10 } }
        #expect(calls.withLock { $0 } == 1)
        await coordinator.handle(.eventsDelivered)
        #expect(calls.withLock { $0 } == 11)
    }

    /// Reads the batch a launch delivers, up to "events delivered".
    func drain(_ events: inout AsyncStream<BackgroundTransferEvent>.Iterator, into coordinator: BackgroundTransfers)
        async
    {
        while let event = await events.next() {
            await coordinator.handle(event)
            if event == .eventsDelivered { return }
        }
    }
}

extension BackgroundTransfersTests {
    /// A hand-over withdrawn in one process (its tasks cancelled), the process gone before the
    /// cancellations are told, and the same parts handed over again in the next: the old tasks'
    /// events must not stop the new tasks, which carry another generation.
    @Test(
        "an earlier hand-over's cancel events, arriving after the same parts were handed over again in the next process, leave the new tasks alone"
    )
    func staleCancelsAcrossProcesses() async throws {
        let folder = temporaryFolder("background-stale-cancels")
        let destination = folder.appendingPathComponent("lesson.mp4")
        let daemon = SimulatedBackgroundDaemon(transport: transport, scratch: folder.appendingPathComponent("daemon"))
        let landing = folder.appendingPathComponent("landing")
        let first = transfers(daemon.launch(landing: landing), in: folder)
        try await first.handOver("lesson", destination: destination, parts: remaining)
        let earlier = daemon.running
        daemon.holdEvents()
        await first.withdraw("lesson")
        #expect(daemon.running.isEmpty)
        daemon.killApp()

        let session = daemon.launch(landing: landing)
        let second = transfers(session, in: folder)
        try await second.handOver("lesson", destination: destination, parts: remaining)
        let later = daemon.running
        #expect(later.count == earlier.count)
        #expect(Set(later).isDisjoint(with: earlier), "\(later) and \(earlier)")
        var events = session.events.makeAsyncIterator()
        await deliver(earlier.count + 1, from: &events, to: second)
        // The new tasks run once each, none stopped or submitted again.
        #expect(daemon.running == later)
        #expect(daemon.submitted == earlier.count + later.count)
        let requests = try #require(await second.handovers.first).requests
        #expect(requests.allSatisfy { $0.state == .submitted && $0.attempts == 1 })
    }
}

/// A session whose submission reaches the system, then does not return to the app until the
/// test says so: the app killed between the two.
final class SubmissionHoldingSession: BackgroundTransferSession {
    let base: any BackgroundTransferSession
    private let state = Locked(
        (
            submitted: false, waiters: [CheckedContinuation<Void, Never>](),
            release: [CheckedContinuation<Void, Never>](), released: false
        ))

    init(base: any BackgroundTransferSession) {
        self.base = base
    }

    var leftovers: [BackgroundTransferEvent] { base.leftovers }
    var landing: URL { base.landing }
    var events: AsyncStream<BackgroundTransferEvent> { base.events }

    func submit(_ tasks: [BackgroundTransferTask]) async {
        await base.submit(tasks)
        let waiters = state.withLock { state in
            state.submitted = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
        await withCheckedContinuation { (held: CheckedContinuation<Void, Never>) in
            let free = state.withLock { state in
                if !state.released { state.release.append(held) }
                return state.released
            }
            if free { held.resume() }
        }
    }

    func runningTaskDescriptions() async -> [String] { await base.runningTaskDescriptions() }

    func cancel(taskDescriptions descriptions: Set<String>) async {
        await base.cancel(taskDescriptions: descriptions)
    }

    /// Suspends until the system has the tasks.
    func waitUntilSubmitted() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state in
                if !state.submitted { state.waiters.append(waiter) }
                return state.submitted
            }
            if ready { waiter.resume() }
        }
    }

    /// Lets the held submission return.
    func release() {
        let held = state.withLock { state in
            state.released = true
            defer { state.release = [] }
            return state.release
        }
        for submission in held { submission.resume() }
    }
}

extension BackgroundTransfersTests {
    @Test(
        "killed once the system has a hand-over's tasks and before the journal marks them submitted: giving up the hand-over at the next launch (the item was paused) cancels those tasks too"
    )
    func killedDuringSubmission() async throws {
        let folder = temporaryFolder("background-kill-submit")
        let destination = folder.appendingPathComponent("lesson.mp4")
        let daemon = SimulatedBackgroundDaemon(transport: transport, scratch: folder.appendingPathComponent("daemon"))
        let landing = folder.appendingPathComponent("landing")
        let holding = SubmissionHoldingSession(base: daemon.launch(landing: landing))
        let first = transfers(holding, in: folder)
        let handing = Task { try await first.handOver("lesson", destination: destination, parts: remaining) }
        await holding.waitUntilSubmitted()
        #expect(daemon.running.count == 5)
        daemon.killApp()

        let next = transfers(daemon.launch(landing: landing), in: folder)
        #expect(await next.handovers.first?.requests.allSatisfy(\.needsSubmission) == true)
        await next.withdraw("lesson")
        #expect(daemon.running.isEmpty, "left running in the system: \(daemon.running)")
        holding.release()
        _ = try? await handing.value
    }

    @Test(
        "a damaged journal is moved aside and kept for a report, and the coordinator starts empty: hand-overs go on"
    )
    func damagedJournalMovedAside() async throws {
        let folder = temporaryFolder("background-journal-damaged")
        let journal = folder.appendingPathComponent("background-transfers.json")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let damaged = Data("{\"version\": 1, \"handovers\": [{\"key\": ".utf8)
        try damaged.write(to: journal)
        let daemon = SimulatedBackgroundDaemon(transport: transport, scratch: folder.appendingPathComponent("daemon"))
        let coordinator = transfers(daemon.launch(landing: folder.appendingPathComponent("landing")), in: folder)
        #expect(await coordinator.handovers.isEmpty)
        #expect(await coordinator.saveFailure == nil)
        let aside = folder.appendingPathComponent("background-transfers.json.damaged-1")
        #expect(try Data(contentsOf: aside) == damaged)
        try await coordinator.handOver(
            "lesson", destination: folder.appendingPathComponent("lesson.mp4"), parts: remaining)
        #expect(await coordinator.handovers.map(\.key) == ["lesson"])
        #expect(FileManager.default.fileExists(atPath: journal.path))
    }

    @Test(
        "a journal of a newer version is never saved over: hand-overs are refused with the reason, and the file stays as it was"
    )
    func newerJournalKept() async throws {
        let folder = temporaryFolder("background-journal-newer")
        let journal = folder.appendingPathComponent("background-transfers.json")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let newer = Data("{\"version\": 2, \"handovers\": [], \"shards\": {}}".utf8)
        try newer.write(to: journal)
        let daemon = SimulatedBackgroundDaemon(transport: transport, scratch: folder.appendingPathComponent("daemon"))
        let coordinator = transfers(daemon.launch(landing: folder.appendingPathComponent("landing")), in: folder)
        await coordinator.start()
        do {
            try await coordinator.handOver(
                "lesson", destination: folder.appendingPathComponent("lesson.mp4"), parts: remaining)
            Issue.record("handed over despite a newer journal")
        } catch {
            guard case .journalUnavailable(let reason) = error, case .newerVersion(2) = reason.kind else {
                Issue.record("refused for another reason: \(error)")
                return
            }
            #expect(reason.path == journal.path)
        }
        #expect(daemon.running.isEmpty)
        let failure = try #require(await coordinator.saveFailure)
        #expect(failure.kind == .newerVersion(2))
        #expect(failure.description.contains("background transfers' journal"))
        await coordinator.resubmit()
        await coordinator.withdraw("lesson")
        #expect(try Data(contentsOf: journal) == newer)
        // The library fails the download with the reason rather than pausing it for nothing.
        guard case .failed(let state) = OfflineLibrary.state(refusedBy: .journalUnavailable(failure)) else {
            Issue.record("not failed")
            return
        }
        #expect(state.message.contains("version 2"))
    }

    @Test(
        "a journal that cannot be read just now is not saved over, and is read again at the next use once it can be"
    )
    func unreadableJournalReadAgain() async throws {
        let folder = temporaryFolder("background-journal-unreadable")
        let journal = folder.appendingPathComponent("background-transfers.json")
        let daemon = SimulatedBackgroundDaemon(transport: transport, scratch: folder.appendingPathComponent("daemon"))
        // A journal that a first process wrote, holding one hand-over.
        let first = transfers(daemon.launch(landing: folder.appendingPathComponent("landing")), in: folder)
        try await first.handOver("lesson", destination: folder.appendingPathComponent("lesson.mp4"), parts: remaining)
        daemon.killApp()
        let saved = try Data(contentsOf: journal)
        // Unreadable at the next launch (a directory stands in for a protected file).
        let kept = folder.appendingPathComponent("kept.json")
        try FileManager.default.moveItem(at: journal, to: kept)
        try FileManager.default.createDirectory(at: journal, withIntermediateDirectories: false)
        let coordinator = transfers(daemon.launch(landing: folder.appendingPathComponent("landing")), in: folder)
        #expect(await coordinator.handovers.isEmpty)
        #expect(await coordinator.saveFailure.map { if case .readFailed = $0.kind { true } else { false } } == true)
        do {
            try await coordinator.handOver(
                "other", destination: folder.appendingPathComponent("other.mp4"), parts: remaining)
            Issue.record("handed over without its journal")
        } catch {
            #expect({ if case .journalUnavailable = error { true } else { false } }())
        }
        // Nothing is decided from it meanwhile: no launch reconciles against it, and its
        // reader does not start (its tasks are neither resubmitted nor cancelled).
        let running = daemon.running
        #expect(await coordinator.readableHandovers == nil)
        // A lesson that would be handed over meanwhile waits, paused: the journal may read later.
        let unreadable = try #require(await coordinator.saveFailure)
        #expect(OfflineLibrary.state(refusedBy: .journalUnavailable(unreadable)) == .paused)
        await coordinator.start()
        #expect(daemon.running == running)
        // Readable again: the next use reads it, with its hand-over.
        try FileManager.default.removeItem(at: journal)
        try FileManager.default.moveItem(at: kept, to: journal)
        #expect(await coordinator.handovers.map(\.key) == ["lesson"])
        #expect(await coordinator.readableHandovers?.map(\.key) == ["lesson"])
        #expect(await coordinator.saveFailure == nil)
        #expect(try Data(contentsOf: journal) == saved)
        await coordinator.start()
        #expect(daemon.running == running, "its own tasks run on")
    }

    /// A session that reports when its events are no longer read.
    struct WatchedSession: BackgroundTransferSession {
        let landing: URL
        let events: AsyncStream<BackgroundTransferEvent>
        let continuation: AsyncStream<BackgroundTransferEvent>.Continuation
        var leftovers: [BackgroundTransferEvent] { [] }

        init(landing: URL, ended: @escaping @Sendable () -> Void) {
            self.landing = landing
            (events, continuation) = AsyncStream.makeStream()
            continuation.onTermination = { _ in ended() }
        }

        func submit(_ tasks: [BackgroundTransferTask]) async {}
        func runningTaskDescriptions() async -> [String] { [] }
        func cancel(taskDescriptions descriptions: Set<String>) async {}
    }

    @Test("a coordinator let go stops reading its session's events: its reader ends with it")
    func readerEndsWithCoordinator() async throws {
        let folder = temporaryFolder("background-reader-ends")
        let (ended, endedNow) = AsyncStream<Void>.makeStream()
        let session = WatchedSession(landing: folder.appendingPathComponent("landing")) {
            endedNow.yield()
            endedNow.finish()
        }
        var coordinator: BackgroundTransfers? = transfers(session, in: folder)
        await coordinator?.start()
        await coordinator?.resubmit()
        coordinator = nil
        // Without the coordinator's end cancelling it, the reader waits on and this never returns
        // (the liveness check reports it).
        let reached = await withLivenessCheck {
            var iterator = ended.makeAsyncIterator()
            return await iterator.next() != nil
        }
        #expect(reached == true)
        session.continuation.finish()
    }

    @Test(
        "a damaged journal moved aside leaves no task of its hand-overs running in the system: the next start cancels the tasks no journal names"
    )
    func damagedJournalTasksCancelled() async throws {
        let folder = temporaryFolder("background-journal-orphans")
        let journal = folder.appendingPathComponent("background-transfers.json")
        let daemon = SimulatedBackgroundDaemon(transport: transport, scratch: folder.appendingPathComponent("daemon"))
        let landing = folder.appendingPathComponent("landing")
        let first = transfers(daemon.launch(landing: landing), in: folder)
        try await first.handOver("lesson", destination: folder.appendingPathComponent("lesson.mp4"), parts: remaining)
        #expect(!daemon.running.isEmpty)
        daemon.killApp()
        try Data("{\"version\": 1, \"hando".utf8).write(to: journal)
        let second = transfers(daemon.launch(landing: landing), in: folder)
        await second.start()
        #expect(await withinPoolTurns { daemon.running.isEmpty }, "left running: \(daemon.running)")
        #expect(
            FileManager.default.fileExists(
                atPath: folder.appendingPathComponent("background-transfers.json.damaged-1").path))
    }
}
