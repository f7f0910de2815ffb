import Downloads
import Foundation
import HTTPSupport
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Downloads over a real URLSession against a server on 127.0.0.1, with faults injected.
@Suite("Downloads over loopback HTTP")
struct LoopbackDownloadTests {
    let server: LoopbackHTTPServer
    let file = resourceBytes(80_000, seed: 31)

    init() throws {
        server = try LoopbackHTTPServer()
    }

    /// An engine over a fresh URLSession, retrying after a millisecond, each part within `timeout`.
    func engine(
        timeout: Duration = loopbackDeadline, transport: any HTTPTransport = WatchedTransport()
    ) -> DownloadEngine<ContinuousClock> {
        DownloadEngine(
            concurrency: 2, retry: RetryPolicy(maximumAttempts: 3, initialDelay: .milliseconds(1), jitter: 0),
            idleTimeout: timeout, clock: ContinuousClock(), transport: transport)
    }

    @Test("a file in ten ranges, never more than two requests in flight, progress to the end, the exact bytes")
    func plainFile() async throws {
        defer { server.stop() }
        server.route("/lesson.mp4", .file(file, etag: "\"v1\""))
        let destination = temporaryFolder("loopback").appendingPathComponent("lesson.mp4")
        let transport = WatchedTransport()
        let job = MediaDownloader(engine: engine(transport: transport)).downloadFile(
            from: server.url("/lesson.mp4"), to: destination, chunkSize: 8_000)
        let progress = Task { await job.progress.reduce(into: [Double]()) { $0.append($1.fraction) } }
        let result = try await job.result()
        #expect(try Data(contentsOf: destination) == file)
        #expect(result.partsFetched == 10)
        #expect(transport.maximumInFlight <= 2)
        #expect(await progress.value.last == 1)
        let ranges = server.requests.compactMap { $0.headers["range"] }
        #expect(ranges.contains("bytes=0-7999") && ranges.contains("bytes=72000-79999"))
    }

    /// Every fault at every request of the download in turn (the probe is request 0): each run
    /// ends with the exact file, or a typed error and no file at all. A part that stops mid-body
    /// past the part timeout is retried like a lost connection.
    @Test(
        "a fault at every part index ends with the exact file or a typed error, never a corrupt file",
        arguments: [
            LoopbackHTTPServer.Fault.reset, .closeAfter(bytes: 3_000), .status(503), .wrongContentLength(9_000),
            .ignoreRange, .stallAfter(bytes: 100),
        ])
    func faultAtEveryPart(fault: LoopbackHTTPServer.Fault) async throws {
        defer { server.stop() }
        server.route("/lesson.mp4", .file(file))
        for index in 1...10 {
            server.script("/lesson.mp4", Array(repeating: nil, count: index) + [fault])
            let folder = temporaryFolder("faults")
            let destination = folder.appendingPathComponent("lesson.mp4")
            do {
                // A part must arrive within 400 ms: one that stops after 100 of its 8,000 bytes cannot.
                _ = try await MediaDownloader(engine: engine(timeout: .milliseconds(400))).downloadFile(
                    from: server.url("/lesson.mp4"), to: destination, chunkSize: 8_000
                ).result()
                #expect(try Data(contentsOf: destination) == file, "\(fault) at request \(index)")
            } catch {
                #expect(!FileManager.default.fileExists(atPath: destination.path), "\(fault) at \(index): \(error)")
            }
        }
    }

    /// The part timeout runs on a manual clock, moved once only when the stalled part is the
    /// one in flight and its body's idle watchdog is asleep: a healthy part slowed by a loaded
    /// machine is never taken for a stalled one.
    @Test("a server that stops mid-body for longer than the part timeout is retried, and the file is exact")
    func stalledMidBody() async throws {
        defer { server.stop() }
        server.route("/lesson.mp4", .file(file))
        // One part at a time: the probe, nine parts, then the last part stops after 100 bytes.
        server.script("/lesson.mp4", Array(repeating: nil, count: 10) + [.stallAfter(bytes: 100)])
        let destination = temporaryFolder("stall").appendingPathComponent("lesson.mp4")
        let clock = ManualClock()
        let transport = WatchedTransport(announcingFirstChunkOf: "bytes=72000-79999")
        let engine = DownloadEngine(
            concurrency: 1, retry: RetryPolicy(maximumAttempts: 3, initialDelay: .zero, jitter: 0),
            idleTimeout: .milliseconds(400), clock: clock, transport: transport)
        let job = MediaDownloader(engine: engine).downloadFile(
            from: server.url("/lesson.mp4"), to: destination, chunkSize: 8_000)
        // The last part's first bytes have reached its body, whose watchdog then sleeps until
        // 400 ms after them (the clock has not moved): the only sleeper left.
        for await _ in transport.firstChunks { break }
        await clock.waitForSleeper(until: ManualClock.Instant(offset: .milliseconds(400)))
        clock.advance(by: .milliseconds(400))
        _ = try await job.result()
        #expect(try Data(contentsOf: destination) == file)
        #expect(server.requests.count == 12, "the probe, ten parts and the last part again")
    }

    /// The probe and three parts answered, then parts that stop after 2,000 bytes.
    static let threePartsThenStall: [LoopbackHTTPServer.Fault?] =
        [nil, nil, nil, nil] + Array(repeating: .stallAfter(bytes: 2_000), count: 30)

    @Test("paused and resumed, the file is byte-identical; a changed ETag in between starts it over")
    func pauseResumeAndChange() async throws {
        defer { server.stop() }
        server.route("/lesson.mp4", .file(file, etag: "\"v1\""))
        // The probe and three parts answer; later parts stop mid-body, so the pause lands
        // mid-download.
        server.script("/lesson.mp4", Self.threePartsThenStall)
        let folder = temporaryFolder("pause")
        let destination = folder.appendingPathComponent("lesson.mp4")
        let downloader = MediaDownloader(engine: engine())
        let first = downloader.downloadFile(from: server.url("/lesson.mp4"), to: destination, chunkSize: 8_000)
        for await report in first.progress where report.partsCompleted >= 3 { break }
        first.pause()
        await #expect(throws: DownloadError(.paused)) { try await first.result() }
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        // The server's copy changes while paused: the resume must not mix the two versions.
        let second = resourceBytes(80_000, seed: 32)
        server.route("/lesson.mp4", .file(second, etag: "\"v2\""))
        server.script("/lesson.mp4", [])
        _ = try await downloader.downloadFile(from: server.url("/lesson.mp4"), to: destination, chunkSize: 8_000)
            .result()
        #expect(try Data(contentsOf: destination) == second)
        #expect(files(in: folder) == ["lesson.mp4"])
        // And an unchanged file resumes byte-identical.
        let again = folder.appendingPathComponent("again.mp4")
        server.script("/lesson.mp4", Self.threePartsThenStall)
        let third = downloader.downloadFile(from: server.url("/lesson.mp4"), to: again, chunkSize: 8_000)
        for await report in third.progress where report.partsCompleted >= 3 { break }
        third.pause()
        _ = try? await third.result()
        server.script("/lesson.mp4", [])
        _ = try await downloader.downloadFile(from: server.url("/lesson.mp4"), to: again, chunkSize: 8_000).result()
        #expect(try Data(contentsOf: again) == second)
    }

    @Test("an HLS lesson (video and a separate audio rendition) over HTTP: one MP4, at most two requests in flight")
    func hlsLesson() async throws {
        defer { server.stop() }
        let fixtures = FixtureLoader(bundle: .module)
        let master = """
            #EXTM3U
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac",NAME="English",LANGUAGE="en",DEFAULT=YES,URI="audio/index.m3u8"
            #EXT-X-STREAM-INF:BANDWIDTH=300000,RESOLUTION=192x108,AUDIO="aac"
            video/index.m3u8

            """
        server.route(
            "/lesson/master.m3u8",
            .response(status: 200, headers: ["Content-Type": "application/vnd.apple.mpegurl"], body: Data(master.utf8)))
        for folder in ["video", "audio"] {
            server.route(
                "/lesson/\(folder)/index.m3u8",
                .response(status: 200, body: try fixtures.data("media/hls-av/\(folder)/index.m3u8")))
            for index in 0..<3 {
                guard let data = try? fixtures.data("media/hls-av/\(folder)/seg\(index).ts") else { continue }
                server.route("/lesson/\(folder)/seg\(index).ts", .file(data, etag: "\"\(folder)\(index)\""))
            }
        }
        let folder = temporaryFolder("hls-loopback")
        let transport = WatchedTransport()
        let job = MediaDownloader(engine: engine(transport: transport)).downloadLesson(
            from: server.url("/lesson/master.m3u8"), to: folder.appendingPathComponent("lesson"))
        let progress = Task { await job.progress.reduce(into: [DownloadProgress]()) { $0.append($1) } }
        let result = try await job.result()
        #expect(result.file.lastPathComponent == "lesson.mp4")
        #expect(try HLSVideoDownloadTests.sampleCount(result.file, handler: "vide") == 50)
        #expect(try HLSVideoDownloadTests.sampleCount(result.file, handler: "soun") == 88)
        #expect(transport.maximumInFlight <= 2)
        #expect(await progress.value.last?.partsCompleted == 5)
        #expect(files(in: folder) == ["lesson.mp4"])
    }
}

/// URLSession's transport, watched from the client's side: how many requests are in flight at
/// once (from the call until its body has ended or been dropped), and when the first chunk of
/// a request for one byte range has been read from its body.
///
/// The client's count is the one that matters: the server's own can read a third request
/// before its thread has noted that an answer it wrote has ended.
final class WatchedTransport: HTTPTransport {
    let base = URLSessionTransport(session: URLSession(configuration: .ephemeral))
    let range: String?
    let firstChunks: AsyncStream<Void>
    private let announce: AsyncStream<Void>.Continuation
    private let counts = LockedState((inFlight: 0, maximum: 0))

    init(announcingFirstChunkOf range: String? = nil) {
        self.range = range
        (firstChunks, announce) = AsyncStream.makeStream(of: Void.self)
    }

    /// The most requests in flight at once so far.
    var maximumInFlight: Int { counts.withLock { $0.maximum } }

    private func begin() {
        counts.withLock { counts in
            counts.inFlight += 1
            counts.maximum = max(counts.maximum, counts.inFlight)
        }
    }

    private func end() {
        counts.withLock { $0.inFlight -= 1 }
    }

    func send(_ request: URLRequest) async throws -> (Data, URLResponse) {
        begin()
        defer { end() }
        return try await base.send(request)
    }

    func stream(_ request: URLRequest) async throws -> (URLResponse, HTTPBodyChunks) {
        begin()
        let ending = BodyEnd { [weak self] in self?.end() }
        let response: URLResponse
        let chunks: HTTPBodyChunks
        do {
            (response, chunks) = try await base.stream(request)
        } catch {
            ending.end()
            throw error
        }
        let reader = LockedState(chunks.makeAsyncIterator())
        let announce = request.value(forHTTPHeaderField: "Range") == range ? announce : nil
        let announced = LockedState(false)
        // Read in the caller's task, so that its cancellation reaches the transfer as before.
        let observed = HTTPBodyChunks(unfolding: {
            var iterator = reader.withLock { $0 }
            let chunk: Data?
            do {
                chunk = try await iterator.next()
            } catch {
                ending.end()
                throw error
            }
            reader.withLock { $0 = iterator }
            guard let chunk else {
                ending.end()
                return nil
            }
            if let announce,
                !announced.withLock({ state in
                    defer { state = true }
                    return state
                })
            {
                announce.yield()
            }
            return chunk
        })
        return (response, observed)
    }
}

/// Calls its closure once: when ``end()`` is first called, or when it is released (a body
/// dropped before its end).
final class BodyEnd: Sendable {
    private let call: LockedState<(@Sendable () -> Void)?>

    init(_ call: @escaping @Sendable () -> Void) {
        self.call = LockedState(call)
    }

    func end() {
        call.withLock { call in
            defer { call = nil }
            return call
        }?()
    }

    deinit { end() }
}
