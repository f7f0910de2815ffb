/// A valid MPEG transport stream of exactly `packetCount` × 188 bytes: `seed` (a real stream)
/// repeated, then null packets (PID 0x1FFF, which demuxers skip) to fill the rest.
///
/// Tests that download "a 8,209,772-byte audio segment file" use it so that the result is real
/// audio a remuxer reads, not random bytes. `seed.count` must be a multiple of 188.
public func syntheticTransportStream(packetCount: Int, seed: [UInt8]) -> [UInt8] {
    let seedPackets = seed.count / 188
    guard seedPackets > 0 else { return [] }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(packetCount * 188)
    let copies = packetCount / seedPackets
    for _ in 0..<copies { bytes += seed.prefix(seedPackets * 188) }
    var nullPacket = [UInt8](repeating: 0xFF, count: 188)
    nullPacket[0] = 0x47
    nullPacket[1] = 0x1F
    nullPacket[2] = 0xFF
    nullPacket[3] = 0x10
    for _ in 0..<(packetCount - copies * seedPackets) { bytes += nullPacket }
    return bytes
}

/// The boxes of an MP4 file, read back so a test checks what a writer wrote (ISO/IEC 14496-12
/// §4.2). Test-only: it trusts its input.
public struct MP4BoxReader {
    /// The file's bytes.
    public let bytes: [UInt8]

    /// Reads `bytes`.
    public init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// A big-endian 32-bit integer at `at`.
    public func uint32(_ at: Int) -> UInt32 { bytes[at..<(at + 4)].reduce(0) { $0 << 8 | UInt32($1) } }
    /// A big-endian 64-bit integer at `at`.
    public func uint64(_ at: Int) -> UInt64 { bytes[at..<(at + 8)].reduce(0) { $0 << 8 | UInt64($1) } }
    /// The four-character type of the box at `at`.
    public func type(_ at: Int) -> String { String(decoding: bytes[(at + 4)..<(at + 8)], as: UTF8.self) }

    /// The top-level boxes from `start` to `end`: type, start of the box, its size.
    public func boxes(from start: Int = 0, to end: Int? = nil) -> [(type: String, start: Int, size: Int)] {
        var result: [(String, Int, Int)] = []
        var at = start
        let end = end ?? bytes.count
        while at + 8 <= end {
            var size = Int(uint32(at))
            if size == 1 { size = Int(uint64(at + 8)) }
            guard size >= 8, at + size <= end else { break }
            result.append((type(at), at, size))
            at += size
        }
        return result
    }

    /// The box at a path of types below the top level, such as `["moov", "trak", "mdia"]`.
    public func find(_ path: [String]) -> (start: Int, size: Int)? {
        var range = (start: 0, end: bytes.count)
        var found: (Int, Int)?
        for (depth, name) in path.enumerated() {
            let headerSkip = depth == 0 ? 0 : 8
            // `stsd` and `mp4a` hold fields before their children.
            let extra = ["stsd": 8, "mp4a": 28][path[max(depth - 1, 0)]] ?? 0
            let children = boxes(from: range.start + headerSkip + (depth == 0 ? 0 : extra), to: range.end)
            guard let box = children.first(where: { $0.type == name }) else { return nil }
            found = (box.start, box.size)
            range = (box.start, box.start + box.size)
        }
        return found
    }
}
