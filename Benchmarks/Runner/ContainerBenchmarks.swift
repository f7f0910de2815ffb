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
        ]
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
