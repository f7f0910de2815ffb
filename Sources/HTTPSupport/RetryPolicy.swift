/// How often and how patiently to retry a request that failed for a transient reason.
///
/// The delay before retry *n* (counted from 1) is `initialDelay × multiplier^(n-1)`, capped at
/// `maximumDelay`, then scaled by a jitter factor in `1 - jitter … 1`, so that many clients
/// retrying at once spread out. A server's `Retry-After` lengthens a delay, never shortens it.
public struct RetryPolicy: Sendable, Hashable {
    /// The most attempts in all, the first included; 1 means no retry.
    public var maximumAttempts: Int
    /// The delay before the first retry.
    public var initialDelay: Duration
    /// The factor each further delay grows by.
    public var multiplier: Double
    /// The longest delay.
    public var maximumDelay: Duration
    /// The share of each delay that is randomised away, 0…1.
    public var jitter: Double
    /// The longest wait a server may ask for (with `Retry-After`) and still be retried; a server
    /// asking for longer fails the operation at once, rather than holding it for that long.
    public var longestServerDelay: Duration

    /// Creates a policy.
    public init(
        maximumAttempts: Int = 3,
        initialDelay: Duration = .milliseconds(500),
        multiplier: Double = 2,
        maximumDelay: Duration = .seconds(10),
        jitter: Double = 0.2,
        longestServerDelay: Duration = .seconds(60)
    ) {
        self.maximumAttempts = max(1, maximumAttempts)
        self.initialDelay = initialDelay
        self.multiplier = multiplier.isFinite ? max(1, multiplier) : 1
        self.maximumDelay = maximumDelay
        self.jitter = jitter.isFinite ? min(max(jitter, 0), 1) : 0
        self.longestServerDelay = max(longestServerDelay, .zero)
    }

    /// No retry at all.
    public static let none = RetryPolicy(maximumAttempts: 1)

    /// The delay before retry `retry` (1 for the first retry), given a random `unit` in `0..<1`.
    ///
    /// - Complexity: O(1).
    public func delay(beforeRetry retry: Int, unit: Double) -> Duration {
        let exponent = Double(max(retry - 1, 0))
        let base = initialDelay.secondsValue * wholePower(multiplier, exponent)
        let capped = min(base, maximumDelay.secondsValue)
        let factor = 1 - jitter * min(max(unit.isFinite ? unit : 0, 0), 1)
        return .nanoseconds(Int64((capped * factor * 1e9).rounded()))
    }
}

extension RetryPolicy {
    /// Runs `operation`, and runs it again after a backoff delay on `clock` while it fails with an
    /// error that `isTransient` accepts and attempts remain.
    ///
    /// This is MediaCore's one retry loop:
    ///
    /// <!-- example: retry-policy-run -->
    /// ```swift
    /// let reply = try await policy.run(
    ///     on: clock, isTransient: { ($0 as? MyError)?.isTransient == true },
    ///     operation: { attempt in try await send() })
    /// ```
    ///
    /// The delay before retry *n* is
    /// ``delay(beforeRetry:unit:)`` with a fresh `randomUnit()`, or the wait the server asked for
    /// (`serverDelay`, read from `Retry-After` with `HTTPURLResponse.retryAfter`)
    /// when that is longer. A server asking for more than ``longestServerDelay`` is not retried.
    /// The last failure is rethrown unchanged when the attempts run out or the failure is not
    /// transient.
    ///
    /// - Parameters:
    ///   - clock: The clock the backoff delays are slept on.
    ///   - randomUnit: A random number in `0..<1` for the jitter.
    ///   - isTransient: Whether a failure may go away if the operation runs again.
    ///   - serverDelay: The wait the server asked for with a failure, if any.
    ///   - operation: The work to run; `attempt` counts from 1.
    /// - Throws: The operation's last error, or `CancellationError` when the calling task is
    ///   cancelled during a backoff delay.
    /// - Complexity: At most ``maximumAttempts`` runs of `operation`.
    public func run<C: Clock, Value>(
        on clock: C,
        randomUnit: () -> Double = { Double.random(in: 0..<1) },
        isTransient: (any Error) -> Bool,
        serverDelay: (any Error) -> Duration? = { _ in nil },
        operation: (_ attempt: Int) async throws -> Value
    ) async throws -> Value where C.Duration == Duration {
        var attempt = 1
        while true {
            do {
                return try await operation(attempt)
            } catch  where attempt < maximumAttempts && isTransient(error) {
                var wait = delay(beforeRetry: attempt, unit: randomUnit())
                if let asked = serverDelay(error) {
                    guard asked <= longestServerDelay else { throw error }
                    wait = max(wait, asked)
                }
                try await clock.sleep(for: wait)
                attempt += 1
            }
        }
    }
}

extension Duration {
    /// The duration in seconds as a floating-point number (for the package's modules).
    package var secondsValue: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) * 1e-18
    }
}

/// `base` raised to a non-negative whole-number `exponent` (at most 64), by repeated
/// multiplication. O(`exponent`).
func wholePower(_ base: Double, _ exponent: Double) -> Double {
    var result = 1.0
    var remaining = Int(min(exponent, 64))
    while remaining > 0 {
        result *= base
        remaining -= 1
    }
    return result
}
