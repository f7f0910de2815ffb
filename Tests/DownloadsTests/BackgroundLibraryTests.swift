import Foundation
import HTTPSupport
import Locking
import TestSupport
import Testing

@testable import Downloads

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

        init(_ lesson: ServedLesson, holding held: String?, concurrency: Int = 2) {
            self.lesson = lesson
            transport = InMemoryHTTPTransport(clock: clock)
            lesson.serve(on: transport, holding: held)
            let root = temporaryFolder("background-library-\(lesson.name)")
            folder = root.appendingPathComponent("library")
            daemon = SimulatedBackgroundDaemon(transport: transport, scratch: root.appendingPathComponent("daemon"))
            downloader = MediaDownloader(
                engine: DownloadEngine(concurrency: concurrency, retry: .none, clock: clock, transport: transport))
        }

        /// The app launches: a new library over a new session from the daemon.
        func launch() -> Process {
            let session = daemon.launch(landing: folder.appendingPathComponent(".background-landing"))
            let free = freeSpace
            let transfers = BackgroundTransfers(
                session: session, folder: folder, retry: RetryPolicy(maximumAttempts: 3), freeSpace: { _ in free })
            let downloader = downloader
            let library = OfflineLibrary(
                directory: folder, fileOptions: OfflineFileOptions(), fileSystem: LocalFileSystem(),
                background: transfers
            ) { remote, destination in
                downloader.downloadLesson(from: remote, to: destination, preferredLanguages: [])
            }
            return Process(library: library, session: session)
        }
    }

    /// An uninterrupted download of `lesson`: its bytes, and the segments it asked for in order.
    func reference(_ lesson: ServedLesson) async throws -> (bytes: Data, order: [String]) {
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        lesson.serve(on: transport)
        let downloader = MediaDownloader(
            engine: DownloadEngine(concurrency: 2, retry: .none, clock: clock, transport: transport))
        let destination = temporaryFolder("background-reference-\(lesson.name)").appendingPathComponent("lesson")
        let result = try await downloader.downloadLesson(from: lesson.entry, to: destination, preferredLanguages: [])
            .result()
        return (try Data(contentsOf: result.file), transport.requests.compactMap(lesson.key(of:)))
    }

    /// The state item `lesson` ends in once it is no longer downloading, or `nil` when it is
    /// still downloading after the liveness limit.
    func end(of library: OfflineLibrary) async -> OfflineLibrary.ItemState? {
        await withLivenessLimit(seconds: 300) {
            for await (id, state) in library.updates where id == "lesson" {
                if case .downloading = state { continue }
                return state
            }
            return OfflineLibrary.ItemState.notDownloaded
        } ?? nil
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
        #expect(await second.library.state(of: "lesson").isDownloading)
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
        var forgotten = false
        for _ in 0..<10_000 where !forgotten {
            forgotten = await transfers.handovers.isEmpty
            await Task.yield()
        }
        #expect(forgotten)
        #expect(files(in: scenario.folder).filter { $0.hasSuffix(".staged") }.isEmpty)
    }
}

extension OfflineLibrary.ItemState {
    fileprivate var isDownloading: Bool {
        if case .downloading = self { true } else { false }
    }
}
