public import Foundation

/// Runs `operation` and returns what it returns, or `nil` when the whole test process stood
/// still while it ran: it is then cancelled (a wait on an `AsyncStream` ends at once).
///
/// For tests of a lost wake-up or a deadlock, whose failure would otherwise be a hung test run.
/// It is a liveness check that counts progress, not seconds: progress is the process's own
/// processor time, which a run slowed by a sanitizer or a loaded machine goes on spending
/// however long it takes. Only a process with nothing left to run (every test but this one has
/// ended, and this one waits for something that never comes) stands still; see
/// ``ProcessStandstill``.
public func withLivenessCheck<Value: Sendable>(
    _ operation: @escaping @Sendable () async -> Value
) async -> Value? {
    let stoodStill = LockedState(false)
    let task = Task { await operation() }
    let watch = ProcessStandstill.shared.watch {
        stoodStill.withLock { $0 = true }
        task.cancel()
    }
    let value = await task.value
    ProcessStandstill.shared.end(watch)
    return stoodStill.withLock { $0 } ? nil : value
}

/// Tells the waits that watch it when the test process stands still: it spent almost no
/// processor time for ``standstill`` in a row.
///
/// A thread of its own samples the process's processor time (`CLOCK_PROCESS_CPUTIME_ID`) every
/// second while some wait is watching. A process that spends under 2% of one core in a second
/// has nothing to run but its idle threads; ``standstill`` such seconds in a row make a
/// standstill, and every wait watching then is told. A slow run is never one: it is slow
/// because it works. The thread's own sampling costs microseconds. (A process stopped by a
/// signal, or blocked on a disk for that long, would look idle too: no test run here does
/// either.)
public final class ProcessStandstill: Sendable {
    /// The one watcher of the test process.
    public static let shared = ProcessStandstill()

    /// How many idle seconds in a row make a standstill.
    public static let standstill = 15

    private struct State {
        var watches: [UInt64: @Sendable () -> Void] = [:]
        var nextWatch: UInt64 = 0
        var isSampling = false
        /// Whether a watch began since the last sample: the idle seconds count from then.
        var isNewWatch = false
    }

    private let state = LockedState(State())

    /// Calls `stoodStill` once if the process stands still before ``end(_:)`` is called with the
    /// returned watch.
    public func watch(_ stoodStill: @escaping @Sendable () -> Void) -> UInt64 {
        let (id, start) = state.withLock { state -> (UInt64, Bool) in
            defer { state.nextWatch += 1 }
            state.watches[state.nextWatch] = stoodStill
            state.isNewWatch = true
            let start = !state.isSampling
            state.isSampling = true
            return (state.nextWatch, start)
        }
        if start { Thread.detachNewThread { [self] in sample() } }
        return id
    }

    /// Ends a watch: its call is no longer made.
    public func end(_ watch: UInt64) {
        _ = state.withLock { $0.watches.removeValue(forKey: watch) }
    }

    private func sample() {
        var idleSeconds = 0
        var last = Self.processorTime()
        while true {
            Thread.sleep(forTimeInterval: 1)
            let now = Self.processorTime()
            idleSeconds = now - last < 0.02 ? idleSeconds + 1 : 0
            last = now
            let stood = state.withLock { state -> [@Sendable () -> Void]? in
                if state.watches.isEmpty {
                    state.isSampling = false
                    return nil
                }
                // A watch that began during an idle stretch gets its own whole standstill.
                if state.isNewWatch {
                    state.isNewWatch = false
                    idleSeconds = 0
                }
                guard idleSeconds >= Self.standstill else { return [] }
                defer { state.watches = [:] }
                return Array(state.watches.values)
            }
            guard let stood else { return }
            if !stood.isEmpty { idleSeconds = 0 }
            for call in stood { call() }
        }
    }

    /// The processor time the whole process has spent, in seconds.
    private static func processorTime() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}

/// The deadline a test gives a request to a server it started itself (a loopback server or an
/// in-process one) when the test is not about deadlines.
///
/// Such a deadline is a liveness limit, not a speed target. Under a sanitizer, with the whole
/// suite sharing two cores, a request that takes milliseconds alone can wait tens of seconds for
/// a thread, so a short deadline there fails a correct test. Tests of a deadline itself use a
/// `ManualClock` and advance it.
public let loopbackDeadline: Duration = .seconds(300)

/// Steps of work that a liveness check watches: the code a test drives counts one at each
/// step it completes, so that a slow run and a stopped one can be told apart.
public final class ProgressCounter: Sendable {
    private let count = LockedState<UInt64>(0)

    /// A counter at zero steps.
    public init() {}

    /// Counts one step.
    public func step() {
        count.withLock { $0 &+= 1 }
    }

    /// The steps counted so far.
    public var steps: UInt64 {
        count.withLock { $0 }
    }
}

/// Waits until `done` has been signalled `count` times; returns `false` when `progress` counted
/// no step during a whole `stallLimit` meanwhile: the work has stopped (a deadlock, a lost
/// wake-up), not slowed.
///
/// A liveness check that counts progress, not seconds: a run slowed by a sanitizer or a loaded
/// machine goes on counting steps however long it takes, so however long the whole wait lasts,
/// its verdict is the same. The limit is only how long a standstill must last to be called one;
/// set it far above the time of one step. The wait runs on a thread of its own, so a cooperative
/// pool that is starved or blocked does not stop it.
public func waitForSignals(
    _ done: DispatchSemaphore, count: Int, while progress: ProgressCounter, stallLimit: Duration = .seconds(120)
) async -> Bool {
    let stall = DispatchTimeInterval.milliseconds(Int(stallLimit.components.seconds) * 1_000)
    return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
        Thread.detachNewThread {
            var remaining = count
            var seen = progress.steps
            while remaining > 0 {
                if done.wait(timeout: .now() + stall) == .success {
                    remaining -= 1
                    continue
                }
                let now = progress.steps
                guard now != seen else {
                    continuation.resume(returning: false)
                    return
                }
                seen = now
            }
            continuation.resume(returning: true)
        }
    }
}

/// Whether `condition` holds within `turns` turns of the cooperative pool, checked at each: a
/// bound of steps, not of time, for a wait on state that sends no event (a file growing, an
/// actor's bookkeeping).
///
/// Each `Task.yield()` puts the check behind every job already waiting for the pool, so each
/// turn lets the work it waits for take a step, however loaded the run; a million turns is far
/// more than a correct run's few hops need. (It runs on the pool even when called from the
/// main actor: it is not isolated.)
public func withinPoolTurns(_ turns: Int = 1_000_000, _ condition: @Sendable () async -> Bool) async -> Bool {
    for _ in 0..<turns {
        if await condition() { return true }
        await Task.yield()
    }
    return await condition()
}
