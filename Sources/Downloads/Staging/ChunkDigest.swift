/// A fast 64-bit digest of bytes fed in pieces: enough to tell written bytes from a torn,
/// unwritten or overwritten region when a download resumes, at several gigabytes a second.
///
/// It is not a defence against someone who can write the files (nor is it meant to be: a crafted
/// file can only make the download start over, never point it elsewhere). Eight bytes are mixed
/// per step with a multiply and rotate, in four independent lanes so the steps overlap; the
/// result depends on the bytes and their order, not on how they were split into pieces.
///
/// - Complexity: O(*n*) in the bytes.
struct ChunkDigest {
    private var lanes: (UInt64, UInt64, UInt64, UInt64) = (
        0x9E37_79B9_7F4A_7C15, 0xC2B2_AE3D_27D4_EB4F, 0x1656_67B1_9E37_79F9, 0x85EB_CA77_C2B2_AE63
    )
    private var pending: [UInt8] = []
    private var length: UInt64 = 0

    private static let prime: UInt64 = 0x9E37_79B1_85EB_CA87

    @inline(__always)
    private static func mix(_ lane: UInt64, _ word: UInt64) -> UInt64 {
        let mixed = lane &+ word &* prime
        return (mixed << 31 | mixed >> 33) &* 0xC2B2_AE3D_27D4_EB4F
    }

    /// Adds `bytes`.
    mutating func add(_ bytes: UnsafeRawBufferPointer) {
        length &+= UInt64(bytes.count)
        var index = 0
        if !pending.isEmpty {
            let taken = min(32 - pending.count, bytes.count)
            pending.append(contentsOf: bytes[0..<taken])
            index = taken
            guard pending.count == 32 else { return }
            pending.withUnsafeBytes { block in consume(block, at: 0) }
            pending.removeAll(keepingCapacity: true)
        }
        while bytes.count - index >= 32 {
            consume(bytes, at: index)
            index += 32
        }
        if index < bytes.count { pending.append(contentsOf: bytes[index...]) }
    }

    /// Adds `bytes`.
    mutating func add(_ bytes: some Sequence<UInt8>) {
        let array = Array(bytes)
        array.withUnsafeBytes { add($0) }
    }

    @inline(__always)
    private mutating func consume(_ bytes: UnsafeRawBufferPointer, at index: Int) {
        guard let base = bytes.baseAddress else { return }
        lanes.0 = Self.mix(lanes.0, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt64.self)))
        lanes.1 = Self.mix(
            lanes.1, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index + 8, as: UInt64.self)))
        lanes.2 = Self.mix(
            lanes.2, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index + 16, as: UInt64.self)))
        lanes.3 = Self.mix(
            lanes.3, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index + 24, as: UInt64.self)))
    }

    /// The digest of the bytes added so far.
    var value: UInt64 {
        var hash = (lanes.0 << 1 | lanes.0 >> 63) &+ (lanes.1 << 7 | lanes.1 >> 57)
        hash &+= (lanes.2 << 12 | lanes.2 >> 52) &+ (lanes.3 << 18 | lanes.3 >> 46)
        hash ^= length &* Self.prime
        for byte in pending { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        hash ^= hash >> 33
        hash &*= 0xFF51_AFD7_ED55_8CCD
        hash ^= hash >> 33
        return hash
    }
}
