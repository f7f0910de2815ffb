import Foundation
import Locking
import MediaContainers

/// One part's bytes on their way: held while the part waits its turn, or handed to the remuxer as
/// they arrive once its step streams (what was held first, in order).
///
/// Bytes reach the remuxer's serial queue in batches of at least ``batchBytes`` (and the rest
/// at the part's end, ``finish()``), one queue hop per batch however small the pieces a
/// transport delivers: the cost of a part does not grow with the number of its pieces.
final class PartFlow: PartReceiver, Sendable {
    private struct State {
        var held: [Data] = []
        var heldBytes = 0
        var streaming = false
        /// Pieces of a streaming part not yet handed to the queue: fewer than ``batchBytes``.
        var pending: [Data] = []
        var pendingBytes = 0
        /// Bytes handed to the remuxer's queue (or pending for it) and not yet remuxed.
        var queued = 0
        /// The transfer, waiting for the queue to drain to the bound.
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let session: RemuxSession
    private let gauge: BufferGauge
    private let state = Locked(State())

    /// The most bytes waiting on the remuxer's queue: a transfer that has handed on more waits
    /// (back-pressure on the network) until the remuxer has taken them down to ``resumeLevel``.
    static let queueLimit = 2 << 20
    /// The bytes still queued when a waiting transfer goes on: well below the limit, so that a
    /// transfer and the remuxer take turns a mebibyte at a time, not a chunk at a time (each
    /// turn wakes a thread).
    static let resumeLevel = queueLimit / 2
    /// The fewest bytes handed to the remuxer's queue at a time, except at a part's end.
    static let batchBytes = 256 << 10

    init(session: RemuxSession, gauge: BufferGauge) {
        self.session = session
        self.gauge = gauge
    }

    deinit {
        gauge.release(state.withLock { $0.heldBytes })
    }

    func receive(_ bytes: Data) async {
        guard take(bytes) else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let drained = state.withLock { state in
                guard state.queued > Self.resumeLevel else { return true }
                state.waiter = continuation
                return false
            }
            if drained { continuation.resume() }
        }
    }

    /// Holds `bytes`, or hands them to the remuxer's queue; returns whether the queue is so full
    /// that the transfer should wait for it.
    private func take(_ bytes: Data) -> Bool {
        state.withLock { state in
            guard state.streaming else {
                state.held.append(bytes)
                state.heldBytes += bytes.count
                gauge.hold(bytes.count)
                return false
            }
            state.queued += bytes.count
            state.pending.append(bytes)
            state.pendingBytes += bytes.count
            if state.pendingBytes >= Self.batchBytes { handOverPending(&state) }
            return state.queued > Self.queueLimit
        }
    }

    /// Hands the pending pieces to the remuxer's queue as one job.
    private func handOverPending(_ state: inout State) {
        guard !state.pending.isEmpty else { return }
        let pieces = state.pending
        let count = state.pendingBytes
        state.pending = []
        state.pendingBytes = 0
        session.enqueue { session in
            for piece in pieces { session.feedStreaming(piece) }
            self.fed(count)
        }
    }

    /// Hands on what is pending once the part's last byte has arrived, ahead of the step's end
    /// on the remuxer's queue.
    func finish() {
        state.withLock { state in
            if state.streaming { handOverPending(&state) }
        }
    }

    func restart() async {
        startOver()
    }

    /// Drops what an earlier attempt sent: the held bytes, or the remuxed part of the segment.
    private func startOver() {
        state.withLock { state in
            if state.streaming {
                state.queued -= state.pendingBytes
                state.pending = []
                state.pendingBytes = 0
                session.enqueue { $0.restartStreaming() }
            } else {
                gauge.release(state.heldBytes)
                state.held = []
                state.heldBytes = 0
            }
        }
    }

    /// Starts handing the part to the remuxer as `segment`: what was held first, then each piece
    /// as it arrives.
    func stream(_ segment: SegmentRemuxer.Segment) {
        state.withLock { state in
            state.streaming = true
            let pieces = state.held
            state.held = []
            gauge.release(state.heldBytes)
            state.heldBytes = 0
            session.enqueue { $0.beginStreaming(segment) }
            state.pending = pieces
            state.pendingBytes = pieces.reduce(0) { $0 + $1.count }
            state.queued += state.pendingBytes
            handOverPending(&state)
        }
    }

    /// The bytes held, in the pieces they arrived in (a part remuxed whole, read piece by
    /// piece): the flow lets go of them.
    func takePieces() -> [Data] {
        state.withLock { state in
            gauge.release(state.heldBytes)
            state.heldBytes = 0
            defer { state.held = [] }
            return state.held
        }
    }

    /// The bytes held, joined (a part decrypted first, or an initialisation section).
    func takeBuffered() -> Data {
        let pieces = takePieces()
        if pieces.count == 1, let only = pieces.first { return only }
        var joined = Data(capacity: pieces.reduce(0) { $0 + $1.count })
        for piece in pieces { joined.append(piece) }
        return joined
    }

    /// Notes bytes the remuxer took, and lets the waiting transfer go on once the queue is
    /// within the bound.
    private func fed(_ count: Int) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.queued -= count
            guard state.queued <= Self.resumeLevel, let waiter = state.waiter else { return nil }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }
}
