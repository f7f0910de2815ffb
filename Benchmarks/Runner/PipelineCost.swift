import AllocationCounting
import BenchmarkHarness
import Downloads
import Foundation
import HTTPSupport
import TestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The lesson pipeline's own cost with no network: a lesson of 720p MPEG-TS segments served by
/// the in-memory transport in 16 KiB pieces (a URLSession's delivery size), two transfers at a
/// time, at full speed and paced at 10 MB/s per transfer as a slow network delivers them.
///
/// Beside `downloadLesson`, in the same run and alternating, the same transport's bodies read
/// by a loop that only counts the bytes: the transport's own cost (its producer tasks, its sleeps
/// between pieces). MediaCore's own cost is the difference. Each side's CPU seconds and context
/// switches (the process's, from `getrusage`) are taken around it, and shown per MB.
///
/// Heap allocations per MB come from one more run of each side with `AllocationCounting` on
/// (the process's `malloc` family, counted and handed to glibc's). That run is apart from the
/// timed ones, so the counter's atomic increments stay out of the CPU and switch figures.
/// Where the counter is unavailable (not glibc, or under a sanitizer) the column says so.
enum PipelineCost {
    /// What one run cost.
    struct Usage {
        var wall: Double
        var cpu: Double
        var switches: Int
        /// Heap allocations, from the counted run; nil where none was counted.
        var allocations: Int? = nil
    }

    /// The 16 KiB pieces a transfer delivers.
    static let pieceSize = 16 << 10
    /// The paced rate per transfer, in bytes a second.
    static let pacedRate = 10_000_000

    /// Prints the table.
    static func report(quick: Bool) {
        let seed = (try? Lessons.data("bench-720p/seg0.ts")).map { [UInt8]($0) } ?? []
        guard !seed.isEmpty else {
            print("Downloads pipeline cost: the bench-720p fixture is missing")
            return
        }
        let segments = quick ? 4 : 16
        let copies = max(1, (4 << 20) / seed.count)
        let stream = syntheticTransportStream(
            rangeLengths: Array(repeating: copies * seed.count, count: segments), seed: seed
        ).bytes
        let segmentLength = copies * seed.count
        let megabytes = Double(stream.count) / 1_000_000
        let rounds = quick ? 1 : 3
        print(
            "Downloads pipeline cost, no network: \(segments) TS segments (\(stream.count >> 20) MiB) in "
                + "\(pieceSize >> 10) KiB pieces from the in-memory transport, two transfers at a time "
                + "(medians of \(rounds) alternating round\(rounds == 1 ? "" : "s"))")
        print(
            "pace                    side                             wall      CPU s   switches  CPU ms/MB  switches/MB  allocs/MB"
        )
        var ownByPace: [(pace: String, cpu: Double, switches: Double)] = []
        for (pace, gap) in [("full speed", Duration.zero), ("10 MB/s per transfer", pacing)] {
            let transport = serve(stream, segments: segments, segmentLength: segmentLength, gap: gap)
            var bare: [Usage] = []
            var lesson: [Usage] = []
            for _ in 0..<rounds {
                bare.append(measure { readBare(transport, segments: segments) })
                lesson.append(measure { downloadLesson(transport) })
            }
            var transportAlone = median(bare)
            var pipeline = median(lesson)
            transportAlone.allocations = countAllocations { readBare(transport, segments: segments) }
            pipeline.allocations = countAllocations { downloadLesson(transport) }
            var own = Usage(
                wall: pipeline.wall - transportAlone.wall, cpu: pipeline.cpu - transportAlone.cpu,
                switches: pipeline.switches - transportAlone.switches)
            if let whole = pipeline.allocations, let alone = transportAlone.allocations {
                own.allocations = whole - alone
            }
            row(pace, "the transport alone (baseline)", transportAlone, megabytes: megabytes)
            row(pace, "downloadLesson", pipeline, megabytes: megabytes)
            row(pace, "MediaCore's own (the difference)", own, megabytes: megabytes)
            ownByPace.append((pace, own.cpu / megabytes, Double(own.switches) / megabytes))
        }
        if ownByPace.count == 2 {
            let fast = ownByPace[0]
            let slow = ownByPace[1]
            // The target: bytes that arrive slowly cost MediaCore no more wake-ups per MB than
            // bytes that arrive at once, give or take a sixth for noise and the paced run's timer.
            let bound = max(fast.switches * 1.5, 10)
            print(
                "MediaCore's own switches per MB, paced ÷ full speed: \(format(slow.switches)) ÷ \(format(fast.switches)); "
                    + "target at most 1.5× (or 10 per MB): \(slow.switches <= bound ? "met" : "MISSED")")
        }
    }

    /// The pause between pieces of a paced transfer.
    static var pacing: Duration {
        .nanoseconds(Int64(pieceSize) * 1_000_000_000 / Int64(pacedRate))
    }

    /// The lesson on an in-memory transport: its playlist, and each segment in pieces `gap` apart.
    static func serve(_ stream: [UInt8], segments: Int, segmentLength: Int, gap: Duration)
        -> InMemoryHTTPTransport<ContinuousClock>
    {
        let transport = InMemoryHTTPTransport(clock: ContinuousClock())
        var playlist = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:6\n#EXT-X-PLAYLIST-TYPE:VOD\n"
        for index in 0..<segments { playlist += "#EXTINF:5.0,\nseg\(index).ts\n" }
        playlist += "#EXT-X-ENDLIST\n"
        transport.stub(
            playlistURL,
            reply: .response(
                status: 200, headers: ["Content-Type": "application/vnd.apple.mpegurl"], body: Data(playlist.utf8)))
        for index in 0..<segments {
            let start = index * segmentLength
            let pieces = stride(from: start, to: start + segmentLength, by: pieceSize).map {
                Data(stream[$0..<min($0 + pieceSize, start + segmentLength)])
            }
            transport.stub(
                segmentURL(index),
                reply: .chunked(status: 200, headers: ["Content-Type": "video/mp2t"], chunks: pieces, gap: gap))
        }
        return transport
    }

    static let playlistURL = URL(string: "https://pipeline.bench/lesson/index.m3u8") ?? folder
    static func segmentURL(_ index: Int) -> URL {
        URL(string: "https://pipeline.bench/lesson/seg\(index).ts") ?? folder
    }
    static let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
        "mediacore-pipeline-\(ProcessInfo.processInfo.processIdentifier)")

    /// Reads every segment's body, two at a time, counting its bytes.
    static func readBare(_ transport: InMemoryHTTPTransport<ContinuousClock>, segments: Int) {
        let total = DownloadBenchmarks.runBlocking {
            try await withThrowingTaskGroup(of: Int.self) { group in
                var next = 0
                var total = 0
                func start() {
                    guard next < segments else { return }
                    let url = segmentURL(next)
                    next += 1
                    group.addTask {
                        let streamed = try await transport.stream(
                            URLRequest(url: url), idleTimeout: .seconds(120), on: ContinuousClock())
                        var count = 0
                        for try await chunk in streamed.body { count += chunk.count }
                        return count
                    }
                }
                start()
                start()
                while let count = try await group.next() {
                    total += count
                    start()
                }
                return total
            }
        }
        guard let total, total > 0 else {
            FileHandle.standardError.write(Data("benchmark: the bare reading failed\n".utf8))
            exit(1)
        }
        blackHole(total)
    }

    /// Downloads the lesson into one MP4, then removes it.
    static func downloadLesson(_ transport: InMemoryHTTPTransport<ContinuousClock>) {
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let downloader = MediaDownloader(
            engine: DownloadEngine(concurrency: 2, clock: ContinuousClock(), transport: transport))
        let destination = folder.appendingPathComponent("lesson")
        let bytes = DownloadBenchmarks.runBlocking {
            try await downloader.downloadLesson(from: playlistURL, to: destination).result().byteCount
        }
        guard let bytes, bytes > 0 else {
            FileHandle.standardError.write(Data("benchmark: the pipeline's download failed\n".utf8))
            exit(1)
        }
        try? FileManager.default.removeItem(at: folder)
    }

    /// What `body` cost the process.
    static func measure(_ body: () -> Void) -> Usage {
        let before = (ContinuousClock.now, resources())
        body()
        let after = (ContinuousClock.now, resources())
        let wall = before.0.duration(to: after.0)
        return Usage(
            wall: Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18,
            cpu: after.1.cpu - before.1.cpu, switches: after.1.switches - before.1.switches)
    }

    /// The heap allocations the process made during `body`, or nil where they cannot be counted.
    static func countAllocations(_ body: () -> Void) -> Int? {
        guard mediacore_allocation_counting_available() != 0 else {
            body()
            return nil
        }
        let before = mediacore_allocation_count()
        mediacore_allocation_counting_enable(1)
        body()
        mediacore_allocation_counting_enable(0)
        return Int(clamping: mediacore_allocation_count() - before)
    }

    /// The process's CPU seconds (user and system) and context switches (voluntary and not).
    static func resources() -> (cpu: Double, switches: Int) {
        guard let usage = HostileInputMemory.processUsage() else { return (0, 0) }
        let seconds = { (time: timeval) in Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return (seconds(usage.ru_utime) + seconds(usage.ru_stime), Int(usage.ru_nvcsw + usage.ru_nivcsw))
    }

    /// The run of median CPU time, whole (so that its figures belong together).
    static func median(_ usages: [Usage]) -> Usage {
        let sorted = usages.sorted { $0.cpu < $1.cpu }
        return sorted[sorted.count / 2]
    }

    static func row(_ pace: String, _ side: String, _ usage: Usage, megabytes: Double) {
        func pad(_ text: String, _ width: Int) -> String {
            text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
        }
        print(
            pad(pace, 24) + pad(side, 33) + pad(String(format: "%.3f s", usage.wall), 10)
                + pad(String(format: "%.3f", usage.cpu), 8) + pad(String(usage.switches), 10)
                + pad(format(usage.cpu * 1_000 / megabytes), 11)
                + pad(format(Double(usage.switches) / megabytes), 13)
                + (usage.allocations.map { format(Double($0) / megabytes) } ?? "not counted"))
    }

    static func format(_ value: Double) -> String {
        String(format: "%.1f", value)
    }
}
