import Foundation

/// Memory for whole parts, reused from part to part of one download, so that a lesson of hundreds
/// of segments allocates a few segment-sized buffers rather than one per segment (and the
/// allocator, which keeps freed blocks per thread, does not grow with every one).
final class PartBufferPool: @unchecked Sendable {
    /// A block of memory from the pool.
    struct Buffer: @unchecked Sendable {
        let pointer: UnsafeMutableRawPointer
        let capacity: Int
    }

    private let lock = NSLock()
    private var free: [Buffer] = []
    /// The most free buffers kept; more are released.
    let keeping: Int

    /// A pool that keeps up to `keeping` free buffers.
    init(keeping: Int) {
        self.keeping = max(keeping, 1)
    }

    deinit {
        for buffer in free { buffer.pointer.deallocate() }
    }

    /// A buffer of at least `size` bytes: the smallest free one that fits, or a new one rounded up
    /// to a multiple of 256 KiB (so parts of slightly different sizes share buffers).
    ///
    /// - Complexity: O(*k*) for *k* free buffers.
    func take(_ size: Int) -> Buffer {
        lock.lock()
        let fitting = free.indices.filter { free[$0].capacity >= size }.min { free[$0].capacity < free[$1].capacity }
        if let fitting {
            let buffer = free.remove(at: fitting)
            lock.unlock()
            return buffer
        }
        lock.unlock()
        let rounded = (max(size, 1) + (256 << 10) - 1) / (256 << 10) * (256 << 10)
        return Buffer(pointer: .allocate(byteCount: rounded, alignment: 16), capacity: rounded)
    }

    /// Returns a buffer to the pool (or releases it when the pool is full, its smallest first).
    func give(_ buffer: Buffer) {
        lock.lock()
        free.append(buffer)
        var released: [Buffer] = []
        if free.count > keeping {
            free.sort { $0.capacity > $1.capacity }
            released = Array(free[keeping...])
            free.removeLast(free.count - keeping)
        }
        lock.unlock()
        for buffer in released { buffer.pointer.deallocate() }
    }
}
