package import Foundation

/// How one streamed body's pieces are gathered into batches before they are handed on: the rules
/// of ``URLSessionTransport``'s delegate, apart from its buffers, timers and locks, which the
/// caller passes in, so that the rules can be driven piece by piece on any clock.
///
/// - A batch is ``limit`` bytes. A piece that does not fit in what is left of the batch is split:
///   the batch is handed on full, and the rest starts the next one.
/// - A piece of ``limit`` bytes or more goes on whole, uncopied (after what was gathered); an
///   empty piece, not at all.
/// - The first piece after ``window`` with nothing handed on goes on at once: a slow body is
///   never held back.
/// - Each batch starts one timer; when it fires (``flush(generation:now:handOver:)``) the batch
///   goes on as it is, more bytes or not. A batch handed on before then is not handed on again:
///   the timer names its batch by generation.
///
/// - Complexity: O(*n*) in the bytes of each piece (one copy), O(1) for each hand-over.
package struct BodyGathering {
    /// The bytes of a batch, and the size of a gathering buffer.
    package static let limit = 256 << 10
    /// The longest gathered bytes wait while more arrive, in nanoseconds: at 10 MB/s a batch
    /// fills in about 26 ms, so only a slower body is handed on by its timer.
    package static let window: UInt64 = 100_000_000

    /// The batch being gathered: a buffer of ``limit`` bytes, and how much of it is used.
    package private(set) var gathered: UnsafeMutableRawPointer?
    package private(set) var used = 0
    /// When bytes were last handed on, in nanoseconds.
    package private(set) var handedOver: UInt64
    /// Counts batches, so that a timer set for one does not hand on the next.
    package private(set) var generation = 0

    /// A body whose request went out at `now` (nanoseconds on the caller's clock).
    package init(now: UInt64) {
        handedOver = now
    }

    /// Takes `data`, a piece the session delivered at `now`, and returns the chunks to hand on,
    /// in order.
    ///
    /// - Parameters:
    ///   - take: A buffer of ``limit`` bytes for a new batch.
    ///   - handOver: The chunk of a batch: its buffer and the bytes used (the chunk owns the
    ///     buffer from then on).
    ///   - startTimer: Sets the timer of a new batch, of this generation, to fire after
    ///     ``window``.
    package mutating func add(
        _ data: Data, now: UInt64, take: () -> UnsafeMutableRawPointer,
        handOver: (UnsafeMutableRawPointer, Int) -> Data, startTimer: (Int) -> Void
    ) -> [Data] {
        var chunks: [Data] = []
        guard !data.isEmpty else { return chunks }
        if gathered == nil, now &- handedOver >= Self.window || data.count >= Self.limit {
            // After a pause (or a piece as large as a batch), on at once.
            chunks.append(data)
            handedOver = now
            return chunks
        }
        if let buffer = gathered, data.count >= Self.limit {
            chunks.append(handOver(buffer, used))
            chunks.append(data)
            end(at: now)
            return chunks
        }
        data.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress else { return }
            var copied = 0
            while copied < bytes.count {
                let buffer: UnsafeMutableRawPointer
                if let current = gathered {
                    buffer = current
                } else {
                    buffer = take()
                    generation += 1
                    startTimer(generation)
                }
                let count = min(Self.limit - used, bytes.count - copied)
                (buffer + used).copyMemory(from: base + copied, byteCount: count)
                gathered = buffer
                used += count
                copied += count
                if used == Self.limit {
                    chunks.append(handOver(buffer, used))
                    end(at: now)
                }
            }
        }
        if let buffer = gathered, now &- handedOver >= Self.window {
            chunks.append(handOver(buffer, used))
            end(at: now)
        }
        return chunks
    }

    /// Hands on the batch being gathered: when its timer fires (`generation` names the batch the
    /// timer was set for), or when the body ends (`generation` nil). Returns nil when there is
    /// nothing to hand on, or the timer's batch has already gone.
    package mutating func flush(generation: Int?, now: UInt64, handOver: (UnsafeMutableRawPointer, Int) -> Data)
        -> Data?
    {
        guard let buffer = gathered, generation.map({ $0 == self.generation }) ?? true else { return nil }
        let chunk = handOver(buffer, used)
        end(at: now)
        return chunk
    }

    private mutating func end(at now: UInt64) {
        gathered = nil
        used = 0
        handedOver = now
    }
}
