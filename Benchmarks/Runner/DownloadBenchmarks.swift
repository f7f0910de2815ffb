import BenchmarkHarness
import Dispatch
import Downloads
import Foundation
import HTTPSupport
import TestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The fetch engine's cases: throughput to disk, latency hiding, and the memory bound.
enum DownloadBenchmarks {
    static func cases(quick: Bool) -> [Benchmark] {
        [
            throughput(parts: quick ? 64 : 1_000, partSize: 256 << 10),
            latency(parts: quick ? 40 : 200, latency: .milliseconds(5)),
            lessonOverLoopback(segments: quick ? 4 : 24),
            decryption(megabytes: quick ? 8 : 64),
        ]
    }

    /// AES-128-CBC decryption of whole segments (RFC 8216 §5.2), beside copying the same bytes in
    /// memory: decryption must never be what limits a download, so the target is a rate
    /// (150 MB/s, 1.2 Gb/s, beyond this machine's loopback URLSession).
    static func decryption(megabytes: Int) -> Benchmark {
        var generator = SplitMix64(seed: 5)
        let key = (0..<16).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        let iv = (0..<16).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        let segmentSize = 4 << 20
        let count = max(1, megabytes / 4)
        // Random bytes stand for the ciphertext; its last block is made to decrypt to padding.
        let segments: [Data] = (0..<count).map { _ in
            Data((0..<segmentSize).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
        }
        let cipher = AES128(key: key)
        let padded: [Data] = segments.map { segment in
            guard let cipher else { return segment }
            // Re-encrypt a padding block as the last block, chained from the one before it.
            var data = segment
            let chain = data.withUnsafeBytes { AES128.load($0.baseAddress.unsafelyUnwrapped + segmentSize - 32) }
            let padding = (UInt32(0x1010_1010), UInt32(0x1010_1010), UInt32(0x1010_1010), UInt32(0x1010_1010))
            let last = cipher.encrypt(
                (padding.0 ^ chain.0, padding.1 ^ chain.1, padding.2 ^ chain.2, padding.3 ^ chain.3))
            data.withUnsafeMutableBytes { AES128.store(last, to: $0.baseAddress.unsafelyUnwrapped + segmentSize - 16) }
            return data
        }
        let bytes = count * segmentSize
        return Benchmark(
            group: "Downloads",
            name: "AES-128-CBC decryption of \(count) segments × 4 MiB",
            items: bytes,
            maximumSamples: 5,
            setup: {
                {
                    var total = 0
                    if let cipher {
                        for segment in padded {
                            total += (try? CBCDecryptor.decrypt(segment, cipher: cipher, iv: iv).count) ?? -1
                        }
                    }
                    blackHole(total)
                }
            },
            baselines: [
                .init(name: "copying the bytes in memory", target: .itemsPerSecond(150_000_000)) {
                    {
                        var total = 0
                        for segment in padded {
                            var copy = Data(count: segment.count)
                            copy.withUnsafeMutableBytes { target in
                                segment.withUnsafeBytes { source in
                                    target.copyMemory(from: source)
                                }
                            }
                            total += copy.count
                        }
                        blackHole(total)
                    }
                }
            ]
        )
    }

    static let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
        "mediacore-benchmarks-\(ProcessInfo.processInfo.processIdentifier)")

    /// Many 256 KiB parts from memory to a file: the engine's own overhead.
    static func throughput(parts count: Int, partSize: Int) -> Benchmark {
        let size = count * partSize
        var generator = SplitMix64(seed: 1)
        let resource = Data((0..<size).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
        let url = URL(string: "https://bench.example/file.bin") ?? folder
        let parts = (0..<count).map {
            DownloadPart(url: url, byteRange: ByteRange(length: UInt64(partSize), offset: UInt64($0 * partSize)))
        }
        return Benchmark(
            group: "Downloads",
            name: "\(count.formatted) parts × 256 KiB to a file (\(size >> 20) MiB)",
            items: size,
            maximumSamples: 5,
            setup: {
                let transport = InMemoryHTTPTransport(clock: ContinuousClock())
                transport.stub(url, reply: .resource(resource))
                let engine = DownloadEngine(concurrency: 2, clock: ContinuousClock(), transport: transport)
                return {
                    let destination = folder.appendingPathComponent("throughput.bin")
                    blackHole(runBlocking { try await engine.download(parts, to: destination).byteCount })
                    try? FileManager.default.removeItem(at: destination)
                }
            },
            baselines: [
                .init(name: "sequential FileHandle write", target: .within(2)) {
                    {
                        let destination = folder.appendingPathComponent("sequential.bin")
                        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                        _ = FileManager.default.createFile(atPath: destination.path, contents: nil)
                        if let handle = try? FileHandle(forWritingTo: destination) {
                            for index in 0..<count {
                                try? handle.write(
                                    contentsOf: resource.subdata(in: (index * partSize)..<((index + 1) * partSize)))
                            }
                            try? handle.synchronize()
                            try? handle.close()
                        }
                        try? FileManager.default.removeItem(at: destination)
                    }
                }
            ]
        )
    }

    /// Parts that each take `latency` to arrive: two transfers should halve the wall time.
    static func latency(parts count: Int, latency: Duration) -> Benchmark {
        let url = URL(string: "https://bench.example/slow.bin") ?? folder
        let resource = Data(repeating: 7, count: count * 1_024)
        let parts = (0..<count).map {
            DownloadPart(url: url, byteRange: ByteRange(length: 1_024, offset: UInt64($0 * 1_024)))
        }
        @Sendable func engine(_ concurrency: Int) -> DownloadEngine<ContinuousClock> {
            let transport = InMemoryHTTPTransport(clock: ContinuousClock())
            transport.stub(url, reply: .resource(resource, latency: latency))
            return DownloadEngine(concurrency: concurrency, clock: ContinuousClock(), transport: transport)
        }
        let ideal = latency * count / 2
        return Benchmark(
            group: "Downloads",
            name: "\(count) parts, \(Int(latency.seconds * 1_000)) ms latency each, N = 2",
            items: count,
            maximumSamples: 5,
            setup: {
                let parallel = engine(2)
                return {
                    let destination = folder.appendingPathComponent("latency.bin")
                    blackHole(runBlocking { try await parallel.download(parts, to: destination).byteCount })
                }
            },
            baselines: [
                .init(name: "ideal: latency × parts ÷ N", target: .within(1.1)) {
                    { Thread.sleep(forTimeInterval: ideal.seconds) }
                },
                .init(name: "sequential (N = 1)") {
                    let sequential = engine(1)
                    return {
                        let destination = folder.appendingPathComponent("latency-1.bin")
                        blackHole(runBlocking { try await sequential.download(parts, to: destination).byteCount })
                    }
                },
            ]
        )
    }

    /// An HLS lesson of `segments` MPEG-TS segments of about 4 MB (720p H.264 at 5 Mb/s and AAC,
    /// one continuous stream) fetched from a server on 127.0.0.1 through URLSession and remuxed into one MP4,
    /// beside a plain download of the same bytes as one file to disk: the lesson's demuxing,
    /// remuxing, journal and the segments' extra requests are what it costs on top.
    static func lessonOverLoopback(segments: Int) -> Benchmark {
        let seed = (try? Lessons.data("bench-720p/seg0.ts")).map { [UInt8]($0) } ?? []
        let copies = max(1, (4 << 20) / max(seed.count, 1))
        let stream = syntheticTransportStream(
            rangeLengths: Array(repeating: copies * seed.count, count: segments), seed: seed
        ).bytes
        let segmentLength = copies * seed.count
        var playlist = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:\(copies + 1)\n#EXT-X-PLAYLIST-TYPE:VOD\n"
        for index in 0..<segments { playlist += "#EXTINF:\(copies).0,\nseg\(index).ts\n" }
        playlist += "#EXT-X-ENDLIST\n"
        let lessonPlaylist = playlist
        @Sendable func downloader() -> MediaDownloader<ContinuousClock> {
            MediaDownloader(
                engine: DownloadEngine(
                    concurrency: 2, clock: ContinuousClock(),
                    transport: URLSessionTransport(session: URLSession(configuration: .ephemeral))))
        }
        /// Runs a download, and stops the benchmark if it failed: a failed download is not fast.
        @Sendable func run(_ job: @escaping @Sendable () -> DownloadJob) {
            let bytes = runBlocking { try await job().result().byteCount }
            guard let bytes, bytes > 0 else {
                FileHandle.standardError.write(Data("benchmark: the loopback download failed\n".utf8))
                exit(1)
            }
            blackHole(bytes)
        }
        let server = try? LoopbackHTTPServer()
        if let server {
            server.route(
                "/lesson/index.m3u8",
                .response(
                    status: 200, headers: ["Content-Type": "application/vnd.apple.mpegurl"],
                    body: Data(lessonPlaylist.utf8)))
            for index in 0..<segments {
                let start = index * segmentLength
                server.route(
                    "/lesson/seg\(index).ts",
                    .file(Data(stream[start..<(start + segmentLength)]), contentType: "video/mp2t"))
            }
            server.route("/whole.ts", .file(Data(stream), contentType: "video/mp2t"))
        }
        return Benchmark(
            group: "Downloads",
            name: "HLS lesson over loopback, \(segments) TS segments (\(stream.count >> 20) MiB) remuxed to .mp4",
            items: stream.count,
            maximumSamples: 5,
            setup: {
                try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                let lessons = downloader()
                return {
                    guard let server else { return }
                    let destination = folder.appendingPathComponent("lesson")
                    run { lessons.downloadLesson(from: server.url("/lesson/index.m3u8"), to: destination) }
                    try? FileManager.default.removeItem(at: destination.appendingPathExtension("mp4"))
                }
            },
            baselines: [
                .init(name: "the same bytes as one file, downloadFile", target: .within(1.25)) {
                    let files = downloader()
                    return {
                        guard let server else { return }
                        let destination = folder.appendingPathComponent("whole.ts")
                        run { files.downloadFile(from: server.url("/whole.ts"), to: destination) }
                        try? FileManager.default.removeItem(at: destination)
                    }
                }
            ]
        )
    }

    /// Prints the peak of bytes held in memory during a reordering download beside its bound.
    static func reportMemoryBound(quick: Bool) {
        let count = quick ? 40 : 400
        let largest = 64 << 10
        let transport = InMemoryHTTPTransport(clock: ContinuousClock())
        var parts: [DownloadPart] = []
        for index in 0..<count {
            let url = URL(string: "https://bench.example/chunk/\(index)") ?? folder
            // Later parts answer sooner, so the reorder buffer fills.
            let delay = Duration.microseconds((count - index) % 7 * 300)
            transport.stub(
                url, reply: .response(status: 200, body: Data(repeating: 1, count: largest - index % 5), latency: delay)
            )
            parts.append(DownloadPart(url: url))
        }
        let allParts = parts
        for concurrency in [2, 4] {
            let engine = DownloadEngine(concurrency: concurrency, clock: ContinuousClock(), transport: transport)
            let destination = folder.appendingPathComponent("memory.bin")
            let peak = runBlocking { try await engine.download(allParts, to: destination).peakBufferedBytes } ?? 0
            let bound = UInt64((concurrency + 1) * largest)
            print(
                "Downloads memory, \(count) unordered parts of ≤ 64 KiB, N = \(concurrency): peak buffered \(peak) bytes, "
                    + "bound (N + 1) × largest part = \(bound) bytes: \(peak <= bound ? "within" : "EXCEEDED")")
        }
        reportStreamedBound(quick: quick)
        try? FileManager.default.removeItem(at: folder)
    }

    /// Prints the peak of bytes held in memory while ranged parts stream to their offsets,
    /// beside its bound: one chunk per transfer, whatever the size of a part.
    static func reportStreamedBound(quick: Bool) {
        let partSize = quick ? 256 << 10 : 4 << 20
        let chunkSize = 16 << 10
        let partCount = 8
        let resource = Data(repeating: 7, count: partSize * partCount)
        let url = URL(string: "https://bench.example/long.mp4") ?? folder
        let transport = InMemoryHTTPTransport(clock: ContinuousClock())
        transport.stub(
            url,
            reply: .handler { request in
                let range = request.value(forHTTPHeaderField: "Range") ?? ""
                let bounds = range.dropFirst("bytes=".count).split(separator: "-").compactMap { Int($0) }
                guard bounds.count == 2 else { return .response(status: 400) }
                let chunks = stride(from: bounds[0], through: bounds[1], by: chunkSize).map {
                    resource.subdata(in: $0..<min($0 + chunkSize, bounds[1] + 1))
                }
                return .chunked(
                    status: 206, headers: ["Content-Range": "bytes \(bounds[0])-\(bounds[1])/\(resource.count)"],
                    chunks: chunks, gap: .zero)
            })
        let parts = (0..<partCount).map {
            DownloadPart(url: url, byteRange: ByteRange(length: UInt64(partSize), offset: UInt64($0 * partSize)))
        }
        for concurrency in [2, 4] {
            let engine = DownloadEngine(concurrency: concurrency, clock: ContinuousClock(), transport: transport)
            let destination = folder.appendingPathComponent("streamed.bin")
            let peak = runBlocking { try await engine.download(parts, to: destination).peakBufferedBytes } ?? 0
            let bound = UInt64(concurrency * chunkSize)
            print(
                "Downloads memory, \(partCount) ranged parts of \(partSize >> 10) KiB in \(chunkSize >> 10) KiB chunks, "
                    + "N = \(concurrency): peak held \(peak) bytes, bound N × largest chunk = \(bound) bytes "
                    + "(a whole part: \(partSize)): \(peak <= bound ? "within" : "EXCEEDED")")
        }
    }

    /// Runs async work from a benchmark's synchronous body.
    static func runBlocking<Value: Sendable>(_ body: @escaping @Sendable () async throws -> Value) -> Value? {
        let semaphore = DispatchSemaphore(value: 0)
        let box = ResultBox<Value>()
        Task {
            box.value = try? await body()
            semaphore.signal()
        }
        semaphore.wait()
        return box.value
    }
}

/// Carries a value out of a task to a waiting thread (the semaphore orders the accesses).
final class ResultBox<Value>: @unchecked Sendable {
    var value: Value?
}
