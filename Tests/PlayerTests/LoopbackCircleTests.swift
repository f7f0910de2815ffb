import Downloads
import Foundation
import HTTPSupport
import Player
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The audio brief end to end: a tap fetches an HLS lesson over a real socket, the circle fills,
/// the file played is an MPEG-4 audio file, and the end of playback deletes it.
@MainActor
@Suite("Audio circle over loopback HTTP")
struct LoopbackCircleTests {
    @Test("tap → fetch over HTTP → a playable .m4a → playing → completion deletes the file")
    func circle() async throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        let segment = try FixtureLoader(bundle: .module).data("audio-aac.ts")
        let master = """
            #EXTM3U
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="Default",DEFAULT=YES,AUTOSELECT=YES,URI="audio.m3u8"
            #EXT-X-STREAM-INF:BANDWIDTH=64000,CODECS="mp4a.40.2",AUDIO="a"
            audio.m3u8

            """
        let media = "#EXTM3U\n#EXT-X-TARGETDURATION:3\n#EXTINF:3.0,\nsegment.ts\n#EXT-X-ENDLIST\n"
        server.route("/master.m3u8", .response(status: 200, body: Data(master.utf8)))
        server.route("/audio.m3u8", .response(status: 200, body: Data(media.utf8)))
        server.route("/segment.ts", .file(segment))
        let folder = temporaryFolder("circle")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let destination = folder.appendingPathComponent("lesson.m4a")
        let downloader = MediaDownloader(
            engine: DownloadEngine(concurrency: 2, session: URLSession(configuration: .ephemeral)))
        let output = FakeAudioOutput()
        let model = CirclePlayerModel(
            fetcher: HLSAudioFetcher(
                masterURL: server.url("/master.m3u8"), destination: destination, downloader: downloader),
            output: output)
        model.tap()
        #expect(await waitUntilObserved { if case .fetching = model.state { false } else { true } })
        #expect(model.state == .playing(file: destination))
        #expect(output.calls == ["play lesson.m4a"])
        let head = try Data(contentsOf: destination).prefix(8)
        #expect(head.suffix(4) == Data("ftyp".utf8))
        output.finish()
        await model.waitUntilSettled()
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        #expect(files(in: folder).isEmpty)
        #expect(server.requests.map(\.path) == ["/master.m3u8", "/audio.m3u8", "/segment.ts"])
    }

    @Test(
        "the circle tells failures apart by the download's category: a forbidden URL, a missing one, a captive portal",
        arguments: [
            (403, "text/plain", "Forbidden", DownloadError.Category.accessDenied, "You don't have access"),
            (404, "text/plain", "Not found", .notFound, "no longer available"),
            (200, "text/html", "<!DOCTYPE html><html>Sign in</html>", .notMedia, "Wi-Fi"),
        ])
    func failuresByCategory(
        status: Int, contentType: String, body: String, category: DownloadError.Category, words: String
    ) async throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        server.route(
            "/master.m3u8", .response(status: status, headers: ["Content-Type": contentType], body: Data(body.utf8)))
        let folder = temporaryFolder("circle-failure")
        let downloader = MediaDownloader(
            engine: DownloadEngine(concurrency: 2, retry: .none, session: URLSession(configuration: .ephemeral)))
        let model = CirclePlayerModel(
            fetcher: HLSAudioFetcher(
                masterURL: server.url("/master.m3u8"), destination: folder.appendingPathComponent("lesson.m4a"),
                downloader: downloader),
            output: FakeAudioOutput())
        model.tap()
        await model.waitUntilSettled()
        guard case .uninitialized(let error?) = model.state, case .fetchFailed(let failure) = error.kind else {
            Issue.record("\(model.state)")
            return
        }
        #expect(failure.category == category)
        #expect(model.presentation.errorMessage?.contains(words) == true, "\(model.presentation.errorMessage ?? "")")
        var shown: [String] = []
        func showSignIn() { shown.append("sign in") }
        func showStorageSettings() { shown.append("storage") }
        // example: begin circle-failure
        if case .uninitialized(let error?) = model.state, case .fetchFailed(let failure) = error.kind {
            switch failure.category {
            case .accessDenied: showSignIn()
            case .storageFull: showStorageSettings()
            default: break  // the circle's own message says the rest
            }
        }
        // example: end circle-failure
        #expect(shown == (category == .accessDenied ? ["sign in"] : []))
    }
}
