import Foundation
import MediaContainers

/// Input: one byte whose low two bits say how many segments the body is cut into (1 to 4, in
/// equal parts) and whose bit 2 says an initialisation section comes first; one byte whose bits
/// say which segments open a new discontinuity; with bit 2, two bytes of length and the
/// initialisation section, given to the first segment and to every one that opens a
/// discontinuity (as an `EXT-X-MAP` after each `EXT-X-DISCONTINUITY`); then the body: the
/// segments' bytes (MPEG-TS, packed audio or fragmented MP4: whatever they are).
///
/// Properties: any bytes give an MP4 or a typed error, never a trap; remuxing each segment whole
/// and streaming it in pieces of 1, 13 and 4,096 bytes give the same file (or both an error);
/// and a finished file parses back: its top-level boxes tile it exactly (`ftyp` first, one
/// `mdat`, one `moov`), and inside `moov` every track's sample tables agree with each other
/// (ISO/IEC 14496-12 §8.6, §8.7): `stts`, `ctts` and `stsz` count the same samples, `stsc`
/// points at chunks that exist and at sample descriptions that `stsd` holds, `stss` lists
/// samples that exist, and every chunk's samples lie inside the `mdat`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count >= 2 else { return 0 }
    let segmentCount = Int(bytes[0] % 4) + 1
    let pattern = bytes[1]
    var bodyStart = 2
    var initialization: Data?
    if bytes[0] & 0x04 != 0 {
        guard count >= 4 else { return 0 }
        let length = Int(bytes[2]) << 8 | Int(bytes[3])
        guard count >= 4 + length else { return 0 }
        initialization = Data(bytes: bytes + 4, count: length)
        bodyStart = 4 + length
    }
    let body = Data(bytes: bytes + bodyStart, count: count - bodyStart)
    let length = (body.count + segmentCount - 1) / max(segmentCount, 1)
    var segments: [SegmentRemuxer.Segment] = []
    var discontinuity = 0
    for index in 0..<segmentCount {
        let start = body.startIndex + min(index * length, body.count)
        let end = body.startIndex + min((index + 1) * length, body.count)
        let opens = index > 0 && pattern >> index & 1 == 1
        if opens { discontinuity += 1 }
        segments.append(
            SegmentRemuxer.Segment(
                data: body[start..<end], discontinuity: discontinuity,
                initialization: index == 0 || opens ? initialization : nil, index: index))
    }
    let whole = remux(segments, pieceSize: nil)
    for size in [1, 13, 4_096] {
        switch (whole, remux(segments, pieceSize: size)) {
        case (.file(let a), .file(let b)) where a != b:
            fatalError("streamed in pieces of \(size) bytes, the file differs")
        case (.file, .failure(let kind)), (.failure(let kind), .file):
            fatalError("streamed in pieces of \(size) bytes, only one way failed: \(kind)")
        default: break
        }
    }
    if case .file(let file) = whole { checkFile(file) }
    return 0
}

enum Outcome: Equatable {
    case file([UInt8])
    case failure(ContainerError.Kind)
}

/// Remuxes `segments`, each whole or, when it can stream, fed in pieces of `pieceSize` bytes.
func remux(_ segments: [SegmentRemuxer.Segment], pieceSize: Int?) -> Outcome {
    let output = MemoryOutput()
    do {
        var remuxer = try SegmentRemuxer(output: output, brand: .movie)
        for segment in segments {
            if let pieceSize, remuxer.canStream(discontinuity: segment.discontinuity) {
                var header = segment
                header.data = Data()
                try remuxer.begin(header)
                var start = segment.data.startIndex
                while start < segment.data.endIndex {
                    let end = min(start + pieceSize, segment.data.endIndex)
                    try remuxer.feed(segment.data[start..<end])
                    start = end
                }
                try remuxer.end()
            } else {
                try remuxer.append([segment])
            }
        }
        _ = try remuxer.finish()
        return .file(output.bytes)
    } catch {
        return .failure(error.kind)
    }
}

/// A big-endian unsigned integer of `width` bytes at `at` (the caller has checked the bounds).
func number(_ file: [UInt8], _ at: Int, _ width: Int) -> Int {
    file[at..<(at + width)].reduce(0) { $0 << 8 | Int($1) }
}

/// The boxes in `range` of `file`, each as its type and the range of its body; they must tile
/// the range exactly.
func boxes(_ file: [UInt8], in range: Range<Int>) -> [(type: String, body: Range<Int>)] {
    var found: [(type: String, body: Range<Int>)] = []
    var at = range.lowerBound
    while at < range.upperBound {
        guard range.upperBound - at >= 8 else { fatalError("a box header cut at \(at)") }
        var size = number(file, at, 4)
        var header = 8
        let type = String(decoding: file[(at + 4)..<(at + 8)], as: UTF8.self)
        if size == 1 {
            guard range.upperBound - at >= 16 else { fatalError("a large size cut at \(at)") }
            size = number(file, at + 8, 8)
            header = 16
        }
        guard size >= header, size <= range.upperBound - at else { fatalError("box \(type) at \(at): size \(size)") }
        found.append((type, (at + header)..<(at + size)))
        at += size
    }
    return found
}

/// The body of the only child of type `type`.
func child(_ type: String, of list: [(type: String, body: Range<Int>)], in parent: String) -> Range<Int> {
    let matches = list.filter { $0.type == type }
    guard matches.count == 1, let only = matches.first else {
        fatalError("\(parent) has \(matches.count) \(type) boxes")
    }
    return only.body
}

/// Checks the file's top-level boxes, then each track's sample tables against each other and
/// against the `mdat`.
func checkFile(_ file: [UInt8]) {
    let top = boxes(file, in: 0..<file.count)
    guard top.map(\.type) == ["ftyp", "mdat", "moov"] else { fatalError("top-level boxes \(top.map(\.type))") }
    let mediaData = top[1].body
    let movie = boxes(file, in: top[2].body)
    guard movie.first?.type == "mvhd" else { fatalError("moov does not start with mvhd") }
    for track in movie where track.type == "trak" {
        let trak = boxes(file, in: track.body)
        _ = child("tkhd", of: trak, in: "trak")
        let mdia = boxes(file, in: child("mdia", of: trak, in: "trak"))
        _ = child("mdhd", of: mdia, in: "mdia")
        _ = child("hdlr", of: mdia, in: "mdia")
        let minf = boxes(file, in: child("minf", of: mdia, in: "mdia"))
        checkSampleTables(file, boxes(file, in: child("stbl", of: minf, in: "minf")), mediaData: mediaData)
    }
}

/// The entries of a full box whose entry count follows its version and flags, each
/// `width` bytes, checked to fit the body.
func entries(_ file: [UInt8], _ body: Range<Int>, width: Int, skipping extra: Int = 0, _ name: String) -> [Int] {
    let start = body.lowerBound + 4 + extra
    guard body.count >= 8 + extra else { fatalError("\(name) cut short") }
    let count = number(file, start, 4)
    guard count <= (body.upperBound - start - 4) / width, start + 4 + count * width == body.upperBound else {
        fatalError("\(name): \(count) entries of \(width) bytes in \(body.count) bytes")
    }
    return (0..<count).map { start + 4 + $0 * width }
}

func checkSampleTables(_ file: [UInt8], _ stbl: [(type: String, body: Range<Int>)], mediaData: Range<Int>) {
    let descriptions = child("stsd", of: stbl, in: "stbl")
    guard descriptions.count >= 8 else { fatalError("stsd cut short") }
    let descriptionCount = number(file, descriptions.lowerBound + 4, 4)
    let entryBoxes = boxes(file, in: (descriptions.lowerBound + 8)..<descriptions.upperBound)
    guard descriptionCount >= 1, entryBoxes.count == descriptionCount else {
        fatalError("stsd says \(descriptionCount) entries and holds \(entryBoxes.count)")
    }
    // stsz: the sample sizes.
    let sizesBody = child("stsz", of: stbl, in: "stbl")
    guard sizesBody.count >= 12 else { fatalError("stsz cut short") }
    let fixedSize = number(file, sizesBody.lowerBound + 4, 4)
    let sampleCount = number(file, sizesBody.lowerBound + 8, 4)
    var sizes: [Int]
    if fixedSize == 0 {
        guard sizesBody.count == 12 + 4 * sampleCount else { fatalError("stsz holds the wrong number of sizes") }
        sizes = (0..<sampleCount).map { number(file, sizesBody.lowerBound + 12 + 4 * $0, 4) }
    } else {
        sizes = Array(repeating: fixedSize, count: sampleCount)
    }
    // stts and ctts count the same samples.
    let times = entries(file, child("stts", of: stbl, in: "stbl"), width: 8, "stts")
    guard times.reduce(0, { $0 + number(file, $1, 4) }) == sampleCount else { fatalError("stts and stsz disagree") }
    if stbl.contains(where: { $0.type == "ctts" }) {
        let offsets = entries(file, child("ctts", of: stbl, in: "stbl"), width: 8, "ctts")
        guard offsets.reduce(0, { $0 + number(file, $1, 4) }) == sampleCount else {
            fatalError("ctts and stsz disagree")
        }
    }
    if stbl.contains(where: { $0.type == "stss" }) {
        let syncs = entries(file, child("stss", of: stbl, in: "stbl"), width: 4, "stss").map { number(file, $0, 4) }
        guard zip(syncs, syncs.dropFirst()).allSatisfy({ $0 < $1 }),
            syncs.allSatisfy({ (1...sampleCount).contains($0) })
        else { fatalError("stss lists samples that do not exist or out of order") }
    }
    // Chunks: co64 or stco.
    let chunkOffsets: [Int]
    if stbl.contains(where: { $0.type == "co64" }) {
        chunkOffsets = entries(file, child("co64", of: stbl, in: "stbl"), width: 8, "co64").map { number(file, $0, 8) }
    } else {
        chunkOffsets = entries(file, child("stco", of: stbl, in: "stbl"), width: 4, "stco").map { number(file, $0, 4) }
    }
    // stsc: runs of chunks with their samples per chunk and sample description.
    let runs = entries(file, child("stsc", of: stbl, in: "stbl"), width: 12, "stsc").map {
        (first: number(file, $0, 4), samples: number(file, $0 + 4, 4), description: number(file, $0 + 8, 4))
    }
    guard runs.isEmpty == chunkOffsets.isEmpty, runs.first.map({ $0.first == 1 }) ?? true else {
        fatalError("stsc does not start at chunk 1")
    }
    var sample = 0
    for (index, run) in runs.enumerated() {
        let end = index + 1 < runs.count ? runs[index + 1].first : chunkOffsets.count + 1
        guard run.first < end, end <= chunkOffsets.count + 1, run.samples >= 1,
            (1...descriptionCount).contains(run.description)
        else { fatalError("stsc run \(index): \(run) against \(chunkOffsets.count) chunks") }
        for chunk in (run.first - 1)..<(end - 1) {
            var at = chunkOffsets[chunk]
            for _ in 0..<run.samples {
                guard sample < sampleCount else { fatalError("stsc places more samples than stsz has") }
                guard at >= mediaData.lowerBound, sizes[sample] <= mediaData.upperBound - at else {
                    fatalError("sample \(sample + 1) lies outside the mdat")
                }
                at += sizes[sample]
                sample += 1
            }
        }
    }
    guard sample == sampleCount else { fatalError("stsc places \(sample) of \(sampleCount) samples") }
}

/// An output in memory.
final class MemoryOutput: MP4Output, @unchecked Sendable {
    var bytes: [UInt8] = []

    func write(_ source: UnsafeRawBufferPointer, at offset: UInt64) throws {
        let start = Int(offset)
        if bytes.count < start + source.count {
            bytes += [UInt8](repeating: 0, count: start + source.count - bytes.count)
        }
        bytes.replaceSubrange(start..<(start + source.count), with: source)
    }

    func read(at offset: UInt64, count: Int) throws -> Data {
        let start = min(Int(offset), bytes.count)
        return Data(bytes[start..<min(start + count, bytes.count)])
    }

    func truncate(to length: UInt64) throws {
        bytes.removeSubrange(min(Int(length), bytes.count)...)
    }

    func synchronize() throws {}
}
