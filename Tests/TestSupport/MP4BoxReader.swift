/// A valid MPEG transport stream cut into byte ranges of `rangeLengths` bytes (each a multiple of
/// 188), as an HLS playlist with `EXT-X-BYTERANGE` serves one file: each range holds as many whole
/// copies of `seed` (a real stream) as fit, then null packets (PID 0x1FFF, which demuxers skip),
/// so every range starts with a PAT and a PMT and no PES packet spans two ranges, as segmenters
/// write them.
///
/// The copies make one continuous stream, as one long recording would: continuity counters run
/// on (ISO/IEC 13818-1 §2.4.3.3) and every PTS and DTS is moved on by the seed's span (its latest
/// timestamp minus its earliest, plus its largest step between timestamps).
///
/// Tests that download "a 8,209,772-byte audio segment file" use it so that the result is real
/// audio a remuxer reads, not random bytes. `seed.count` must be a multiple of 188.
///
/// - Returns: The bytes, and how many copies of the seed they hold.
public func syntheticTransportStream(rangeLengths: [Int], seed: [UInt8]) -> (bytes: [UInt8], copies: Int) {
    let seedPackets = seed.count / 188
    guard seedPackets > 0 else { return ([], 0) }
    // The PTS of every PES start in the seed, for the span of one copy.
    var stamps: [Int64] = []
    for packet in 0..<seedPackets {
        let at = packet * 188
        if let (offset, _) = timestampOffsets(seed, packet: at) { stamps.append(readTimestamp(seed, at: offset)) }
    }
    // The seed's range of timestamps plus its largest step forward, so that every stream's
    // timestamps (several streams, B-frames reordered) go on after the previous copy's.
    let steps = zip(stamps, stamps.dropFirst()).map { $1 - $0 }.filter { $0 > 0 }
    let span: Int64 = (stamps.max() ?? 0) - (stamps.min() ?? 0) + (steps.max() ?? 0)
    var counters: [Int: UInt8] = [:]
    var bytes: [UInt8] = []
    bytes.reserveCapacity(rangeLengths.reduce(0, +))
    var nullPacket = [UInt8](repeating: 0xFF, count: 188)
    nullPacket[0] = 0x47
    nullPacket[1] = 0x1F
    nullPacket[2] = 0xFF
    nullPacket[3] = 0x10
    var copy = 0
    for length in rangeLengths {
        let packetCount = length / 188
        let copies = packetCount / seedPackets
        for _ in 0..<copies {
            appendCopy()
            copy += 1
        }
        for _ in 0..<(packetCount - copies * seedPackets) { bytes += nullPacket }
    }
    return (bytes, copy)

    func appendCopy() {
        for packet in 0..<seedPackets {
            var packetBytes = Array(seed[(packet * 188)..<(packet * 188 + 188)])
            let pid = Int(packetBytes[1] & 0x1F) << 8 | Int(packetBytes[2])
            if packetBytes[3] & 0x10 != 0, pid != 0x1FFF {
                let counter = counters[pid].map { ($0 + 1) & 0x0F } ?? (packetBytes[3] & 0x0F)
                counters[pid] = counter
                packetBytes[3] = packetBytes[3] & 0xF0 | counter
            }
            if let (pts, dts) = timestampOffsets(packetBytes, packet: 0) {
                let shift = Int64(copy) * span
                writeTimestamp(&packetBytes, at: pts, readTimestamp(packetBytes, at: pts) + shift)
                if let dts { writeTimestamp(&packetBytes, at: dts, readTimestamp(packetBytes, at: dts) + shift) }
            }
            bytes += packetBytes
        }
    }
}

/// The lengths of a media playlist's `EXT-X-BYTERANGE` sub-ranges, in order (RFC 8216 §4.3.2.2).
public func byteRangeLengths(ofPlaylist text: String) -> [Int] {
    text.split(whereSeparator: \.isNewline).compactMap { line in
        guard line.hasPrefix("#EXT-X-BYTERANGE:") else { return nil }
        return Int(line.dropFirst("#EXT-X-BYTERANGE:".count).split(separator: "@")[0])
    }
}

/// Where the PTS (and DTS) of a PES header starting in the packet at `packet` are, if it starts one.
private func timestampOffsets(_ bytes: [UInt8], packet: Int) -> (pts: Int, dts: Int?)? {
    guard bytes[packet + 1] & 0x40 != 0, bytes[packet + 3] & 0x10 != 0 else { return nil }
    var at = packet + 4
    if bytes[packet + 3] & 0x20 != 0 { at += 1 + Int(bytes[packet + 4]) }
    guard at + 14 <= packet + 188, bytes[at] == 0, bytes[at + 1] == 0, bytes[at + 2] == 1 else { return nil }
    let flags = bytes[at + 7] >> 6
    guard flags & 0x02 != 0 else { return nil }
    return (at + 9, flags == 0x03 ? at + 14 : nil)
}

/// The 33-bit timestamp in the five bytes at `at` (ISO/IEC 13818-1 §2.4.3.7).
private func readTimestamp(_ bytes: [UInt8], at: Int) -> Int64 {
    Int64(bytes[at] >> 1 & 0x07) << 30 | Int64(bytes[at + 1]) << 22 | Int64(bytes[at + 2] >> 1) << 15
        | Int64(bytes[at + 3]) << 7 | Int64(bytes[at + 4] >> 1)
}

/// Writes `value` (modulo 2^33) into the five timestamp bytes at `at`, keeping the prefix bits.
private func writeTimestamp(_ bytes: inout [UInt8], at: Int, _ value: Int64) {
    let value = value & 0x1_FFFF_FFFF
    bytes[at] = bytes[at] & 0xF0 | UInt8(value >> 29 & 0x0E) | 1
    bytes[at + 1] = UInt8(value >> 22 & 0xFF)
    bytes[at + 2] = UInt8(value >> 14 & 0xFE) | 1
    bytes[at + 3] = UInt8(value >> 7 & 0xFF)
    bytes[at + 4] = UInt8(value << 1 & 0xFE) | 1
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
