import Foundation
import MediaContainers
import TestSupport
import Testing

/// Fragmented MP4 made hostile from the CMAF lesson's real audio rendition: every case ends in
/// samples or a typed ``ContainerError``, never a trap, a hang or a huge allocation.
@Suite("Hostile fragmented MP4 (ISO/IEC 14496-12 §8.6.6, §8.8.8)")
struct HostileFragmentTests {
    /// Container boxes whose children `rewriting` walks.
    static let containers: Set<String> = ["moov", "trak", "edts", "mdia", "minf", "stbl", "moof", "traf"]

    /// `bytes[range]`'s boxes with each box `body` returns new bytes for replaced, and every
    /// container's size recomputed.
    static func rewriting(
        _ bytes: [UInt8], _ range: Range<Int>? = nil, _ body: (String, [UInt8]) -> [UInt8]?
    ) -> [UInt8] {
        var out: [UInt8] = []
        var at = range?.lowerBound ?? 0
        let end = range?.upperBound ?? bytes.count
        while at + 8 <= end {
            let size = bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) }
            guard size >= 8, at + size <= end else { break }
            let type = String(decoding: bytes[(at + 4)..<(at + 8)], as: UTF8.self)
            var box: [UInt8]
            if let replaced = body(type, Array(bytes[at..<(at + size)])) {
                box = replaced
            } else if containers.contains(type) {
                box = Array(bytes[(at + 4)..<(at + 8)]) + rewriting(bytes, (at + 8)..<(at + size), body)
                box = bigEndian(UInt32(box.count + 4), bytes: 4) + box
            } else {
                box = Array(bytes[at..<(at + size)])
            }
            out += box
            at += size
        }
        return out
    }

    static func bigEndian(_ value: UInt64, bytes: Int) -> [UInt8] {
        (0..<bytes).map { UInt8((value >> (8 * UInt64(bytes - 1 - $0))) & 0xFF) }
    }

    static func bigEndian(_ value: UInt32, bytes: Int) -> [UInt8] { bigEndian(UInt64(value), bytes: bytes) }

    /// A version-1 `elst` with `edits` (segment duration, media time).
    static func editList(_ edits: [(UInt64, Int64)]) -> [UInt8] {
        var body: [UInt8] = [1, 0, 0, 0] + bigEndian(UInt32(edits.count), bytes: 4)
        for (duration, time) in edits {
            body += bigEndian(duration, bytes: 8) + bigEndian(UInt64(bitPattern: time), bytes: 8) + [0, 1, 0, 0]
        }
        return bigEndian(UInt32(body.count + 8), bytes: 4) + Array("elst".utf8) + body
    }

    func read(_ initialization: [UInt8], _ segment: [UInt8]) throws -> [MediaSample] {
        var reader = try FragmentedMP4Reader(initialization: Data(initialization))
        return try reader.read(Data(segment)) + reader.finish()
    }

    let initialization = [UInt8]((try? Lessons.data("cmaf/audio_en/init_1.mp4")) ?? Data())
    let segment = [UInt8]((try? Lessons.data("cmaf/audio_en/seg0.m4s")) ?? Data())

    @Test("§8.6.6: empty edits whose durations sum past 2⁶³ void the edit list instead of overflowing")
    func editDurationsOverflow() throws {
        let hostile = Self.rewriting(initialization) { type, _ in
            type == "elst" ? Self.editList([(UInt64(Int64.max), -1), (UInt64(Int64.max), -1), (100, 0)]) : nil
        }
        // Two v0 entries (24 bytes) become three v1 entries (60 bytes).
        #expect(hostile.count == initialization.count + 36)
        let samples = try read(hostile, segment)
        #expect(samples.count == 47)
        #expect(samples.first?.decodeTime == 0)
    }

    @Test(
        "§8.6.6: one empty edit of centuries is a typed timestamp error, not an overflow",
        arguments: [Int64.max / 4, 1 << 61])
    func editShiftOverflow(delay: Int64) throws {
        let hostile = Self.rewriting(initialization) { type, _ in
            type == "elst" ? Self.editList([(UInt64(delay), -1), (100, 0)]) : nil
        }
        do {
            let samples = try read(hostile, segment)
            // Accepted only if every time stayed in range.
            #expect(samples.allSatisfy { abs($0.decodeTime) <= Int64.max / 4 })
        } catch let error as ContainerError {
            guard case .timestampOutOfRange = error.kind else {
                Issue.record("unexpected error \(error)")
                return
            }
        }
    }

    @Test(
        "§8.8.8: a trun with no per-sample fields and a huge sample_count is refused before any allocation",
        arguments: [UInt32.max, 1 << 21])
    func hugeSampleCount(count: UInt32) throws {
        let hostile = Self.rewriting(segment) { type, box in
            guard type == "trun" else { return nil }
            // Flags: data offset only; the per-sample fields stay in the box, unread.
            return Array(box[0..<9]) + [0, 0, 1] + Self.bigEndian(count, bytes: 4) + Array(box[16...])
        }
        #expect(throws: ContainerError.self) { try read(initialization, hostile) }
    }

    @Test(
        "§8.8.8: many small truns whose sample counts sum past a million in one segment are refused before any allocation",
        arguments: [64, 600])
    func manyRunsSumPastTheLimit(runs: Int) throws {
        // Each run: version 0, flags 0 (no per-sample fields, no data offset), 2¹⁸ samples of the
        // track's default size; 16 bytes each, so 600 runs are under 10 KB.
        let run: [UInt8] =
            Self.bigEndian(UInt32(16), bytes: 4) + Array("trun".utf8) + [0, 0, 0, 0]
            + Self.bigEndian(UInt32(1 << 18), bytes: 4)
        let hostile = Self.rewriting(segment) { type, box in
            type == "trun" ? [UInt8](repeating: 0, count: 0) + Array(repeatElement(run, count: runs).joined()) : nil
        }
        #expect(hostile.count < segment.count + runs * 16)
        do {
            _ = try read(initialization, hostile)
            Issue.record("\(runs) runs of 2¹⁸ samples were read")
        } catch let error as ContainerError {
            guard case .malformedBox(let box, let reason) = error.kind else {
                Issue.record("unexpected error \(error)")
                return
            }
            #expect(box == "trun", "\(reason)")
            #expect(reason.contains("in one segment"), "\(reason)")
        }
    }
}

extension HostileFragmentTests {
    @Test(
        "RFC 8216 §3.3: an initialisation section that carries fragments (moof, mdat after its moov) is a typed error, so their samples are not dropped in silence"
    )
    func fragmentsInsideTheInitialisationSection() throws {
        // As ffmpeg 5.1's HLS muxer writes with movflags=+frag_every_frame: the first fragments
        // land in init.mp4.
        let hostile = initialization + segment
        let error = try #require(throws: ContainerError.self) {
            try FragmentedMP4Reader(initialization: Data(hostile))
        }
        guard case .malformedBox(let box, _) = error.kind else {
            Issue.record("unexpected error \(error)")
            return
        }
        #expect(box == "moof")
        #expect(error.offset.map { $0 >= initialization.count } == true)
        // The same section without them reads the segment.
        #expect(try read(initialization, segment).count == 47)
    }
}

extension HostileFragmentTests {
    @Test(
        "§8.8.8: runs that point at the same mdat bytes again and again are refused before a byte is copied",
        arguments: [3, 8_000])
    func runsReadingTheSameBytes(copies: Int) throws {
        // The segment's run repeated, each copy's data offset moved by the bytes the copies add
        // to the moof, so that every copy reads the mdat's samples again.
        let hostile = Self.rewriting(segment) { type, box in
            guard type == "trun", box[11] & 0x01 != 0 else { return nil }
            let growth = UInt32((copies - 1) * box.count)
            let offset = box[16..<20].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } &+ growth
            let moved = Array(box[0..<16]) + Self.bigEndian(offset, bytes: 4) + Array(box[20...])
            return Array(repeatElement(moved, count: copies).joined())
        }
        #expect(hostile.count > segment.count)
        let error = try #require(throws: ContainerError.self) { try read(initialization, hostile) }
        guard case .malformedBox(let box, let reason) = error.kind else {
            Issue.record("unexpected error \(error)")
            return
        }
        #expect(box == "trun")
        #expect(reason.contains("more than the"), "\(reason)")
    }
}

extension HostileFragmentTests {
    /// The CMAF lesson's audio segment with its tfdt set to `time` (a version 1 box).
    func segment(decodingFrom time: UInt64) -> [UInt8] {
        Self.rewriting(segment) { type, _ in
            type == "tfdt"
                ? Self.bigEndian(UInt32(20), bytes: 4) + Array("tfdt".utf8) + [1, 0, 0, 0]
                    + Self.bigEndian(time, bytes: 8) : nil
        }
    }

    @Test(
        "ISO/IEC 14496-12 §8.8.12: decode times near the reader's limit, again after every discontinuity, are a typed error, never an overflow"
    )
    func hugeDecodeTimesAcrossDiscontinuities() throws {
        let late = segment(decodingFrom: UInt64(Int64.max / 4 - 1_000_000))
        var steps: [[SegmentRemuxer.Segment]] = []
        for part in 0..<4 {
            steps.append([
                SegmentRemuxer.Segment(
                    data: Data(segment), discontinuity: part, initialization: Data(initialization), index: 2 * part)
            ])
            steps.append([SegmentRemuxer.Segment(data: Data(late), discontinuity: part, index: 2 * part + 1)])
        }
        let error = try #require(throws: ContainerError.self) { _ = try Remux.run(steps, brand: .audio) }
        guard case .timestampOutOfRange(let reason) = error.kind else {
            Issue.record("unexpected error \(error)")
            return
        }
        #expect(reason.contains("on the lesson's timeline"), "\(reason)")
    }

    @Test(
        "§8.8.7: a base data offset past any file is a typed error, not an overflow", arguments: [UInt64.max, 1 << 63])
    func hugeBaseDataOffset(offset: UInt64) throws {
        let hostile = Self.rewriting(segment) { type, box in
            guard type == "tfhd" else { return nil }
            // Flags: base data offset present (0x01), the rest as the box had them; the offset
            // goes right after the track ID.
            let flags = UInt32(box[9]) << 16 | UInt32(box[10]) << 8 | UInt32(box[11])
            let rest = flags & 0x01 != 0 ? Array(box[24...]) : Array(box[16...])
            let body =
                [box[8]] + Array(Self.bigEndian(flags | 0x01, bytes: 4).suffix(3)) + Array(box[12..<16])
                + Self.bigEndian(offset, bytes: 8) + rest
            return Self.bigEndian(UInt32(body.count + 8), bytes: 4) + Array("tfhd".utf8) + body
        }
        let error = try #require(throws: ContainerError.self) { try read(initialization, hostile) }
        guard case .malformedBox(let box, _) = error.kind else {
            Issue.record("unexpected error \(error)")
            return
        }
        #expect(box == "tfhd")
    }
}
