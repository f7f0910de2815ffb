import BenchmarkHarness
import Foundation
import MediaContainers
import TestSupport

/// The remuxer's cases: MPEG-TS segments in, an MP4 out, beside a plain copy of the same bytes.
enum ContainerBenchmarks {
    static func cases(quick: Bool) -> [Benchmark] {
        [
            // Audio is many small frames (207 bytes each here): the remux must go at
            // video's pace whatever the frame size, so the target is a rate (150 MB/s, 1.2 Gb/s),
            // with the copy printed beside it. No frame allocates (each is a slice of a block).
            remux(
                name: "AAC in MPEG-TS to .m4a", brand: .audio,
                segments: [
                    Data(TransportStreamBuilder.audioStream(pesCount: (quick ? 20_000 : 200_000) / 3, framesPerPES: 2))
                ],
                target: .itemsPerSecond(150_000_000)
            ),
            // A 720p lesson (5 Mb/s): bytes per sample as real lessons have them.
            remux(
                name: "720p H.264 and AAC in MPEG-TS segments to .mp4", brand: .movie,
                segments: lesson(segments: quick ? 2 : 16), target: .within(2)),
            startCodes(in: lesson(segments: quick ? 2 : 16)),
        ]
    }

    /// The remuxer's start-code search (`memchr` for each `01`, then the two bytes before it)
    /// over a 720p lesson's bytes, against a byte loop that skips ahead as ffmpeg's
    /// `avpriv_find_start_code` does: it looks at every third byte while none is 0 or 1. Both
    /// must find the same start codes, or the benchmark stops.
    static func startCodes(in segments: [Data]) -> Benchmark {
        let bytes = [UInt8](segments.joined())
        let expected = bytes.withUnsafeBytes { skippingAhead($0) }
        let found = bytes.withUnsafeBytes { StartCodeSearch.count(in: $0) }
        if found != expected {
            FileHandle.standardError.write(
                Data("benchmark: the start-code searches disagree (\(found) against \(expected))\n".utf8))
            exit(1)
        }
        return Benchmark(
            group: "Containers",
            name: "find the \(found) start codes in \(bytes.count >> 20) MiB of 720p H.264 in MPEG-TS",
            items: bytes.count,
            setup: { { blackHole(bytes.withUnsafeBytes { StartCodeSearch.count(in: $0) }) } },
            baselines: [
                .init(name: "a byte loop skipping ahead (ffmpeg's way)", target: .atLeast(1)) {
                    { blackHole(bytes.withUnsafeBytes { skippingAhead($0) }) }
                }
            ]
        )
    }

    /// The start codes (`00 00 01`) in `bytes`, by a byte loop that skips ahead: a byte above 1
    /// cannot be any of a start code's three, so the next one can end no sooner than three bytes
    /// on; a nonzero byte before a 0 or 1, no sooner than two on.
    ///
    /// - Complexity: O(*n*), reading about a third of the bytes of data with few zeros.
    static func skippingAhead(_ bytes: UnsafeRawBufferPointer) -> Int {
        var found = 0
        var index = 2
        while index < bytes.count {
            let byte = bytes[index]
            if byte > 1 {
                index += 3
            } else if bytes[index - 1] != 0 {
                index += 2
            } else if bytes[index - 2] != 0 || byte != 1 {
                index += 1
            } else {
                found += 1
                index += 3
            }
        }
        return found
    }

    static let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
        "mediacore-container-benchmarks-\(ProcessInfo.processInfo.processIdentifier)")

    /// `segments` segments of about 4 MB of one continuous 720p stream (the benchmarks' one-second
    /// ffmpeg encode, repeated with its timestamps and continuity counters moved on).
    static func lesson(segments: Int) -> [Data] {
        let seed = (try? Lessons.data("bench-720p/seg0.ts")).map { [UInt8]($0) } ?? []
        let copies = max(1, (4 << 20) / max(seed.count, 1))
        let length = copies * seed.count
        let stream = syntheticTransportStream(rangeLengths: Array(repeating: length, count: segments), seed: seed).bytes
        return (0..<segments).map { Data(stream[($0 * length)..<(($0 + 1) * length)]) }
    }

    /// Remuxing segments fed in 256 KiB pieces (as a download streams them), against copying the
    /// same bytes from memory to a file in pieces of the same size.
    static func remux(name: String, brand: MP4Writer.Brand, segments: [Data], target: Benchmark.Target) -> Benchmark {
        let bytes = segments.reduce(0) { $0 + $1.count }
        let megabytes = Double(bytes) / 1_048_576
        let piece = 256 << 10
        return Benchmark(
            group: "Containers",
            name: "remux \(String(format: "%.1f", megabytes)) MB of \(name)",
            items: bytes,
            maximumSamples: 5,
            setup: {
                {
                    try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                    let destination = folder.appendingPathComponent("remux.mp4")
                    var samples = 0
                    if let output = try? MP4FileOutput(url: destination),
                        var remuxer = try? SegmentRemuxer(output: output, brand: brand)
                    {
                        // One continuous stream: every segment streams into the file.
                        for (index, segment) in segments.enumerated() {
                            let discontinuity = 0
                            let header = SegmentRemuxer.Segment(
                                data: Data(), discontinuity: discontinuity, index: index)
                            if remuxer.canStream(discontinuity: discontinuity) {
                                try? remuxer.begin(header)
                                var start = segment.startIndex
                                while start < segment.endIndex {
                                    let end = min(start + piece, segment.endIndex)
                                    try? remuxer.feed(segment[start..<end])
                                    start = end
                                }
                                try? remuxer.end()
                            } else {
                                var whole = header
                                whole.data = segment
                                try? remuxer.append([whole])
                            }
                        }
                        samples = remuxer.tracks.reduce(0) { $0 + $1.sampleCount }
                        _ = try? remuxer.finish()
                    }
                    blackHole(samples)
                    try? FileManager.default.removeItem(at: destination)
                }
            },
            baselines: [
                .init(name: "copying the bytes to a file", target: target) {
                    {
                        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                        let destination = folder.appendingPathComponent("copy.ts")
                        _ = FileManager.default.createFile(atPath: destination.path, contents: nil)
                        if let handle = try? FileHandle(forWritingTo: destination) {
                            for segment in segments {
                                var start = segment.startIndex
                                while start < segment.endIndex {
                                    let end = min(start + piece, segment.endIndex)
                                    try? handle.write(contentsOf: segment[start..<end])
                                    start = end
                                }
                            }
                            try? handle.synchronize()
                            try? handle.close()
                        }
                        blackHole(destination)
                        try? FileManager.default.removeItem(at: destination)
                    }
                }
            ]
        )
    }
}
