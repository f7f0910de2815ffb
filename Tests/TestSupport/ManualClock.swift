/// A clock whose time moves only when a test moves it.
///
/// Code under test receives the clock in place of `ContinuousClock` and sleeps on it as usual.
/// The test then calls ``advance(by:)`` to move time forward: every sleeper whose deadline has
/// been reached resumes, in deadline order (ties in the order they went to sleep). Nothing
/// waits for real time, so a test of a 30-second backoff runs in microseconds.
///
/// To avoid racing the code under test, a test first waits until the expected number of tasks
/// are asleep with ``waitForSleepers(count:)``, then advances.
///
/// A sleeping task that is cancelled wakes at once with `CancellationError`, as it would on a
/// real clock.
public final class ManualClock: Clock, Sendable {
    /// A point in the manual clock's time: the duration since the clock was created.
    public struct Instant: InstantProtocol, Hashable, Sendable, CustomStringConvertible {
        /// The time elapsed since the clock's origin.
        public var offset: Duration

        /// Creates an instant at `offset` from the clock's origin.
        public init(offset: Duration) {
            self.offset = offset
        }

        /// The instant `duration` after this one.
        public func advanced(by duration: Duration) -> Self {
            Self(offset: offset + duration)
        }

        /// The duration from this instant to `other`.
        public func duration(to other: Self) -> Duration {
            other.offset - offset
        }

        /// Whether `lhs` comes before `rhs`.
        public static func < (lhs: Self, rhs: Self) -> Bool {
            lhs.offset < rhs.offset
        }

        /// The offset from the origin, for test failure messages.
        public var description: String { "ManualClock.Instant(\(offset))" }
    }

    private struct Sleeper {
        let id: UInt64
        let deadline: Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct SleeperWaiter {
        let id: UInt64
        let isSatisfied: @Sendable ([Instant]) -> Bool
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var now: Instant
        var nextID: UInt64 = 0
        var sleepers: [Sleeper] = []
        var cancelledBeforeSuspending: Set<UInt64> = []
        var waiters: [SleeperWaiter] = []
    }

    private let state: LockedState<State>

    /// Creates a clock whose time starts at `now` (the origin by default).
    public init(now: Instant = Instant(offset: .zero)) {
        state = LockedState(State(now: now))
    }

    /// The clock's current time.
    public var now: Instant {
        state.withLock { $0.now }
    }

    /// The smallest step the clock can measure: any duration.
    public var minimumResolution: Duration { .zero }

    /// The number of tasks currently asleep on this clock.
    public var sleeperCount: Int {
        state.withLock { $0.sleepers.count }
    }

    /// The earliest deadline among the sleeping tasks, if any task is asleep.
    public var nextDeadline: Instant? {
        state.withLock { $0.sleepers.map(\.deadline).min() }
    }

    /// Suspends the caller until `deadline`, which only ``advance(by:)`` or ``advance(to:)`` reach.
    ///
    /// - Throws: `CancellationError` when the task is cancelled before or while it sleeps.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let id = state.withLock { state -> UInt64 in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> (resume: Result<Void, any Error>?, waiters: [SleeperWaiter]) in
                    if state.cancelledBeforeSuspending.remove(id) != nil {
                        return (.failure(CancellationError()), [])
                    }
                    if deadline <= state.now {
                        return (.success(()), [])
                    }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return (nil, Self.takeSatisfiedWaiters(from: &state))
                }
                if let resume = outcome.resume {
                    continuation.resume(with: resume)
                }
                for waiter in outcome.waiters {
                    waiter.continuation.resume()
                }
            }
        } onCancel: {
            let (sleeper, waiters) = state.withLock { state -> (Sleeper?, [SleeperWaiter]) in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else {
                    // Cancelled before the continuation was stored: let `sleep` see it.
                    state.cancelledBeforeSuspending.insert(id)
                    return (nil, [])
                }
                let sleeper = state.sleepers.remove(at: index)
                return (sleeper, Self.takeSatisfiedWaiters(from: &state))
            }
            sleeper?.continuation.resume(throwing: CancellationError())
            for waiter in waiters { waiter.continuation.resume() }
        }
        // A cancellation that raced a normal wake-up leaves a marker nobody will consume.
        state.withLock { _ = $0.cancelledBeforeSuspending.remove(id) }
    }

    /// Moves time forward by `duration` and wakes every sleeper whose deadline is reached.
    ///
    /// Sleepers resume in deadline order; sleepers with the same deadline resume in the order
    /// they went to sleep. A negative duration is ignored: this clock never goes backwards.
    public func advance(by duration: Duration) {
        guard duration > .zero else { return }
        let target = now.advanced(by: duration)
        advance(to: target)
    }

    /// Moves time forward to `instant` (if it is later than now) and wakes the sleepers due by then.
    public func advance(to instant: Instant) {
        let (due, waiters) = state.withLock { state -> ([Sleeper], [SleeperWaiter]) in
            if instant > state.now {
                state.now = instant
            }
            let now = state.now
            var due: [Sleeper] = []
            state.sleepers.removeAll { sleeper in
                guard sleeper.deadline <= now else { return false }
                due.append(sleeper)
                return true
            }
            // `sleepers` is in registration order and the sort is stable, so ties keep it.
            return (due.sorted { $0.deadline < $1.deadline }, Self.takeSatisfiedWaiters(from: &state))
        }
        for sleeper in due {
            sleeper.continuation.resume()
        }
        for waiter in waiters { waiter.continuation.resume() }
    }

    /// Moves time to the earliest pending deadline, waking the sleepers due then.
    ///
    /// - Returns: `false` when no task is asleep, so time did not move.
    @discardableResult
    public func advanceToNextDeadline() -> Bool {
        guard let deadline = nextDeadline else { return false }
        advance(to: deadline)
        return true
    }

    /// Suspends until at least `count` tasks are asleep on this clock.
    ///
    /// Call it before ``advance(by:)`` so that the code under test has reached its sleep and the
    /// advance cannot race it. It returns at once if enough tasks already sleep.
    public func waitForSleepers(count: Int = 1) async {
        await waitUntilSleepers { $0.count >= count }
    }

    /// Suspends until some task sleeps until exactly `deadline`.
    ///
    /// Use it when other sleepers come and go (a request's timeout timer, say) and only one
    /// particular sleep means the code under test is ready.
    public func waitForSleeper(until deadline: Instant) async {
        await waitUntilSleepers { $0.contains(deadline) }
    }

    /// Suspends until no task sleeps on this clock: each sleeper has woken or been cancelled.
    ///
    /// - Returns: `false` only when the whole test process stood still first
    ///   (``withLivenessCheck(_:)``): a sleeper that never goes fails the test instead of
    ///   hanging the run.
    @discardableResult
    public func waitForNoSleepers() async -> Bool {
        await withLivenessCheck { await self.waitUntilSleepers { $0.isEmpty } } != nil
    }

    /// Suspends until `condition` holds for the deadlines of the sleeping tasks; it is checked
    /// now and whenever a task goes to sleep, wakes or is cancelled. A cancelled caller returns
    /// at once.
    public func waitUntilSleepers(_ condition: @escaping @Sendable (_ deadlines: [Instant]) -> Bool) async {
        let id = state.withLock { state -> UInt64 in
            defer { state.nextID += 1 }
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if Task.isCancelled || condition(state.sleepers.map(\.deadline)) { return true }
                    state.waiters.append(SleeperWaiter(id: id, isSatisfied: condition, continuation: continuation))
                    return false
                }
                if ready {
                    continuation.resume()
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> SleeperWaiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume()
        }
    }

    /// Lets time pass as fast as the code under test sleeps: whenever a task is asleep on this
    /// clock, moves time to the earliest deadline, until the calling task is cancelled.
    ///
    /// For a test that awaits a result whose code sleeps (a backoff, a timeout) and has no
    /// moment of its own to advance the clock. It waits for sleepers; it never spins, so it takes
    /// no processor time from the other tests of a parallel run.
    public func advanceWhileSleeping() async {
        while !Task.isCancelled {
            await waitUntilSleepers { !$0.isEmpty }
            advanceToNextDeadline()
        }
    }

    private static func takeSatisfiedWaiters(from state: inout State) -> [SleeperWaiter] {
        let deadlines = state.sleepers.map(\.deadline)
        var satisfied: [SleeperWaiter] = []
        state.waiters.removeAll { waiter in
            guard waiter.isSatisfied(deadlines) else { return false }
            satisfied.append(waiter)
            return true
        }
        return satisfied
    }
}
