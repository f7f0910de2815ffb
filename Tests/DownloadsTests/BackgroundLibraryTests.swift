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

/// Lessons an ``OfflineLibrary`` continues in the background: paused in the foreground with a
/// segment in flight, their remaining parts handed to a background session that behaves as
/// Apple documents (``SimulatedBackgroundDaemon``), the app killed and relaunched by the
/// session's events, and the download run again from what the session staged. Each ends with
/// the bytes of an uninterrupted download, and counts what was fetched.
@Suite("Background downloads through the library")
struct BackgroundLibraryTests {
    /// One app process: its library over the daemon's session.
    struct Process {
        let library: OfflineLibrary
        let session: SimulatedBackgroundSession
    }

    /// A lesson served in memory, the daemon, and the library's folder.
    struct Scenario {
        let lesson: ServedLesson
        let clock = ManualClock()
        let transport: InMemoryHTTPTransport<ManualClock>
        let folder: URL
        let daemon: SimulatedBackgroundDaemon
        let downloader: MediaDownloader<ManualClock>
        var freeSpace: UInt64 = 1 << 40
        /// The app's background options, if the test chooses them.
        var options: BackgroundTransferOptions?
        /// The device's network the library reads, if the test follows why the transfers wait.
        var network: ManualNetwork?
        /// The file system the library saves its states in (a test's can kill it).
        var fileSystem: any DownloadFileSystem = LocalFileSystem()

        /// Where finished files land before they are staged.
        let landing: URL
        /// How many of the daemon's tasks were running as each foreground run started.
        let tasksAtEachStart = Locked<[Int]>([])

        init(_ lesson: ServedLesson, holding held: String?, concurrency: Int = 2, folder: URL? = nil) {
            self.lesson = lesson
            transport = InMemoryHTTPTransport(clock: clock)
            lesson.serve(on: transport, holding: held)
            let root = temporaryFolder("background-library-\(lesson.name)")
            self.folder = folder ?? root.appendingPathComponent("library")
            landing = root.appendingPathComponent("landing")
            daemon = SimulatedBackgroundDaemon(transport: transport, scratch: root.appendingPathComponent("daemon"))
            downloader = MediaDownloader(
                engine: DownloadEngine(concurrency: concurrency, retry: .none, clock: clock, transport: transport))
        }

        /// The app launches: a new library over a new session from the daemon.
        func launch() -> Process {
            let session = daemon.launch(landing: landing)
            let free = freeSpace
            let transfers = BackgroundTransfers(
                session: session, folder: folder, retry: RetryPolicy(maximumAttempts: 3), freeSpace: { _ in free },
                fileSystem: fileSystem)
            let downloader = downloader
            let (daemon, starts) = (daemon, tasksAtEachStart)
            let library = OfflineLibrary(
                directory: folder, fileOptions: OfflineFileOptions(), fileSystem: fileSystem,
                background: transfers, backgroundOptions: options, network: network
            ) { remote, destination in
                let running = daemon.running.count
                starts.withLock { $0.append(running) }
                return downloader.downloadLesson(from: remote, to: destination, preferredLanguages: [])
            }
            return Process(library: library, session: session)
        }
    }

    /// An uninterrupted download of `lesson`: its bytes, and the segments it asked for in order.
    ///
    /// With one transfer at a time, the order is the same at every run.
    func reference(_ lesson: ServedLesson, concurrency: Int = 2) async throws -> (bytes: Data, order: [String]) {
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        lesson.serve(on: transport)
        let downloader = MediaDownloader(
            engine: DownloadEngine(concurrency: concurrency, retry: .none, clock: clock, transport: transport))
        let destination = temporaryFolder("background-reference-\(lesson.name)").appendingPathComponent("lesson")
        let result = try await downloader.downloadLesson(from: lesson.entry, to: destination, preferredLanguages: [])
            .result()
        return (try Data(contentsOf: result.file), transport.requests.compactMap(lesson.key(of:)))
    }

    /// The state item `lesson` ends in once it is no longer downloading, or `nil` when the
    /// process stood still before that (``withLivenessCheck(_:)``).
    func end(of library: OfflineLibrary) async -> OfflineLibrary.ItemState? {
        await withLivenessCheck {
            for await (id, state) in library.updates where id == "lesson" {
                if case .downloading = state { continue }
                // And what the end removes (staged bodies, a hand-over) is gone.
                await library.waitForDownload(id)
                return state
            }
            return OfflineLibrary.ItemState.notDownloaded
        } ?? nil
    }

    /// A scenario of `name` started in a first process and handed over with its last media
    /// segment in flight (or its middle one, `fromMiddle`): the process, the task labels, and
    /// the reference download.
    ///
    /// One transfer at a time, so that what the foreground did is the same at every run: every
    /// step but the last is in the journal, and the last step's parts are handed over.
    func handedOver(
        _ name: String, concurrency: Int = 1, folder: URL? = nil, freeSpace: UInt64 = 1 << 40,
        fromMiddle: Bool = false, options: BackgroundTransferOptions? = nil, network: ManualNetwork? = nil,
        serving: (Scenario) -> Void = { _ in }
    ) async throws -> (scenario: Scenario, process: Process, labels: [String], expected: Data) {
        let lesson = try ServedLesson(name)
        let (expected, order) = try await reference(lesson, concurrency: concurrency)
        let media = order.filter { !$0.hasSuffix(".vtt") }
        let held = fromMiddle ? media[media.count / 2] : media.last
        var scenario = Scenario(lesson, holding: held, concurrency: concurrency, folder: folder)
        scenario.freeSpace = freeSpace
        scenario.options = options
        scenario.network = network
        serving(scenario)
        let process = scenario.launch()
        try await process.library.download("lesson", from: lesson.entry)
        // The held segment's transfer is in flight (a download that failed first never gets there).
        let clock = scenario.clock
        try #require(await withLivenessCheck { await clock.waitForSleepers(count: 1) } != nil)
        _ = await process.library.continueInBackground()
        return (scenario, process, scenario.daemon.running, expected)
    }

    /// Whether `condition` holds within a million turns of the cooperative pool (see
    /// ``withinPoolTurns(_:_:)``; the library has no settle signal to await yet).
    func eventually(_ condition: @escaping @Sendable () async -> Bool) async -> Bool {
        await withinPoolTurns(1_000_000, condition)
    }

    /// Whether the process's background transfers recorded the event of task `label`.
    func recorded(_ label: String, by process: Process) async -> Bool {
        guard let transfers = process.library.background else { return false }
        return await eventually {
            await !transfers.handovers.contains { $0.requests.contains { $0.label == label } }
        }
    }

    @Test(
        "paused with a middle segment in flight and handed over; the app killed, the tasks ended in any order, the app relaunched by the events: the library runs the lesson again from what was staged, byte-identical, the network asked for its playlists only",
        arguments: ["cmaf", "ts-heaac", "aes-implicit-iv", "packed-aac", "multi-audio", "webvtt"])
    func handedOverAndRelaunched(name: String) async throws {
        let lesson = try ServedLesson(name)
        let (expected, order) = try await reference(lesson)
        let media = order.filter { !$0.hasSuffix(".vtt") }
        let held = media[media.count / 2]
        let scenario = Scenario(lesson, holding: held)
        let first = scenario.launch()
        try await first.library.download("lesson", from: lesson.entry)
        // The held segment's transfer is in flight: the learner locks the phone.
        await scenario.clock.waitForSleepers(count: 1)
        #expect(await first.library.continueInBackground() == ["lesson"])
        #expect(await first.library.state(of: "lesson").isDownloading)
        let labels = scenario.daemon.running
        #expect(!labels.isEmpty)
        #expect(labels.allSatisfy { BackgroundTaskLabel(parsing: $0)?.download == "lesson" })

        // Suspended, then reclaimed by the system; the daemon ends every task meanwhile.
        scenario.daemon.killApp()
        var random = SplitMix64(seed: UInt64(name.utf8.count))
        for label in labels.shuffled(using: &random) { try await scenario.daemon.complete(label) }
        let daemonFetched = scenario.transport.requests.count

        // Relaunched in the background for the session's events.
        let second = scenario.launch()
        _ = try await second.library.load()
        // Waiting for its tasks, or already running again from what they brought.
        #expect(await !second.library.state(of: "lesson").isGone)
        let handled = LockedState(false)
        await second.library.handleBackgroundEvents { handled.withLock { $0 = true } }
        let state = await end(of: second.library)
        guard case .downloaded? = state else {
            Issue.record("\(name) ended \(String(describing: state))")
            return
        }
        #expect(await eventually { handled.withLock { $0 } })
        let file = try #require(await second.library.localFile(of: "lesson"))
        #expect(try Data(contentsOf: file) == expected)
        // The last run read every part from what was staged: no segment, key or initialisation
        // section from the network (subtitles are fetched after the media, as in any run).
        let last = scenario.transport.requests[daemonFetched...].compactMap(lesson.key(of:))
        #expect(last.filter { !$0.hasSuffix(".vtt") }.isEmpty, "\(name) fetched \(last)")
        // Nothing fetched twice but the transfers in flight at the pause and what every run
        // fetches again.
        let all = scenario.transport.requests.compactMap(lesson.key(of:))
        let twice = Dictionary(grouping: all, by: { $0 }).filter { $0.value.count > 1 }.keys
        #expect(twice.filter { !lesson.isFetchedAgain($0) }.count <= 2 * lesson.renditions, "\(name): \(twice)")
        // The hand-over is forgotten, and what was staged is gone.
        let transfers = try #require(second.library.background)
        #expect(await eventually { await transfers.handovers.isEmpty })
        #expect(files(in: scenario.folder).filter { $0.hasSuffix(".staged") }.isEmpty)
    }

    @Test(
        "a force-quit cancels every task: at the next launch each goes on from its resume data, and the lesson ends byte-identical"
    )
    func forceQuit() async throws {
        let (scenario, first, labels, expected) = try await handedOver("cmaf", fromMiddle: true)
        try #require(labels.count >= 2)
        try await scenario.daemon.complete(labels[0])
        #expect(await recorded(labels[0], by: first))
        try await scenario.daemon.forceQuit()
        // The learner opens the app again: the cancels arrive, and each task goes on.
        let second = scenario.launch()
        _ = try await second.library.load()
        // Waiting for its tasks, or already running again from what they brought.
        #expect(await !second.library.state(of: "lesson").isGone)
        let daemon = scenario.daemon
        let stopped = Set(labels.dropFirst())
        #expect(await eventually { Set(daemon.running) == stopped }, "\(scenario.daemon.running)")
        #expect(Set(scenario.daemon.resumedWith) == Set(labels.dropFirst().map { Data("resume \($0)".utf8) }))
        for label in labels.dropFirst() { try await scenario.daemon.complete(label) }
        guard case .downloaded? = await end(of: second.library) else {
            Issue.record("\(await second.library.state(of: "lesson"))")
            return
        }
        let file = try #require(await second.library.localFile(of: "lesson"))
        #expect(try Data(contentsOf: file) == expected)
        #expect(scenario.daemon.submitted == 2 * labels.count - 1)
    }

    @Test(
        "too little free space for the remaining parts: nothing submitted, the lesson fails as storage full, and a download later resumes it byte-identical"
    )
    func insufficientStorage() async throws {
        let (scenario, first, labels, expected) = try await handedOver("cmaf", freeSpace: 1_000)
        #expect(labels.isEmpty)
        #expect(scenario.daemon.submitted == 0)
        guard case .failed(let failure) = await first.library.state(of: "lesson") else {
            Issue.record("\(await first.library.state(of: "lesson"))")
            return
        }
        #expect(failure.category == .storageFull)
        // The partial file and its journal are kept: the foreground resumes from them.
        try await first.library.download("lesson", from: scenario.lesson.entry)
        await first.library.waitForDownload("lesson")
        let file = try #require(await first.library.localFile(of: "lesson"))
        #expect(try Data(contentsOf: file) == expected)
    }

    @Test(
        "a part the server no longer has (404) is given up in the background; the run fetches it, fails as not found, keeps what was staged, and once the part is back ends byte-identical"
    )
    func missingPart() async throws {
        let lesson = try ServedLesson("cmaf")
        let order = try await reference(lesson, concurrency: 1).order
        let last = try #require(order.last)
        let missing = lesson.base.appendingPathComponent(last)
        let data = try #require(lesson.files[last])
        // In flight in the foreground when it is handed over; gone from then on.
        let (scenario, _, labels, expected) = try await handedOver("cmaf") { scenario in
            scenario.transport.stub(
                missing,
                replies: [.resource(data, latency: .seconds(3_600)), .response(status: 404, body: Data("gone".utf8))])
        }
        scenario.daemon.killApp()
        for label in labels { try await scenario.daemon.complete(label) }
        let second = scenario.launch()
        _ = try await second.library.load()
        guard case .failed(let failure)? = await end(of: second.library) else {
            Issue.record("\(await second.library.state(of: "lesson"))")
            return
        }
        #expect(failure.category == .notFound)
        // The part is back: the next run reads the rest from what was staged.
        scenario.transport.stub(missing, reply: .resource(data))
        let before = scenario.transport.requests.count
        try await second.library.download("lesson", from: lesson.entry)
        guard case .downloaded? = await end(of: second.library) else {
            Issue.record("\(await second.library.state(of: "lesson"))")
            return
        }
        let file = try #require(await second.library.localFile(of: "lesson"))
        #expect(try Data(contentsOf: file) == expected)
        // Only the missing part's step: its other rendition's segment was read from what was
        // staged by the run that failed, and that step was never checkpointed.
        let fetched = scenario.transport.requests[before...].compactMap(lesson.key(of:))
        #expect(fetched.contains(last) && fetched.count <= lesson.renditions, "\(fetched)")
        #expect(Set(fetched).isSubset(of: order.suffix(lesson.renditions)), "\(fetched)")
    }

    @Test(
        "a key the key server refuses (403): given up in the background, and the lesson fails as access denied with nothing written"
    )
    func refusedKey() async throws {
        let lesson = try ServedLesson("aes-implicit-iv")
        let key = lesson.base.appendingPathComponent("key.key")
        let keyData = try #require(lesson.files["key.key"])
        // The foreground run has the key; the background task is refused it, as is every
        // request after.
        let (scenario, _, labels, _) = try await handedOver("aes-implicit-iv") { scenario in
            scenario.transport.stub(key, replies: [.resource(keyData), .response(status: 403)])
        }
        #expect(labels.count >= 2)
        scenario.daemon.killApp()
        for label in labels { try await scenario.daemon.complete(label) }
        let second = scenario.launch()
        _ = try await second.library.load()
        guard case .failed(let failure)? = await end(of: second.library) else {
            Issue.record("\(await second.library.state(of: "lesson"))")
            return
        }
        #expect(failure.category == .accessDenied, "\(failure)")
        #expect(await second.library.localFile(of: "lesson") == nil)
        #expect(!files(in: scenario.folder).contains { $0.hasPrefix("lesson.") }, "\(files(in: scenario.folder))")
    }

    @Test(
        "the app killed after each event in turn, the rest delivered at the relaunch: every run ends byte-identical, no part fetched by the last run"
    )
    func killAfterEveryEvent() async throws {
        let lesson = try ServedLesson("cmaf")
        let count = try await handedOver("cmaf", fromMiddle: true).labels.count
        try #require(count >= 2)
        for killedAfter in 0...count {
            let (scenario, first, labels, expected) = try await handedOver("cmaf", fromMiddle: true)
            #expect(labels.count == count)
            for (index, label) in labels.enumerated() {
                if index == killedAfter { scenario.daemon.killApp() }
                try await scenario.daemon.complete(label)
                // The live process records the event before the next one happens: the kill
                // comes between two events (within one is the test below).
                if index < killedAfter { #expect(await recorded(label, by: first), "\(label)") }
            }
            if killedAfter == count {
                guard case .downloaded? = await end(of: first.library) else {
                    Issue.record("no kill: \(await first.library.state(of: "lesson"))")
                    continue
                }
                let file = try #require(await first.library.localFile(of: "lesson"))
                #expect(try Data(contentsOf: file) == expected)
                continue
            }
            let atRelaunch = scenario.transport.requests.count
            let second = scenario.launch()
            _ = try await second.library.load()
            guard case .downloaded? = await end(of: second.library) else {
                Issue.record("killed after \(killedAfter): \(await second.library.state(of: "lesson"))")
                continue
            }
            let file = try #require(await second.library.localFile(of: "lesson"))
            #expect(try Data(contentsOf: file) == expected, "killed after \(killedAfter)")
            let last = scenario.transport.requests[atRelaunch...].compactMap(lesson.key(of:))
            #expect(last.isEmpty, "killed after \(killedAfter): \(last)")
        }
    }

    @Test(
        "the app killed within an event, after the file landed and before it was recorded: the relaunch records it from the landing folder, and the lesson ends byte-identical with no part fetched again"
    )
    func killedWithinAnEvent() async throws {
        let lesson = try ServedLesson("cmaf")
        let (scenario, _, labels, expected) = try await handedOver("cmaf", fromMiddle: true)
        try #require(labels.count >= 2)
        try await scenario.daemon.completeAsTheAppDies(labels[0])
        for label in labels.dropFirst() { try await scenario.daemon.complete(label) }
        let atRelaunch = scenario.transport.requests.count
        let second = scenario.launch()
        _ = try await second.library.load()
        guard case .downloaded? = await end(of: second.library) else {
            Issue.record("\(await second.library.state(of: "lesson"))")
            return
        }
        let file = try #require(await second.library.localFile(of: "lesson"))
        #expect(try Data(contentsOf: file) == expected)
        #expect(scenario.transport.requests[atRelaunch...].compactMap(lesson.key(of:)).isEmpty)
        #expect(files(in: scenario.landing).isEmpty)
    }

    @Test(
        "a disk that fills while bodies are staged (ENOSPC): given up as storage full, the lesson fails with nothing written, and once space is freed it ends byte-identical",
        .enabled(if: SmallVolume.isAvailable, "needs a tmpfs (root on Linux)"))
    func diskFullWhileStaging() async throws {
        let volume = try SmallVolume(bytes: 8 << 20)
        defer { volume.unmount() }
        let (scenario, _, labels, expected) = try await handedOver("cmaf", folder: volume.folder)
        try #require(!labels.isEmpty)
        scenario.daemon.killApp()
        try volume.fill(leaving: 0)
        for label in labels { try await scenario.daemon.complete(label) }
        let second = scenario.launch()
        _ = try await second.library.load()
        guard case .failed(let failure)? = await end(of: second.library) else {
            Issue.record("\(await second.library.state(of: "lesson"))")
            return
        }
        #expect(failure.category == .storageFull)
        #expect(await second.library.localFile(of: "lesson") == nil)
        #expect(!files(in: scenario.folder).contains { $0.hasPrefix("lesson.") }, "\(files(in: scenario.folder))")
        try FileManager.default.removeItem(at: volume.folder.appendingPathComponent("filler"))
        try await second.library.download("lesson", from: scenario.lesson.entry)
        guard case .downloaded? = await end(of: second.library) else {
            Issue.record("\(await second.library.state(of: "lesson"))")
            return
        }
        let file = try #require(await second.library.localFile(of: "lesson"))
        #expect(try Data(contentsOf: file) == expected)
    }
}

extension OfflineLibrary.ItemState {
    var isDownloading: Bool {
        if case .downloading = self { true } else { false }
    }

    /// Neither downloading nor downloaded.
    var isGone: Bool {
        switch self {
        case .downloading, .downloaded: false
        default: true
        }
    }
}

extension BackgroundLibraryTests {
    @Test(
        "taken back into the foreground, the run starts only once the hand-over's tasks are cancelled, as the library's actions come: it never runs beside them"
    )
    func takeBackStartsAfterTheCancellation() async throws {
        let (scenario, process, labels, expected) = try await handedOver("cmaf", fromMiddle: true)
        #expect(!labels.isEmpty && !scenario.daemon.running.isEmpty)
        #expect(await process.library.continueInForeground() == ["lesson"])
        guard case .downloaded? = await end(of: process.library) else {
            Issue.record("\(await process.library.state(of: "lesson"))")
            return
        }
        #expect(scenario.tasksAtEachStart.withLock { $0.last } == 0, "\(scenario.tasksAtEachStart.withLock { $0 })")
        #expect(try Data(contentsOf: try #require(await process.library.localFile(of: "lesson"))) == expected)
    }

    @Test(
        "while the app runs, a lesson handed over shows its tasks' progress: the fraction moves with the bytes they report (didWriteData) and with each task that ends, from where it was and never back, and the lesson ends downloaded"
    )
    func backgroundProgressMovesTheFraction() async throws {
        let (scenario, process, labels, expected) = try await handedOver("ts-heaac", fromMiddle: true)
        let library = process.library
        #expect(await library.isHandedOver("lesson"))
        guard case .downloading(let atHandOver) = await library.state(of: "lesson") else {
            Issue.record("\(await library.state(of: "lesson"))")
            return
        }
        let label = try #require(labels.first)
        // Every fraction shown from here to the end.
        let updates = library.updates
        let shown = Task {
            var fractions: [Double] = []
            for await (id, state) in updates where id == "lesson" {
                guard case .downloading(let fraction) = state else { break }
                fractions.append(fraction)
            }
            return fractions
        }
        // Half of the first task's body, as its delegate calls say.
        scenario.daemon.reportProgress(label, bytesWritten: 50_000, of: 100_000)
        let moved = await eventually {
            if case .downloading(let now) = await library.state(of: "lesson") { return now > atHandOver }
            return false
        }
        #expect(moved, "the fraction stayed at \(atHandOver)")
        guard case .downloading(let halfway) = await library.state(of: "lesson") else { return }
        #expect(halfway < 1)
        // A report below the last one moves nothing back.
        scenario.daemon.reportProgress(label, bytesWritten: 10_000, of: 100_000)
        try await scenario.daemon.completeAll()
        let state = await end(of: library)
        guard case .downloaded? = state else {
            Issue.record("ended \(String(describing: state))")
            return
        }
        let fractions = await shown.value
        #expect(zip(fractions, fractions.dropFirst()).allSatisfy { $0 <= $1 }, "\(fractions)")
        #expect(fractions.contains(halfway))
        let file = try #require(await library.localFile(of: "lesson"))
        #expect(try Data(contentsOf: file) == expected)
    }

    @Test(
        "the fraction of a lesson handed over counts its requests ended whole and the running ones by the bytes their tasks report, from where it was handed over"
    )
    func handOverShare() async throws {
        let (scenario, process, labels, _) = try await handedOver("cmaf", fromMiddle: true)
        let library = process.library
        guard case .downloading(let base) = await library.state(of: "lesson") else {
            Issue.record("\(await library.state(of: "lesson"))")
            return
        }
        let count = Double(labels.count)
        func shown(_ expected: Double) async -> Bool {
            await eventually {
                guard case .downloading(let now) = await library.state(of: "lesson") else { return false }
                return abs(now - expected) < 1e-9
            }
        }
        let label = try #require(labels.first)
        scenario.daemon.reportProgress(label, bytesWritten: 25, of: 100)
        let quarter = await shown(base + (1 - base) * 0.25 / count)
        #expect(quarter, "\(base) of \(labels.count) requests")
        // Its task ends: it counts whole.
        try await scenario.daemon.complete(label)
        let whole = await shown(base + (1 - base) / count)
        #expect(whole, "\(base) of \(labels.count) requests")
    }
}
