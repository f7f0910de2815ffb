import Foundation
import MediaContainers
import TestSupport
import Testing

/// Remuxes segments with ``SegmentRemuxer`` for the tests, whole or streamed in pieces, and reads
/// the file back.
enum Remux {
    struct Result {
        var file: MP4Inspector
        var report: SegmentRemuxer.Report
        var summary: MP4Writer.Summary
        /// The file's bytes (the file itself is removed once read).
        var bytes: Data { Data(file.bytes) }
    }

    /// Remuxes `steps` (groups of segments remuxed together) into a new file. With `pieces`, each
    /// segment that can stream is fed in pieces of that many bytes instead of whole. With
    /// `wholePieces`, every step is remuxed whole by `append(taking:)` from its segments' bytes
    /// in pieces of that many bytes, all in `pieces` as a lesson download hands them over (or,
    /// with `firstPieceInData`, the first in `data`).
    static func run(
        _ steps: [[SegmentRemuxer.Segment]], brand: MP4Writer.Brand = .movie, renditions: Int = 1,
        pieces: Int? = nil, wholePieces: Int? = nil, firstPieceInData: Bool = false,
        gaps: SegmentRemuxer.GapPolicy = .keepTimestamps
    ) throws -> Result {
        let folder = temporaryFolder("remux")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent(brand == .audio ? "lesson.m4a" : "lesson.mp4")
        var remuxer = try SegmentRemuxer(
            output: try MP4FileOutput(url: url), brand: brand,
            renditions: (0..<max(renditions, 1)).map { _ in SegmentRemuxer.Rendition() }, gaps: gaps)
        for step in steps {
            if let pieces, step.count == 1, let segment = step.first,
                remuxer.canStream(discontinuity: segment.discontinuity)
            {
                var header = segment
                header.data = Data()
                try remuxer.begin(header)
                var start = segment.data.startIndex
                while start < segment.data.endIndex {
                    let end = min(start + pieces, segment.data.endIndex)
                    try remuxer.feed(segment.data[start..<end])
                    start = end
                }
                try remuxer.end()
            } else if let wholePieces {
                var split = step.map { segment in
                    var split = segment
                    let bytes = segment.data
                    let starts = Array(stride(from: bytes.startIndex, to: bytes.endIndex, by: wholePieces))
                    let slices = starts.map { Data(bytes[$0..<min($0 + wholePieces, bytes.endIndex)]) }
                    split.data = firstPieceInData ? slices.first ?? Data() : Data()
                    split.pieces = firstPieceInData ? Array(slices.dropFirst()) : slices
                    return split
                }
                try remuxer.append(taking: &split)
                #expect(split.allSatisfy { $0.data.isEmpty && $0.pieces.isEmpty }, "the remux took the bytes")
            } else {
                try remuxer.append(step)
            }
        }
        let summary = try remuxer.finish()
        return Result(file: try MP4Inspector(url: url), report: remuxer.report, summary: summary)
    }

    /// Remuxes single segments, one after another, of one rendition and discontinuity number.
    static func run(
        _ segments: [Data], brand: MP4Writer.Brand = .movie, pieces: Int? = nil,
        gaps: SegmentRemuxer.GapPolicy = .keepTimestamps
    ) throws -> Result {
        try run(
            segments.enumerated().map { [SegmentRemuxer.Segment(data: $1, discontinuity: 0, index: $0)] }, brand: brand,
            pieces: pieces, gaps: gaps)
    }

    /// The steps of lesson `name` as ``SegmentRemuxer`` takes them.
    static func steps(_ name: String) throws -> [[SegmentRemuxer.Segment]] {
        var index = 0
        var maps: [Int: String] = [:]
        return try Lessons.steps(name).map { step in
            try step.map { segment in
                defer { index += 1 }
                var initialization: Data?
                if let map = segment.initialization {
                    let key = "\(map)@\(segment.initializationRange.map { "\($0)" } ?? "")"
                    if maps[segment.rendition] != key {
                        maps[segment.rendition] = key
                        initialization = try segment.initializationData()
                    }
                }
                return SegmentRemuxer.Segment(
                    data: try segment.data(), rendition: segment.rendition, discontinuity: segment.discontinuity,
                    initialization: initialization, resourceOffset: UInt64(segment.byteRange?.lowerBound ?? 0),
                    index: index)
            }
        }
    }

    /// Remuxes lesson `name`.
    static func lesson(
        _ name: String, pieces: Int? = nil, wholePieces: Int? = nil, firstPieceInData: Bool = false,
        gaps: SegmentRemuxer.GapPolicy = .keepTimestamps
    ) throws -> Result {
        let playlists = try Lessons.playlists(name)
        return try run(
            try steps(name), renditions: playlists.count, pieces: pieces, wholePieces: wholePieces,
            firstPieceInData: firstPieceInData, gaps: gaps)
    }
}
