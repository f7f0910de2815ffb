import Foundation
import HTTPSupport
import TestSupport
import Testing

@testable import Downloads
@testable import OfflineLessons

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A network whose paths the test chooses.
final class ManualNetwork: NetworkPathMonitor, Sendable {
    private let state = LockedState<(path: NetworkPath, continuations: [AsyncStream<NetworkPath>.Continuation])>(
        (.unmetered, []))

    init(_ path: NetworkPath) {
        state.withLock { $0.path = path }
    }

    func paths() -> AsyncStream<NetworkPath> {
        AsyncStream { continuation in
            let current = state.withLock { state in
                state.continuations.append(continuation)
                return state.path
            }
            continuation.yield(current)
        }
    }

    /// Reports `path` to every queue following this network.
    func send(_ path: NetworkPath) {
        let continuations = state.withLock { state in
            state.path = path
            return state.continuations
        }
        for continuation in continuations { continuation.yield(path) }
    }
}

/// The planner's rules, each on its own, then as laws over seeded random queues.
@Suite("The download queue's decisions")
struct QueuePlannerTests {
    static func lesson(_ id: String, bytes: UInt64? = 100, paused: Bool = false) -> QueuedLesson {
        QueuedLesson(
            id: id, remoteURL: URL(string: "https://lessons.example/\(id)") ?? URL(fileURLWithPath: "/"),
            estimate: DownloadEstimate(bytes: bytes, basis: .bandwidth), isPausedByLearner: paused)
    }

    static func conditions(
        _ network: NetworkPath = .unmetered, free: UInt64? = 1 << 40, used: UInt64 = 0
    ) -> QueuePlanner.Conditions {
        QueuePlanner.Conditions(network: network, freeBytes: free, usedBytes: used)
    }

    static let roomy = DownloadRequirements(reserveBytes: 0)

    @Test("lessons start in the queue's order, as many as the concurrency, the next ones numbered")
    func turns() {
        let lessons = ["a", "b", "c", "d"].map { Self.lesson($0) }
        let decision = QueuePlanner.plan(
            lessons, library: [:], conditions: Self.conditions(), requirements: Self.roomy, concurrency: 2)
        #expect(decision.start == ["a", "b"])
        #expect(decision.states["c"] == .waiting(.turn(position: 1)))
        #expect(decision.states["d"] == .waiting(.turn(position: 2)))
    }

    @Test("a lesson downloading keeps going when another is moved before it")
    func noPreemption() {
        let lessons = ["b", "a"].map { Self.lesson($0) }
        let decision = QueuePlanner.plan(
            lessons, library: ["a": .downloading(fraction: 0.5)], conditions: Self.conditions(),
            requirements: Self.roomy, concurrency: 1)
        #expect(decision.start.isEmpty && decision.stop.isEmpty)
        #expect(decision.states["a"] == .downloading(fraction: 0.5))
        #expect(decision.states["b"] == .waiting(.turn(position: 1)))
    }

    @Test(
        "Wi-Fi only: on cellular every lesson waits for the network and those downloading stop",
        arguments: [
            (DownloadRequirements.Network.notExpensive, NetworkPath.cellular, false),
            (.notExpensive, .unmetered, true),
            (.notConstrained, NetworkPath(isAvailable: true, isConstrained: true), false),
            (.any, .cellular, true),
            (.any, .offline, false),
        ])
    func network(rule: DownloadRequirements.Network, path: NetworkPath, allowed: Bool) {
        let lessons = ["a", "b"].map { Self.lesson($0) }
        let decision = QueuePlanner.plan(
            lessons, library: ["a": .downloading(fraction: 0.1)], conditions: Self.conditions(path),
            requirements: DownloadRequirements(network: rule, reserveBytes: 0), concurrency: 2)
        if allowed {
            #expect(decision.stop.isEmpty && decision.start == ["b"])
        } else {
            #expect(decision.stop == ["a"] && decision.start.isEmpty)
            #expect(decision.states["b"] == .waiting(.network(required: rule)))
        }
    }

    @Test(
        "a lesson that would eat into the reserve waits with the space its download's check asks; a smaller one after it goes"
    )
    func reserve() {
        let lessons = [Self.lesson("big", bytes: 900_000), Self.lesson("small", bytes: 100_000)]
        let small = QueuePlanner.spaceNeeded(lessons[1], fraction: 0)
        let big = QueuePlanner.spaceNeeded(lessons[0], fraction: 0)
        // The download's own check: the bytes with 2% and 1 MiB to spare.
        #expect(big == 900_000 + 18_000 + (1 << 20))
        let decision = QueuePlanner.plan(
            lessons, library: [:], conditions: Self.conditions(free: 1_000 + small + 10),
            requirements: DownloadRequirements(reserveBytes: 1_000), concurrency: 2)
        #expect(decision.states["big"] == .waiting(.storage(needed: big, available: small + 10)))
        #expect(decision.start == ["small"])
    }

    @Test("the quota counts the library's files and the downloads going on, each whole until it finishes")
    func quota() {
        let lessons = [Self.lesson("a", bytes: 400), Self.lesson("b", bytes: 300), Self.lesson("c", bytes: 100)]
        let decision = QueuePlanner.plan(
            lessons, library: ["a": .downloading(fraction: 0.5)], conditions: Self.conditions(used: 500),
            requirements: DownloadRequirements(reserveBytes: 0, quotaBytes: 1_000), concurrency: 3)
        // 500 used + a's 400, half of it written in no downloaded file yet: 100 left, so b (300)
        // waits; c (100) would fit, but the quota lets lessons in in the queue's order, so that
        // which get in does not depend on when b's room came: c waits its turn behind b.
        #expect(decision.start.isEmpty)
        #expect(decision.states["b"] == .waiting(.quota(needed: 300, left: 100)))
        #expect(decision.states["c"] == .waiting(.turn(position: 1)))
    }

    @Test("paused by the learner, failed, downloaded; a failure for want of a network waits for one")
    func states() {
        let offline = DownloadFailure(
            DownloadError(.transport(HTTPTransportError(.network(URLError(.notConnectedToInternet)), url: nil))))
        let server = DownloadFailure(DownloadError(.httpStatus(500)))
        let lessons = [
            Self.lesson("p", paused: true), Self.lesson("f"), Self.lesson("o"), Self.lesson("d"),
        ]
        let library: [String: OfflineLibrary.ItemState] = [
            "p": .downloading(fraction: 0.2), "f": .failed(server), "o": .failed(offline),
            "d": .downloaded(fileName: "d.mp4", byteCount: 7),
        ]
        let decision = QueuePlanner.plan(
            lessons, library: library,
            conditions: Self.conditions(), requirements: Self.roomy, concurrency: 2)
        #expect(offline.category == .offline)
        #expect(decision.stop == ["p"])
        #expect(decision.states["p"] == .waiting(.pausedByLearner))
        #expect(decision.states["f"] == .failed(server))
        #expect(decision.start == ["o"])
        #expect(decision.states["d"] == .downloaded(byteCount: 7))
        let retried = QueuePlanner.plan(
            lessons, library: ["f": .failed(server)], conditions: Self.conditions(), requirements: Self.roomy,
            concurrency: 3, retrying: ["f"])
        #expect(retried.start.contains("f"))
    }

    @Test(
        "seeded: starts never exceed the free slots, the rules or the room, and every lesson has a state",
        arguments: 0..<UInt64(300))
    func laws(seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        let count = Int.random(in: 0...12, using: &generator)
        var lessons: [QueuedLesson] = []
        var library: [String: OfflineLibrary.ItemState] = [:]
        for index in 0..<count {
            let id = "l\(index)"
            let bytes: UInt64? = Bool.random(using: &generator) ? UInt64.random(in: 0...2_000, using: &generator) : nil
            lessons.append(Self.lesson(id, bytes: bytes, paused: Int.random(in: 0..<6, using: &generator) == 0))
            switch Int.random(in: 0..<5, using: &generator) {
            case 0: library[id] = .downloading(fraction: Double.random(in: 0..<1, using: &generator))
            case 1: library[id] = .downloaded(fileName: "\(id).mp4", byteCount: 10)
            case 2: library[id] = .paused
            default: break
            }
        }
        let paths: [NetworkPath] = [
            .unmetered, .cellular, .offline, NetworkPath(isAvailable: true, isConstrained: true),
        ]
        let path = paths[Int.random(in: 0..<paths.count, using: &generator)]
        let requirements = DownloadRequirements(
            network: [.any, .notExpensive, .notConstrained][Int.random(in: 0..<3, using: &generator)],
            reserveBytes: UInt64.random(in: 0...1_000, using: &generator),
            quotaBytes: Bool.random(using: &generator) ? UInt64.random(in: 0...5_000, using: &generator) : nil)
        let concurrency = Int.random(in: 1...3, using: &generator)
        let conditions = Self.conditions(
            path,
            free: Bool.random(using: &generator) ? UInt64.random(in: 0...(6_000 + 4 << 20), using: &generator) : nil,
            used: UInt64.random(in: 0...3_000, using: &generator))
        let decision = QueuePlanner.plan(
            lessons, library: library, conditions: conditions, requirements: requirements, concurrency: concurrency)
        let running = lessons.filter {
            if case .downloading? = library[$0.id] { return !decision.stop.contains($0.id) }
            return false
        }
        #expect(Set(decision.states.keys) == Set(lessons.map(\.id)), "seed \(seed)")
        #expect(Set(decision.start).isDisjoint(with: decision.stop), "seed \(seed)")
        #expect(decision.start.count <= max(0, concurrency - running.count), "seed \(seed)")
        if !decision.start.isEmpty { #expect(requirements.network.allows(path), "seed \(seed)") }
        // What starts fits beside what runs, under the reserve and the quota.
        let starting = decision.start.compactMap { id in lessons.first { $0.id == id } }
        let neededByStarts = starting.reduce(UInt64(0)) { $0 + QueuePlanner.remaining($1, fraction: 0) }
        let spaceForStarts = starting.reduce(UInt64(0)) { $0 + QueuePlanner.spaceNeeded($1, fraction: 0) }
        let neededByRunning = running.reduce(UInt64(0)) { total, lesson in
            guard case .downloading(let fraction)? = library[lesson.id] else { return total }
            return total + QueuePlanner.remaining(lesson, fraction: fraction)
        }
        let spaceForRunning = running.reduce(UInt64(0)) { total, lesson in
            guard case .downloading(let fraction)? = library[lesson.id] else { return total }
            return total + QueuePlanner.spaceNeeded(lesson, fraction: fraction)
        }
        // (A lesson of unknown size needs no room up front, whatever the others take.)
        if let free = conditions.freeBytes, spaceForStarts > 0 {
            #expect(
                spaceForStarts + spaceForRunning <= max(free, requirements.reserveBytes) - requirements.reserveBytes,
                "seed \(seed)")
        }
        if let quota = requirements.quotaBytes, !decision.start.isEmpty {
            #expect(conditions.usedBytes + neededByRunning + neededByStarts <= quota, "seed \(seed)")
        }
        // Turns are numbered 1, 2, 3… in the queue's order.
        let turns = lessons.compactMap { lesson -> Int? in
            if case .waiting(.turn(let position))? = decision.states[lesson.id] { return position }
            return nil
        }
        #expect(turns == Array(1...max(turns.count, 1)).prefix(turns.count).map { $0 }, "seed \(seed)")
        for id in decision.stop {
            #expect(
                lessons.first { $0.id == id }?.isPausedByLearner == true || !requirements.network.allows(path),
                "seed \(seed)")
        }
    }
}

/// A course or a section as one row.
@Suite("A group's row")
struct QueueGroupSummaryTests {
    static func lesson(_ id: String, bytes: UInt64?, exact: Bool = false) -> QueuedLesson {
        QueuedLesson(
            id: id, remoteURL: URL(string: "https://lessons.example/\(id)") ?? URL(fileURLWithPath: "/"),
            group: "course",
            estimate: bytes.map { DownloadEstimate(bytes: $0, basis: exact ? .byteRanges : .bandwidth) })
    }

    @Test("bytes are the files' and the estimates', the fraction weighted by size, the state the most active one's")
    func mixedStates() {
        let lessons = [
            Self.lesson("a", bytes: 100, exact: true), Self.lesson("b", bytes: 300), Self.lesson("c", bytes: 600),
        ]
        let states: [String: QueuedLessonState] = [
            "a": .downloaded(byteCount: 120), "b": .downloading(fraction: 0.5),
            "c": .waiting(.network(required: .notExpensive)),
        ]
        let row = QueueGroupSummary(id: "course", lessons: lessons, states: states)
        #expect(row.bytes == 120 + 300 + 600 && row.isEstimate)
        #expect(row.downloadedCount == 1 && row.state == .downloading)
        #expect(abs(row.fraction - (120 + 150) / 1_020) < 1e-12)
        let waiting = QueueGroupSummary(
            id: "course", lessons: lessons,
            states: states.merging(["b": .waiting(.pausedByLearner)]) { _, new in new })
        #expect(waiting.state == .waiting(.pausedByLearner))
        let failed = QueueGroupSummary(
            id: "course", lessons: Array(lessons.prefix(2)),
            states: [
                "a": .downloaded(byteCount: 120), "b": .failed(DownloadFailure(category: .server, message: "503")),
            ])
        #expect(failed.state == .failed(count: 1))
        let done = QueueGroupSummary(
            id: "course", lessons: [lessons[0]], states: ["a": .downloaded(byteCount: 120)])
        #expect(done.state == .downloaded && !done.isEstimate && done.fraction == 1)
    }

    @Test("a lesson of unknown size weighs as an average one: a course with it not started does not read as done")
    func unknownSize() {
        let lessons = [Self.lesson("a", bytes: 1_000), Self.lesson("b", bytes: nil)]
        let row = QueueGroupSummary(
            id: "course", lessons: lessons,
            states: ["a": .downloaded(byteCount: 1_000), "b": .waiting(.turn(position: 1))])
        #expect(row.fraction == 0.5)
        #expect(row.isEstimate)
        let none = QueueGroupSummary(
            id: "course", lessons: [Self.lesson("x", bytes: nil), Self.lesson("y", bytes: nil)],
            states: ["x": .downloading(fraction: 0.5), "y": .waiting(.turn(position: 1))])
        #expect(none.fraction == 0.25)
    }
}

/// A course downloaded through the queue, with the in-memory transport and a network the test
/// chooses: order, Wi-Fi only, the learner's pause, the quota, and a relaunch.
@Suite("The download queue")
struct DownloadQueueTests {
    let clock = ManualClock()
    let transport: InMemoryHTTPTransport<ManualClock>
    let lessons: [ServedLesson]

    init() throws {
        transport = InMemoryHTTPTransport(clock: clock)
        lessons = try ["ts-heaac", "packed-aac", "cmaf"].map { try ServedLesson($0) }
        for lesson in lessons { lesson.serve(on: transport) }
    }

    func downloader() -> MediaDownloader<ManualClock> {
        MediaDownloader(engine: DownloadEngine(concurrency: 2, retry: .none, clock: clock, transport: transport))
    }

    func queue(in folder: URL, network: ManualNetwork, requirements: DownloadRequirements) -> DownloadQueue {
        let downloader = downloader()
        let library = OfflineLibrary(directory: folder, downloader: downloader, preferredLanguages: [])
        return DownloadQueue(
            library: library, file: folder.appendingPathComponent("queue.json"), requirements: requirements,
            concurrency: 1, network: network,
            estimator: { url in try await downloader.estimateLesson(from: url, preferredLanguages: []) },
            freeSpace: { _ in 100 << 30 })
    }

    var course: [QueuedLesson] {
        lessons.map { QueuedLesson(id: $0.name, remoteURL: $0.entry, group: "course") }
    }

    static func allDownloaded(_ count: Int) -> @Sendable ([String: QueuedLessonState]) -> Bool {
        { states in
            states.values.filter {
                if case .downloaded = $0 { return true }
                return false
            }.count == count
        }
    }

    @Test("a course enqueued in one call downloads lesson by lesson, in order, to the same files as one by one")
    func course() async throws {
        let folder = temporaryFolder("queue-course")
        let network = ManualNetwork(.unmetered)
        let queue = queue(in: folder, network: network, requirements: DownloadRequirements(reserveBytes: 0))
        try await queue.start()
        try await queue.enqueue(course)
        let states = await waitUntil(queue, Self.allDownloaded(3))
        #expect(states.count == 3)
        // Each lesson's file is what a download of it alone writes.
        for lesson in lessons {
            let alone = temporaryFolder("queue-alone").appendingPathComponent("lesson")
            let expected = try await downloader().downloadLesson(
                from: lesson.entry, to: alone, preferredLanguages: []
            ).result()
            let file = try #require(await queue.library.localFile(of: lesson.name))
            #expect(try Data(contentsOf: file) == Data(contentsOf: expected.file), "\(lesson.name)")
        }
        // The course as one row: every lesson downloaded, its bytes the files'.
        let group = try #require(await queue.group("course"))
        var fileBytes: UInt64 = 0
        for lesson in lessons {
            let file = try #require(await queue.library.localFile(of: lesson.name))
            fileBytes += UInt64(try Data(contentsOf: file).count)
        }
        #expect(group.state == .downloaded && group.downloadedCount == 3 && group.fraction == 1)
        #expect(group.bytes == fileBytes && !group.isEstimate)
        // The sizes were estimated before the first byte and saved with the queue.
        let saved = try Data(contentsOf: folder.appendingPathComponent("queue.json"))
        let relaunched = self.queue(in: folder, network: network, requirements: DownloadRequirements())
        try await relaunched.start()
        #expect(
            await relaunched.lessons.allSatisfy { $0.estimate?.bytes != nil },
            "\(String(decoding: saved, as: UTF8.self))")
    }

    @Test(
        "Wi-Fi only: on cellular nothing is fetched and every lesson waits for the network; on Wi-Fi the course goes on"
    )
    func wifiOnly() async throws {
        let folder = temporaryFolder("queue-wifi")
        let network = ManualNetwork(.cellular)
        let queue = queue(
            in: folder, network: network, requirements: DownloadRequirements(network: .notExpensive, reserveBytes: 0))
        try await queue.start()
        let before = transport.requests.count
        try await queue.enqueue(course)
        let waiting = await waitUntil(queue) { states in
            states.count == 3
                && states.values.allSatisfy { $0 == .waiting(.network(required: .notExpensive)) }
        }
        #expect(waiting.count == 3)
        // Only the size estimates asked the server anything (playlists, and one byte of a first
        // segment): no segment was fetched.
        let fetched = transport.requests.dropFirst(before).filter { request in
            guard let name = request.url?.lastPathComponent, !name.hasSuffix(".m3u8") else { return false }
            let range = request.value(forHTTPHeaderField: "Range").map { $0.dropFirst("bytes=".count) } ?? ""
            let bounds = range.split(separator: "-")
            return !(bounds.count == 2 && bounds[0] == bounds[1])
                && !(range == "0-1023" && request.url == lessons.first { $0.entry == request.url }?.entry)
        }
        #expect(fetched.isEmpty, "\(fetched.compactMap(\.url?.lastPathComponent))")
        network.send(.unmetered)
        let done = await waitUntil(queue, Self.allDownloaded(3))
        #expect(done.count == 3)
    }

    @Test("an estimate that was not exact is refined from the download's own figure as its parts arrive")
    func refinedEstimate() async throws {
        let folder = temporaryFolder("queue-refined")
        let queue = queue(
            in: folder, network: ManualNetwork(.unmetered), requirements: DownloadRequirements(reserveBytes: 0))
        try await queue.start()
        let lesson = try #require(lessons.first { $0.name == "ts-heaac" })
        // A size far from the truth, as a BANDWIDTH that overstates the rate gives.
        try await queue.enqueue([
            QueuedLesson(
                id: lesson.name, remoteURL: lesson.entry,
                estimate: DownloadEstimate(bytes: 50_000_000, basis: .bandwidth))
        ])
        _ = await waitUntil(queue, Self.allDownloaded(1))
        // The segments' bytes, as the download counted them.
        let segments = lesson.files.filter { !$0.key.hasSuffix(".m3u8") }.values.reduce(0) { $0 + $1.count }
        #expect(await queue.lessons.first?.estimate == DownloadEstimate(bytes: UInt64(segments), basis: .refined))
    }

    /// Files that download at once race the queue: a download can end, and its report reach
    /// the queue, before the queue's own request to start it has returned (and a pause can meet
    /// a download that just ended). The queue once assumed "downloading" over such a report and
    /// waited forever for one more; the limit turns that into a failure instead of a hang. (The
    /// limit is far above a round's time: under ThreadSanitizer, with the whole suite running
    /// on two cores, round 0 once took 138 s while every report kept arriving.)
    @Test("downloads that end before the queue's request returns are never lost: every lesson ends downloaded")
    func instantDownloads() async throws {
        let ids = (0..<8).map { "file-\($0)" }
        var files: [String: Data] = [:]
        var urls: [String: URL] = [:]
        for (index, id) in ids.enumerated() {
            let url = try #require(URL(string: "https://media.example/\(id).mp4"))
            // An MP4's first box (ISO/IEC 14496-12 §4.3, `ftyp`), then bytes of its own.
            let bytes =
                Data([0, 0, 0, 16]) + Data("ftypisom".utf8) + Data([0, 0, 2, 0])
                + resourceBytes(2_000 + index, seed: UInt64(index) + 1)
            transport.stub(url, reply: .resource(bytes))
            files[id] = bytes
            urls[id] = url
        }
        for round in 0..<25 {
            let folder = temporaryFolder("queue-instant")
            let library = OfflineLibrary(directory: folder, downloader: downloader(), preferredLanguages: [])
            let network = ManualNetwork(.unmetered)
            let queue = DownloadQueue(
                library: library, file: folder.appendingPathComponent("queue.json"),
                requirements: DownloadRequirements(network: .notExpensive, reserveBytes: 0), concurrency: 3,
                network: network, freeSpace: { _ in 100 << 30 })
            let lessons = ids.compactMap { id in urls[id].map { QueuedLesson(id: id, remoteURL: $0) } }
            let paused = ids[round % ids.count]
            let states = await withLivenessCheck {
                do {
                    try await queue.start()
                    try await queue.enqueue(lessons)
                    // A pause and a resume, and a switch to cellular and back, while the
                    // downloads end: the queue stops lessons (several at once) that are ending.
                    try await queue.pause(paused)
                    network.send(.cellular)
                    try await queue.resume(paused)
                    network.send(.unmetered)
                } catch {
                    return [String: QueuedLessonState]()
                }
                return await waitUntil(queue, Self.allDownloaded(ids.count))
            }
            guard let states, states.count == ids.count else {
                let stuck = await queue.allStates
                let libraryStates = await library.states
                Issue.record(
                    """
                    round \(round): the queue stopped at \(stuck), the library at \(libraryStates);
                    queue: \(await queue.diagnosis); library: \(await library.diagnosis)
                    """)
                await queue.stop()
                return
            }
            for id in ids {
                let file = try #require(await library.localFile(of: id))
                #expect(try Data(contentsOf: file) == files[id], "round \(round): \(id)")
            }
            await queue.stop()
        }
    }

    @Test("lessons enqueued while others are being estimated are estimated too, once those are done")
    func estimatesQueuedMeanwhile() async throws {
        let folder = temporaryFolder("queue-estimates")
        let library = OfflineLibrary(directory: folder, downloader: downloader(), preferredLanguages: [])
        let (asked, asking) = AsyncStream<URL>.makeStream()
        let (answers, answering) = AsyncStream<Void>.makeStream()
        let queue = DownloadQueue(
            library: library, file: folder.appendingPathComponent("queue.json"),
            requirements: DownloadRequirements(reserveBytes: 0), network: ManualNetwork(.offline),
            estimator: { url in
                asking.yield(url)
                for await _ in answers { break }
                return DownloadEstimate(bytes: 1_000, basis: .bandwidth)
            }, freeSpace: { _ in 100 << 30 })
        try await queue.start()
        let first = course[0]
        let second = course[1]
        // The first lesson's estimate is under way (its estimator waits) when the second comes.
        let enqueuing = Task { try await queue.enqueue([first]) }
        var requests = asked.makeAsyncIterator()
        #expect(await requests.next() == first.remoteURL)
        try await queue.enqueue([second])
        answering.yield()
        answering.yield()
        try await enqueuing.value
        asking.finish()
        var later: [URL] = []
        while let url = await requests.next() { later.append(url) }
        #expect(later == [second.remoteURL])
        let estimates = await queue.lessons.map(\.estimate?.bytes)
        #expect(estimates == [1_000, 1_000])
    }

    @Test("a lesson the learner pauses waits, the next one goes, and a resume finishes it")
    func learnerPause() async throws {
        let folder = temporaryFolder("queue-pause")
        let network = ManualNetwork(.unmetered)
        let queue = queue(in: folder, network: network, requirements: DownloadRequirements(reserveBytes: 0))
        try await queue.start()
        var lessons = course
        lessons[0].isPausedByLearner = true
        try await queue.enqueue(lessons)
        let states = await waitUntil(queue) { states in
            states["ts-heaac"] == .waiting(.pausedByLearner)
                && states.values.filter {
                    if case .downloaded = $0 { return true }
                    return false
                }.count == 2
        }
        #expect(states["ts-heaac"] == .waiting(.pausedByLearner))
        try await queue.resume("ts-heaac")
        let done = await waitUntil(queue, Self.allDownloaded(3))
        #expect(done.count == 3)
    }

    @Test("a quota the course would pass: the lessons that fit download, the next waits with what it needs")
    func quota() async throws {
        let folder = temporaryFolder("queue-quota")
        let network = ManualNetwork(.unmetered)
        let estimates = try await lessons.asyncMap {
            try await downloader().estimateLesson(from: $0.entry, preferredLanguages: [])
        }
        let firstTwo = try #require(estimates[0].bytes) + (try #require(estimates[1].bytes))
        let queue = queue(
            in: folder, network: network,
            requirements: DownloadRequirements(reserveBytes: 0, quotaBytes: firstTwo + 10))
        try await queue.start()
        try await queue.enqueue(
            zip(course, estimates).map { lesson, estimate in
                var lesson = lesson
                lesson.estimate = estimate
                return lesson
            })
        let states = await waitUntil(queue) { states in
            if case .waiting(.quota)? = states["cmaf"], Self.allDownloaded(2)(states) { return true }
            return false
        }
        guard case .waiting(.quota(let needed, _))? = states["cmaf"] else {
            Issue.record("\(states)")
            return
        }
        #expect(needed == estimates[2].bytes)
    }

    @Test("the documentation's queue downloads a course on an unmetered network")
    func documentationExample() async throws {
        let folder = temporaryFolder("queue-example")
        let downloader = downloader()
        let library = OfflineLibrary(directory: folder, downloader: downloader, preferredLanguages: [])
        let network = FixedNetworkPathMonitor(.unmetered)
        let course = lessons.map { (id: $0.name, url: $0.entry) }
        let shown = LockedState<[String]>([])
        let show: (String, QueuedLessonState) -> Void = { id, state in shown.withLock { $0.append("\(id) \(state)") } }
        // example: begin download-queue
        let queue = DownloadQueue(
            library: library, file: folder.appendingPathComponent("queue.json"),
            requirements: DownloadRequirements(network: .notExpensive, reserveBytes: 100_000_000),  // Wi-Fi only
            network: network,  // SystemNetworkPathMonitor() on Apple platforms
            estimator: { url in try await downloader.estimateLesson(from: url) })
        try await queue.start()
        try await queue.enqueue(course.map { QueuedLesson(id: $0.id, remoteURL: $0.url, group: "course") })
        for await (id, state) in queue.updates {
            show(id, state)  // waiting for Wi-Fi, downloading, downloaded…
            if await queue.allStates.values.allSatisfy(\.isDownloaded) { break }
        }
        // example: end download-queue
        #expect(await queue.allStates.count == 3)
        #expect(!shown.withLock { $0 }.isEmpty)
    }

    @Test(
        "a failed lesson the learner retried while it must wait for Wi-Fi is tried again after a relaunch, not shown failed"
    )
    func resumedFailureSurvivesRelaunch() async throws {
        let folder = temporaryFolder("queue-retry")
        let lesson = try #require(lessons.first { $0.name == "packed-aac" })
        let segment = lesson.base.appendingPathComponent("seg1.aac")
        let bytes = try #require(lesson.files["seg1.aac"])
        transport.stub(segment, replies: [.response(status: 404), .resource(bytes)])
        let network = ManualNetwork(.cellular)
        let first = queue(in: folder, network: network, requirements: DownloadRequirements(reserveBytes: 0))
        try await first.start()
        try await first.enqueue([QueuedLesson(id: lesson.name, remoteURL: lesson.entry)])
        let failed = await waitUntil(first) { states in
            if case .failed = states[lesson.name] { return true }
            return false
        }
        guard case .failed(let failure)? = failed[lesson.name] else {
            Issue.record("\(failed)")
            return
        }
        #expect(failure.category == .notFound)
        // The learner turns on Wi-Fi only (they are on cellular), then taps retry.
        let wifiOnly = DownloadRequirements(network: .notExpensive, reserveBytes: 0)
        try await first.setRequirements(wifiOnly)
        try await first.resume(lesson.name)
        #expect(await first.state(of: lesson.name) == .waiting(.network(required: .notExpensive)))
        await first.stop()
        // The app is killed; at the next launch the learner's retry still holds.
        let relaunched = queue(in: folder, network: network, requirements: DownloadRequirements(reserveBytes: 0))
        try await relaunched.start()
        #expect(await relaunched.state(of: lesson.name) == .waiting(.network(required: .notExpensive)))
        network.send(.unmetered)
        let done = await waitUntil(relaunched, Self.allDownloaded(1))
        #expect(done[lesson.name]?.isDownloaded == true)
    }

    @Test("a queue changed before start() keeps the lessons saved earlier; an unreadable file is never saved over")
    func loadsBeforeSaving() async throws {
        let folder = temporaryFolder("queue-load-first")
        let network = ManualNetwork(.offline)
        let first = queue(in: folder, network: network, requirements: DownloadRequirements(reserveBytes: 0))
        try await first.start()
        try await first.enqueue(Array(course.prefix(2)))
        await first.stop()
        let early = queue(in: folder, network: network, requirements: DownloadRequirements(reserveBytes: 0))
        try await early.enqueue(Array(course.suffix(1)))  // before start()
        #expect(await early.lessons.map(\.id) == course.map(\.id))
        // A file of a newer version: start() refuses it, and no change writes over it.
        let file = folder.appendingPathComponent("queue.json")
        let newer = Data(#"{"version":2,"lessons":[],"requirements":{}}"#.utf8)
        try newer.write(to: file)
        let refusing = queue(in: folder, network: network, requirements: DownloadRequirements(reserveBytes: 0))
        await #expect(throws: DownloadQueue.QueueError.self) { try await refusing.start() }
        await #expect(throws: DownloadQueue.QueueError.self) { try await refusing.enqueue(Array(course.prefix(1))) }
        #expect(try Data(contentsOf: file) == newer)
    }

    @Test("a file purged while the app was not running: not downloaded at relaunch, waiting, then fetched again")
    func purgedFile() async throws {
        let folder = temporaryFolder("queue-purged")
        let network = ManualNetwork(.unmetered)
        let first = queue(in: folder, network: network, requirements: DownloadRequirements(reserveBytes: 0))
        try await first.start()
        try await first.enqueue(course)
        _ = await waitUntil(first, Self.allDownloaded(3))
        let file = try #require(await first.library.localFile(of: "cmaf"))
        let bytes = try Data(contentsOf: file)
        await first.stop()
        try FileManager.default.removeItem(at: file)
        let offline = ManualNetwork(.offline)
        let relaunched = queue(in: folder, network: offline, requirements: DownloadRequirements(reserveBytes: 0))
        try await relaunched.start()
        #expect(await relaunched.library.state(of: "cmaf") == .notDownloaded)
        #expect(await relaunched.state(of: "cmaf") == .waiting(.network(required: .any)))
        #expect(await relaunched.group("course")?.downloadedCount == 2)
        offline.send(.unmetered)
        _ = await waitUntil(relaunched, Self.allDownloaded(3))
        let again = try #require(await relaunched.library.localFile(of: "cmaf"))
        #expect(try Data(contentsOf: again) == bytes)
    }

    @Test("a relaunch goes on where the queue was: its order, its lessons and what each had downloaded")
    func relaunch() async throws {
        let folder = temporaryFolder("queue-relaunch")
        let network = ManualNetwork(.offline)
        let first = queue(in: folder, network: network, requirements: DownloadRequirements(reserveBytes: 0))
        try await first.start()
        try await first.enqueue(course)
        try await first.move("cmaf", to: 0)
        await first.stop()
        let relaunched = queue(in: folder, network: network, requirements: DownloadRequirements(reserveBytes: 0))
        try await relaunched.start()
        #expect(await relaunched.lessons.map(\.id) == ["cmaf", "ts-heaac", "packed-aac"])
        network.send(.unmetered)
        let done = await waitUntil(relaunched, Self.allDownloaded(3))
        #expect(done.count == 3)
    }
}

/// Estimates before the first byte: exact from byte ranges or a file's length, else from
/// `BANDWIDTH`.
@Suite("Download size estimates")
struct DownloadEstimateTests {
    @Test(
        "each lesson's estimate has the basis its playlists allow, and an exact one is the bytes fetched",
        arguments: ["fmp4-base-offset", "audio-renditions", "cmaf", "ts-heaac"])
    func estimate(name: String) async throws {
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        let lesson = try ServedLesson(name)
        lesson.serve(on: transport)
        let downloader = MediaDownloader(
            engine: DownloadEngine(concurrency: 2, retry: .none, clock: clock, transport: transport))
        let estimate = try await downloader.estimateLesson(from: lesson.entry, preferredLanguages: [])
        let master = lesson.files["master.m3u8"].map { String(decoding: $0, as: UTF8.self) }
        let media = lesson.files["index.m3u8"].map { String(decoding: $0, as: UTF8.self) } ?? ""
        if master?.contains("BANDWIDTH") == true, !(media.contains("BYTERANGE")) {
            #expect(estimate.basis == .bandwidth || estimate.basis == .byteRanges)
        }
        if estimate.isExact {
            let before = transport.requests.count
            _ = try await downloader.downloadLesson(
                from: lesson.entry, to: temporaryFolder("estimate").appendingPathComponent("lesson"),
                preferredLanguages: []
            ).result()
            // What the segments' requests brought (the playlists and probe aside).
            let segmentBytes = transport.requests.dropFirst(before).compactMap { request -> UInt64? in
                guard let key = lesson.key(of: request), !key.hasSuffix(".m3u8") else { return nil }
                if let range = request.value(forHTTPHeaderField: "Range"), key.contains(" ") {
                    let bounds = range.dropFirst("bytes=".count).split(separator: "-").compactMap { UInt64($0) }
                    return bounds.count == 2 ? bounds[1] - bounds[0] + 1 : nil
                }
                return nil
            }
            #expect(estimate.bytes == segmentBytes.reduce(0, +), "\(name)")
        } else {
            #expect(estimate.bytes.map { $0 > 0 } ?? (estimate.basis == .unknown), "\(name): \(estimate)")
        }
    }

    @Test("a single file's estimate is its length, exact")
    func file() async throws {
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        let body = Data(repeating: 7, count: 50_000)
        var mp4 = Data([0, 0, 0, 0x18]) + Data("ftypisom".utf8) + Data(count: 12)
        mp4.append(body)
        transport.stub(URL(literal: "https://lessons.example/a.mp4"), reply: .response(status: 200, body: mp4))
        let downloader = MediaDownloader(
            engine: DownloadEngine(concurrency: 2, retry: .none, clock: clock, transport: transport))
        let estimate = try await downloader.estimateLesson(from: URL(literal: "https://lessons.example/a.mp4"))
        #expect(estimate == DownloadEstimate(bytes: UInt64(mp4.count), basis: .contentLength))
    }
}

extension Sequence {
    /// The results of `transform` on each element, one after another.
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}

extension DownloadQueueTests {
    @Test("the waitUntilSettled example: a course enqueued on Wi-Fi is downloaded once it returns")
    func waitUntilSettledExample() async throws {
        let folder = temporaryFolder("queue-settled-example")
        let queue = queue(
            in: folder, network: ManualNetwork(.unmetered), requirements: DownloadRequirements(reserveBytes: 0))
        try await queue.start()
        let course = course
        // example: begin queue-wait-until-settled
        try await queue.enqueue(course)
        await queue.waitUntilSettled()
        let states = await queue.allStates
        #expect(states.values.allSatisfy { $0.isDownloaded })
        // example: end queue-wait-until-settled
        #expect(states.count == course.count)
        await queue.stop()
    }

    @Test(
        "waitUntilSettled returns once nothing is under way: every lesson of a course downloaded on Wi-Fi, every one waiting offline; the course screen's waits as well"
    )
    func waitUntilSettled() async throws {
        let folder = temporaryFolder("queue-settled")
        let network = ManualNetwork(.offline)
        let queue = queue(in: folder, network: network, requirements: DownloadRequirements(reserveBytes: 0))
        try await queue.start()
        try await queue.enqueue(course)
        await queue.waitUntilSettled()
        // Offline: nothing moves until the network does, and every lesson says why.
        #expect(await queue.allStates.count == course.count)
        #expect(await queue.allStates.values.allSatisfy { $0 == .waiting(.network(required: .any)) })

        network.send(.unmetered)
        #expect(await withinPoolTurns { await queue.path == .unmetered })
        await queue.waitUntilSettled()
        let settled = await queue.allStates
        #expect(settled.values.allSatisfy { $0.isDownloaded }, "\(settled)")

        let model = await CourseDownloadsModel(
            queue: queue,
            course: OfflineCourse(
                id: "course", title: "Course",
                sections: [
                    OfflineCourse.Section(
                        id: "course", title: "All",
                        lessons: course.map { OfflineCourse.Lesson(id: $0.id, title: $0.id, remoteURL: $0.remoteURL) })
                ]))
        await model.waitUntilSettled()
        #expect(await model.fraction == 1)
        #expect(await model.sections[0].rows.allSatisfy { $0.state?.isDownloaded == true })
        await queue.stop()
    }
}

extension QueuePlannerTests {
    @Test(
        "the quota decision does not depend on how far a lesson downloading has gone: it counts whole until it finishes, and the next lesson's fate is the same at every fraction",
        arguments: [0, 0.1, 0.5, 0.9, 0.92, 0.999])
    func quotaIndependentOfProgress(fraction: Double) {
        // Seven lessons of 100 bytes, five downloaded; a quota of 660: the seventh fits only
        // once the sixth is done and its real size known.
        let lessons = (1...7).map { Self.lesson("l\($0)") }
        var library: [String: OfflineLibrary.ItemState] = [:]
        for index in 1...5 { library["l\(index)"] = .downloaded(fileName: "l\(index).mp4", byteCount: 100) }
        library["l6"] = .downloading(fraction: fraction)
        let requirements = DownloadRequirements(reserveBytes: 0, quotaBytes: 660)
        let decision = QueuePlanner.plan(
            lessons, library: library, conditions: Self.conditions(used: 500), requirements: requirements,
            concurrency: 2)
        #expect(decision.start.isEmpty)
        #expect(decision.states["l7"] == .waiting(.quota(needed: 100, left: 60)))
        // Once it is done (measured at 60 bytes), the seventh is let in, whatever came before.
        library["l6"] = .downloaded(fileName: "l6.mp4", byteCount: 60)
        let after = QueuePlanner.plan(
            lessons, library: library, conditions: Self.conditions(used: 560), requirements: requirements,
            concurrency: 2)
        #expect(after.start == ["l7"])
    }
}
