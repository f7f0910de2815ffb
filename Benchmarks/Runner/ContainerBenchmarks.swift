import BenchmarkHarness
import Foundation
import MediaContainers
import TestSupport

/// The remuxer's cases: MPEG-TS segments in, an MP4 out, beside a plain copy of the same bytes.
enum ContainerBenchmarks {
    static func cases(quick: Bool) -> [Benchmark] {
        [
            remux(
                name: "AAC in MPEG-TS to .m4a", brand: .audio,
                segments: [
                    Data(TransportStreamBuilder.audioStream(pesCount: (quick ? 20_000 : 200_000) / 3, framesPerPES: 2))
                ]
            ),
            remux(
                name: "H.264 and AAC in MPEG-TS segments to .mp4", brand: .movie,
                segments: lesson(repeats: quick ? 20 : 200)),
        ]
    }

    static let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
        "mediacore-container-benchmarks-\(ProcessInfo.processInfo.processIdentifier)")

    /// The two segments of an ffmpeg-made lesson (192×108 H.264 and AAC), `repeats` times over.
    static func lesson(repeats: Int) -> [Data] {
        let segments = ["seg0.ts", "seg1.ts"].compactMap { try? Lessons.data("ts-captions/\($0)") }
        return Array((0..<repeats).map { _ in segments }.joined())
    }

    /// Remuxing segments fed in 256 KiB pieces (as a download streams them), against copying the
    /// same bytes from memory to a file in pieces of the same size.
    static func remux(name: String, brand: MP4Writer.Brand, segments: [Data]) -> Benchmark {
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
                        // The lesson's parts follow one another: each pair opens a new discontinuity.
                        for (index, segment) in segments.enumerated() {
                            let discontinuity = index / 2
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
                .init(name: "copying the bytes to a file", target: .within(2)) {
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
