import Locking

/// The ``PartProgress`` of each part that streams into the staging file in one run.
final class LockedParts: Sendable {
    private let parts = Locked<[Int: PartProgress]>([:])

    /// A fresh progress for part `index`.
    func track(_ index: Int) -> PartProgress {
        let progress = PartProgress()
        parts.withLock { $0[index] = progress }
        return progress
    }

    /// The first bytes written of each tracked part not in `completed`, shorter than the part
    /// (`lengths` gives each part's length).
    func prefixes(excluding completed: Set<Int>, lengths: (Int) -> UInt64?) -> [Int: PartPrefix] {
        parts.current.filter { !completed.contains($0.key) }.compactMapValues(\.written).filter { index, prefix in
            lengths(index).map { prefix.length < $0 } ?? false
        }
    }
}
