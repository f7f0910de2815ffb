import Foundation
import SliderFlow
import TestSupport
import Testing

/// The article *Running a slider session* shows the session machine's states and transitions as
/// a figure drawn from the machine itself: every event is tried in every state, and each accepted
/// one is an arrow, so a new transition appears in the figure (and fails this test until it is
/// committed).
@Suite("Figures of the SliderFlow catalog")
struct SliderFigureTests {
    typealias Machine = SliderSessionMachine

    static let step = SliderStep(sessionID: 7, stepCount: 1, ticks: [-3, 0, 3])
    static let error = SliderServiceError(.server(message: "busy"))

    /// One machine in each state (choosing twice: with ticks, and with none to choose from),
    /// reached by the events a learner and the service produce.
    static var machines: [Machine] {
        let idle = Machine()
        var starting = idle
        _ = starting.handle(.start)
        var choosing = starting
        if case .starting(let request) = starting.state { _ = choosing.handle(.startSucceeded(.step(step), request)) }
        var noTicks = starting
        if case .starting(let request) = starting.state {
            _ = noTicks.handle(.startSucceeded(.step(SliderStep(sessionID: 7, stepCount: 1, ticks: [])), request))
        }
        var submitting = choosing
        _ = submitting.handle(.submit)
        var finished = submitting
        if case .submitting(_, let request) = submitting.state {
            _ = finished.handle(.submitSucceeded(.complete(sessionID: 7), request))
        }
        return [idle, starting, choosing, noTicks, submitting, finished]
    }

    static func name(_ state: Machine.State) -> String {
        switch state {
        case .idle: "idle"
        case .starting: "starting"
        case .choosing: "choosing"
        case .submitting: "submitting"
        case .finished: "finished"
        }
    }

    static func name(_ effect: Machine.Effect) -> String {
        switch effect {
        case .startSession: "startSession"
        case .submitChoice: "submitChoice"
        case .cancelRequest: "cancelRequest"
        }
    }

    /// Every event, answering the request the machine awaits (a stale answer is rejected, never
    /// drawn); a choice with no ticks to choose from is named apart.
    static func events(for machine: Machine) -> [(String, Machine.Event)] {
        // A state that awaits nothing gets an answer to some request (it is rejected).
        var other = Machine()
        _ = other.handle(.start)
        guard case .starting(var request) = other.state else { return [] }
        if case .starting(let awaited) = machine.state { request = awaited }
        if case .submitting(_, let awaited) = machine.state { request = awaited }
        var submit = "submit"
        if case .choosing(let choosing) = machine.state, choosing.step.ticks.isEmpty { submit = "submit, no ticks" }
        return [
            ("start", .start), ("step", .startSucceeded(.step(step), request)),
            ("complete", .startSucceeded(.complete(sessionID: 7), request)), ("failed", .startFailed(error, request)),
            ("select", .select(2)), (submit, .submit), ("next step", .submitSucceeded(.step(step), request)),
            ("complete", .submitSucceeded(.complete(sessionID: 7), request)),
            ("other session", .submitSucceeded(.complete(sessionID: 8), request)),
            ("failed", .submitFailed(error, request)), ("cancel", .cancel), ("start over", .startOver),
        ]
    }

    static var diagram: StateDiagram {
        var diagram = StateDiagram(
            subject: "The slider session's",
            positions: [
                "idle": (78, 60), "starting": (338, 60), "choosing": (338, 280), "finished": (78, 280),
                "submitting": (250, 480),
            ],
            initial: "idle",
            isQuiet: { $0.from == $0.to && $0.labels == ["start over"] })
        for machine in machines {
            for (label, event) in events(for: machine) {
                var copy = machine
                guard case .accepted(let effects) = copy.handle(event) else { continue }
                diagram.record(
                    from: name(machine.state), to: name(copy.state),
                    label: effects.isEmpty ? label : label + " / " + effects.map(name).joined(separator: ", "))
            }
        }
        return diagram
    }

    @Test("session-states.svg (light and dark) is the machine's own transition table")
    func stateDiagramFigure() throws {
        let problems = CommittedFigure.problems(
            try Self.diagram.figure(), name: "session-states", module: "SliderFlow",
            article: "Sources/SliderFlow/SliderFlow.docc/RunningASliderSession.md")
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    @Test("the figure draws the session's way through: start, a step to choose on, a choice sent, finished, and back")
    func everyTransition() {
        let pairs = Set(Self.diagram.transitions.map { "\($0.from)→\($0.to)" })
        for expected in [
            "idle→starting", "starting→choosing", "starting→finished", "starting→idle", "choosing→choosing",
            "choosing→submitting", "submitting→choosing", "submitting→finished", "submitting→idle",
            "finished→starting", "finished→idle", "choosing→idle",
        ] {
            #expect(pairs.contains(expected), "\(expected) missing from \(pairs.sorted())")
        }
    }
}
