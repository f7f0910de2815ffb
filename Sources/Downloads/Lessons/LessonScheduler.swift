/// The order of a lesson download's work, as a pure state machine: which parts to fetch, when a
/// step's segment streams into the remuxer, when a step is remuxed whole, and when its streamed
/// segment is ended and checkpointed. It performs nothing: ``LessonRun`` performs the actions it
/// returns and reports each outcome back as an event.
///
/// The rules:
/// - **Steps in order, one at a time.** Step *n* + 1 is remuxed only after step *n* is
///   checkpointed.
/// - **A bounded fetch window.** At most `concurrency` parts are in flight, and only parts of the
///   `concurrency` steps from the one being worked on (from the next one, while a step is
///   remuxing): memory holds a bounded number of segments
///   however long the lesson is. A segment still streaming counts in the window, because its
///   transfer goes at the remuxer's pace: on a fast network the window would otherwise fill with
///   whole segments waiting for it.
/// - **Streaming when it can.** A step of one segment (after its initialisation sections, all
///   fetched) whose place on the timeline is known (`LessonPlan.streamable`) streams as soon as
///   its segment's transfer has started; it is ended and checkpointed when the transfer is done.
///   Any other step is remuxed whole when all its parts are in.
/// - **Stopping.** After a failure or a pause the scheduler asks for nothing more: the last
///   checkpoint is what a resume continues from.
///
/// An event the state does not expect (a part that is not in flight, a step that is not being
/// remuxed, anything after a stop or the finish) changes nothing and yields no action.
///
/// - Complexity: each event is handled in O(*c* + *p*) for a concurrency *c* and the *p* parts of
///   the steps it touches.
struct LessonScheduler: Sendable, Hashable {
    /// What happened.
    enum Event: Sendable, Hashable {
        /// The run begins (from the first step not done).
        case start
        /// A part's transfer is done: its bytes are all in (held, decrypted or streamed).
        case partFetched(Int)
        /// A step is remuxed and checkpointed.
        case stepRemuxed(Int)
        /// A transfer or a remux failed.
        case failed
        /// The learner paused the download.
        case paused
    }

    /// What to do next.
    enum Action: Sendable, Hashable {
        /// Start the transfer of a part.
        case fetch(part: Int)
        /// Hand the part, the one segment of `step`, to the remuxer: what arrived so far, then
        /// each piece as it arrives. The step's initialisation sections are all in.
        case stream(part: Int, step: Int)
        /// Remux the step's parts, all in, whole, then checkpoint it.
        case remuxWhole(step: Int)
        /// End the step's streamed segment, whose transfer is done, then checkpoint the step.
        case checkpoint(step: Int)
        /// Every step is checkpointed: finish the file.
        case finish
        /// Cancel the transfers in flight; nothing more is asked for.
        case stop
    }

    /// Where the run is.
    enum Phase: Sendable, Hashable {
        /// Parts are fetched; no step is with the remuxer.
        case fetching
        /// A step is being remuxed whole, or its streamed segment checkpointed.
        case remuxing(step: Int)
        /// A step's segment is streaming into the remuxer.
        case streaming(step: Int)
        /// Every step is done.
        case finished
        /// A failure or a pause stopped the run.
        case stopped
    }

    /// Each step's parts, in order.
    let steps: [Range<Int>]
    /// Whether each part is an initialisation section (otherwise a segment).
    let isInitialization: [Bool]
    /// Whether each step may stream (see `LessonPlan.streamable`).
    let streamable: [Bool]
    /// The most parts in flight at once, and the steps the fetch window spans.
    let concurrency: Int

    /// The step being worked on: every step before it is checkpointed.
    private(set) var nextStep: Int
    /// The next part to fetch.
    private(set) var nextToStart: Int
    /// The parts whose transfer started and is not done.
    private(set) var inFlight: Set<Int> = []
    /// The parts of unfinished steps whose transfer is done.
    private(set) var fetched: Set<Int> = []
    private(set) var phase = Phase.fetching

    /// A scheduler for a plan's steps, continuing from `firstStep` (the steps a journal says are
    /// done).
    init(plan: LessonPlan, concurrency: Int, firstStep: Int) {
        self.init(
            steps: plan.steps, isInitialization: plan.parts.map { $0.role == .initialization },
            streamable: plan.streamable, concurrency: concurrency, firstStep: firstStep)
    }

    /// A scheduler for `steps`, continuing from `firstStep`.
    init(steps: [Range<Int>], isInitialization: [Bool], streamable: [Bool], concurrency: Int, firstStep: Int) {
        self.steps = steps
        self.isInitialization = isInitialization
        self.streamable = streamable
        self.concurrency = max(1, concurrency)
        nextStep = min(max(firstStep, 0), steps.count)
        nextToStart = nextStep < steps.count ? steps[nextStep].lowerBound : isInitialization.count
    }

    /// Takes in what happened and returns what to do, in order.
    mutating func handle(_ event: Event) -> [Action] {
        switch (event, phase) {
        case (.failed, .fetching), (.failed, .remuxing), (.failed, .streaming),
            (.paused, .fetching), (.paused, .remuxing), (.paused, .streaming):
            phase = .stopped
            inFlight = []
            return [.stop]
        case (.start, .fetching) where nextStep >= steps.count:
            phase = .finished
            return [.finish]
        case (.start, .fetching) where inFlight.isEmpty && fetched.isEmpty:
            var actions: [Action] = []
            startMore(into: &actions)
            advance(into: &actions)
            startMore(into: &actions)
            return actions
        case (.partFetched(let part), .fetching), (.partFetched(let part), .remuxing),
            (.partFetched(let part), .streaming):
            guard inFlight.remove(part) != nil else { return [] }
            fetched.insert(part)
        case (.stepRemuxed(let step), .remuxing(let remuxing)) where step == remuxing:
            fetched.subtract(steps[step])
            nextStep = step + 1
            phase = .fetching
            if nextStep == steps.count {
                phase = .finished
                return [.finish]
            }
        default:
            return []
        }
        var actions: [Action] = []
        advance(into: &actions)
        startMore(into: &actions)
        return actions
    }

    /// Starts transfers while there is room, within the fetch window.
    private mutating func startMore(into actions: inout [Action]) {
        while inFlight.count < concurrency, nextToStart < isInitialization.count, nextStep < steps.count {
            // While a step is with the remuxer, the window moves on by one step; not while the
            // segment it streams is still arriving, for that transfer is held back by the
            // remuxer's pace, and the window would hold one more segment waiting for it. (A
            // streaming step is always still arriving here: `advance`, which runs first, moves a
            // streaming step whose segment is in on to remuxing.)
            let base: Int
            switch phase {
            case .fetching, .streaming:
                base = nextStep
            default:
                base = nextStep + 1
            }
            let windowEnd = steps[min(base + concurrency - 1, steps.count - 1)].upperBound
            guard nextToStart < windowEnd else { return }
            inFlight.insert(nextToStart)
            actions.append(.fetch(part: nextToStart))
            nextToStart += 1
        }
    }

    /// Hands the step being worked on to the remuxer when it can go.
    private mutating func advance(into actions: inout [Action]) {
        guard nextStep < steps.count else { return }
        let step = nextStep
        let range = steps[step]
        switch phase {
        case .streaming(step):
            guard range.allSatisfy(fetched.contains) else { return }
            phase = .remuxing(step: step)
            actions.append(.checkpoint(step: step))
        case .fetching:
            let segments = range.filter { !isInitialization[$0] }
            if segments.count == 1, let segment = segments.first, streamable[step], segment < nextToStart,
                range.allSatisfy({ $0 == segment || fetched.contains($0) })
            {
                phase = .streaming(step: step)
                actions.append(.stream(part: segment, step: step))
                advance(into: &actions)
            } else if range.allSatisfy(fetched.contains) {
                phase = .remuxing(step: step)
                actions.append(.remuxWhole(step: step))
            }
        default:
            return
        }
    }
}
