import Foundation
import MediaContainers

/// Input: one byte saying how many segments the rest is cut into (1 to 4, in equal parts) and
/// one byte whose bits say which segments open a new discontinuity, then the segments' bytes
/// (MPEG-TS, packed audio or fragmented MP4: whatever they are).
///
/// Properties: any bytes give an MP4 or a typed error, never a trap; remuxing each segment whole
/// and streaming it in pieces of 1, 13 and 4,096 bytes give the same file (or both an error);
/// and a finished file parses back: its top-level boxes tile it exactly, `ftyp` first, one
/// `mdat` and one `moov`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count >= 2 else { return 0 }
    let segmentCount = Int(bytes[0] % 4) + 1
    let pattern = bytes[1]
    let body = Data(bytes: bytes + 2, count: count - 2)
    let length = (body.count + segmentCount - 1) / max(segmentCount, 1)
    var segments: [SegmentRemuxer.Segment] = []
    var discontinuity = 0
    for index in 0..<segmentCount {
        let start = body.startIndex + min(index * length, body.count)
        let end = body.startIndex + min((index + 1) * length, body.count)
        if index > 0, pattern >> index & 1 == 1 { discontinuity += 1 }
        segments.append(SegmentRemuxer.Segment(data: body[start..<end], discontinuity: discontinuity, index: index))
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
    if case .file(let file) = whole { checkBoxes(file) }
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

/// Checks that the top-level boxes of `file` tile it exactly: `ftyp`, `mdat`, `moov`.
func checkBoxes(_ file: [UInt8]) {
    var types: [String] = []
    var at = 0
    while at < file.count {
        guard at + 8 <= file.count else { fatalError("a box header cut at \(at)") }
        var size = file[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) }
        let type = String(decoding: file[(at + 4)..<(at + 8)], as: UTF8.self)
        if size == 1 {
            guard at + 16 <= file.count else { fatalError("a large size cut at \(at)") }
            size = file[(at + 8)..<(at + 16)].reduce(0) { $0 << 8 | Int($1) }
        }
        guard size >= 8, at + size <= file.count else { fatalError("box \(type) at \(at): size \(size)") }
        types.append(type)
        at += size
    }
    guard types == ["ftyp", "mdat", "moov"] else { fatalError("top-level boxes \(types)") }
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
