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

/// The arenas of one stream's samples, reused once no sample holds them.
struct ArenaSet: Sendable {
    private var arenas: [ByteArena] = []
    /// The most arenas kept.
    static let keeping = 8

    /// An arena with at least `bound` bytes free: one with room, else one no sample holds any
    /// more (emptied), else a new one of at least `size` bytes.
    mutating func arena(for bound: Int, size: Int) -> ByteArena {
        if let ready = arenas.last, ready.remaining >= bound { return ready }
        for index in arenas.indices where isKnownUniquelyReferenced(&arenas[index]) && arenas[index].capacity >= bound {
            let arena = arenas.remove(at: index)
            arena.reset()
            arenas.append(arena)
            return arena
        }
        let arena = ByteArena(capacity: max(bound, size))
        arenas.append(arena)
        if arenas.count > Self.keeping { arenas.removeFirst(arenas.count - Self.keeping) }
        return arena
    }
}
