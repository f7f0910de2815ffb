import Downloads
import Foundation
import HTTPSupport
import OfflineLessons
import TestSupport
import Testing

/// The article *Downloading for offline use* shows an offline item's states as a figure drawn
/// from the library itself: a real ``OfflineLibrary`` (over the in-memory transport and a manual
/// clock) is brought into each state, every operation and outcome is tried there, and each
/// state it leads to is an arrow. A change in what the library does moves an arrow (and fails
/// this test until the figure is committed).
@Suite("The offline item's states, drawn from the library")
struct OfflineStatesFigureTests {
    static let id = "salsa-1"

    /// How an item is brought into a state before an operation is tried.
    enum Start: String, CaseIterable, Sendable {
        case notDownloaded, downloading, downloadingToFail, paused, cancelled, failed, downloaded
    }

    /// What is tried on an item.
    enum Operation: String, CaseIterable, Sendable {
        case download = "download()"
        case pause = "pause()"
        case cancel = "cancel()"
        case delete = "delete()"
        case
            discard = "discard()"
        case completes = "completes"
        case fails = "fails"
        case
            relaunch = "relaunched"
    }

    /// A library in a fresh folder whose lesson's second segment is held for an hour of the
    /// manual clock, and answers 404 after it when `failing`.
    struct Bench {
        let clock = ManualClock()
        let transport: InMemoryHTTPTransport<ManualClock>
        let folder: URL
        let lesson: ServedLesson
        let library: OfflineLibrary

        init(failing: Bool, holding: Bool) throws {
            transport = InMemoryHTTPTransport(clock: clock)
            lesson = try ServedLesson("packed-aac")
            lesson.serve(on: transport)
            let held = lesson.base.appendingPathComponent("seg1.aac")
            if failing {
                transport.stub(held, reply: .response(status: 404, latency: holding ? .seconds(3_600) : .zero))
            } else if holding {
                transport.stub(held, reply: .resource(lesson.files["seg1.aac"] ?? Data(), latency: .seconds(3_600)))
            }
            folder = temporaryFolder("offline-states")
            let downloader = MediaDownloader(
                engine: DownloadEngine(concurrency: 1, retry: .none, clock: clock, transport: transport))
            library = Self.library(in: folder, downloader)
        }

        static func library(in folder: URL, _ downloader: MediaDownloader<ManualClock>) -> OfflineLibrary {
            OfflineLibrary(directory: folder) { remote, destination in
                downloader.downloadLesson(from: remote, to: destination)
            }
        }

        /// A second library over the same folder, as the app has after it was killed and launched.
        func relaunched() -> OfflineLibrary {
            Self.library(
                in: folder,
                MediaDownloader(
                    engine: DownloadEngine(concurrency: 1, retry: .none, clock: clock, transport: transport)))
        }

        /// Starts the download and waits until its held segment is in flight.
        func startHeld() async throws {
            try await library.download(OfflineStatesFigureTests.id, from: lesson.entry)
            await clock.waitForSleepers(count: 1)
        }
    }

    /// The bench for `start`, with the item in that state.
    static func bench(_ start: Start) async throws -> Bench {
        switch start {
        case .notDownloaded:
            return try Bench(failing: false, holding: true)
        case .downloading, .paused, .cancelled:
            let bench = try Bench(failing: false, holding: true)
            try await bench.startHeld()
            if start == .paused { await bench.library.pause(id) }
            if start == .cancelled { await bench.library.cancel(id) }
            if start != .downloading { await bench.library.waitForDownload(id) }
            return bench
        case .downloadingToFail:
            let bench = try Bench(failing: true, holding: true)
            try await bench.startHeld()
            return bench
        case .failed:
            let bench = try Bench(failing: true, holding: false)
            try await bench.library.download(id, from: bench.lesson.entry)
            await bench.library.waitForDownload(id)
            return bench
        case .downloaded:
            let bench = try Bench(failing: false, holding: false)
            try await bench.library.download(id, from: bench.lesson.entry)
            await bench.library.waitForDownload(id)
            return bench
        }
    }

    /// The state `operation` leaves an item in that `start` brought into its state, or `nil`
    /// when the operation does not apply there (an outcome of a download not in flight) or is
    /// refused.
    static func outcome(of operation: Operation, from start: Start) async throws -> (
        from: String, to: String
    )? {
        let bench = try await bench(start)
        defer { try? FileManager.default.removeItem(at: bench.folder) }
        let library = bench.library
        let before = await library.state(of: id).caseName
        let isInFlight = start == .downloading || start == .downloadingToFail
        switch operation {
        case .download:
            do { try await library.download(id, from: bench.lesson.entry) } catch { return nil }
            // The state the moment the download starts, before any transfer.
            let after = await library.state(of: id).caseName
            await library.cancel(id)
            await library.waitForDownload(id)
            return (before, after)
        case .pause: await library.pause(id)
        case .cancel: await library.cancel(id)
        case .delete:
            do { try await library.delete(id) } catch { return nil }
        case .discard:
            do { try await library.discard(id) } catch { return nil }
        case .completes, .fails:
            guard isInFlight, (operation == .fails) == (start == .downloadingToFail) else { return nil }
            bench.clock.advance(by: .seconds(3_600))
        case .relaunch:
            // From every state: an app can be relaunched whatever its downloads are doing.
            let after = await bench.relaunched().state(of: id).caseName
            await library.cancel(id)
            await library.waitForDownload(id)
            return (before, after)
        }
        await library.waitForDownload(id)
        return (before, await library.state(of: id).caseName)
    }

    static func diagram() async throws -> StateDiagram {
        var diagram = StateDiagram(
            subject: "An offline item's",
            positions: [
                "notDownloaded": (78, 60), "downloaded": (338, 60), "downloading": (208, 250), "paused": (78, 440),
                "failed": (338, 440), "cancelled": (208, 560),
            ],
            initial: "notDownloaded"
        ) { $0.from == $0.to }
        // Removing the item leads back from nearly every state: written out, not drawn.
        diagram.isWrittenOut = { $0.to == "notDownloaded" }
        for start in Start.allCases {
            let tried = try await bench(start)
            diagram.tried(await tried.library.state(of: id).caseName)
            await tried.library.cancel(id)
            await tried.library.waitForDownload(id)
            try? FileManager.default.removeItem(at: tried.folder)
            for operation in Operation.allCases {
                guard let (from, to) = try await outcome(of: operation, from: start) else { continue }
                diagram.record(from: from, to: to, label: operation.rawValue)
            }
        }
        return diagram
    }

    @Test("offline-states.svg (light and dark) is what the library does in each state")
    func statesFigure() async throws {
        let problems = CommittedFigure.problems(
            try await Self.diagram().figure(), name: "offline-states", module: "OfflineLessons",
            article: "Sources/OfflineLessons/OfflineLessons.docc/DownloadingForOfflineUse.md")
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }
}
