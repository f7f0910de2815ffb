import Foundation
import HTTPSupport
import SliderFlow
import TestSupport
import Testing

@Suite("SliderSessionMachine")
struct SliderSessionMachineTests {
    typealias Machine = SliderSessionMachine
    static let step1 = SliderStep(sessionID: 5, stepCount: 1, ticks: [10, 20, 30, 40])
    static let step2 = SliderStep(sessionID: 5, stepCount: 2, ticks: [1, 2])

    /// A machine driven to the choosing state of step 1; returns it with the start request.
    func choosing() -> Machine {
        var machine = Machine()
        guard let start = request(of: machine.handle(.start)) else { return machine }
        machine.handle(.startSucceeded(.step(Self.step1), start))
        return machine
    }

    func request(of transition: Machine.Transition) -> Machine.RequestID? {
        guard case .accepted(let effects) = transition else { return nil }
        for effect in effects {
            switch effect {
            case .startSession(let request), .submitChoice(_, _, let request): return request
            case .cancelRequest: continue
            }
        }
        return nil
    }

    @Test("a step without ticks cannot be submitted: a typed error on the step, and no request")
    func submitWithoutTicks() throws {
        var machine = Machine()
        let start = try #require(request(of: machine.handle(.start)))
        machine.handle(.startSucceeded(.step(SliderStep(sessionID: 5, stepCount: 1, ticks: [])), start))
        #expect(machine.handle(.submit) == .accepted([]))
        guard case .choosing(let choosing) = machine.state else {
            Issue.record("\(machine.state)")
            return
        }
        #expect(choosing.error == SliderServiceError(.invalidChoice(0, tickCount: 0)))
    }

    @Test("a whole session: start, choose, submit, next step, complete, start over")
    func happyPath() throws {
        var machine = Machine()
        let start = try #require(request(of: machine.handle(.start)))
        #expect(machine.state == .starting(start))
        machine.handle(.startSucceeded(.step(Self.step1), start))
        #expect(machine.state.choosing?.selectedIndex == 2)
        machine.handle(.select(3))
        let submit = try #require(request(of: machine.handle(.submit)))
        #expect(machine.state.isBusy)
        machine.handle(.submitSucceeded(.step(Self.step2), submit))
        #expect(machine.state.choosing?.step == Self.step2)
        machine.handle(.select(0))
        let last = try #require(request(of: machine.handle(.submit)))
        machine.handle(.submitSucceeded(.complete(sessionID: 5), last))
        #expect(
            machine.state
                == .finished(
                    sessionID: 5,
                    choices: [.init(stepCount: 1, index: 3, value: 40), .init(stepCount: 2, index: 0, value: 1)]))
        #expect(machine.handle(.startOver) == .accepted([]))
        #expect(machine.state == .idle(error: nil))
    }

    @Test("the submitted choice is the selected index, for the step's session")
    func submitEffect() throws {
        var machine = choosing()
        machine.handle(.select(1))
        guard case .accepted(let effects) = machine.handle(.submit) else {
            Issue.record("submit rejected")
            return
        }
        let submitted = try #require(request(of: .accepted(effects)))
        #expect(effects == [.submitChoice(sessionID: 5, choice: 1, submitted)])
    }

    @Test("the selection is clamped to the ticks", arguments: [(-3, 0), (0, 0), (3, 3), (4, 3), (Int.max, 3)])
    func clamping(requested: Int, selected: Int) {
        var machine = choosing()
        machine.handle(.select(requested))
        #expect(machine.state.choosing?.selectedIndex == selected)
    }

    @Test("a server error while submitting keeps the selection and allows a retry")
    func submitFailure() throws {
        var machine = choosing()
        machine.handle(.select(1))
        let first = try #require(request(of: machine.handle(.submit)))
        machine.handle(.submitFailed(SliderServiceError(.timedOut), first))
        #expect(machine.state.choosing?.selectedIndex == 1)
        #expect(machine.state.choosing?.error == SliderServiceError(.timedOut))
        let retry = try #require(request(of: machine.handle(.submit)))
        #expect(retry > first)
        #expect(machine.state.choosing?.error == nil)
    }

    @Test("a failed start returns to idle with the error; starting again is possible")
    func startFailure() throws {
        var machine = Machine()
        let start = try #require(request(of: machine.handle(.start)))
        let offline = SliderServiceError(
            .transport(
                HTTPTransportError(.network(URLError(.notConnectedToInternet)), url: URL(string: "https://s.example"))))
        machine.handle(.startFailed(offline, start))
        #expect(machine.state == .idle(error: offline))
        #expect(request(of: machine.handle(.start)) != nil)
    }

    @Test("cancelling or starting over mid-request drops the late response")
    func lateResponses() throws {
        var machine = choosing()
        let submit = try #require(request(of: machine.handle(.submit)))
        #expect(machine.handle(.cancel) == .accepted([.cancelRequest(submit)]))
        let before = machine.state
        #expect(machine.handle(.submitSucceeded(.step(Self.step2), submit)) == .rejected(.staleResponse(submit)))
        #expect(machine.state == before)

        let again = try #require(request(of: machine.handle(.submit)))
        #expect(machine.handle(.startOver) == .accepted([.cancelRequest(again)]))
        #expect(machine.handle(.submitFailed(SliderServiceError(.timedOut), again)) == .rejected(.staleResponse(again)))
        #expect(machine.state == .idle(error: nil))

        let start = try #require(request(of: machine.handle(.start)))
        machine.handle(.cancel)
        #expect(machine.handle(.startSucceeded(.step(Self.step1), start)) == .rejected(.staleResponse(start)))
        #expect(machine.state == .idle(error: nil))
    }

    @Test("a reply for another session is refused and the user can retry")
    func wrongSession() throws {
        var machine = choosing()
        let submit = try #require(request(of: machine.handle(.submit)))
        machine.handle(.submitSucceeded(.step(SliderStep(sessionID: 6, stepCount: 2, ticks: [1])), submit))
        let choosing = try #require(machine.state.choosing)
        #expect(choosing.step == Self.step1)
        #expect(choosing.error != nil)
        #expect(choosing.history.isEmpty)
    }

    @Test(
        "events that do not apply are rejected and change nothing",
        arguments: [Machine.Event.submit, .select(2), .cancel]
    )
    func notApplicableWhenIdle(event: Machine.Event) {
        var machine = Machine()
        #expect(machine.handle(event) == .rejected(.notApplicable(event: event, state: .idle(error: nil))))
        #expect(machine.state == .idle(error: nil))
    }

    @Test("a session complete before any step finishes with an empty summary")
    func immediateCompletion() throws {
        var machine = Machine()
        let start = try #require(request(of: machine.handle(.start)))
        machine.handle(.startSucceeded(.complete(sessionID: 8), start))
        #expect(machine.state == .finished(sessionID: 8, choices: []))
    }

    /// Random user actions and random (often stale) server results, for 2,000 seeds: the
    /// machine never traps, rejected events never change the state, and its invariants hold.
    @Test("any sequence of events keeps the invariants")
    func invariants() {
        for seed in UInt64(0)..<2_000 {
            var generator = SplitMix64(seed: seed)
            var machine = Machine()
            var issued: [Machine.RequestID] = []
            for _ in 0..<60 {
                let event = Self.randomEvent(issued: issued, using: &generator)
                let before = machine.state
                let transition = machine.handle(event)
                switch transition {
                case .rejected:
                    #expect(machine.state == before, "seed \(seed): \(event)")
                case .accepted(let effects):
                    for effect in effects {
                        switch effect {
                        case .startSession(let request), .submitChoice(_, _, let request): issued.append(request)
                        case .cancelRequest: break
                        }
                    }
                }
                Self.checkInvariants(machine.state, seed: seed)
            }
        }
    }

    static func randomEvent(issued: [Machine.RequestID], using generator: inout SplitMix64) -> Machine.Event {
        let request = issued.isEmpty ? nil : issued[Int.random(in: 0..<issued.count, using: &generator)]
        let session = Int.random(in: 4...6, using: &generator)
        let ticks = (0..<Int.random(in: 1...5, using: &generator)).map { Double($0) }
        let reply: SliderReply =
            Bool.random(using: &generator)
            ? .step(SliderStep(sessionID: session, stepCount: Int.random(in: 1...9, using: &generator), ticks: ticks))
            : .complete(sessionID: session)
        switch Int.random(in: 0..<9, using: &generator) {
        case 0: return .start
        case 1: return .select(Int.random(in: -2...7, using: &generator))
        case 2: return .submit
        case 3: return .cancel
        case 4: return .startOver
        case 5: return request.map { .startSucceeded(reply, $0) } ?? .start
        case 6: return request.map { .startFailed(SliderServiceError(.timedOut), $0) } ?? .submit
        case 7: return request.map { .submitSucceeded(reply, $0) } ?? .cancel
        default:
            return request.map { .submitFailed(SliderServiceError(.httpStatus(500, bodyPreview: "")), $0) }
                ?? .startOver
        }
    }

    static func checkInvariants(_ state: Machine.State, seed: UInt64) {
        if let choosing = state.choosing {
            #expect(choosing.step.ticks.indices.contains(choosing.selectedIndex), "seed \(seed)")
            #expect(choosing.selectedValue != nil, "seed \(seed)")
        }
        switch state {
        case .starting, .submitting: #expect(state.isBusy, "seed \(seed)")
        case .idle, .choosing, .finished: #expect(!state.isBusy, "seed \(seed)")
        }
    }
}
