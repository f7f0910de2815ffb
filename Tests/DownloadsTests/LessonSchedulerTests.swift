import TestSupport
import Testing

@testable import Downloads

/// The lesson scheduler without I/O: the actions each event brings, the bounds it keeps, and
/// every order in which transfers and remux steps can finish.
@Suite("The lesson scheduler")
struct LessonSchedulerTests {
    typealias Scheduler = LessonScheduler

    /// Steps of one segment each, all streamable.
    static func segments(_ count: Int, concurrency: Int = 2, firstStep: Int = 0) -> Scheduler {
        Scheduler(
            steps: (0..<count).map { $0..<($0 + 1) }, isInitialization: Array(repeating: false, count: count),
            streamable: Array(repeating: true, count: count), concurrency: concurrency, firstStep: firstStep)
    }

    @Test("the first step streams as soon as its transfer starts, and the window moves on by one step")
    func firstStepStreams() {
        var scheduler = Self.segments(4)
        #expect(scheduler.handle(.start) == [.fetch(part: 0), .fetch(part: 1), .stream(part: 0, step: 0)])
        // The second part is fetched first: it waits, held, for its turn. The window does not
        // move on while the segment streaming is still arriving (at the remuxer's pace).
        #expect(scheduler.handle(.partFetched(1)) == [])
        // Step 0's segment is all in: the window spans the step with the remuxer and the next
        // one, so part 2 starts and part 3 waits.
        #expect(scheduler.handle(.partFetched(0)) == [.checkpoint(step: 0), .fetch(part: 2)])
        // Step 1's part is all in when its turn comes: it streams what was held and ends at once,
        // and the window moves on.
        #expect(
            scheduler.handle(.stepRemuxed(0)) == [.stream(part: 1, step: 1), .checkpoint(step: 1), .fetch(part: 3)])
        #expect(scheduler.handle(.stepRemuxed(1)) == [.stream(part: 2, step: 2)])
        #expect(scheduler.handle(.partFetched(2)) == [.checkpoint(step: 2)])
        #expect(scheduler.handle(.stepRemuxed(2)) == [.stream(part: 3, step: 3)])
        #expect(scheduler.handle(.partFetched(3)) == [.checkpoint(step: 3)])
        #expect(scheduler.handle(.stepRemuxed(3)) == [.finish])
        #expect(scheduler.phase == .finished)
    }

    @Test(
        "a segment still streaming counts in the window: a fast network holds no more whole segments waiting for it",
        arguments: 1...3)
    func streamingCountsInWindow(concurrency: Int) {
        var scheduler = Self.segments(8, concurrency: concurrency)
        // Step 0 streams; the parts after it within the window start with it.
        let started = Array(0..<concurrency).map(Scheduler.Action.fetch(part:))
        #expect(scheduler.handle(.start) == started + [.stream(part: 0, step: 0)])
        // They arrive before the streamed segment: nothing more starts.
        for part in 1..<concurrency { #expect(scheduler.handle(.partFetched(part)) == []) }
        // The streamed segment is in: the window moves on by one step.
        #expect(scheduler.handle(.partFetched(0)) == [.checkpoint(step: 0), .fetch(part: concurrency)])
    }

    @Test("a step with an initialisation section streams its segment once the section is in")
    func initializationFirst() {
        var scheduler = Scheduler(
            steps: [0..<2, 2..<3], isInitialization: [true, false, false], streamable: [true, true], concurrency: 2,
            firstStep: 0)
        #expect(scheduler.handle(.start) == [.fetch(part: 0), .fetch(part: 1)])
        #expect(scheduler.handle(.partFetched(0)) == [.stream(part: 1, step: 0), .fetch(part: 2)])
        #expect(scheduler.handle(.partFetched(1)) == [.checkpoint(step: 0)])
    }

    @Test("a step that cannot stream (a new discontinuity, decrypted parts, two segments) is remuxed whole")
    func wholeSteps() {
        var scheduler = Scheduler(
            steps: [0..<2, 2..<3], isInitialization: [false, false, false], streamable: [false, false],
            concurrency: 3, firstStep: 0)
        #expect(scheduler.handle(.start) == [.fetch(part: 0), .fetch(part: 1), .fetch(part: 2)])
        #expect(scheduler.handle(.partFetched(0)) == [])
        #expect(scheduler.handle(.partFetched(2)) == [])
        #expect(scheduler.handle(.partFetched(1)) == [.remuxWhole(step: 0)])
        #expect(scheduler.handle(.stepRemuxed(0)) == [.remuxWhole(step: 1)])
        #expect(scheduler.handle(.stepRemuxed(1)) == [.finish])
    }

    @Test("a resume starts from the first step not done, and a finished lesson asks only to finish")
    func resume() {
        var scheduler = Self.segments(3, firstStep: 2)
        #expect(scheduler.handle(.start) == [.fetch(part: 2), .stream(part: 2, step: 2)])
        var done = Self.segments(3, firstStep: 3)
        #expect(done.handle(.start) == [.finish])
    }

    @Test(
        "a failure or a pause stops the run, and nothing after it asks for more",
        arguments: [Scheduler.Event.failed, .paused])
    func stops(event: Scheduler.Event) {
        var scheduler = Self.segments(4)
        _ = scheduler.handle(.start)
        #expect(scheduler.handle(event) == [.stop])
        #expect(scheduler.phase == .stopped)
        #expect(scheduler.handle(.partFetched(0)) == [])
        #expect(scheduler.handle(.stepRemuxed(0)) == [])
        #expect(scheduler.handle(.start) == [])
        #expect(scheduler.handle(.failed) == [])
    }

    @Test("an event the state does not expect changes nothing")
    func unexpectedEvents() {
        var scheduler = Self.segments(4)
        _ = scheduler.handle(.start)
        let before = scheduler
        #expect(scheduler.handle(.partFetched(3)) == [])  // not in flight
        #expect(scheduler.handle(.stepRemuxed(1)) == [])  // not the step with the remuxer
        #expect(scheduler.handle(.start) == [])  // started already
        #expect(scheduler == before)
    }

    /// A random lesson: steps of one to three parts, some starting with an initialisation
    /// section, some streamable, resumed from a random step.
    static func randomScheduler(using generator: inout SplitMix64) -> Scheduler {
        var steps: [Range<Int>] = []
        var isInitialization: [Bool] = []
        var streamable: [Bool] = []
        for _ in 0..<Int.random(in: 1...12, using: &generator) {
            let start = isInitialization.count
            let hasInitialization = Bool.random(using: &generator)
            if hasInitialization { isInitialization.append(true) }
            let segmentCount = Int.random(in: 1...2, using: &generator)
            isInitialization += Array(repeating: false, count: segmentCount)
            steps.append(start..<isInitialization.count)
            streamable.append(segmentCount == 1 && Bool.random(using: &generator))
        }
        return Scheduler(
            steps: steps, isInitialization: isInitialization, streamable: streamable,
            concurrency: Int.random(in: 1...4, using: &generator),
            firstStep: Bool.random(using: &generator) ? 0 : Int.random(in: 0..<steps.count, using: &generator))
    }

    /// The scheduler with a simulated run around it: what is in flight and with the remuxer, as
    /// its actions made it, and the rules each action must keep.
    struct World: Hashable {
        var scheduler: Scheduler
        var inFlight: Set<Int> = []
        var fetchedOnce: Set<Int> = []
        var arrived: Set<Int> = []
        var streaming: Int?
        var withRemuxer: Int?
        /// The steps checkpointed, in order.
        var checkpointed: [Int] = []
        var finished = false
        var stopped = false

        init(_ scheduler: Scheduler) {
            self.scheduler = scheduler
            let first = scheduler.nextStep
            checkpointed = Array(0..<first)
            // The parts of the steps done are not fetched again.
            if first > 0 { fetchedOnce = Set(0..<scheduler.steps[first - 1].upperBound) }
        }

        /// Performs `actions`, returning each rule broken.
        mutating func perform(_ actions: [Scheduler.Action]) -> [String] {
            var broken: [String] = []
            let steps = scheduler.steps
            for action in actions {
                guard !finished, !stopped else {
                    broken.append("\(action) after the end")
                    continue
                }
                switch action {
                case .fetch(let part):
                    if !fetchedOnce.insert(part).inserted { broken.append("part \(part) fetched twice") }
                    inFlight.insert(part)
                    if inFlight.count > scheduler.concurrency { broken.append("\(inFlight.count) in flight") }
                    // Within the window: the step being worked on and the next steps.
                    let windowEnd = steps[min(checkpointed.count + scheduler.concurrency, steps.count - 1)].upperBound
                    if part >= windowEnd { broken.append("part \(part) beyond the window") }
                    // A segment still streaming counts in the window.
                    if let step = streaming, withRemuxer == nil, !steps[step].allSatisfy(arrived.contains) {
                        let streamingEnd = steps[min(step + scheduler.concurrency - 1, steps.count - 1)].upperBound
                        if part >= streamingEnd { broken.append("part \(part) past a segment still streaming") }
                    }
                case .stream(let part, let step):
                    if step != checkpointed.count || !scheduler.streamable[step] { broken.append("stream of \(step)") }
                    if !steps[step].allSatisfy({ $0 == part || arrived.contains($0) }) {
                        broken.append("step \(step) streams before its sections are in")
                    }
                    streaming = step
                case .checkpoint(let step):
                    if streaming != step || withRemuxer != nil { broken.append("checkpoint of \(step)") }
                    if !steps[step].allSatisfy(arrived.contains) {
                        broken.append("step \(step) ended before its parts")
                    }
                    withRemuxer = step
                case .remuxWhole(let step):
                    if streaming != nil || withRemuxer != nil || step != checkpointed.count {
                        broken.append("remux of \(step)")
                    }
                    if !steps[step].allSatisfy(arrived.contains) {
                        broken.append("step \(step) remuxed before its parts")
                    }
                    withRemuxer = step
                case .finish:
                    finished = true
                    if checkpointed != Array(steps.indices) { broken.append("finish after \(checkpointed)") }
                    if fetchedOnce != Set(scheduler.isInitialization.indices) {
                        broken.append("finish with parts not fetched")
                    }
                case .stop:
                    stopped = true
                    inFlight = []
                }
            }
            return broken
        }

        /// What can happen next: a transfer in flight ends, or the step with the remuxer does.
        var events: [Scheduler.Event] {
            inFlight.sorted().map(Scheduler.Event.partFetched) + (withRemuxer.map { [.stepRemuxed($0)] } ?? [])
        }

        /// Lets `event` happen and performs what the scheduler asks for.
        mutating func happen(_ event: Scheduler.Event) -> [String] {
            switch event {
            case .partFetched(let part):
                inFlight.remove(part)
                arrived.insert(part)
            case .stepRemuxed(let step):
                checkpointed.append(step)
                withRemuxer = nil
                streaming = nil
            default:
                break
            }
            return perform(scheduler.handle(event))
        }
    }

    @Test(
        "seeded random orders: every part is fetched once, within the bounds, and every step is checkpointed once, in order",
        arguments: 0..<UInt64(400))
    func randomOrders(seed: UInt64) throws {
        var generator = SplitMix64(seed: seed)
        var world = World(Self.randomScheduler(using: &generator))
        var broken = world.perform(world.scheduler.handle(.start))
        while !world.finished, broken.isEmpty {
            // Something must be under way, or the run would be stuck.
            let events = world.events
            try #require(!events.isEmpty, "seed \(seed): stuck")
            broken += world.happen(events[Int.random(in: 0..<events.count, using: &generator)])
        }
        #expect(broken.isEmpty, "seed \(seed): \(broken)")
    }

    /// Every small lesson: up to three steps of one or two segments, the first with or without
    /// an initialisation section, each streamable or not, one to three transfers at a time.
    static let smallLessons: [Scheduler] = {
        var lessons: [Scheduler] = []
        for stepCount in 1...3 {
            for shape in 0..<(1 << stepCount) {
                for streamBits in 0..<(1 << stepCount) {
                    for hasInitialization in [false, true] {
                        var steps: [Range<Int>] = []
                        var isInitialization: [Bool] = []
                        var streamable: [Bool] = []
                        for step in 0..<stepCount {
                            let start = isInitialization.count
                            if step == 0, hasInitialization { isInitialization.append(true) }
                            let segments = shape >> step & 1 == 1 ? 2 : 1
                            isInitialization += Array(repeating: false, count: segments)
                            steps.append(start..<isInitialization.count)
                            streamable.append(segments == 1 && streamBits >> step & 1 == 1)
                        }
                        for concurrency in 1...3 {
                            lessons.append(
                                Scheduler(
                                    steps: steps, isInitialization: isInitialization, streamable: streamable,
                                    concurrency: concurrency, firstStep: 0))
                        }
                    }
                }
            }
        }
        return lessons
    }()

    @Test("every order, exhaustively, for every small lesson: the rules hold and the run finishes")
    func everyOrder() {
        var problems: [String] = []
        var explored = 0
        for scheduler in Self.smallLessons {
            var world = World(scheduler)
            let broken = world.perform(world.scheduler.handle(.start))
            problems += broken.map { "\(scheduler.steps): \($0)" }
            // Depth-first over every order of events, each world once.
            var seen: Set<World> = [world]
            var stack = [world]
            while let current = stack.popLast() {
                explored += 1
                if current.finished { continue }
                let events = current.events
                if events.isEmpty { problems.append("\(scheduler.steps), concurrency \(scheduler.concurrency): stuck") }
                for event in events {
                    var next = current
                    let broken = next.happen(event)
                    problems += broken.map { "\(scheduler.steps): \($0)" }
                    if seen.insert(next).inserted { stack.append(next) }
                }
            }
        }
        #expect(Self.smallLessons.count == 504)
        #expect(explored > 10_000)
        #expect(problems.isEmpty, "\(problems.prefix(5))")
    }

    @Test(
        "seeded: a failure or a pause at any point stops the run, and nothing after it asks for more",
        arguments: 0..<UInt64(100))
    func stopAnywhere(seed: UInt64) throws {
        var generator = SplitMix64(seed: seed)
        var world = World(Self.randomScheduler(using: &generator))
        _ = world.perform(world.scheduler.handle(.start))
        let stopAfter = Int.random(in: 0..<20, using: &generator)
        var count = 0
        while !world.finished, count < stopAfter {
            let events = world.events
            try #require(!events.isEmpty)
            _ = world.happen(events[Int.random(in: 0..<events.count, using: &generator)])
            count += 1
        }
        guard !world.finished else { return }
        let stop: Scheduler.Event = Bool.random(using: &generator) ? .failed : .paused
        #expect(world.scheduler.handle(stop) == [.stop], "seed \(seed)")
        // Whatever was in flight ends: the scheduler asks for nothing more.
        for event in world.events + [.start, .failed, .paused] {
            #expect(world.scheduler.handle(event) == [], "seed \(seed): \(event)")
        }
    }

    @Test("two transfers finishing in either order lead to the same steps, in the same order")
    func twoTransferOrders() {
        for order in [[0, 1], [1, 0]] {
            var scheduler = Scheduler(
                steps: [0..<1, 1..<2], isInitialization: [false, false], streamable: [false, false], concurrency: 2,
                firstStep: 0)
            #expect(scheduler.handle(.start) == [.fetch(part: 0), .fetch(part: 1)])
            var remuxed: [Scheduler.Action] = []
            for part in order { remuxed += scheduler.handle(.partFetched(part)) }
            #expect(remuxed == [.remuxWhole(step: 0)], "\(order)")
            #expect(scheduler.handle(.stepRemuxed(0)) == [.remuxWhole(step: 1)], "\(order)")
            #expect(scheduler.handle(.stepRemuxed(1)) == [.finish], "\(order)")
        }
    }
}
