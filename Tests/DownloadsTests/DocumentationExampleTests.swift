import Downloads
import Foundation
import TestSupport
import Testing

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
}
