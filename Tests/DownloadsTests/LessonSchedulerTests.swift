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
        // The second part is fetched first: it waits, held, for its turn.
        #expect(scheduler.handle(.partFetched(1)) == [.fetch(part: 2)])
        // The window spans the step with the remuxer and the next one: part 3 waits.
        #expect(scheduler.handle(.partFetched(0)) == [.checkpoint(step: 0)])
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
    /// section, some streamable.
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
            concurrency: Int.random(in: 1...4, using: &generator), firstStep: 0)
    }

    @Test(
        "seeded: whatever order transfers and steps finish in, every part is fetched once, within the bounds, and every step is checkpointed once, in order",
        arguments: 0..<UInt64(400))
    func everyOrder(seed: UInt64) throws {
        var generator = SplitMix64(seed: seed)
        var scheduler = Self.randomScheduler(using: &generator)
        let steps = scheduler.steps
        var inFlight: Set<Int> = []
        var fetchedOnce: Set<Int> = []
        var arrived: Set<Int> = []
        var streaming: (part: Int, step: Int)?
        var withRemuxer: Int?
        var checkpointed: [Int] = []
        var actions = scheduler.handle(.start)
        var finished = false
        for _ in 0..<10_000 {
            for action in actions {
                switch action {
                case .fetch(let part):
                    #expect(fetchedOnce.insert(part).inserted, "seed \(seed): part \(part) fetched twice")
                    inFlight.insert(part)
                    #expect(inFlight.count <= scheduler.concurrency, "seed \(seed)")
                    // Within the window: the step being worked on and the next steps.
                    let current = checkpointed.count
                    let windowEnd = steps[min(current + scheduler.concurrency, steps.count - 1)].upperBound
                    #expect(part < windowEnd, "seed \(seed): part \(part) beyond the window")
                case .stream(let part, let step):
                    #expect(step == checkpointed.count && scheduler.streamable[step], "seed \(seed)")
                    #expect(
                        steps[step].allSatisfy { $0 == part || arrived.contains($0) }, "seed \(seed): sections not in")
                    streaming = (part, step)
                case .checkpoint(let step):
                    #expect(streaming?.step == step, "seed \(seed)")
                    #expect(steps[step].allSatisfy(arrived.contains), "seed \(seed)")
                    #expect(withRemuxer == nil, "seed \(seed)")
                    withRemuxer = step
                case .remuxWhole(let step):
                    #expect(streaming == nil && withRemuxer == nil, "seed \(seed)")
                    #expect(step == checkpointed.count, "seed \(seed)")
                    #expect(steps[step].allSatisfy(arrived.contains), "seed \(seed)")
                    withRemuxer = step
                case .finish:
                    finished = true
                case .stop:
                    Issue.record("seed \(seed): a stop without a failure")
                }
            }
            if finished { break }
            // Something must be under way, or the run would be stuck.
            try #require(!inFlight.isEmpty || withRemuxer != nil, "seed \(seed): stuck")
            // Finish a random transfer, or the step with the remuxer.
            let choices =
                inFlight.sorted().map(Scheduler.Event.partFetched) + (withRemuxer.map { [.stepRemuxed($0)] } ?? [])
            let event = choices[Int.random(in: 0..<choices.count, using: &generator)]
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
            actions = scheduler.handle(event)
        }
        #expect(finished, "seed \(seed)")
        #expect(checkpointed == Array(steps.indices), "seed \(seed)")
        #expect(fetchedOnce == Set(0..<scheduler.isInitialization.count), "seed \(seed)")
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
