import Locking

/// Counts the bytes of parts in flight, and reports the job's progress from them at most every
/// ``interval`` on the engine's clock, so a screen sees bytes as they arrive at a steady rate.
final class ByteMeter<C: Clock>: Sendable where C.Duration == Duration {
    /// The shortest time between two reports of bytes in flight.
    static var interval: Duration { .milliseconds(100) }

    private struct State {
        var inFlight: Int64
        var written: UInt64
        var completed: Int
        var lastReport: C.Instant?
    }

    private let clock: C
    private let state: Locked<State>
    private let publish: @Sendable (_ written: UInt64, _ completed: Int, _ inFlight: UInt64) -> Void

    /// A meter that calls `publish` with the bytes written, the parts completed and the bytes
    /// in flight, when a report is due.
    init(
        clock: C, written: UInt64, completed: Int, inFlight: UInt64 = 0,
        publish: @escaping @Sendable (_ written: UInt64, _ completed: Int, _ inFlight: UInt64) -> Void
    ) {
        self.clock = clock
        state = Locked(State(inFlight: Int64(clamping: inFlight), written: written, completed: completed))
        self.publish = publish
    }

    /// Publishes that a part fetched as `fetched` bytes is written: `written` bytes and
    /// `completed` parts in all now.
    func settle(fetched: UInt64, written: UInt64, completed: Int) {
        let total = state.withLock { state in
            state.inFlight -= Int64(clamping: fetched)
            state.written = written
            state.completed = completed
            return UInt64(max(0, state.inFlight))
        }
        publish(written, completed, total)
    }

    /// Adds `bytes` received (negative for the bytes of a part that failed or was written).
    func received(_ bytes: Int64) {
        let now = clock.now
        let report = state.withLock { state -> (written: UInt64, completed: Int, inFlight: UInt64)? in
            state.inFlight += bytes
            let due = bytes > 0 && state.lastReport.map { $0.duration(to: now) >= Self.interval } ?? true
            guard due else { return nil }
            state.lastReport = now
            return (state.written, state.completed, UInt64(max(0, state.inFlight)))
        }
        if let report { publish(report.written, report.completed, report.inFlight) }
    }

    func received(_ bytes: UInt64) {
        received(Int64(clamping: bytes))
    }
}
