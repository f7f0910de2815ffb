import Downloads
import Foundation
import HTTPSupport
import OfflineLessons
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The Swift examples of the article *Downloading a lesson for offline use*, compiled and run
/// through URLSession against a server on 127.0.0.1, as an app runs them. The architecture
/// tests check that the article shows exactly the lines between the `example` markers.
@Suite("Documentation examples")
struct DocumentationExampleTests {
    let server: LoopbackHTTPServer

    /// Serves the lesson of `Fixtures/media/hls-av` (H.264 video, AAC audio as a separate
    /// rendition) at `/lesson/master.m3u8`.
    init() throws {
        server = try LoopbackHTTPServer()
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
    }

    @Test(
        "the overview's offline library: an HLS lesson ends as one .mp4, and the button follows it until it is done")
    func offlineLibrary() async throws {
        defer { server.stop() }
        let offlineFolder = temporaryFolder("doc-offline")
        let lesson = (id: "950-salsa", title: "Salsa")
        let videoLink = server.url("/lesson/master.m3u8")
        var drawn: [OfflineLibrary.ItemState] = []
        func redraw(_ state: OfflineLibrary.ItemState) { drawn.append(state) }
        // example: begin offline-library
        let downloader = MediaDownloader(engine: DownloadEngine())  // URLSession, 2 transfers
        let library = OfflineLibrary(directory: offlineFolder) { remote, destination in
            downloader.downloadLesson(from: remote, to: destination)
        }
        try await library.download(lesson.id, from: videoLink)  // an HLS master playlist
        for await update in library.updates where update.id == lesson.id {
            redraw(update.state)  // the button, with its fraction
            guard case .downloading = update.state else { break }  // downloaded, failed, paused…
        }
        let file = await library.localFile(of: lesson.id)  // …/950-….mp4, AVPlayer plays it
        // example: end offline-library
        let local = try #require(file)
        #expect(local.lastPathComponent.hasPrefix("950-") && local.pathExtension == "mp4")
        #expect(try HLSVideoDownloadTests.sampleCount(local, handler: "vide") == 50)
        // The loop saw the download's states from the current one on: zero or more
        // `.downloading`, then `.downloaded` (a fast download may be done before it subscribes).
        #expect(drawn.last.map { if case .downloaded = $0 { true } else { false } } == true)
        #expect(drawn.dropLast().allSatisfy { if case .downloading = $0 { true } else { false } })
    }

    @Test("the audio section's example: the best audio rendition ends as an .m4a, the fill reaches 1")
    func hlsAudio() async throws {
        defer { server.stop() }
        let cacheFolder = temporaryFolder("doc-audio")
        let masterURL = server.url("/lesson/master.m3u8")
        var circleFill = 0.0
        // example: begin hls-audio-download
        let downloader = MediaDownloader(engine: DownloadEngine())  // URLSession, 2 transfers
        let job = downloader.downloadHLSAudio(from: masterURL, to: cacheFolder.appending(path: "lesson.m4a"))
        for await progress in job.progress { circleFill = progress.fraction }
        let result = try await job.result()  // an .m4a that AVAudioPlayer opens
        // example: end hls-audio-download
        #expect(circleFill == 1)
        #expect(result.file.lastPathComponent == "lesson.m4a")
        #expect(try HLSVideoDownloadTests.sampleCount(result.file, handler: "soun") == 88)
    }

    @Test("When downloads fail: the screen's offer and words come from the failure's category")
    func failureRecovery() {
        func shown(_ failure: DownloadFailure) -> (offer: String?, words: String) {
            // example: begin failure-recovery
            let offer =
                switch failure.category.recovery {
                case .retryWhenOnline, .retryLater: "Try again"
                case .freeUpSpace: "Manage storage"
                case .signIn: "Sign in"
                case .none, .nothingToShow: nil as String?
                }
            let words = failure.category.summary  // or the app's own, localized
            // example: end failure-recovery
            return (offer, words)
        }
        let expired = DownloadFailure(DownloadError(.httpStatus(403), url: server.url("/lesson.mp4")))
        #expect(shown(expired).offer == "Sign in")
        #expect(shown(DownloadFailure(DownloadError(.httpStatus(410)))).offer == nil)
        #expect(
            shown(DownloadFailure(DownloadError(.insufficientStorage(needed: 2, available: 1)))).offer
                == "Manage storage")
        server.stop()
    }

    @Test("Recovering from a damaged state file: the notice says what was kept, and unclaimed files can go")
    func libraryRecovery() async throws {
        defer { server.stop() }
        let folder = temporaryFolder("doc-recovery")
        let downloader = MediaDownloader(engine: DownloadEngine(session: URLSession(configuration: .ephemeral)))
        let library = OfflineLibrary(directory: folder) { downloader.downloadLesson(from: $0, to: $1) }
        try await library.download("950", from: server.url("/lesson/master.m3u8"))
        await library.waitForDownload("950")
        try Data("not json".utf8).write(to: folder.appending(path: "offline-library.json"))
        try Data("old".utf8).write(to: folder.appending(path: "from-an-old-version.mp4"))
        var logged: [String] = []
        func log(_ line: String) { logged.append(line) }
        let relaunched = OfflineLibrary(directory: folder) { downloader.downloadLesson(from: $0, to: $1) }
        do {
            let library = relaunched
            // example: begin library-recovery
            for notice in try await library.load() {
                switch notice {
                case .stateFileRecovered(let reason, let movedTo, let recovered, let unclaimed):
                    log("offline library rebuilt (\(reason)); kept \(recovered.count); the old file is \(movedTo.path)")
                    if !unclaimed.isEmpty { log("files no record names, kept: \(unclaimed.joined(separator: ", "))") }
                }
            }
            // example: end library-recovery
        }
        #expect(logged.count == 2 && logged[0].contains("kept 1") && logged[1].contains("from-an-old-version.mp4"))
        #expect(await relaunched.localFile(of: "950") != nil)
    }

    @Test("The files beside a download: a job given up leaves nothing")
    func discardJob() async throws {
        defer { server.stop() }
        server.route("/big.mp4", .file(Data(count: 300_000), etag: "\"b\""))
        server.script("/big.mp4", [nil, .stallAfter(bytes: 1_000)])
        let folder = temporaryFolder("doc-discard")
        let destination = folder.appending(path: "lesson.mp4")
        let lessonURL = server.url("/big.mp4")
        let downloader = MediaDownloader(engine: DownloadEngine(session: URLSession(configuration: .ephemeral)))
        // example: begin discard-job
        let job = downloader.downloadFile(from: lessonURL, to: destination)
        // … the learner gives the download up:
        await job.discard()
        // example: end discard-job
        #expect(files(in: folder).isEmpty)
    }

    @Test("The engine: an app's own engine with a 30-second idle timeout")
    func customEngine() async throws {
        defer { server.stop() }
        // example: begin custom-engine
        let engine = DownloadEngine(
            concurrency: 3, retry: RetryPolicy(maximumAttempts: 5), idleTimeout: .seconds(30),
            session: URLSession(configuration: .default))
        let downloader = MediaDownloader(engine: engine)
        // example: end custom-engine
        #expect(engine.idleTimeout == .seconds(30))
        let result = try await downloader.downloadLesson(
            from: server.url("/lesson/master.m3u8"), to: temporaryFolder("doc-engine").appending(path: "lesson.mp4")
        ).result()
        #expect(result.byteCount > 0)
    }
}
