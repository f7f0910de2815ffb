import Foundation

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
