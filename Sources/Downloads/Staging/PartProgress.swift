import Locking

/// How far one part's transfer into the staging file got: its first bytes written and their
/// digest, updated as the transfer stops.
final class PartProgress: Sendable {
    private let prefix = Locked<PartPrefix?>(nil)

    /// Notes that the part's first `length` bytes, hashed into `digest`, are written.
    func note(length: UInt64, digest: ChunkDigest) {
        prefix.withLock { $0 = length > 0 ? PartPrefix(length: length, digest: digest) : nil }
    }

    /// The part's first bytes written, if any.
    var written: PartPrefix? { prefix.current }
}
