import BenchmarkHarness
import Foundation
import MediaContainers
import TestSupport

/// The remuxer's case: MPEG-TS audio in, an .m4a out, beside a plain copy of the same bytes.
enum ContainerBenchmarks {
    static func cases(quick: Bool) -> [Benchmark] {
        [remux(packets: quick ? 20_000 : 200_000)]
    }

    static let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
        "mediacore-container-benchmarks-\(ProcessInfo.processInfo.processIdentifier)")

    /// A transport stream of AAC audio in ADTS frames, about `packets` packets long: two frames
    /// of 200 bytes per PES packet, as encoders write them (the payloads are never decoded).
    static func stream(packets: Int) -> Data {
        Data(TransportStreamBuilder.audioStream(pesCount: packets / 3, framesPerPES: 2))
    }

    /// Remuxing in 1 MiB pieces, as the downloads module reads its staged segments, against
    /// copying the same bytes from memory to a file in 1 MiB pieces.
    static func remux(packets: Int) -> Benchmark {
        let input = stream(packets: packets)
        let megabytes = Double(input.count) / 1_048_576
        return Benchmark(
            group: "Containers",
            name: "remux \(String(format: "%.1f", megabytes)) MB of AAC in MPEG-TS to .m4a",
            items: input.count,
            maximumSamples: 5,
            setup: {
                {
                    try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                    let destination = folder.appendingPathComponent("remux.m4a")
                    var frames = 0
                    if var remuxer = try? AudioRemuxer(destination: destination) {
                        try? remuxer.startSegment(0)
                        var start = input.startIndex
                        while start < input.endIndex {
                            let end = min(start + (1 << 20), input.endIndex)
                            try? remuxer.append(input[start..<end])
                            start = end
                        }
                        frames = remuxer.frameCount
                        _ = try? remuxer.finish()
                    }
                    blackHole(frames)
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
                            var start = input.startIndex
                            while start < input.endIndex {
                                let end = min(start + (1 << 20), input.endIndex)
                                try? handle.write(contentsOf: input[start..<end])
                                start = end
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
