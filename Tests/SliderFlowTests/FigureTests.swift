import Foundation
import HTTPSupport
import SliderFlow
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

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

    /// The kind of `event`. The switch is exhaustive: a new kind of event does not compile here
    /// until it is named, which is the reminder to try it in ``events(for:)`` too (Swift cannot
    /// list the cases of an enum with associated values).
    static func kind(_ event: Machine.Event) -> String {
        switch event {
        case .start: "start"
        case .startSucceeded: "startSucceeded"
        case .startFailed: "startFailed"
        case .select: "select"
        case .submit: "submit"
        case .submitSucceeded: "submitSucceeded"
        case .submitFailed: "submitFailed"
        case .cancel: "cancel"
        case .startOver: "startOver"
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

/// The article's protocol figure: a whole session between ``HTTPSliderService`` and the
/// reference server, recorded request by request and drawn as a sequence, so the figure shows
/// the bodies the service sends and the server answers today.
extension SliderFigureTests {
    /// A transport that records each request's path and body and each answer's body.
    actor Recorder: HTTPTransport {
        let server: SliderReferenceServer
        private(set) var exchanges: [(path: String, request: String, answer: String)] = []

        init(server: SliderReferenceServer) { self.server = server }

        func send(_ request: URLRequest) async throws -> (Data, URLResponse) {
            try await exchange(request)
        }

        private func exchange(_ request: URLRequest) async throws -> (Data, URLResponse) {
            let (data, response) = try await server.send(request)
            exchanges.append(
                (
                    request.url?.path ?? "", String(decoding: request.httpBody ?? Data(), as: UTF8.self),
                    String(decoding: data, as: UTF8.self)
                ))
            return (data, response)
        }

        func stream(_ request: URLRequest) async throws -> (URLResponse, HTTPBodyChunks) {
            let (data, response) = try await exchange(request)
            return (
                response,
                HTTPBodyChunks { continuation in
                    continuation.yield(data)
                    continuation.finish()
                }
            )
        }
    }

    /// `json` shortened for the figure: a long list of ticks keeps its first and last.
    static func shortened(_ json: String) -> String {
        guard let open = json.firstIndex(of: "["), let close = json[open...].firstIndex(of: "]") else { return json }
        let items = json[json.index(after: open)..<close].split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        guard items.count > 2, let first = items.first, let last = items.last else { return json }
        return String(json[...open]) + "\(first), …, \(last)" + String(json[close...])
    }

    /// A session of two steps with the learner choosing the tick at 8, then 3.
    static func recordedSession() async throws -> [(path: String, request: String, answer: String)] {
        let recorder = Recorder(server: SliderReferenceServer(stepsPerSession: 2, encoding: .object))
        let service = HTTPSliderService(
            baseURL: SliderReferenceServer.baseURL, timeout: loopbackDeadline, clock: ContinuousClock(),
            transport: recorder)
        guard case .step(let first) = try await service.start() else { return [] }
        guard case .step(let second) = try await service.next(after: first, choice: 8) else { return [] }
        _ = try await service.next(after: second, choice: 3)
        return await recorder.exchanges
    }

    static func protocolFigure() async throws -> SVGFigure {
        let exchanges = try await recordedSession()
        let rowHeight = 112.0
        let top = 44.0
        var figure = SVGFigure(
            width: 420, height: top + Double(exchanges.count) * rowHeight + 8,
            description:
                "A slider session on the wire: "
                + exchanges.map {
                    "the app posts \($0.request) to \($0.path), the server answers \(shortened($0.answer))"
                }
                .joined(separator: "; ") + ".")
        let app = 36.0
        let server = 384.0
        for (x, name) in [(app, "App"), (server, "Server")] {
            figure.text(name, x: x, y: 20, size: 13, anchor: "middle", bold: true)
            figure.line(from: (x, 28), to: (x, top + Double(exchanges.count) * rowHeight), ink: .muted, dashed: true)
        }
        for (index, exchange) in exchanges.enumerated() {
            let y = top + Double(index) * rowHeight
            figure.text("POST \(exchange.path)", x: app + 8, y: y + 14, size: 12, ink: .accent, bold: true)
            figure.text(exchange.request, x: app + 8, y: y + 30, size: 12, ink: .text)
            figure.line(from: (app, y + 38), to: (server, y + 38), ink: .accent, arrow: true)
            let answer = StateDiagram.wrapped(shortened(exchange.answer), width: server - app - 16, size: 12)
            for (line, text) in answer.enumerated() {
                figure.text(text, x: server - 8, y: y + 58 + Double(line) * 16, size: 12, ink: .text, anchor: "end")
            }
            let arrowY = y + 66 + Double(answer.count - 1) * 16
            figure.line(from: (server, arrowY), to: (app, arrowY), ink: .highlight, arrow: true)
        }
        return figure
    }

    @Test("session-protocol.svg (light and dark) is a session the service and the reference server run today")
    func protocolFigureIsCommitted() async throws {
        let problems = CommittedFigure.problems(
            try await Self.protocolFigure(), name: "session-protocol", module: "SliderFlow",
            article: "Sources/SliderFlow/SliderFlow.docc/RunningASliderSession.md")
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }
}
