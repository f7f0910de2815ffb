import Foundation
import OfflineLessonsTesting
import TestSupport
import Testing

@testable import Downloads
@testable import OfflineLessons

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Why a download handed to background transfers waits: the device's network against the
/// library's background options, as the system's scheduler applies them.
@Suite("Background downloads: the app's choices")
struct BackgroundChoicesTests {
    /// A path, the options, and the reason expected.
    struct Case: Sendable, CustomTestStringConvertible {
        var path: NetworkPath
        var cellular = true
        var expensive = true
        var constrained = true
        var expected: WaitReason?
        var testDescription: String {
            "\(path) cellular \(cellular) expensive \(expensive) constrained \(constrained)"
        }
    }

    static let cases: [Case] = [
        Case(path: .unmetered, cellular: false, expensive: false, constrained: false, expected: nil),
        Case(path: .offline, expected: .network(required: .any)),
        Case(path: .cellular, expected: nil),
        Case(path: .cellular, cellular: false, expected: .network(required: .notExpensive)),
        Case(path: .cellular, expensive: false, expected: .network(required: .notExpensive)),
        // A hotspot's Wi-Fi is expensive but not cellular: no cellular access does not stop it.
        Case(path: NetworkPath(isAvailable: true, isExpensive: true), cellular: false, expected: nil),
        Case(
            path: NetworkPath(isAvailable: true, isExpensive: true), expensive: false,
            expected: .network(required: .notExpensive)),
        Case(path: NetworkPath(isAvailable: true, isConstrained: true), expected: nil),
        Case(
            path: NetworkPath(isAvailable: true, isConstrained: true), constrained: false,
            expected: .network(required: .notConstrained)),
        Case(path: .cellular, cellular: false, constrained: false, expected: .network(required: .notConstrained)),
    ]

    @Test(
        "URLSessionConfiguration's allowsCellularAccess, allowsExpensiveNetworkAccess and allowsConstrainedNetworkAccess: the transfers wait on a network they exclude, and on none",
        arguments: cases)
    func reason(of example: Case) {
        let options = BackgroundTransferOptions(
            identifier: "app.background", allowsCellularAccess: example.cellular,
            allowsExpensiveNetworkAccess: example.expensive, allowsConstrainedNetworkAccess: example.constrained)
        #expect(OfflineLibrary.waitReason(on: example.path, options: options) == example.expected)
    }

    @Test(
        "the queue shows a lesson whose background transfers wait for Wi-Fi as waiting for the network; it keeps its slot, is not stopped, and the next lesson waits its turn"
    )
    func queueShowsTheWait() {
        let lessons = ["a", "b"].map { QueuePlannerTests.lesson($0) }
        let decision = QueuePlanner.plan(
            lessons, library: ["a": .downloading(fraction: 0.4)], conditions: QueuePlannerTests.conditions(.cellular),
            requirements: QueuePlannerTests.roomy, concurrency: 1,
            backgroundWaits: ["a": .network(required: .notExpensive)])
        #expect(decision.states["a"] == .waiting(.network(required: .notExpensive)))
        #expect(decision.states["b"] == .waiting(.turn(position: 1)))
        #expect(decision.start.isEmpty && decision.stop.isEmpty)
    }

    @Test("a job's plan: waited for until its run publishes it, or told it never will when the job ends first")
    func waitUntilPlanned() async {
        let failing = DownloadJob { _ in throw DownloadError(.cancelled) }
        #expect(await failing.waitUntilPlanned() == false)
        let destination = URL(fileURLWithPath: "/tmp/lesson.mp4")
        let (gate, open) = AsyncStream<Void>.makeStream()
        let planning = DownloadJob { job in
            job.planned(into: destination, done: [1]) {
                [0, 1].map { BackgroundBatch.Part(index: $0, part: DownloadPart(url: destination), expectedBytes: 1) }
            }
            for await _ in gate { break }
            throw DownloadError(.paused)
        }
        #expect(await planning.waitUntilPlanned())
        #expect(planning.remaining?.remaining.map(\.index) == [0])
        open.yield()
        _ = try? await planning.result()
        #expect(await planning.waitUntilPlanned())
    }

    @Test("a path saved before isCellular existed reads as not cellular")
    func pathWithoutCellular() throws {
        let saved = Data(#"{"isAvailable":true,"isExpensive":true,"isConstrained":false}"#.utf8)
        let path = try JSONDecoder().decode(NetworkPath.self, from: saved)
        #expect(path == NetworkPath(isAvailable: true, isExpensive: true))
        let again = try JSONDecoder().decode(NetworkPath.self, from: JSONEncoder().encode(NetworkPath.cellular))
        #expect(again == .cellular)
    }
}

extension BackgroundLibraryTests {
    @Test(
        "handed over on cellular with Wi-Fi only: the item waits for a network (downloading, not failed), the lesson's screen model shows it waiting, and Wi-Fi ends the wait; the lesson ends byte-identical"
    )
    @MainActor
    func waitingForWiFi() async throws {
        let network = ManualNetwork(.cellular)
        let options = BackgroundTransferOptions(identifier: "app.background", allowsCellularAccess: false)
        let (scenario, first, labels, expected) = try await handedOver(
            "cmaf", fromMiddle: true, options: options, network: network)
        let library = first.library
        let model = LessonDownloadModel(library: library, lessonID: "lesson", remote: scenario.lesson.entry)
        let following = Task { await model.observe() }
        defer { following.cancel() }
        #expect(await eventually { await library.waitReason(of: "lesson") == .network(required: .notExpensive) })
        #expect(await library.state(of: "lesson").isDownloading)
        #expect(
            await eventually {
                await MainActor.run {
                    if case .waiting(.network(required: .notExpensive), _) = model.phase { return true }
                    return false
                }
            })

        // Offline, then on Wi-Fi: the reason follows the network.
        network.send(.offline)
        #expect(await eventually { await library.waitReason(of: "lesson") == .network(required: .any) })
        network.send(.unmetered)
        #expect(await eventually { await library.waitReason(of: "lesson") == nil })
        #expect(
            await eventually {
                await MainActor.run {
                    if case .downloading = model.phase { return true }
                    return false
                }
            })

        // The transfers run on Wi-Fi; the lesson finishes as any hand-over does.
        for label in labels { try await scenario.daemon.complete(label) }
        guard case .downloaded? = await end(of: library) else {
            Issue.record("the lesson did not finish")
            return
        }
        let file = try #require(await library.localFile(of: "lesson"))
        #expect(try Data(contentsOf: file) == expected)
        // Back on cellular, a finished item does not wait.
        network.send(.cellular)
        #expect(await eventually { await library.machine.networkPath == .cellular })
        #expect(await library.waitReason(of: "lesson") == nil)
    }
}

extension BackgroundLibraryTests {
    @Test(
        "with hand-over always, each download goes to the background session once its playlists are read, with no call from the app; the run after its tasks is not handed over again, and the lesson ends byte-identical",
        arguments: ["cmaf", "ts-heaac", "aes-implicit-iv"])
    func alwaysInBackground(name: String) async throws {
        let lesson = try ServedLesson(name)
        let (expected, order) = try await reference(lesson, concurrency: 1)
        // The first segment is held: the foreground run cannot finish before the hand-over.
        var scenario = Scenario(lesson, holding: order.first { !lesson.isFetchedAgain($0) }, concurrency: 1)
        scenario.options = BackgroundTransferOptions(identifier: "app.background", handOver: .always)
        let process = scenario.launch()
        _ = try await process.library.load()
        try await process.library.download("lesson", from: lesson.entry)
        let daemon = scenario.daemon
        #expect(await eventually { !daemon.running.isEmpty })
        let labels = daemon.running
        #expect(labels.allSatisfy { BackgroundTaskLabel(parsing: $0)?.download == "lesson" })
        #expect(await process.library.state(of: "lesson").isDownloading)
        let beforeDaemon = scenario.transport.requests.count

        // The held segment, if the foreground never asked for it, is the daemon's to wait for:
        // time passes.
        let clock = scenario.clock
        let passing = Task { await clock.advanceWhileSleeping() }
        defer { passing.cancel() }
        for label in labels { try await daemon.complete(label) }
        guard case .downloaded? = await end(of: process.library) else {
            Issue.record("\(name) did not finish")
            return
        }
        let file = try #require(await process.library.localFile(of: "lesson"))
        #expect(try Data(contentsOf: file) == expected)
        // The daemon fetched the media; the last run asked the network for no media part.
        let afterDaemon = scenario.transport.requests[beforeDaemon...].compactMap(lesson.key(of:))
        #expect(afterDaemon.contains { !lesson.isFetchedAgain($0) }, "\(name): the daemon fetched nothing")
        #expect(daemon.running.isEmpty, "\(name): handed over again: \(daemon.running)")
        let all = scenario.transport.requests.compactMap(lesson.key(of:))
        let twice = Dictionary(grouping: all, by: { $0 }).filter { $0.value.count > 1 }.keys
        #expect(twice.filter { !lesson.isFetchedAgain($0) }.count <= lesson.renditions, "\(name): \(twice)")
    }
}

extension BackgroundLibraryTests {
    @Test(
        "the run after a hand-over, cut short when the wake-up's time is up (the process ends while it reads its playlist), runs again by itself at the next launch instead of waiting paused, and ends byte-identical"
    )
    func killedDuringTheRunAfterTheTasks() async throws {
        let (scenario, _, labels, expected) = try await handedOver("ts-heaac") { scenario in
            // The second run's playlist request is held: the process ends while it waits.
            let playlist = scenario.lesson.files["index.m3u8"]
            let served = InMemoryHTTPTransport<ManualClock>.Reply.response(
                status: 200, headers: ["Content-Type": "application/vnd.apple.mpegurl"], body: playlist ?? Data())
            let held = InMemoryHTTPTransport<ManualClock>.Reply.response(
                status: 200, headers: ["Content-Type": "application/vnd.apple.mpegurl"], body: playlist ?? Data(),
                latency: .seconds(3_600))
            scenario.transport.stub(scenario.lesson.entry, replies: [served, held, served])
        }
        scenario.daemon.killApp()
        for label in labels { try await scenario.daemon.complete(label) }

        // Woken for the events: the run after the tasks starts and waits for its playlist.
        let woken = scenario.launch()
        _ = try await woken.library.load()
        await woken.library.handleBackgroundEvents()
        let clock = scenario.clock
        #expect(await withLivenessCheck { await clock.waitForSleepers(count: 1) } != nil)
        #expect(await woken.library.state(of: "lesson").isDownloading)
        // The wake-up's time is up: the system ends the process.
        scenario.daemon.killApp()

        // The next launch runs it again by itself.
        let next = scenario.launch()
        _ = try await next.library.load()
        guard case .downloaded? = await end(of: next.library) else {
            Issue.record("the lesson did not run again by itself: \(await next.library.state(of: "lesson"))")
            return
        }
        let file = try #require(await next.library.localFile(of: "lesson"))
        #expect(try Data(contentsOf: file) == expected)
    }
}

extension BackgroundLibraryTests {
    @Test(
        "back in the foreground, continueInForeground cancels the tasks still running and runs the lesson at once: what was staged is read, the rest fetched, byte-identical; a task cancelled then is not submitted again"
    )
    func backInTheForeground() async throws {
        let (scenario, process, labels, expected) = try await handedOver("cmaf", fromMiddle: true)
        let library = process.library
        let transfers = try #require(library.background)
        #expect(labels.count > 1)
        // One task ends while the app is away; the others are still running when it returns.
        let beforeTask = scenario.transport.requests.count
        try await scenario.daemon.complete(labels[0])
        #expect(await recorded(labels[0], by: process))
        let stagedPath = try #require(
            scenario.transport.requests[beforeTask...].compactMap(scenario.lesson.key(of:)).first)
        let beforeReturn = scenario.transport.requests.count

        #expect(await library.continueInForeground() == ["lesson"])
        #expect(scenario.daemon.running.isEmpty)
        #expect(await transfers.handovers.isEmpty)
        guard case .downloaded? = await end(of: library) else {
            Issue.record("the lesson did not finish in the foreground")
            return
        }
        let file = try #require(await library.localFile(of: "lesson"))
        #expect(try Data(contentsOf: file) == expected)
        // The staged part was read, not fetched again; the cancelled tasks' parts were.
        let after = scenario.transport.requests[beforeReturn...].compactMap(scenario.lesson.key(of:))
        #expect(!after.contains(stagedPath), "fetched again: \(after)")
        #expect(after.contains { !scenario.lesson.isFetchedAgain($0) })
        #expect(scenario.daemon.submitted == labels.count)
        // Nothing of the hand-over is left beside the file: the staged bodies went with it.
        #expect(files(in: scenario.folder).filter { $0.hasSuffix(".staged") }.isEmpty, "\(files(in: scenario.folder))")
    }

    @Test(
        "pausing a lesson handed over cancels its tasks and keeps what they staged; downloading again resumes it byte-identical, the staged part not fetched again; cancelling one handed over cancels its tasks and removes everything"
    )
    func pauseAndCancelHandedOver() async throws {
        let (scenario, process, labels, expected) = try await handedOver("cmaf", fromMiddle: true)
        let library = process.library
        let transfers = try #require(library.background)
        let beforeTask = scenario.transport.requests.count
        try await scenario.daemon.complete(labels[0])
        #expect(await recorded(labels[0], by: process))
        let stagedPath = try #require(
            scenario.transport.requests[beforeTask...].compactMap(scenario.lesson.key(of:)).first)

        await library.pause("lesson")
        #expect(await library.state(of: "lesson") == .paused)
        #expect(scenario.daemon.running.isEmpty)
        #expect(await transfers.handovers.isEmpty)
        #expect(!files(in: scenario.folder).filter { $0.hasSuffix(".staged") }.isEmpty)
        let beforeResume = scenario.transport.requests.count
        try await library.download("lesson", from: scenario.lesson.entry)
        guard case .downloaded? = await end(of: library) else {
            Issue.record("the lesson did not resume")
            return
        }
        #expect(try Data(contentsOf: try #require(await library.localFile(of: "lesson"))) == expected)
        let after = scenario.transport.requests[beforeResume...].compactMap(scenario.lesson.key(of:))
        #expect(!after.contains(stagedPath), "fetched again: \(after)")

        // Handed over again, then cancelled: its tasks stop and nothing of it stays.
        let (again, second, _, _) = try await handedOver("cmaf", fromMiddle: true)
        #expect(!again.daemon.running.isEmpty)
        await second.library.cancel("lesson")
        #expect(await eventually { again.daemon.running.isEmpty })
        #expect(await second.library.state(of: "lesson") == .cancelled)
        let secondTransfers = try #require(second.library.background)
        #expect(await eventually { await secondTransfers.handovers.isEmpty })
        #expect(files(in: again.folder).filter { $0.hasPrefix(".lesson") }.isEmpty)
    }
}

extension BackgroundLibraryTests {
    @Test(
        "a task that fails (connection lost) as the app dies, its event received but not recorded: the next launch reads the failure's record, submits the part again, and the lesson ends byte-identical",
        arguments: [BackgroundTransferFailure.network(code: -1005), .cancelled])
    func failureReceivedAsTheAppDies(failure: BackgroundTransferFailure) async throws {
        let (scenario, _, labels, expected) = try await handedOver("cmaf", fromMiddle: true)
        let submittedBefore = scenario.daemon.submitted
        scenario.daemon.failAsTheAppDies(labels[0], failure)
        #expect(!scenario.daemon.running.contains(labels[0]))

        let next = scenario.launch()
        _ = try await next.library.load()
        // Without the record, the request would wait for an event that never comes again.
        let daemon = scenario.daemon
        // The record goes once the journal holds the event, after the part is submitted again.
        let landing = scenario.landing
        #expect(await eventually { daemon.running.contains(labels[0]) && files(in: landing).isEmpty })
        #expect(daemon.submitted == submittedBefore + 1)
        for label in daemon.running { try await daemon.complete(label) }
        guard case .downloaded? = await end(of: next.library) else {
            Issue.record("the lesson did not finish")
            return
        }
        #expect(try Data(contentsOf: try #require(await next.library.localFile(of: "lesson"))) == expected)
        // A relaunch after that finds no failure to handle again.
        let again = scenario.launch()
        _ = try await again.library.load()
        #expect(daemon.submitted == submittedBefore + 1)
    }
}

extension BackgroundLibraryTests {
    /// How one background task fails before it succeeds.
    enum TaskFault: String, CaseIterable, Sendable {
        /// The connection drops (`NSURLErrorNetworkConnectionLost`).
        case connectionLost
        /// The server answers 503 once.
        case unavailable
    }

    @Test(
        "every task of a hand-over in turn fails once (a lost connection, a 503) while the app is gone: it is submitted again, the relaunch ends byte-identical, and only that part is fetched twice",
        arguments: TaskFault.allCases)
    func faultAtEveryTask(fault: TaskFault) async throws {
        let count = try await handedOver("cmaf", fromMiddle: true).labels.count
        #expect(count > 1)
        for failing in 0..<count {
            let (scenario, _, labels, expected) = try await handedOver("cmaf", fromMiddle: true)
            let daemon = scenario.daemon
            let label = labels[failing]
            let request = try #require(daemon.request(of: label))
            let url = try #require(request.url)
            let path = try #require(scenario.lesson.key(of: URLRequest(url: url)))
            let body = try #require(scenario.lesson.files[path.split(separator: " ").first.map(String.init) ?? path])
            daemon.killApp()
            switch fault {
            case .connectionLost:
                daemon.fail(label, .network(code: -1005))
            case .unavailable:
                scenario.transport.stub(
                    url, replies: [.response(status: 503, body: Data("busy".utf8)), .resource(body)])
                try await daemon.complete(label)
            }
            for other in labels where other != label { try await daemon.complete(other) }
            let next = scenario.launch()
            _ = try await next.library.load()
            // The failed part's task is submitted again, and ends.
            #expect(await eventually { daemon.running.contains(label) }, "\(fault) at \(failing)")
            try await daemon.complete(label)
            guard case .downloaded? = await end(of: next.library) else {
                Issue.record("\(fault) at task \(failing): \(await next.library.state(of: "lesson"))")
                continue
            }
            let file = try #require(await next.library.localFile(of: "lesson"))
            #expect(try Data(contentsOf: file) == expected, "\(fault) at task \(failing)")
            let all = scenario.transport.requests.compactMap(scenario.lesson.key(of:))
            let twice = Set(Dictionary(grouping: all, by: { $0 }).filter { $0.value.count > 1 }.keys)
                .filter { !scenario.lesson.isFetchedAgain($0) }
            // The segment in flight at the hand-over, and the failed part when the server saw it.
            #expect(twice.count <= 2 * scenario.lesson.renditions, "\(fault) at \(failing): \(twice)")
        }
    }

    @Test(
        "peak disk through a hand-over: while the run after the tasks reads what they staged, the folder never holds more than the final file and the staged bodies (and the journal)"
    )
    func peakDiskAfterTheTasks() async throws {
        let (scenario, _, labels, expected) = try await handedOver("cmaf", fromMiddle: true)
        scenario.daemon.killApp()
        for label in labels { try await scenario.daemon.complete(label) }
        // The bodies the daemon fetched, waiting for the relaunch to be landed and staged.
        let stagedBytes = folderSize(scenario.folder.deletingLastPathComponent().appendingPathComponent("daemon"))
        let next = scenario.launch()
        let folder = scenario.folder
        // Sampled at every change of a file in the folder while the run goes on (the final
        // file growing, a journal written), not by spinning. The remux journal is counted
        // apart: it holds the remuxer's state at each segment boundary, which for this
        // fixture's few-kilobyte segments is half the final file's size. A walk of the folder is
        // not one instant, so a body it saw staged may be counted again in the partial file
        // the walk reaches later; the bound holds that too.
        let peak = LockedState<UInt64>(0)
        let journalPeak = LockedState<UInt64>(0)
        let ended = LockedState(false)
        let sampling = Task {
            await waitUntil(changesIn: folder) {
                let journal = folderSize(folder) { $0.pathExtension == "journal" }
                let size = folderSize(folder) { $0.pathExtension != "journal" }
                peak.withLock { $0 = max($0, size) }
                journalPeak.withLock { $0 = max($0, journal) }
                return ended.withLock { $0 }
            }
        }
        _ = try await next.library.load()
        let state = await end(of: next.library)
        ended.withLock { $0 = true }
        _ = await sampling.value
        guard case .downloaded? = state else {
            Issue.record("the lesson did not finish: \(String(describing: state))")
            return
        }
        #expect(stagedBytes > 0)
        let final = UInt64(expected.count)
        let observed = peak.withLock { $0 }
        let journal = journalPeak.withLock { $0 }
        // The validators, the state files, the lock and the staging folder: a few kilobytes.
        #expect(
            observed <= final + stagedBytes + (8 << 10),
            "peak \(observed) beside a journal of \(journal), final \(final), staged \(stagedBytes)")
        // The journal was there, and is not a second copy of the media.
        #expect(journal > 0 && journal < final, "journal \(journal), final \(final)")
    }
}

/// The bytes of every file under `folder` that `counts` (every file unless told).
func folderSize(_ folder: URL, counting counts: (URL) -> Bool = { _ in true }) -> UInt64 {
    guard let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.fileSizeKey]) else {
        return 0
    }
    var total: UInt64 = 0
    for case let file as URL in walker where counts(file) {
        total += UInt64((try? file.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0)
    }
    return total
}

extension BackgroundLibraryTests {
    @Test(
        "a wake-up whose state file cannot be read (protected until the first unlock) calls the system's handler at once; the next start that reads it records the events the session landed meanwhile"
    )
    func wakeUpBeforeTheStateCanBeRead() async throws {
        let (scenario, _, labels, expected) = try await handedOver("cmaf", fromMiddle: true)
        scenario.daemon.killApp()
        for label in labels { try await scenario.daemon.complete(label) }
        // The state file cannot be read: here a folder in its place.
        let state = scenario.folder.appendingPathComponent("offline-library.json")
        let saved = try Data(contentsOf: state)
        try FileManager.default.removeItem(at: state)
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: false)
        let woken = scenario.launch()
        let library = woken.library
        #expect(await withLivenessCheck { await library.handleBackgroundEvents() } != nil)
        #expect(!files(in: scenario.landing).isEmpty)

        // Unlocked: the next launch reads the state and what the session landed.
        scenario.daemon.killApp()
        try FileManager.default.removeItem(at: state)
        try saved.write(to: state)
        let next = scenario.launch()
        _ = try await next.library.load()
        guard case .downloaded? = await end(of: next.library) else {
            Issue.record("the lesson did not finish: \(await next.library.state(of: "lesson"))")
            return
        }
        #expect(try Data(contentsOf: try #require(await next.library.localFile(of: "lesson"))) == expected)
        #expect(scenario.daemon.submitted == labels.count)
    }
}

extension BackgroundLibraryTests {
    @Test(
        "what background transfers staged for a download that is done (a kill kept the hand-over's end from removing it), or for no item of the library, is removed by the next launch's sweep of leftovers"
    )
    func stagedLeftoversSwept() async throws {
        let (scenario, process, labels, _) = try await handedOver("ts-heaac")
        for label in labels { try await scenario.daemon.complete(label) }
        guard case .downloaded(let fileName, _)? = await end(of: process.library) else {
            Issue.record("the lesson did not finish")
            return
        }
        // A kill before the hand-over's end removed its staged bodies.
        let leftover = scenario.folder.appendingPathComponent(".\(fileName).staged")
        try FileManager.default.createDirectory(at: leftover, withIntermediateDirectories: true)
        try Data("body".utf8).write(to: leftover.appendingPathComponent("0"))
        let unknown = scenario.folder.appendingPathComponent(".removed-lesson.mp4.staged")
        try FileManager.default.createDirectory(at: unknown, withIntermediateDirectories: true)
        scenario.daemon.killApp()

        let next = scenario.launch()
        _ = try await next.library.load()
        #expect(!FileManager.default.fileExists(atPath: leftover.path))
        #expect(!FileManager.default.fileExists(atPath: unknown.path))
    }
}

extension BackgroundLibraryTests {
    @Test(
        "a queue whose network goes away while its lesson is handed over leaves the background tasks running and shows the lesson waiting; the learner's pause through the queue takes it back"
    )
    func queueLeavesHandedOverLessonsAlone() async throws {
        let lesson = try ServedLesson("cmaf")
        let (_, order) = try await reference(lesson)
        let media = order.filter { !lesson.isFetchedAgain($0) }
        let scenario = Scenario(lesson, holding: media[media.count / 2])
        let process = scenario.launch()
        let library = process.library
        let network = ManualNetwork(.unmetered)
        let queue = DownloadQueue(
            library: library, file: scenario.folder.appendingPathComponent("queue.json"),
            requirements: DownloadRequirements(reserveBytes: 0), network: network, freeSpace: { _ in 1 << 40 })
        try await queue.start()
        try await queue.enqueue([QueuedLesson(id: "lesson", remoteURL: lesson.entry)])
        await scenario.clock.waitForSleepers(count: 1)
        #expect(await library.continueInBackground() == ["lesson"])
        let labels = scenario.daemon.running
        #expect(!labels.isEmpty)
        // The course screen says it continues in the background, and counts it.
        let model = await CourseDownloadsModel(
            queue: queue,
            course: OfflineCourse(
                id: "course", title: "Course",
                sections: [
                    OfflineCourse.Section(
                        id: "all", title: "All",
                        lessons: [OfflineCourse.Lesson(id: "lesson", title: "Lesson", remoteURL: lesson.entry)])
                ]))
        await model.refresh()
        #expect(await model.sections[0].rows[0].isInBackground)
        #expect(await model.lessonsInBackground == 1)

        // The device goes offline: the queue would stop a foreground download, not this one.
        network.send(.offline)
        #expect(await eventually { await queue.state(of: "lesson") == .waiting(.network(required: .any)) })
        #expect(await library.isHandedOver("lesson"))
        #expect(scenario.daemon.running == labels)

        // The learner pauses it: the tasks are cancelled, what they staged kept.
        try await queue.pause("lesson")
        #expect(await eventually { await library.state(of: "lesson") == .paused })
        #expect(scenario.daemon.running.isEmpty)
        await queue.stop()
    }
}

extension BackgroundLibraryTests {
    @Test(
        "with hand-over always, a download whose every task is given up (404) runs once in the foreground and fails as not found; it is not handed over again and again, and a Download tapped as the app leaves hands it over once"
    )
    func alwaysGivenUpIsNotHandedOverAgain() async throws {
        let lesson = try ServedLesson("cmaf")
        let (_, order) = try await reference(lesson, concurrency: 1)
        var scenario = Scenario(lesson, holding: order.first { !lesson.isFetchedAgain($0) }, concurrency: 1)
        scenario.options = BackgroundTransferOptions(identifier: "app.background", handOver: .always)
        let process = scenario.launch()
        let library = process.library
        _ = try await library.load()
        try await library.download("lesson", from: lesson.entry)
        // The learner locks the phone as the download starts: one hand-over, not two.
        let leaving = Task { await library.continueInBackground() }
        let daemon = scenario.daemon
        #expect(await eventually { !daemon.running.isEmpty })
        _ = await leaving.value
        let labels = daemon.running
        #expect(Set(labels).count == labels.count)
        #expect(await eventually { await library.isHandedOver("lesson") })

        // Every media file is gone from the server.
        for path in lesson.files.keys where !lesson.isFetchedAgain(path) && !path.hasSuffix(".m3u8") {
            scenario.transport.stub(
                lesson.base.appendingPathComponent(path), reply: .response(status: 404, body: Data("gone".utf8)))
        }
        let clock = scenario.clock
        let passing = Task { await clock.advanceWhileSleeping() }
        defer { passing.cancel() }
        for label in labels { try await daemon.complete(label) }
        guard case .failed(let failure)? = await end(of: library) else {
            Issue.record("\(await library.state(of: "lesson"))")
            return
        }
        #expect(failure.category == .notFound)
        #expect(daemon.submitted == labels.count)
        #expect(daemon.running.isEmpty)
    }
}

/// The system's responses as they really come: a task made from resume data asks only for the
/// rest of its part, and its file may hold the whole part under a `206` for the rest.
extension BackgroundLibraryTests {
    /// The media requests `scenario`'s network received from index `start` on.
    func mediaRequests(of scenario: Scenario, from start: Int) -> [String] {
        scenario.transport.requests[start...].compactMap(scenario.lesson.key(of:))
    }

    @Test(
        "a force-quit's resume data is used (RFC 9110 §14.2, §15.3.7): each task submitted again asks only for the rest of its part, its 206 for the rest with the whole part is staged, and the relaunched run fetches no media",
        arguments: ["cmaf", "ts-heaac", "audio-renditions"])
    func forceQuitGoesOnFromResumeData(name: String) async throws {
        let (scenario, _, labels, expected) = try await handedOver(name, fromMiddle: true)
        try #require(!labels.isEmpty)
        let daemon = scenario.daemon
        try await daemon.forceQuit()
        let beforeRest = scenario.transport.requests.count
        let next = scenario.launch()
        _ = try await next.library.load()
        #expect(await eventually { Set(daemon.running) == Set(labels) }, "\(daemon.running)")
        #expect(Set(daemon.resumedWith) == Set(labels.map { Data("resume \($0)".utf8) }))
        for label in labels { try await daemon.complete(label) }
        guard case .downloaded? = await end(of: next.library) else {
            Issue.record("\(name): \(await next.library.state(of: "lesson"))")
            return
        }
        #expect(try Data(contentsOf: try #require(await next.library.localFile(of: "lesson"))) == expected)
        // One request per task, for the rest of its part, and none by the run that read them.
        let rest = mediaRequests(of: scenario, from: beforeRest)
        #expect(rest.count == labels.count, "\(name): \(rest)")
        #expect(rest.allSatisfy { $0.contains(" bytes=") }, "\(name): \(rest)")
    }

    @Test(
        "a lost connection's retry goes on from its resume data (Apple's Pausing and resuming downloads): the rest only, and the lesson ends byte-identical"
    )
    func lostConnectionGoesOnFromResumeData() async throws {
        let (scenario, first, labels, expected) = try await handedOver("cmaf", fromMiddle: true)
        let label = try #require(labels.first)
        let daemon = scenario.daemon
        try await daemon.loseConnection(label)
        let token = Data("resume \(label)".utf8)
        #expect(await eventually { daemon.resumedWith.contains(token) && daemon.running.contains(label) })
        let beforeRest = scenario.transport.requests.count
        try await daemon.complete(label)
        for other in labels.dropFirst() { try await daemon.complete(other) }
        guard case .downloaded? = await end(of: first.library) else {
            Issue.record("\(await first.library.state(of: "lesson"))")
            return
        }
        #expect(try Data(contentsOf: try #require(await first.library.localFile(of: "lesson"))) == expected)
        let rest = mediaRequests(of: scenario, from: beforeRest)
        #expect(rest.count == labels.count, "\(rest)")
        #expect(rest.first?.contains(" bytes=") == true, "\(rest)")
    }
}

/// What the learner does while the system is slow to take a hand-over's tasks.
extension BackgroundLibraryTests {
    @Test(
        "a pause while the hand-over's tasks are being submitted wins: the lesson is paused, its tasks are cancelled once submitted, and downloading again ends byte-identical"
    )
    func pauseWhileSubmitting() async throws {
        let lesson = try ServedLesson("cmaf")
        let (expected, order) = try await reference(lesson, concurrency: 1)
        let media = order.filter { !$0.hasSuffix(".vtt") }
        let scenario = Scenario(lesson, holding: media[media.count / 2], concurrency: 1)
        let process = scenario.launch()
        let library = process.library
        try await library.download("lesson", from: lesson.entry)
        await scenario.clock.waitForSleepers(count: 1)
        let daemon = scenario.daemon
        daemon.holdSubmissions()
        let leaving = Task { await library.continueInBackground() }
        await daemon.waitForHeldSubmission()
        await library.pause("lesson")
        #expect(await library.state(of: "lesson") == .paused)
        daemon.releaseSubmissions()
        #expect(await leaving.value.isEmpty)
        #expect(await library.state(of: "lesson") == .paused)
        #expect(daemon.running.isEmpty, "\(daemon.running)")
        let transfers = try #require(library.background)
        #expect(await transfers.handovers.isEmpty)
        try await library.download("lesson", from: lesson.entry)
        guard case .downloaded? = await end(of: library) else {
            Issue.record("\(await library.state(of: "lesson"))")
            return
        }
        #expect(try Data(contentsOf: try #require(await library.localFile(of: "lesson"))) == expected)
    }

    @Test(
        "back in the foreground while a task is submitted again after a 503: no trap, the new task is cancelled once submitted, and the lesson ends byte-identical in the foreground"
    )
    func foregroundWhileRetrying() async throws {
        let (scenario, process, labels, expected) = try await handedOver("cmaf", fromMiddle: true)
        let library = process.library
        let label = try #require(labels.first)
        let daemon = scenario.daemon
        // The task's request answers 503 once: the transfers submit it again.
        let request = try #require(daemon.request(of: label))
        let url = try #require(request.url)
        let body = try #require(scenario.lesson.files[scenario.lesson.key(of: request) ?? ""])
        scenario.transport.stub(url, replies: [.response(status: 503, body: Data("busy".utf8)), .resource(body)])
        daemon.holdSubmissions()
        try await daemon.complete(label)
        await daemon.waitForHeldSubmission()
        #expect(await library.continueInForeground() == ["lesson"])
        daemon.releaseSubmissions()
        guard case .downloaded? = await end(of: library) else {
            Issue.record("\(await library.state(of: "lesson"))")
            return
        }
        #expect(try Data(contentsOf: try #require(await library.localFile(of: "lesson"))) == expected)
        #expect(await eventually { daemon.running.isEmpty }, "left running: \(daemon.running)")
    }
}

extension BackgroundLibraryTests {
    @Test(
        "a Wi-Fi-only queue's rule reaches its lesson's background tasks: each is made for networks that are not expensive, and on cellular the library's wait reason says what the queue's does"
    )
    func wifiOnlyReachesTheSystem() async throws {
        let lesson = try ServedLesson("cmaf")
        let (_, order) = try await reference(lesson)
        let media = order.filter { !lesson.isFetchedAgain($0) }
        let network = ManualNetwork(.unmetered)
        var scenario = Scenario(lesson, holding: media[media.count / 2])
        scenario.options = BackgroundTransferOptions(identifier: "app.background")
        scenario.network = network
        let process = scenario.launch()
        let library = process.library
        let queue = DownloadQueue(
            library: library, file: scenario.folder.appendingPathComponent("queue.json"),
            requirements: DownloadRequirements(network: .notExpensive, reserveBytes: 0), network: network,
            freeSpace: { _ in 1 << 40 })
        try await queue.start()
        try await queue.enqueue([QueuedLesson(id: "lesson", remoteURL: lesson.entry)])
        await scenario.clock.waitForSleepers(count: 1)
        #expect(await library.continueInBackground() == ["lesson"])
        let daemon = scenario.daemon
        let labels = daemon.running
        try #require(!labels.isEmpty)
        #expect(labels.allSatisfy { daemon.network(of: $0) == .notExpensive }, "\(labels.map(daemon.network(of:)))")

        network.send(.cellular)
        #expect(await eventually { await queue.state(of: "lesson") == .waiting(.network(required: .notExpensive)) })
        #expect(await eventually { await library.waitReason(of: "lesson") == .network(required: .notExpensive) })
        network.send(.unmetered)
        #expect(await eventually { await library.waitReason(of: "lesson") == nil })
        await queue.stop()
    }
}

extension BackgroundLibraryTests {
    @Test(
        "killed after a delete was saved and before the transfers forgot its hand-over: the next launch gives the hand-over up, submits none of its tasks again and removes what they staged"
    )
    func deletedBeforeTheTransfersForgot() async throws {
        let (scenario, _, labels, _) = try await handedOver("cmaf", fromMiddle: true)
        try #require(!labels.isEmpty)
        let daemon = scenario.daemon
        try await daemon.complete(labels[0])
        try await daemon.forceQuit()
        // What the delete saved before the kill: the library no longer has the item.
        try Data(#"{"items":{},"version":1}"#.utf8).write(
            to: scenario.folder.appendingPathComponent("offline-library.json"))

        let next = scenario.launch()
        _ = try await next.library.load()
        let transfers = try #require(next.library.background)
        #expect(await eventually { await transfers.handovers.isEmpty })
        #expect(await eventually { !daemon.hasWaitingEvents })
        let folder = scenario.folder
        #expect(
            await eventually { files(in: folder).filter { $0.hasSuffix(".staged") }.isEmpty }, "\(files(in: folder))")
        #expect(daemon.running.isEmpty, "submitted again: \(daemon.running)")
        #expect(daemon.submitted == labels.count)
    }
}

extension BackgroundLibraryTests {
    @Test(
        "the run after the tasks, the process killed right after the save that started it: the next launch runs it again by itself instead of showing it paused, and it ends byte-identical"
    )
    func killedAfterTheRunsFirstSave() async throws {
        var (scenario, _, labels, expected) = try await handedOver("ts-heaac") { scenario in
            // The second run's playlist request is held: the process ends while it waits.
            let playlist = scenario.lesson.files["index.m3u8"]
            let served = InMemoryHTTPTransport<ManualClock>.Reply.response(
                status: 200, headers: ["Content-Type": "application/vnd.apple.mpegurl"], body: playlist ?? Data())
            let held = InMemoryHTTPTransport<ManualClock>.Reply.response(
                status: 200, headers: ["Content-Type": "application/vnd.apple.mpegurl"], body: playlist ?? Data(),
                latency: .seconds(3_600))
            scenario.transport.stub(scenario.lesson.entry, replies: [served, held, served])
        }
        scenario.daemon.killApp()
        for label in labels { try await scenario.daemon.complete(label) }

        // Woken for the events, the process saves its states at the load, then as the run
        // after the tasks starts, and is killed before any later save.
        let saves = LockedState(0)
        scenario.fileSystem = TestFileSystem(plan: { operation, file in
            guard file.lastPathComponent == "offline-library.json" else { return }
            let count = saves.withLock { count in
                if operation == .write { count += 1 }
                return count
            }
            if count > 2 { throw CocoaError(.fileWriteUnknown) }
        })
        let woken = scenario.launch()
        _ = try await woken.library.load()
        await woken.library.handleBackgroundEvents()
        let clock = scenario.clock
        #expect(await withLivenessCheck { await clock.waitForSleepers(count: 1) } != nil)
        #expect(saves.withLock { $0 } >= 2)
        scenario.daemon.killApp()

        scenario.fileSystem = LocalFileSystem()
        let next = scenario.launch()
        _ = try await next.library.load()
        #expect(await next.library.state(of: "lesson") != .paused)
        guard case .downloaded? = await end(of: next.library) else {
            Issue.record("the lesson did not run again by itself: \(await next.library.state(of: "lesson"))")
            return
        }
        let file = try #require(await next.library.localFile(of: "lesson"))
        #expect(try Data(contentsOf: file) == expected)
    }

    @Test(
        "a hand-over whose journal cannot be written fails the lesson with what the file system said, instead of pausing it; downloading again resumes it"
    )
    func handOverJournalNotWritable() async throws {
        let lesson = try ServedLesson("cmaf")
        let (expected, order) = try await reference(lesson, concurrency: 1)
        let media = order.filter { !$0.hasSuffix(".vtt") }
        var scenario = Scenario(lesson, holding: media[media.count / 2], concurrency: 1)
        // The journal cannot be written (a folder the app may not write in).
        let refusing = LockedState(true)
        scenario.fileSystem = TestFileSystem(plan: { operation, file in
            if operation == .write, file.lastPathComponent == "background-transfers.json", refusing.withLock({ $0 }) {
                throw CocoaError(.fileWriteNoPermission)
            }
        })
        let process = scenario.launch()
        let library = process.library
        try await library.download("lesson", from: lesson.entry)
        await scenario.clock.waitForSleepers(count: 1)
        #expect(await library.continueInBackground().isEmpty)
        guard case .failed(let failure) = await library.state(of: "lesson") else {
            Issue.record("\(await library.state(of: "lesson"))")
            return
        }
        #expect(failure.message.contains("journal"), "\(failure.message)")
        #expect(scenario.daemon.running.isEmpty)
        refusing.withLock { $0 = false }
        try await library.download("lesson", from: lesson.entry)
        guard case .downloaded? = await end(of: library) else {
            Issue.record("\(await library.state(of: "lesson"))")
            return
        }
        #expect(try Data(contentsOf: try #require(await library.localFile(of: "lesson"))) == expected)
    }
}
