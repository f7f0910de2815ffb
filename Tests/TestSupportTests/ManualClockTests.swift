import TestSupport
import Testing

@Suite("ManualClock")
struct ManualClockTests {
    @Test("time moves only when advanced, and never backwards")
    func timeMovesOnlyWhenAdvanced() {
        let clock = ManualClock()
        let start = clock.now
        clock.advance(by: .seconds(3))
        #expect(start.duration(to: clock.now) == .seconds(3))
        clock.advance(by: .seconds(-1))
        clock.advance(to: start)
        #expect(start.duration(to: clock.now) == .seconds(3))
    }

    @Test("a sleeper wakes when its deadline is reached, not before")
    func sleeperWakesAtDeadline() async throws {
        let clock = ManualClock()
        let sleeper = Task { try await clock.sleep(for: .seconds(10)) }
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(9))
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .seconds(1))
        #expect(clock.sleeperCount == 0)
        try await sleeper.value
    }

    @Test("sleepers resume in deadline order")
    func deterministicOrder() async throws {
        let clock = ManualClock()
        let order = Recorder<Int>()
        let deadlines = [3, 1, 2]
        var tasks: [Task<Void, any Error>] = []
        for (index, seconds) in deadlines.enumerated() {
            tasks.append(
                Task {
                    try await clock.sleep(for: .seconds(seconds))
                    await order.append(index)
                })
        }
        await clock.waitForSleepers(count: deadlines.count)
        // One deadline at a time; each woken task records itself before the next advance.
        for woken in 1...deadlines.count {
            #expect(clock.advanceToNextDeadline())
            while await order.count < woken { await Task.yield() }
        }
        for task in tasks { try await task.value }
        #expect(await order.values == [1, 2, 0])
        #expect(clock.now == ManualClock.Instant(offset: .seconds(3)))
        #expect(!clock.advanceToNextDeadline())
    }

    @Test("advanceWhileSleeping lets a task's sleeps pass one after another, and ends when cancelled")
    func advanceWhileSleeping() async throws {
        let clock = ManualClock()
        let driver = Task { await clock.advanceWhileSleeping() }
        // A backoff of 1, 2, 4 and 8 seconds, each sleep begun after the last one ended.
        for seconds in [1, 2, 4, 8] { try await clock.sleep(for: .seconds(seconds)) }
        #expect(clock.now == ManualClock.Instant(offset: .seconds(15)))
        driver.cancel()
        await driver.value
        // Nothing moves time now.
        let sleeper = Task { try await clock.sleep(for: .seconds(1)) }
        await clock.waitForSleepers(count: 1)
        #expect(clock.now == ManualClock.Instant(offset: .seconds(15)))
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }

    @Test("a wait for sleepers returns when its task is cancelled, before or while it waits")
    func cancelledWaitForSleepers() async {
        let clock = ManualClock()
        let waiting = Task { await clock.waitForSleepers(count: 1) }
        waiting.cancel()
        await waiting.value
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            await clock.waitForSleepers(count: 3)
        }
        await early.value
        #expect(clock.sleeperCount == 0)
    }

    @Test("one advance wakes every sleeper due by then, including ties")
    func advanceWakesAllDue() async throws {
        let clock = ManualClock()
        let tasks = [1, 1, 2, 5].map { seconds in
            Task { try await clock.sleep(for: .seconds(seconds)) }
        }
        await clock.waitForSleepers(count: 4)
        clock.advance(by: .seconds(2))
        #expect(clock.sleeperCount == 1)
        for task in tasks.prefix(3) { try await task.value }
        clock.advance(by: .seconds(3))
        try await tasks[3].value
    }

    @Test("a deadline already reached returns at once")
    func pastDeadline() async throws {
        let clock = ManualClock()
        clock.advance(by: .seconds(5))
        try await clock.sleep(until: clock.now.advanced(by: .seconds(-1)))
        try await clock.sleep(for: .zero)
        #expect(clock.sleeperCount == 0)
    }

    @Test("cancelling a sleeping task wakes it with CancellationError")
    func cancellationWhileSleeping() async {
        let clock = ManualClock()
        let sleeper = Task { try await clock.sleep(for: .seconds(60)) }
        await clock.waitForSleepers(count: 1)
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test("a task cancelled before it sleeps never sleeps")
    func cancellationBeforeSleeping() async {
        let clock = ManualClock()
        let sleeper = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(for: .seconds(60))
        }
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test("waiting for a particular deadline ignores other sleepers")
    func waitForParticularDeadline() async throws {
        let clock = ManualClock()
        let unrelated = Task { try await clock.sleep(for: .seconds(10)) }
        let waiter = Task { await clock.waitForSleeper(until: ManualClock.Instant(offset: .seconds(3))) }
        await clock.waitForSleepers(count: 1)
        let awaited = Task { try await clock.sleep(for: .seconds(3)) }
        await waiter.value
        #expect(clock.sleeperCount == 2)
        clock.advance(by: .seconds(10))
        try await awaited.value
        try await unrelated.value
    }

    @Test("nextDeadline reports the earliest pending wake-up")
    func nextDeadline() async throws {
        let clock = ManualClock()
        #expect(clock.nextDeadline == nil)
        let late = Task { try await clock.sleep(for: .seconds(8)) }
        let early = Task { try await clock.sleep(for: .seconds(2)) }
        await clock.waitForSleepers(count: 2)
        #expect(clock.nextDeadline == ManualClock.Instant(offset: .seconds(2)))
        clock.advance(by: .seconds(8))
        try await late.value
        try await early.value
    }
}

/// Collects values from concurrent tasks in the order they arrive.
actor Recorder<Value: Sendable> {
    private(set) var values: [Value] = []

    var count: Int { values.count }

    func append(_ value: Value) {
        values.append(value)
    }
}
