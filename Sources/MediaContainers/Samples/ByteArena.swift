import Foundation

/// Memory that the bytes of many samples are written into one after another, each sample a
/// `Data` that keeps the arena alive: a segment's access units cost one allocation, not one each
/// (the allocator keeps freed blocks per thread, so thousands of frame-sized blocks a segment
/// would grow a long download's memory).
///
/// `@unchecked Sendable`: one remux writes the arena, on one thread, before any sample of it is
/// handed on; the samples then only read their own bytes.
final class ByteArena: @unchecked Sendable {
    private let base: UnsafeMutableRawPointer
    /// The arena's size in bytes.
    let capacity: Int
    private var used = 0

    /// An arena of `capacity` bytes.
    init(capacity: Int) {
        self.capacity = max(capacity, 1)
        base = .allocate(byteCount: self.capacity, alignment: 16)
    }

    deinit {
        base.deallocate()
    }

    /// The bytes not yet used.
    var remaining: Int { capacity - used }

    /// Makes the whole arena free again; only for an arena no sample holds any more.
    func reset() {
        used = 0
    }

    /// Lets `body` write at most `maximum` bytes into the arena and returns those it wrote (the
    /// count it returns) as a `Data`; `nil` when fewer than `maximum` bytes remain.
    func write(maximum: Int, _ body: (UnsafeMutableRawPointer) -> Int) -> Data? {
        guard maximum <= remaining else { return nil }
        let start = base + used
        let count = min(max(body(start), 0), maximum)
        used += count
        guard count > 0 else { return Data() }
        // The Data holds the arena until its last copy is gone.
        return Data(bytesNoCopy: start, count: count, deallocator: .custom { _, _ in withExtendedLifetime(self) {} })
    }
}

/// The arenas of one stream's samples, reused once no sample holds them. When the current arena
/// is full, of the arenas no sample holds one is kept spare and the others are let go: a segment
/// read whole needs several at once, and memory would otherwise keep them all for the rest of
/// the download.
struct ArenaSet: Sendable {
    private var arenas: [ByteArena] = []
    /// The most arenas kept.
    static let keeping = 8

    /// The arenas in the set (for tests).
    var count: Int { arenas.count }

    /// An arena with at least `bound` bytes free: one with room, else one no sample holds any
    /// more (emptied), else a new one of at least `size` bytes. Lets go of the arenas no sample
    /// holds beyond one spare.
    ///
    /// - Complexity: O(*k*) for the *k* arenas kept (at most ``keeping``), when the current arena
    ///   is full; O(1) otherwise.
    mutating func arena(for bound: Int, size: Int) -> ByteArena {
        if let ready = arenas.last, ready.remaining >= bound { return ready }
        var chosen: ByteArena?
        var hasSpare = false
        var index = 0
        while index < arenas.count {
            if isKnownUniquelyReferenced(&arenas[index]) {
                if chosen == nil, arenas[index].capacity >= bound {
                    chosen = arenas.remove(at: index)
                    continue
                }
                if hasSpare {
                    arenas.remove(at: index)
                    continue
                }
                hasSpare = true
            }
            index += 1
        }
        let arena: ByteArena
        if let chosen {
            chosen.reset()
            arena = chosen
        } else {
            arena = ByteArena(capacity: max(bound, size))
        }
        arenas.append(arena)
        if arenas.count > Self.keeping { arenas.removeFirst(arenas.count - Self.keeping) }
        return arena
    }
}

/// Memory that small samples (audio frames) are copied into one after another, each sample a
/// slice of one `Data` over the whole block: a frame costs a copy and a retain, and no
/// allocation (a block of 64 KiB holds about 170 AAC frames of 128 kbit/s). A block is let go
/// once full and freed with the last of its samples.
///
/// A class, so that copies of the decoder that owns it share where the next frame goes and
/// never write over each other's frames. `@unchecked Sendable`: one remux copies frames in, on
/// one thread, each into bytes that no slice covers yet; the slices only read their own bytes.
final class SliceArena: @unchecked Sendable {
    /// The block: a `Data` over all of it, sliced for each frame.
    private var block = Data()
    private var base: UnsafeMutableRawPointer?
    private var used = 0
    private var capacity = 0
    /// The size of a block in bytes.
    let blockSize: Int

    /// An arena of blocks of `blockSize` bytes.
    init(blockSize: Int = 64 << 10) {
        self.blockSize = max(blockSize, 64)
    }

    /// A copy of `bytes` as a slice of the current block (a new one when the current one is
    /// full); a sample larger than a quarter block gets a `Data` of its own.
    ///
    /// The slice's indices are its place in the block: read it from its `startIndex`.
    ///
    /// - Complexity: O(n) in the bytes copied; one allocation per block, none per sample.
    func copy(_ bytes: UnsafeRawBufferPointer) -> Data {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return Data() }
        let count = bytes.count
        guard count <= blockSize / 4 else { return Data(bytes) }
        if base == nil || capacity - used < count {
            let memory = UnsafeMutableRawPointer.allocate(byteCount: blockSize, alignment: 16)
            // A thin closure (no captures): the block's one allocation besides its storage.
            block = Data(
                bytesNoCopy: memory, count: blockSize, deallocator: .custom { pointer, _ in pointer.deallocate() })
            base = memory
            capacity = blockSize
            used = 0
        }
        guard let base else { return Data(bytes) }
        (base + used).copyMemory(from: source, byteCount: count)
        let start = block.startIndex + used
        used += count
        return block[start..<(start + count)]
    }
}
