import Downloads
import Foundation
import OfflineLessons
import OfflineLessonsTesting
import TestSupport
import Testing

/// The simulated daemon as an app's own test uses it, through the public API only: the example
/// of `SimulatedBackgroundDaemon`'s documentation and of <doc:TestingBackgroundDownloads>.
extension BackgroundLibraryTests {
    @Test(
        "the documented example: a lesson handed over mid-download, the app killed, every task completed, the relaunch records the events and finishes the lesson byte-identical, asking the network for no media"
    )
    func simulatedDaemonExample() async throws {
        let lesson = try ServedLesson("ts-heaac")
        let (expected, order) = try await reference(lesson, concurrency: 1)
        let clock = ManualClock()
        let server = InMemoryHTTPTransport(clock: clock)
        // The last media segment is answered only after an hour of the server's clock, the first
        // time it is asked for: the download is mid-way when the app leaves the foreground.
        let held = try #require(order.last { !lesson.isFetchedAgain($0) })
        lesson.serve(on: server, holding: held)
        let folder = temporaryFolder("simulated-daemon-example")
        let lessonURL = lesson.entry
        /// Returns once the download waits for the held segment.
        @Sendable func lessonIsDownloading() async { await clock.waitForSleepers(count: 1) }

        let outcome: Result<(Data?, Int), any Error>? = await withLivenessCheck {
            do {
                // example: begin simulated-background
                let daemon = SimulatedBackgroundDaemon(transport: server)
                @Sendable func launch() -> OfflineLibrary {
                    OfflineLibrary(
                        directory: folder,
                        downloader: MediaDownloader(
                            engine: DownloadEngine(clock: ContinuousClock(), transport: server)),
                        background: BackgroundTransferOptions(identifier: "app.lessons"),
                        backgroundService: .simulated(by: daemon), network: FixedNetworkPathMonitor(.unmetered))
                }
                let library = launch()
                try await library.download("lesson", from: lessonURL)
                // The app leaves the foreground mid-download, and the system ends it.
                await lessonIsDownloading()
                _ = await library.continueInBackground()
                daemon.killApp()
                try await daemon.completeAll()
                // Relaunched for the session's events: the app delegate passes the handler on.
                let relaunched = launch()
                await relaunched.handleBackgroundEvents()
                for await (id, state) in relaunched.updates where id == "lesson" {
                    if case .downloaded = state { break }
                }
                // example: end simulated-background
                await relaunched.waitForDownload("lesson")
                let file = await relaunched.localFile(of: "lesson")
                return .success((file.flatMap { try? Data(contentsOf: $0) }, daemon.submitted))
            } catch {
                return .failure(error)
            }
        }
        let (bytes, submitted) = try #require(outcome).get()
        #expect(bytes == expected)
        #expect(submitted > 0, "nothing was handed over")
        // Each media part was asked for at most twice: by the foreground (the held one, and any
        // other in flight as it paused, cut short), then by the daemon. The relaunched run asked
        // for playlists and keys only.
        let media = server.requests.compactMap(lesson.key(of:)).filter { !lesson.isFetchedAgain($0) }
        let counts = Dictionary(grouping: media, by: { $0 }).mapValues(\.count)
        #expect(counts[held] == 2, "\(media)")
        #expect(counts.values.allSatisfy { $0 <= 2 }, "\(media)")
    }
}
