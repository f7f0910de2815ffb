/// The deadline of ``withDeadline(_:on:operation:)`` passed before its operation finished.
package struct DeadlineError: Error, Hashable, Sendable {
    /// The time the operation was allowed.
    package var timeout: Duration

    /// Creates the error for an operation that was allowed `timeout`.
    package init(timeout: Duration) {
        self.timeout = timeout
    }
}

/// Runs `operation`, cancelling it if it has not finished within `timeout` on `clock`.
///
/// The timeout is measured on the injected clock, so a test drives it with a manual clock and
/// never waits for real time. ``HTTPTransport/send(_:timeout:on:)`` is built on it.
///
/// - Throws: ``DeadlineError`` when the deadline passes first, the operation's own error
///   otherwise, or `CancellationError` when the calling task is cancelled.
package func withDeadline<C: Clock, Value: Sendable>(
    _ timeout: Duration,
    on clock: C,
    operation: @escaping @Sendable () async throws -> Value
) async throws -> Value where C.Duration == Duration {
    try await withThrowingTaskGroup(of: Value?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await clock.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        // The first child to finish decides; a `nil` is the timer.
        guard let first = try await group.next() else { throw CancellationError() }
        guard let value = first else {
            try Task.checkCancellation()
            throw DeadlineError(timeout: timeout)
        }
        return value
    }
}
