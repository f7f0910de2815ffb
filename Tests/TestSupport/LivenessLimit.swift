public import Foundation

/// Runs `operation` and returns what it returns, or `nil` when it has not returned after
/// `seconds` of wall time: it is then cancelled (a wait on an `AsyncStream` ends at once).
///
/// For tests of a lost wake-up or a deadlock, whose failure would otherwise be a hung test run.
/// It is a limit for liveness, never a speed target: set it far above the operation's time on
/// a loaded machine. The wall time is watched by a thread of its own, so a cooperative pool
/// that is starved or blocked does not stop the limit.
public func withLivenessLimit<Value: Sendable>(
    seconds: Int, _ operation: @escaping @Sendable () async -> Value
) async -> Value? {
    let returned = DispatchSemaphore(value: 0)
    let timedOut = LockedState(false)
    let task = Task { await operation() }
    Thread.detachNewThread {
        guard returned.wait(timeout: .now() + .seconds(seconds)) == .timedOut else { return }
        timedOut.withLock { $0 = true }
        task.cancel()
    }
    let value = await task.value
    returned.signal()
    return timedOut.withLock { $0 } ? nil : value
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
