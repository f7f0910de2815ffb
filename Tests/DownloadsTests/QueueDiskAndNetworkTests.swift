import Foundation
import HTTPSupport
import TestSupport
import Testing

@testable import Downloads
@testable import OfflineLessons

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Reads a queue's updates until `done` holds for its states (checked at once, then at every
/// change).
func waitUntil(
    _ queue: DownloadQueue, _ done: @escaping @Sendable ([String: QueuedLessonState]) -> Bool
) async -> [String: QueuedLessonState] {
    var seen = await queue.allStates
    if done(seen) { return seen }
    // Each update is a cue to read the queue's states, not the states themselves: `updates` is
    // bounded, and a reader that falls behind (a loaded run under a sanitizer) may lose a
    // lesson's last announcement, though never the newest one.
    for await _ in queue.updates {
        seen = await queue.allStates
        if done(seen) { return seen }
    }
    return seen
}

/// The course queue against a real server on 127.0.0.1 through `URLSession`, and on a disk that
/// fills: the network switching under a transfer, a file purged behind the library's back, a
/// lesson that does not fit waiting for space, and a disk that fills mid-download. Every lesson
/// ends byte-identical to a download of it alone.
@Suite("The download queue over loopback and on a full disk")
struct QueueDiskAndNetworkTests {
    let server: LoopbackHTTPServer

    init() throws {
        server = try LoopbackHTTPServer()
    }

    /// A library and its queue in `folder`, over loopback, writing through `fileSystem`.
    func queue(
        in folder: URL, network: any NetworkPathMonitor, requirements: DownloadRequirements,
        fileSystem: any DownloadFileSystem = LocalFileSystem(), estimates: Bool = true
    ) -> DownloadQueue {
        let downloader = MediaDownloader(engine: loopbackEngine(fileSystem: fileSystem))
        let library = OfflineLibrary(directory: folder, downloader: downloader, preferredLanguages: [])
        let estimator: DownloadQueue.Estimator? =
            estimates
            ? { @Sendable url in try await downloader.estimateLesson(from: url, preferredLanguages: []) } : nil
        return DownloadQueue(
            library: library, file: folder.appendingPathComponent("queue.json"), requirements: requirements,
            concurrency: 1, network: network, estimator: estimator)
    }

    /// Each lesson's file as a download of it alone over loopback writes it.
    func references(_ course: [QueuedLesson]) async throws -> [String: Data] {
        var files: [String: Data] = [:]
        for lesson in course {
            let destination = temporaryFolder("queue-loopback-reference").appendingPathComponent("lesson")
            let result = try await MediaDownloader(engine: loopbackEngine()).downloadLesson(
                from: lesson.remoteURL, to: destination, preferredLanguages: []
            ).result()
            files[lesson.id] = try Data(contentsOf: result.file)
        }
        return files
    }

    func expectFiles(
        of queue: DownloadQueue, _ references: [String: Data], sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        for (id, bytes) in references {
            let file = try #require(await queue.library.localFile(of: id), "\(id)", sourceLocation: sourceLocation)
            #expect(try Data(contentsOf: file) == bytes, "\(id)", sourceLocation: sourceLocation)
        }
    }

    static func isDownloaded(_ ids: [String]) -> @Sendable ([String: QueuedLessonState]) -> Bool {
        { states in ids.allSatisfy { states[$0]?.isDownloaded == true } }
    }

    @Test(
        "Wi-Fi only over loopback: nothing fetched on cellular, a transfer cut by a switch to cellular waits and resumes, a purged file is not downloaded at relaunch and comes again"
    )
    func networkChangesAndPurge() async throws {
        defer { server.stop() }
        let course = try ["ts-heaac", "packed-aac", "cmaf"].map { name in
            QueuedLesson(id: name, remoteURL: try serveLesson(name, on: server), group: "course")
        }
        let references = try await references(course)
        // cmaf's second video segment is held on its first request until the test lets it go.
        let (arrivals, arrived) = AsyncStream<Void>.makeStream()
        let (gate, release) = AsyncStream<Void>.makeStream()
        let segment = try Data(
            contentsOf: Lessons.loader.folder.appendingPathComponent("cmaf/video/seg1.m4s"))
        let held = LockedState(false)
        server.route(
            "/cmaf/video/seg1.m4s",
            .handler { _ in
                let isFirst = held.withLock { wasHeld in
                    defer { wasHeld = true }
                    return !wasHeld
                }
                if isFirst {
                    arrived.yield()
                    for await _ in gate { break }
                }
                return (200, ["Content-Length": "\(segment.count)"], segment)
            })
        let before = server.requests.count

        let folder = temporaryFolder("queue-loopback")
        let network = ManualNetwork(.cellular)
        let wifiOnly = DownloadRequirements(network: .notExpensive, reserveBytes: 0)
        let queue = queue(in: folder, network: network, requirements: wifiOnly)
        try await queue.start()
        try await queue.enqueue(course)
        let waiting = await waitUntil(queue) { states in
            states.count == 3 && states.values.allSatisfy { $0 == .waiting(.network(required: .notExpensive)) }
        }
        #expect(waiting.count == 3)
        // On cellular only the estimates asked anything, and never for a second segment.
        let asked = server.requests.dropFirst(before).map(\.path)
        #expect(!asked.contains { $0.contains("seg1") }, "\(asked)")

        network.send(.unmetered)
        for await _ in arrivals { break }  // cmaf is mid-transfer
        let midway = await queue.allStates["cmaf"]
        guard case .downloading? = midway else {
            Issue.record("cmaf mid-transfer: \(String(describing: midway))")
            return
        }
        network.send(.cellular)
        let cut = await waitUntil(queue) { $0["cmaf"] == .waiting(.network(required: .notExpensive)) }
        #expect(cut["cmaf"] == .waiting(.network(required: .notExpensive)))
        #expect(Self.isDownloaded(["ts-heaac", "packed-aac"])(cut))
        // Once the queue shows the wait, nothing more is asked on cellular: only what was in
        // flight at the switch (here the held segment) still answers.
        let askedAtTheCut = server.requests.count
        release.yield()
        await queue.library.waitForDownload("cmaf")
        #expect(await queue.library.state(of: "cmaf") == .paused)
        #expect(
            server.requests.count == askedAtTheCut,
            "asked on cellular after the wait showed: \(server.requests.dropFirst(askedAtTheCut).map(\.path))")
        network.send(.unmetered)
        _ = await waitUntil(queue, Self.isDownloaded(["ts-heaac", "packed-aac", "cmaf"]))
        try await expectFiles(of: queue, references)
        await queue.stop()

        // The system purges a lesson's file while the app is not running.
        let purged = try #require(await queue.library.localFile(of: "ts-heaac"))
        try FileManager.default.removeItem(at: purged)
        let offline = ManualNetwork(.offline)
        let relaunched = self.queue(in: folder, network: offline, requirements: wifiOnly)
        try await relaunched.start()
        #expect(await relaunched.state(of: "ts-heaac") == .waiting(.network(required: .notExpensive)))
        #expect(await relaunched.library.state(of: "ts-heaac") == .notDownloaded)
        let row = try #require(await relaunched.group("course"))
        #expect(row.downloadedCount == 2 && row.state != .downloaded)
        offline.send(.unmetered)
        _ = await waitUntil(relaunched, Self.isDownloaded(["ts-heaac", "packed-aac", "cmaf"]))
        try await expectFiles(of: relaunched, references)
    }

    @Test(
        "a disk that fills mid-download: the lesson fails as storage full with no file, the others are kept, and once space is freed a resume ends byte-identical",
        arguments: QueueKillTests.Source.allCases)
    func diskFillsMidDownload(source: QueueKillTests.Source) async throws {
        defer { server.stop() }
        let served = try ["packed-aac", "disc-rates"].map { try ServedLesson($0) }
        let clock = ManualClock()
        let memory = InMemoryHTTPTransport(clock: clock)
        for lesson in served { lesson.serve(on: memory) }
        let course = try served.map { lesson in
            QueuedLesson(
                id: lesson.name,
                remoteURL: source == .loopback ? try serveLesson(lesson.name, on: server) : lesson.entry,
                group: "course")
        }
        let references = try await references(
            course.map { lesson in
                var lesson = lesson
                if source == .inMemory { lesson.remoteURL = try serveLesson(lesson.id, on: server) }
                return lesson
            })
        // The disk fills once the second lesson has written its first bytes: every write fails
        // from then on (the library's own saves too), until the test frees space.
        enum Disk { case roomy, full, freed }
        let disk = LockedState(Disk.roomy)
        let fileSystem = TestFileSystem(plan: { operation, file in
            let isFull = disk.withLock { disk in
                if disk == .roomy, operation == .write, file.lastPathComponent.contains("disc-rates") { disk = .full }
                return disk == .full
            }
            if isFull, operation == .write || operation == .create { throw CocoaError(.fileWriteOutOfSpace) }
        })
        let folder = temporaryFolder("queue-full-disk")
        let queue: DownloadQueue
        switch source {
        case .loopback:
            queue = self.queue(
                in: folder, network: FixedNetworkPathMonitor(.unmetered),
                requirements: DownloadRequirements(reserveBytes: 0), fileSystem: fileSystem, estimates: false)
        case .inMemory:
            let downloader = MediaDownloader(
                engine: DownloadEngine(
                    concurrency: 2, retry: .none, clock: clock, fileSystem: fileSystem, transport: memory))
            queue = DownloadQueue(
                library: OfflineLibrary(directory: folder, downloader: downloader, preferredLanguages: []),
                file: folder.appendingPathComponent("queue.json"), requirements: DownloadRequirements(reserveBytes: 0),
                concurrency: 1, network: FixedNetworkPathMonitor(.unmetered), freeSpace: { _ in 100 << 30 })
        }
        try await queue.start()
        try await queue.enqueue(course)
        let failed = await waitUntil(queue) { states in
            if case .failed = states["disc-rates"] { return true }
            return false
        }
        guard case .failed(let failure)? = failed["disc-rates"] else {
            Issue.record("\(failed)")
            return
        }
        #expect(failure.category == .storageFull, "\(failure)")
        #expect(failed["packed-aac"]?.isDownloaded == true)
        // Never half-written: no file of the lesson but what a resume uses.
        #expect(await queue.library.localFile(of: "disc-rates") == nil)
        let visible = files(in: folder).filter { !$0.hasPrefix(".") }
        #expect(visible.allSatisfy { $0 == "queue.json" || $0 == "offline-library.json" || $0.hasPrefix("packed-aac") })
        disk.withLock { $0 = .freed }  // the learner frees space
        try await queue.resume("disc-rates")
        _ = await waitUntil(queue, Self.isDownloaded(["packed-aac", "disc-rates"]))
        try await expectFiles(of: queue, references)
        #expect(files(in: folder).allSatisfy { !$0.hasSuffix(".partial") && !$0.hasSuffix(".journal") })
    }

    @Test(
        "a real volume too small for the next lesson: it waits for space with nothing written, and a refresh once space is freed downloads it",
        .enabled(if: SmallVolume.isAvailable, "needs a tmpfs (root on Linux)"))
    func waitsForSpace() async throws {
        defer { server.stop() }
        let course = try ["packed-aac", "disc-rates"].map { name in
            QueuedLesson(id: name, remoteURL: try serveLesson(name, on: server), group: "course")
        }
        let references = try await references(course)
        let downloader = MediaDownloader(engine: loopbackEngine())
        var estimated: [QueuedLesson] = []
        for var lesson in course {
            lesson.estimate = try await downloader.estimateLesson(from: lesson.remoteURL, preferredLanguages: [])
            estimated.append(lesson)
        }
        let small = QueuePlanner.spaceNeeded(estimated[0], fraction: 0)
        let large = QueuePlanner.spaceNeeded(estimated[1], fraction: 0)
        // Room for the first lesson and the state files (a few blocks), not for the second
        // after it.
        let leave = small + 24 << 10
        try #require(large > leave)
        let before = server.requests.count
        let volume = try SmallVolume(bytes: 4 << 20)
        defer { volume.unmount() }
        try volume.fill(leaving: Int(leave))
        let queue = queue(
            in: volume.folder, network: FixedNetworkPathMonitor(.unmetered),
            requirements: DownloadRequirements(reserveBytes: 0))
        try await queue.start()
        try await queue.enqueue(estimated)
        let states = await waitUntil(queue) { states in
            guard states["packed-aac"]?.isDownloaded == true, case .waiting(.storage)? = states["disc-rates"] else {
                return false
            }
            return true
        }
        guard case .waiting(.storage(let needed, let available))? = states["disc-rates"] else {
            Issue.record("\(states)")
            return
        }
        #expect(needed == large && available < needed)
        #expect(!files(in: volume.folder).contains { $0.contains("disc-rates") }, "nothing of it written")
        let asked = server.requests.dropFirst(before).map(\.path).filter { $0.hasPrefix("/disc-rates/") }
        #expect(!asked.contains { $0.hasSuffix("1.ts") }, "only the estimate asked: \(asked)")
        try FileManager.default.removeItem(at: volume.folder.appendingPathComponent("filler"))
        await queue.refresh()
        _ = await waitUntil(queue, Self.isDownloaded(["packed-aac", "disc-rates"]))
        try await expectFiles(of: queue, references)
    }

    @Test(
        "over loopback, a quota hit: smart downloads remove the least recently watched lessons in order to make room for the next, never a pinned one"
    )
    func smartEvictionUnderQuota() async throws {
        defer { server.stop() }
        let names = ["packed-aac", "ts-heaac", "cmaf", "disc-rates"]
        let course = try names.map { name in
            QueuedLesson(id: name, remoteURL: try serveLesson(name, on: server), group: "course")
        }
        let references = try await references(course)
        let downloader = MediaDownloader(engine: loopbackEngine())
        var estimates: [String: UInt64] = [:]
        for lesson in course {
            let estimate = try await downloader.estimateLesson(from: lesson.remoteURL, preferredLanguages: [])
            let bytes = try #require(estimate.bytes)
            estimates[lesson.id] = bytes
        }
        func size(_ id: String) -> UInt64 { UInt64(references[id]?.count ?? 0) }
        func estimate(_ id: String) -> UInt64 { estimates[id] ?? 0 }
        // Room for three lessons and then, for the fourth, only beside the first: the second and
        // the third must go, in the order they were watched, while the first is pinned.
        let quota = size("packed-aac") + estimate("disc-rates") + 4_096
        try #require(size("packed-aac") + size("ts-heaac") + estimate("cmaf") <= quota)
        try #require(size("packed-aac") + size("cmaf") + estimate("disc-rates") > quota)
        let folder = temporaryFolder("queue-smart-quota")
        let queue = queue(
            in: folder, network: FixedNetworkPathMonitor(.unmetered),
            requirements: DownloadRequirements(reserveBytes: 0, quotaBytes: quota))
        try await queue.start()
        let watched = FakeWatched()
        let policy = SmartDownloadPolicy(lessonsAhead: 1, removesWatched: false)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        for (index, id) in ["packed-aac", "ts-heaac", "cmaf"].enumerated() {
            let pass = try await queue.keepReady(course, policy: policy, watched: watched)
            #expect(pass == .init(enqueued: [id]), "\(id)")
            _ = await waitUntil(queue, Self.isDownloaded([id]))
            // Watched, and kept (this policy keeps watched lessons) while the quota allows.
            watched.set(id, WatchedLesson(fraction: 0.95, lastWatched: start + Double(index) * 3_600))
        }
        try await queue.pin("packed-aac")
        let pass = try await queue.keepReady(course, policy: policy, watched: watched)
        #expect(pass == .init(enqueued: ["disc-rates"], removed: ["ts-heaac", "cmaf"]))
        #expect(await queue.library.localFile(of: "ts-heaac") == nil)
        #expect(await queue.library.localFile(of: "cmaf") == nil)
        _ = await waitUntil(queue, Self.isDownloaded(["disc-rates"]))
        try await expectFiles(of: queue, references.filter { ["packed-aac", "disc-rates"].contains($0.key) })
    }
}
