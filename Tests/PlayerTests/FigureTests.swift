import Downloads
import Foundation
import Player
import TestSupport
import Testing

/// The article *The audio circle* shows the machine's states and transitions as a figure drawn
/// from the machine itself: every event is tried in every state, and each accepted one is an
/// arrow, so a new transition appears in the figure (and fails this test until it is committed).
@Suite("Figures of the Player catalog")
struct PlayerFigureTests {
    typealias Machine = CirclePlayerMachine

    static let file = URL(fileURLWithPath: "/lessons/salsa.m4a")
    static let error = PlayerError(.fetchFailed(DownloadFailure(category: .offline, message: "offline")))

    /// One machine in each state, reached by the events a learner and the fetcher produce.
    static var machines: [Machine] {
        var idle = Machine()
        var fetching = idle
        _ = fetching.handle(.tap)
        var playing = fetching
        if case .fetching(let id, _) = fetching.state { _ = playing.handle(.fetchFinished(id, file: file)) }
        var paused = playing
        _ = paused.handle(.tap)
        var completed = playing
        _ = completed.handle(.playbackEnded)
        var discarding = playing
        _ = discarding.handle(.playbackFailed(PlayerError(.unplayable(message: "bad"))))
        _ = idle.handle(.exit)
        return [idle, fetching, playing, paused, completed, discarding]
    }

    static func name(_ state: Machine.State) -> String {
        switch state {
        case .uninitialized: "uninitialized"
        case .fetching: "fetching"
        case .playing: "playing"
        case .paused: "paused"
        case .completed: "completed"
        case .discarding: "discarding"
        }
    }

    /// An event's name in the figure. The switch is exhaustive: a new kind of event does not
    /// compile here until it is named, which is the reminder to try it in ``events(for:)`` too
    /// (Swift cannot list the cases of an enum with associated values).
    static func name(_ event: Machine.Event) -> String {
        switch event {
        case .tap: "tap"
        case .exit: "exit"
        case .fetchProgressed: "progress"
        case .fetchFinished: "finished"
        case .fetchFailed: "failed"
        case .playbackEnded: "ended"
        case .playbackFailed: "unplayable"
        case .cacheDeleted: "cache deleted"
        case .cacheDeletionFailed: "deletion failed"
        }
    }

    /// Every kind of event, with the fetch the machine is on (a stale fetch is rejected, never
    /// drawn), each named by ``name(_:)``.
    static func events(for machine: Machine) -> [(String, Machine.Event)] {
        let id: Machine.FetchID
        if case .fetching(let current, _) = machine.state { id = current } else { id = .init(rawValue: 1) }
        let events: [Machine.Event] = [
            .tap, .exit, .fetchProgressed(id, fraction: 0.5), .fetchFinished(id, file: file), .fetchFailed(id, error),
            .playbackEnded, .playbackFailed(error), .cacheDeleted, .cacheDeletionFailed(error),
        ]
        return events.map { (name($0), $0) }
    }

    static func name(_ effect: Machine.Effect) -> String {
        switch effect {
        case .startFetch: "startFetch"
        case .cancelFetch: "cancelFetch"
        case .play: "play"
        case .pause: "pause"
        case .resume: "resume"
        case .stop: "stop"
        case .deleteCachedFile: "delete file"
        }
    }

    /// The diagram: every event tried in every state, each accepted one recorded as
    /// "event / effects" between the two states' names.
    static var diagram: StateDiagram {
        var diagram = StateDiagram(
            subject: "The audio circle's",
            positions: [
                "uninitialized": (78, 60), "fetching": (338, 60), "playing": (338, 250), "paused": (338, 480),
                "completed": (180, 360), "discarding": (78, 520),
            ],
            initial: "uninitialized",
            // An event accepted with nothing to do is listed in a note, not drawn.
            isQuiet: { $0.from == $0.to && $0.labels.allSatisfy { !$0.contains("/") } && $0.labels != ["progress"] })
        for machine in machines {
            diagram.tried(name(machine.state))
            for (label, event) in events(for: machine) {
                var copy = machine
                guard case .accepted(let effects) = copy.handle(event) else { continue }
                diagram.record(
                    from: name(machine.state), to: name(copy.state), event: label, effects: effects.map(name))
            }
        }
        return diagram
    }

    /// The accepted transitions, by (from, to), each labelled "event / effects".
    static var transitions: [StateDiagram.Transition] { diagram.transitions }

    @Test("circle-states.svg (light and dark) is the machine's own transition table")
    func stateDiagramFigure() throws {
        let problems = CommittedFigure.problems(
            try Self.diagram.figure(), name: "circle-states", module: "Player",
            article: "Sources/Player/Player.docc/TheAudioCircle.md")
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    @Test("the figure draws every transition the article's table lists")
    func everyTransition() {
        let pairs = Set(Self.transitions.map { "\($0.from)→\($0.to)" })
        for expected in [
            "uninitialized→fetching", "fetching→fetching", "fetching→uninitialized", "fetching→playing",
            "playing→paused", "paused→playing", "playing→completed", "paused→completed", "playing→discarding",
            "completed→uninitialized", "discarding→uninitialized",
        ] {
            #expect(pairs.contains(expected), "\(expected) missing from \(pairs.sorted())")
        }
    }
}
