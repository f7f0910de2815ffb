import Foundation
import HTTPSupport
import TestSupport
import Testing

@testable import Downloads
@testable import OfflineLessons

/// The article *Keeping a course offline* shows a queued lesson's states as a figure drawn from
/// the queue's own decisions: a lesson is brought into each state by the planner's inputs, every
/// event is tried there (the network, the storage, the quota, a turn, the learner, the
/// download's end), and each state the planner then gives is an arrow.
@Suite("A queued lesson's states, drawn from the queue's decisions")
struct QueueStatesFigureTests {
    /// The planner's inputs around lesson `x`, with one other lesson before it.
    struct World {
        var lessons = [
            QueuedLesson(
                id: "other", remoteURL: URL(literal: "https://lessons.example/other.m3u8"),
                estimate: DownloadEstimate(bytes: 100, basis: .byteRanges)),
            QueuedLesson(
                id: "x", remoteURL: URL(literal: "https://lessons.example/x.m3u8"),
                estimate: DownloadEstimate(bytes: 100, basis: .byteRanges)),
        ]
        var library: [String: OfflineLibrary.ItemState] = ["other": .downloaded(fileName: "other.mp4", byteCount: 100)]
        var conditions = QueuePlanner.Conditions(network: .unmetered, freeBytes: 1 << 40, usedBytes: 100)
        var requirements = DownloadRequirements(network: .notExpensive, reserveBytes: 0)
        var retrying: Set<String> = []

        /// Lesson `x`'s state as the planner decides it.
        var state: String {
            let decision = QueuePlanner.plan(
                lessons, library: library, conditions: conditions, requirements: requirements, concurrency: 1,
                retrying: retrying)
            switch decision.states["x"] {
            case .waiting(.turn)?: return "in line"
            case .waiting(.network)?: return "no Wi-Fi"
            case .waiting(.storage)?: return "no space"
            case .waiting(.quota)?: return "over quota"
            case .waiting(.pausedByLearner)?: return "paused"
            case .downloading?: return "downloading"
            case .downloaded?: return "downloaded"
            case .failed?: return "failed"
            case nil: return "?"
            }
        }

        /// The library as the queue's decision leaves it: what starts is downloading.
        mutating func settle() {
            let decision = QueuePlanner.plan(
                lessons, library: library, conditions: conditions, requirements: requirements, concurrency: 1,
                retrying: retrying)
            for id in decision.start { library[id] = .downloading(fraction: 0) }
            for id in decision.stop { library[id] = .paused }
        }
    }

    static let failure = DownloadFailure(DownloadError(.httpStatus(500)))

    /// A world whose lesson `x` is in each state.
    static func starts() -> [World] {
        var turn = World()
        turn.library["other"] = .downloading(fraction: 0.5)
        var network = World()
        network.conditions.network = .cellular
        var space = World()
        space.conditions.freeBytes = 50
        var quota = World()
        quota.requirements.quotaBytes = 150
        var paused = World()
        paused.lessons[1].isPausedByLearner = true
        var downloading = World()
        downloading.library["x"] = .downloading(fraction: 0.3)
        var downloaded = World()
        downloaded.library["x"] = .downloaded(fileName: "x.mp4", byteCount: 100)
        var failed = World()
        failed.library["x"] = .failed(failure)
        return [turn, network, space, quota, paused, downloading, downloaded, failed]
    }

    /// Each event, as what it changes in a world; `nil` where it cannot happen.
    static let events: [(String, @Sendable (World) -> World?)] = [
        (
            "on cellular",
            { world in
                var next = world
                next.conditions.network = .cellular
                return next
            }
        ),
        (
            "on Wi-Fi",
            { world in
                var next = world
                next.conditions.network = .unmetered
                return next
            }
        ),
        (
            "space freed",
            { world in
                var next = world
                next.conditions.freeBytes = 1 << 40
                return next
            }
        ),
        (
            "quota raised",
            { world in
                var next = world
                next.requirements.quotaBytes = nil
                return next
            }
        ),
        (
            "its turn",
            { world in
                guard case .downloading? = world.library["other"] else { return nil }
                var next = world
                next.library["other"] = .downloaded(fileName: "other.mp4", byteCount: 100)
                return next
            }
        ),
        (
            "pause()",
            { world in
                var next = world
                next.lessons[1].isPausedByLearner = true
                return next
            }
        ),
        (
            "resume()",
            { world in
                var next = world
                next.lessons[1].isPausedByLearner = false
                if case .failed? = world.library["x"] { next.retrying.insert("x") }
                return next
            }
        ),
        (
            "completes",
            { world in
                guard case .downloading? = world.library["x"] else { return nil }
                var next = world
                next.library["x"] = .downloaded(fileName: "x.mp4", byteCount: 100)
                return next
            }
        ),
        (
            "fails",
            { world in
                guard case .downloading? = world.library["x"] else { return nil }
                var next = world
                next.library["x"] = .failed(failure)
                return next
            }
        ),
    ]

    static func diagram() -> StateDiagram {
        var diagram = StateDiagram(
            subject: "A queued lesson's",
            positions: [
                "in line": (75, 60), "no Wi-Fi": (345, 60), "no space": (75, 250), "downloading": (210, 250),
                "over quota": (345, 250), "paused": (75, 440), "failed": (210, 500), "downloaded": (345, 440),
            ],
            initial: "in line"
        ) { $0.from == $0.to }
        // The learner's pause and the loss of Wi-Fi lead there from nearly every state: written
        // out below the diagram, not drawn.
        diagram.isWrittenOut = { $0.to == "paused" || $0.to == "no Wi-Fi" }
        for var start in starts() {
            start.settle()
            let from = start.state
            diagram.tried(from)
            for (label, event) in events {
                guard var next = event(start) else { continue }
                next.settle()
                diagram.record(from: from, to: next.state, label: label)
            }
        }
        return diagram
    }

    @Test("each start is the state it is meant to be, and every state is reached")
    func starts() {
        let names = Self.starts().map { world -> String in
            var settled = world
            settled.settle()
            return settled.state
        }
        #expect(
            names == [
                "in line", "no Wi-Fi", "no space", "over quota", "paused",
                "downloading", "downloaded", "failed",
            ])
    }

    @Test("queue-states.svg (light and dark) is what the queue decides in each state")
    func statesFigure() throws {
        let problems = CommittedFigure.problems(
            try Self.diagram().figure(), name: "queue-states", module: "OfflineLessons",
            article: "Sources/OfflineLessons/OfflineLessons.docc/KeepingACourseOffline.md")
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }
}
