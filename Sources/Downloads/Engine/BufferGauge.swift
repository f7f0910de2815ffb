import Locking

/// The bytes held in memory on their way to the staging file, and their peak.
final class BufferGauge: Sendable {
    private let counts = Locked<(held: Int, highest: Int)>((0, 0))

    func hold(_ count: Int) {
        counts.withLock { counts in
            counts.held += count
            counts.highest = max(counts.highest, counts.held)
        }
    }

    func release(_ count: Int) {
        counts.withLock { $0.held -= count }
    }

    /// The most bytes held at once.
    var peak: UInt64 { UInt64(counts.current.highest) }
}
