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
    func engine(timeout: Duration = loopbackDeadline) -> DownloadEngine<ContinuousClock> {
        DownloadEngine(
            concurrency: 2, retry: RetryPolicy(maximumAttempts: 3, initialDelay: .milliseconds(1), jitter: 0),
            idleTimeout: timeout, clock: ContinuousClock(),
            transport: URLSessionTransport(session: URLSession(configuration: .ephemeral)))
    }

    @Test("a file in ten ranges, never more than two requests in flight, progress to the end, the exact bytes")
    func plainFile() async throws {
        defer { server.stop() }
        server.route("/lesson.mp4", .file(file, etag: "\"v1\""))
        let destination = temporaryFolder("loopback").appendingPathComponent("lesson.mp4")
        let job = MediaDownloader(engine: engine()).downloadFile(
            from: server.url("/lesson.mp4"), to: destination, chunkSize: 8_000)
        let progress = Task { await job.progress.reduce(into: [Double]()) { $0.append($1.fraction) } }
        let result = try await job.result()
        #expect(try Data(contentsOf: destination) == file)
        #expect(result.partsFetched == 10)
        #expect(server.maximumInFlight <= 2)
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

    @Test("a server that stops mid-body for longer than the part timeout is retried, and the file is exact")
    func stalledMidBody() async throws {
        defer { server.stop() }
        server.route("/lesson.mp4", .file(file))
        server.script("/lesson.mp4", [nil, .stallAfter(bytes: 100)])
        let destination = temporaryFolder("stall").appendingPathComponent("lesson.mp4")
        _ = try await MediaDownloader(engine: engine(timeout: .milliseconds(400))).downloadFile(
            from: server.url("/lesson.mp4"), to: destination, chunkSize: 8_000
        ).result()
        #expect(try Data(contentsOf: destination) == file)
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
        let job = MediaDownloader(engine: engine()).downloadLesson(
            from: server.url("/lesson/master.m3u8"), to: folder.appendingPathComponent("lesson"))
        let progress = Task { await job.progress.reduce(into: [DownloadProgress]()) { $0.append($1) } }
        let result = try await job.result()
        #expect(result.file.lastPathComponent == "lesson.mp4")
        #expect(try HLSVideoDownloadTests.sampleCount(result.file, handler: "vide") == 50)
        #expect(try HLSVideoDownloadTests.sampleCount(result.file, handler: "soun") == 88)
        #expect(server.maximumInFlight <= 2)
        #expect(await progress.value.last?.partsCompleted == 5)
        #expect(files(in: folder) == ["lesson.mp4"])
    }
}
