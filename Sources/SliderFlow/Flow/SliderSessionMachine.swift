/// The slider session's flow as a pure state machine: `(state, event) → (state, [effect])`.
///
/// ```text
/// idle ──start──▶ starting ──reply──▶ choosing(step, selection) ──next──▶ submitting
///   ▲                │ failure             ▲            │                    │
///   │                ▼                     │            └──── failure ◀──────┤ (selection kept)
///   └─────────── idle(error)               └───────── next step ◀────────────┤
///   ▲                                                                        ▼
///   └──────────────── start over ◀────────────── finished(summary) ◀──── complete
/// ```
///
/// The machine never performs anything: it returns ``Effect``s (start a request, submit a
/// choice, cancel a request) for its owner to carry out, and the owner reports each result back
/// as an event tagged with the request's ``RequestID``. A result for any other request (one
/// cancelled, or superseded by starting over) is rejected and changes nothing. Every event is
/// handled in every state: one that does not apply yields a typed ``Rejection``, never a trap.
public struct SliderSessionMachine: Sendable, Hashable {
    /// Identifies one request, so that a late answer to an abandoned request is recognised.
    public struct RequestID: Sendable, Hashable, Comparable, CustomStringConvertible {
        /// The request's sequence number in this machine.
        public let rawValue: Int

        /// Whether `lhs` was issued before `rhs`.
        public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

        /// `#3`.
        public var description: String { "#\(rawValue)" }
    }

    /// One submitted choice, for the summary.
    public struct Choice: Sendable, Hashable {
        /// The step number the server gave (1 for the first step).
        public var stepCount: Int
        /// The chosen tick's index.
        public var index: Int
        /// The chosen tick's value, exactly as the server sent it.
        public var value: Double

        /// Creates a summary row.
        public init(stepCount: Int, index: Int, value: Double) {
            self.stepCount = stepCount
            self.index = index
            self.value = value
        }
    }

    /// The user's place in a step: the ticks offered and the tick selected.
    public struct Choosing: Sendable, Hashable {
        /// The step being answered.
        public var step: SliderStep
        /// The selected tick's index; always a valid index of `step.ticks`.
        public private(set) var selectedIndex: Int
        /// The choices submitted so far in this session.
        public var history: [Choice]
        /// Why the last submission failed, if it did; the selection is kept for a retry.
        public var error: SliderServiceError?

        /// Creates the choosing state for `step`, selecting the middle tick.
        public init(step: SliderStep, history: [Choice] = [], error: SliderServiceError? = nil) {
            self.step = step
            self.selectedIndex = step.ticks.count / 2
            self.history = history
            self.error = error
        }

        /// The selected tick's value.
        public var selectedValue: Double? {
            step.ticks.indices.contains(selectedIndex) ? step.ticks[selectedIndex] : nil
        }

        /// Selects `index`, clamped to the ticks.
        mutating func select(_ index: Int) {
            selectedIndex = Swift.min(Swift.max(index, 0), Swift.max(step.ticks.count - 1, 0))
        }
    }

    /// Where the session is.
    public enum State: Sendable, Hashable {
        /// No session; `error` says why the last start failed, if it did.
        case idle(error: SliderServiceError?)
        /// Waiting for the first step.
        case starting(RequestID)
        /// Showing a step; the user moves the slider.
        case choosing(Choosing)
        /// Waiting for the server to take the selected choice.
        case submitting(Choosing, RequestID)
        /// The session is over; the summary lists every choice.
        case finished(sessionID: Int, choices: [Choice])
    }

    /// Something that happened: a user action or a request's result.
    public enum Event: Sendable, Hashable {
        /// The user asked to start a session.
        case start
        /// The first step arrived for `request`.
        case startSucceeded(SliderReply, RequestID)
        /// Starting failed for `request`.
        case startFailed(SliderServiceError, RequestID)
        /// The user moved the slider to `index` (clamped to the ticks).
        case select(Int)
        /// The user submitted the selected tick.
        case submit
        /// The server took the choice sent by `request` and replied.
        case submitSucceeded(SliderReply, RequestID)
        /// Submitting failed for `request`.
        case submitFailed(SliderServiceError, RequestID)
        /// The user cancelled the request in flight.
        case cancel
        /// The user asked to start over: back to idle, whatever was happening.
        case startOver
    }

    /// Work for the machine's owner to carry out.
    public enum Effect: Sendable, Hashable {
        /// Start a session; report the result tagged with the request id.
        case startSession(RequestID)
        /// Submit `choice` for `sessionID`; report the result tagged with the request id.
        case submitChoice(sessionID: Int, choice: Int, RequestID)
        /// Cancel the request; its late result will be rejected anyway.
        case cancelRequest(RequestID)
    }

    /// Why an event changed nothing.
    public enum Rejection: Sendable, Hashable {
        /// The event does not apply in the current state (for example `submit` while idle).
        case notApplicable(event: Event, state: State)
        /// The result belongs to a request that is no longer awaited.
        case staleResponse(RequestID)
    }

    /// What handling an event did.
    public enum Transition: Sendable, Hashable {
        /// The state changed (or stayed, on purpose); carry out the effects in order.
        case accepted([Effect])
        /// The event was not taken; the state is unchanged.
        case rejected(Rejection)
    }

    /// The current state.
    public private(set) var state: State
    private var lastRequestID = 0

    /// Creates a machine in the idle state.
    public init() {
        state = .idle(error: nil)
    }

    /// Handles `event`, updating the state and returning the effects to carry out.
    ///
    /// - Complexity: O(1), except that a submission's success copies the history: O(*steps*).
    @discardableResult
    public mutating func handle(_ event: Event) -> Transition {
        switch (state, event) {
        // Starting.
        case (.idle, .start), (.finished, .start):
            let request = makeRequestID()
            state = .starting(request)
            return .accepted([.startSession(request)])
        case (.starting(let awaited), .startSucceeded(let reply, let request)):
            guard request == awaited else { return .rejected(.staleResponse(request)) }
            switch reply {
            case .step(let step):
                state = .choosing(Choosing(step: step))
            case .complete:
                // A session that is complete before any step: nothing to choose.
                state = .finished(sessionID: reply.sessionID, choices: [])
            }
            return .accepted([])
        case (.starting(let awaited), .startFailed(let error, let request)):
            guard request == awaited else { return .rejected(.staleResponse(request)) }
            state = .idle(error: error)
            return .accepted([])

        // Choosing.
        case (.choosing(var choosing), .select(let index)):
            choosing.select(index)
            choosing.error = nil
            state = .choosing(choosing)
            return .accepted([])
        case (.choosing(var choosing), .submit):
            // The selection is clamped on every change, so it is a tick unless there are none:
            // then nothing is sent, and the step says why.
            guard choosing.step.ticks.indices.contains(choosing.selectedIndex) else {
                choosing.error = SliderServiceError(
                    .invalidChoice(choosing.selectedIndex, tickCount: choosing.step.ticks.count))
                state = .choosing(choosing)
                return .accepted([])
            }
            choosing.error = nil
            let request = makeRequestID()
            state = .submitting(choosing, request)
            return .accepted([
                .submitChoice(sessionID: choosing.step.sessionID, choice: choosing.selectedIndex, request)
            ])

        // Submitting.
        case (.submitting(let choosing, let awaited), .submitSucceeded(let reply, let request)):
            guard request == awaited else { return .rejected(.staleResponse(request)) }
            guard reply.sessionID == choosing.step.sessionID else {
                var kept = choosing
                kept.error = SliderServiceError(
                    .server(message: "The reply is for session \(reply.sessionID), not \(choosing.step.sessionID)"))
                state = .choosing(kept)
                return .accepted([])
            }
            var history = choosing.history
            if let value = choosing.selectedValue {
                history.append(Choice(stepCount: choosing.step.stepCount, index: choosing.selectedIndex, value: value))
            }
            switch reply {
            case .step(let step):
                state = .choosing(Choosing(step: step, history: history))
            case .complete(let sessionID):
                state = .finished(sessionID: sessionID, choices: history)
            }
            return .accepted([])
        case (.submitting(var choosing, let awaited), .submitFailed(let error, let request)):
            guard request == awaited else { return .rejected(.staleResponse(request)) }
            choosing.error = error
            state = .choosing(choosing)
            return .accepted([])
        // Cancelling and starting over.
        case (.starting(let request), .cancel):
            state = .idle(error: nil)
            return .accepted([.cancelRequest(request)])
        case (.submitting(let choosing, let request), .cancel):
            state = .choosing(choosing)
            return .accepted([.cancelRequest(request)])
        case (.starting(let request), .startOver), (.submitting(_, let request), .startOver):
            state = .idle(error: nil)
            return .accepted([.cancelRequest(request)])
        case (.choosing, .startOver), (.finished, .startOver), (.idle, .startOver):
            state = .idle(error: nil)
            return .accepted([])

        // A result nobody is waiting for.
        case (_, .startSucceeded(_, let request)), (_, .startFailed(_, let request)),
            (_, .submitSucceeded(_, let request)), (_, .submitFailed(_, let request)):
            return .rejected(.staleResponse(request))

        default:
            return .rejected(.notApplicable(event: event, state: state))
        }
    }

    private mutating func makeRequestID() -> RequestID {
        lastRequestID += 1
        return RequestID(rawValue: lastRequestID)
    }
}

extension SliderSessionMachine.State {
    /// Whether a request is in flight.
    public var isBusy: Bool {
        switch self {
        case .starting, .submitting: true
        case .idle, .choosing, .finished: false
        }
    }

    /// The step on screen, while choosing or submitting.
    public var choosing: SliderSessionMachine.Choosing? {
        switch self {
        case .choosing(let choosing), .submitting(let choosing, _): choosing
        case .idle, .starting, .finished: nil
        }
    }
}
