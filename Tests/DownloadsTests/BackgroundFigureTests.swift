import Foundation
import HTTPSupport
import OfflineLessonsTesting
import TestSupport
import Testing

@testable import Downloads
@testable import OfflineLessons

/// The article *Downloading in the background* shows one lesson's download from a simulated
/// run: the foreground part, the hand-over, the tasks that end while no process of the app
/// runs, the relaunch and the run that reads what they brought. Every number in the figure is
/// what the run counted.
@Suite("The background download figure")
struct BackgroundFigureTests {
    /// What the run counted.
    struct Counts: Equatable {
        var segments = 0
        var doneInForeground = 0
        var handedParts = 0
        var tasks = 0
        var stagedWhileAway = 0
        var eventsAtRelaunch = 0
        var handlerAfterEvents = false
        var partsFromNetworkAtLastRun = 0
        var identical = false
    }

    /// Runs the lesson `disc-encoders` (four segments of two encoders) through the library:
    /// one transfer at a time, paused with its third segment in flight.
    func run() async throws -> Counts {
        let lesson = try ServedLesson("disc-encoders")
        let reference = try await BackgroundLibraryTests().reference(lesson, concurrency: 1)
        var counts = Counts(segments: reference.order.count)
        let scenario = BackgroundLibraryTests.Scenario(lesson, holding: reference.order[2], concurrency: 1)
        let first = scenario.launch()
        try await first.library.download("lesson", from: lesson.entry)
        await scenario.clock.waitForSleepers(count: 1)
        // The two segments before the held one are remuxed before it is asked for.
        let library = first.library
        _ = await BackgroundLibraryTests().eventually {
            await (library.progress(of: "lesson")?.partsCompleted ?? 0) >= 2
        }
        counts.doneInForeground = await library.progress(of: "lesson")?.partsCompleted ?? 0
        #expect(await first.library.continueInBackground() == ["lesson"])
        let labels = scenario.daemon.running
        counts.tasks = labels.count
        counts.handedParts = labels.compactMap { BackgroundTaskLabel(parsing: $0)?.parts.count }.reduce(0, +)
        scenario.daemon.killApp()
        for label in labels { try await scenario.daemon.complete(label) }
        counts.stagedWhileAway = labels.count
        let atRelaunch = scenario.transport.requests.count

        let second = scenario.launch()
        _ = try await second.library.load()
        let transfers = try #require(second.library.background)
        await second.library.handleBackgroundEvents()
        // The handler's turn comes only once every event is recorded: nothing is left to stage.
        counts.handlerAfterEvents = await transfers.handovers.allSatisfy { $0.requests.isEmpty }
        counts.eventsAtRelaunch = labels.count
        let state = await BackgroundLibraryTests().end(of: second.library)
        guard case .downloaded? = state, let file = await second.library.localFile(of: "lesson") else {
            Issue.record("the lesson ended \(String(describing: state))")
            return counts
        }
        counts.partsFromNetworkAtLastRun = scenario.transport.requests[atRelaunch...].compactMap(lesson.key(of:)).count
        counts.identical = try Data(contentsOf: file) == reference.bytes
        return counts
    }

    static func description(_ counts: Counts) -> String {
        "One lesson of \(counts.segments) segments downloaded through the background, from top to bottom: "
            + "in the foreground, \(counts.doneInForeground) segments fetched and remuxed; "
            + "as the app leaves the foreground, \(counts.handedParts) parts handed over in \(counts.tasks) tasks; "
            + "with no process of the app running, \(counts.stagedWhileAway) bodies staged by the system; "
            + "relaunched in the background, \(counts.eventsAtRelaunch) events recorded, then the system's handler called; "
            + "the download run again, \(counts.partsFromNetworkAtLastRun) parts from the network, "
            + (counts.identical
                ? "the same bytes as an uninterrupted download." : "other bytes than an uninterrupted download.")
    }

    static func figure(_ counts: Counts) -> SVGFigure {
        let stages: [(process: String, title: String, detail: String)] = [
            ("app", "Foreground", "\(counts.doneInForeground) of \(counts.segments) segments fetched, remuxed"),
            ("app", "Hand-over", "\(counts.handedParts) parts in \(counts.tasks) tasks, one batch"),
            ("system", "App not running", "\(counts.stagedWhileAway) bodies moved beside the lesson"),
            ("relaunch", "Relaunch", "\(counts.eventsAtRelaunch) events recorded, then the handler"),
            (
                "relaunch", "Run again",
                "\(counts.partsFromNetworkAtLastRun) parts from the network; "
                    + (counts.identical ? "same bytes" : "other bytes")
            ),
        ]
        let rowHeight = 50.0
        let top = 10.0
        var figure = SVGFigure(
            width: 420, height: top + Double(stages.count) * rowHeight, description: description(counts))
        for (index, stage) in stages.enumerated() {
            let y = top + Double(index) * rowHeight
            let away = stage.process == "system"
            figure.rect(
                x: 26, y: y, width: 120, height: 32, radius: 6, fill: away ? .background : .surface,
                stroke: away ? .muted : .accent)
            figure.text(stage.title, x: 86, y: y + 21, size: 13, anchor: "middle", bold: true)
            figure.text(stage.detail, x: 156, y: y + 21, size: 12)
            if index + 1 < stages.count {
                figure.line(from: (86, y + 32), to: (86, y + rowHeight), ink: .text, width: 1.25, arrow: true)
            }
        }
        // The app's two processes, beside their stages.
        figure.line(from: (12, top), to: (12, top + 2 * rowHeight - 18), ink: .accent, width: 3)
        figure.line(from: (12, top + 3 * rowHeight), to: (12, top + 5 * rowHeight - 18), ink: .accent, width: 3)
        return figure
    }

    @Test("the figure is drawn from a simulated run, committed, and shown in the article")
    func backgroundFigure() async throws {
        let counts = try await run()
        #expect(counts.doneInForeground == 2)
        #expect(counts.partsFromNetworkAtLastRun == 0)
        #expect(counts.identical)
        #expect(counts.handlerAfterEvents)
        let problems = CommittedFigure.problems(
            Self.figure(counts), name: "background-run", module: "OfflineLessons",
            article: "Sources/OfflineLessons/OfflineLessons.docc/DownloadingInTheBackground.md")
        #expect(problems.isEmpty, "\(problems)")
    }
}
