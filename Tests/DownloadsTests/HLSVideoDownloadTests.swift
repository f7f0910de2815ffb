import Downloads
import Foundation
import HLS
import HTTPSupport
import MediaContainers
import OfflineLessons
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("HLS video downloads")
struct HLSVideoDownloadTests {
    let clock = ManualClock()
    let transport: InMemoryHTTPTransport<ManualClock>
    let fixtures = FixtureLoader(bundle: .module)
    let base = URL(literal: "https://videos.example/lesson/")

    init() {
        transport = InMemoryHTTPTransport(clock: clock)
    }

    func downloader() -> MediaDownloader<ManualClock> {
        MediaDownloader(engine: DownloadEngine(concurrency: 2, clock: clock, transport: transport))
    }

    static let master = """
        #EXTM3U
        #EXT-X-VERSION:4
        #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac",NAME="English",LANGUAGE="en",DEFAULT=YES,AUTOSELECT=YES,URI="audio/index.m3u8"
        #EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="English",LANGUAGE="en",DEFAULT=YES,AUTOSELECT=YES,URI="subs/en.m3u8"
        #EXT-X-STREAM-INF:BANDWIDTH=9000000,RESOLUTION=3840x2160,AUDIO="aac",SUBTITLES="subs"
        uhd/index.m3u8
        #EXT-X-STREAM-INF:BANDWIDTH=300000,RESOLUTION=192x108,AUDIO="aac",SUBTITLES="subs"
        video/index.m3u8
        #EXT-X-STREAM-INF:BANDWIDTH=1500000,RESOLUTION=1280x720,CODECS="avc1.64001f,mp4a.40.2"
        muxed.m3u8

        """

    /// Serves the master, the 192×108 variant and its separate audio from the ffmpeg fixtures,
    /// a muxed variant, and two WebVTT subtitle segments whose cue time 0 is the video's first
    /// frame (PTS 133200).
    func serve() throws {
        transport.stub(
            base.appendingPathComponent("master.m3u8"), reply: .response(status: 200, body: Data(Self.master.utf8)))
        for folder in ["video", "audio"] {
            let playlist = try fixtures.data("media/hls-av/\(folder)/index.m3u8")
            transport.stub(
                base.appendingPathComponent("\(folder)/index.m3u8"), reply: .response(status: 200, body: playlist))
            for segment in 0..<3 {
                guard let data = try? fixtures.data("media/hls-av/\(folder)/seg\(segment).ts") else { continue }
                transport.stub(
                    base.appendingPathComponent("\(folder)/seg\(segment).ts"),
                    reply: .resource(data, latency: .milliseconds(50)))
            }
        }
        let muxed = "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\nav.ts\n#EXT-X-ENDLIST\n"
        transport.stub(base.appendingPathComponent("muxed.m3u8"), reply: .response(status: 200, body: Data(muxed.utf8)))
        transport.stub(
            base.appendingPathComponent("av.ts"), reply: .resource(try fixtures.data("media/av-h264-aac.ts")))
        let subs = "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\nen0.vtt\n#EXTINF:1,\nen1.vtt\n#EXT-X-ENDLIST\n"
        transport.stub(
            base.appendingPathComponent("subs/en.m3u8"), reply: .response(status: 200, body: Data(subs.utf8)))
        transport.stub(
            base.appendingPathComponent("subs/en0.vtt"),
            reply: .response(
                status: 200,
                body: Data(
                    "WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:133200,LOCAL:00:00:00.000\n\n00:00.000 --> 00:01.000\nHello\n".utf8)
            ))
        transport.stub(
            base.appendingPathComponent("subs/en1.vtt"),
            reply: .response(
                status: 200,
                body: Data(
                    "WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:133200,LOCAL:00:00:00.000\n\n00:01.000 --> 00:02.000\nWorld\n".utf8)
            ))
    }

    /// Runs `job` to its end, advancing the manual clock whenever everything waits on it.
    func drive(_ job: DownloadJob) async throws(DownloadError) -> DownloadResult {
        let clock = clock
        let driver = Task { await clock.advanceWhileSleeping() }
        defer { driver.cancel() }
        return try await job.result()
    }

    static func sampleCount(_ url: URL, handler: String) throws -> UInt32 {
        let file = MP4BoxReader(bytes: [UInt8](try Data(contentsOf: url)))
        let moov = try #require(file.find(["moov"]))
        for trak in file.boxes(from: moov.start + 8, to: moov.start + moov.size) where trak.type == "trak" {
            let sub = MP4BoxReader(bytes: Array(file.bytes[trak.start..<(trak.start + trak.size)]))
            guard let hdlr = sub.find(["trak", "mdia", "hdlr"]), sub.type(hdlr.start + 12) == handler,
                let stsz = sub.find(["trak", "mdia", "minf", "stbl", "stsz"])
            else { continue }
            return sub.uint32(stsz.start + 16)
        }
        return 0
    }

    @Test(
        "a variant policy chooses by bandwidth or by the largest resolution that fits",
        arguments: [
            (VariantPolicy.highestBandwidth(atMost: 2_000_000), "muxed.m3u8"),
            (.highestBandwidth(atMost: 100), "video/index.m3u8"),
            (.largestResolution(fittingWidth: 1_920, height: 1_080), "muxed.m3u8"),
            (.largestResolution(fittingWidth: 1_080, height: 1_920), "muxed.m3u8"),
            (.largestResolution(fittingWidth: 320, height: 240), "video/index.m3u8"),
            (.largestResolution(fittingWidth: 100, height: 100), "video/index.m3u8"),
            (.largestResolution(fittingWidth: 4_096, height: 2_160), "uhd/index.m3u8"),
        ])
    func policies(policy: VariantPolicy, expected: String) throws {
        guard case .multivariant(let master) = try HLSParser().parse(Self.master).playlist else {
            Issue.record("not a multivariant playlist")
            return
        }
        #expect(policy.choose(from: master.variants)?.uri == expected)
    }

    @Test(
        "a variant with separate audio: two media playlists become one MP4 with both tracks, subtitles inside and beside it"
    )
    func separateAudio() async throws {
        try serve()
        let folder = temporaryFolder("video")
        let destination = folder.appendingPathComponent("lesson.mp4")
        let job = downloader().downloadHLSVideo(
            from: base.appendingPathComponent("master.m3u8"), to: destination,
            policy: .largestResolution(fittingWidth: 640, height: 480), subtitles: [.embedded, .sidecarFiles])
        let progress = Task { await job.progress.reduce(into: [DownloadProgress]()) { $0.append($1) } }
        let result = try await drive(job)
        #expect(try Self.sampleCount(destination, handler: "vide") == 50)
        #expect(try Self.sampleCount(destination, handler: "soun") == 88)
        #expect(result.file == destination)
        #expect(transport.maximumConcurrentRequests <= 2)
        #expect(files(in: folder) == ["lesson.en.vtt", "lesson.mp4"])
        let vtt = try String(contentsOf: folder.appendingPathComponent("lesson.en.vtt"), encoding: .utf8)
        #expect(vtt.hasPrefix("WEBVTT\n"))
        #expect(vtt.contains("Hello") && vtt.contains("World"))
        #expect(vtt.components(separatedBy: "WEBVTT").count == 2)
        #expect(try MP4Inspector(url: destination).tracks("sbtl").map(\.name) == ["English"])
        // One progress sequence for the video and the audio together: it never goes back.
        let reports = await progress.value
        #expect(reports.last?.partsCompleted == 5)
        #expect(reports.last?.partCount == 5)
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.partsCompleted <= $1.partsCompleted })
    }

    @Test("a variant with muxed audio becomes an MP4 with both tracks")
    func muxedAudio() async throws {
        try serve()
        let destination = temporaryFolder("video").appendingPathComponent("muxed.mp4")
        _ = try await drive(
            downloader().downloadHLSVideo(
                from: base.appendingPathComponent("master.m3u8"), to: destination,
                policy: .highestBandwidth(atMost: 2_000_000)))
        #expect(try Self.sampleCount(destination, handler: "vide") == 50)
        #expect(try Self.sampleCount(destination, handler: "soun") == 88)
    }

    @Test("paused after some parts, a resumed video download writes the same bytes as an uninterrupted one")
    func pauseAndResume() async throws {
        try serve()
        let master = base.appendingPathComponent("master.m3u8")
        let policy = VariantPolicy.largestResolution(fittingWidth: 640, height: 480)
        let whole = temporaryFolder("video").appendingPathComponent("whole.mp4")
        _ = try await drive(downloader().downloadHLSVideo(from: master, to: whole, policy: policy))
        let folder = temporaryFolder("video")
        let destination = folder.appendingPathComponent("paused.mp4")
        let first = downloader().downloadHLSVideo(from: master, to: destination, policy: policy)
        // Let the playlists and the first video segment arrive, then pause.
        var reports = first.progress.makeAsyncIterator()
        let driver = Task { await clock.advanceWhileSleeping() }
        while let report = await reports.next(), report.partsCompleted < 1 {}
        first.pause()
        driver.cancel()
        await #expect(throws: DownloadError(.paused)) { try await first.result() }
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        _ = try await drive(downloader().downloadHLSVideo(from: master, to: destination, policy: policy))
        #expect(try Data(contentsOf: destination) == Data(contentsOf: whole))
        #expect(files(in: folder) == ["paused.mp4"])
    }
}

@Suite("Fragmented MP4 lessons")
struct FragmentedMP4Tests {
    let clock = ManualClock()
    let transport: InMemoryHTTPTransport<ManualClock>
    let fixtures = FixtureLoader(bundle: .module)
    let base = URL(literal: "https://videos.example/fmp4/")

    init() {
        transport = InMemoryHTTPTransport(clock: clock)
    }

    /// ffmpeg's fMP4 segments (H.264 and AAC; `init.mp4`, `seg0.m4s`, `seg1.m4s`) behind a
    /// playlist that repeats its EXT-X-MAP before each segment, as some packagers do.
    func serve() throws -> Data {
        let playlist = """
            #EXTM3U
            #EXT-X-VERSION:7
            #EXT-X-TARGETDURATION:1
            #EXT-X-PLAYLIST-TYPE:VOD
            #EXT-X-MAP:URI="init.mp4"
            #EXTINF:1.0,
            seg0.m4s
            #EXT-X-MAP:URI="init.mp4"
            #EXTINF:1.0,
            seg1.m4s
            #EXT-X-ENDLIST

            """
        transport.stub(
            base.appendingPathComponent("index.m3u8"),
            reply: .response(
                status: 200, headers: ["Content-Type": "application/vnd.apple.mpegurl"], body: Data(playlist.utf8)))
        for name in ["init.mp4", "seg0.m4s", "seg1.m4s"] {
            transport.stub(
                base.appendingPathComponent(name), reply: .resource(try fixtures.data("media/hls-fmp4/\(name)")))
        }
        return try expectedFile()
    }

    /// The file the segments make when remuxed offline: one MP4 with an index at its end.
    func expectedFile() throws -> Data {
        let folder = temporaryFolder("fmp4-expected")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let url = folder.appendingPathComponent("expected.mp4")
        var remuxer = try SegmentRemuxer(output: try MP4FileOutput(url: url), brand: .movie)
        try remuxer.append([
            SegmentRemuxer.Segment(
                data: try fixtures.data("media/hls-fmp4/seg0.m4s"), discontinuity: 0,
                initialization: try fixtures.data("media/hls-fmp4/init.mp4"), index: 0)
        ])
        try remuxer.append([
            SegmentRemuxer.Segment(data: try fixtures.data("media/hls-fmp4/seg1.m4s"), discontinuity: 0, index: 1)
        ])
        _ = try remuxer.finish()
        return try Data(contentsOf: url)
    }

    @Test(
        "RFC 8216 §4.3.2.5: fMP4 segments after their initialisation section become one MP4 indexed at its end, no fragments"
    )
    func initialisationSectionOnce() async throws {
        let expected = try serve()
        let folder = temporaryFolder("fmp4")
        let destination = folder.appendingPathComponent("lesson")
        let downloader = MediaDownloader(engine: DownloadEngine(concurrency: 2, clock: clock, transport: transport))
        let result = try await downloader.downloadLesson(
            from: base.appendingPathComponent("index.m3u8"), to: destination
        )
        .result()
        #expect(result.file.lastPathComponent == "lesson.mp4")
        #expect(try Data(contentsOf: result.file) == expected)
        let file = try MP4Inspector(url: result.file)
        #expect(file.topLevel == ["ftyp", "mdat", "moov"])
        #expect(file.tracks.map(\.handler).sorted() == ["soun", "vide"])
        #expect(transport.requests.filter { $0.url?.lastPathComponent == "init.mp4" }.count == 1)
        #expect(files(in: folder) == ["lesson.mp4"])
    }

    @Test(
        "RFC 8216bis §4.4.4.5: an encrypted initialisation section is decrypted with the key in effect at its EXT-X-MAP"
    )
    func initialisationSectionKey() async throws {
        // The section is under key "i", the segments under key "s" (XORDecryptor masks with a
        // key URI's first byte): one key for everything would garble one or the other.
        let playlist = """
            #EXTM3U
            #EXT-X-VERSION:7
            #EXT-X-TARGETDURATION:1
            #EXT-X-KEY:METHOD=SAMPLE-AES,URI="i",IV=0x1
            #EXT-X-MAP:URI="init.mp4"
            #EXT-X-KEY:METHOD=SAMPLE-AES,URI="s"
            #EXTINF:1.0,
            seg0.m4s
            #EXTINF:1.0,
            seg1.m4s
            #EXT-X-ENDLIST

            """
        let url = base.appendingPathComponent("encrypted.m3u8")
        transport.stub(url, reply: .response(status: 200, body: Data(playlist.utf8)))
        for (name, mask) in [
            ("init.mp4", UInt8(ascii: "i")), ("seg0.m4s", UInt8(ascii: "s")), ("seg1.m4s", UInt8(ascii: "s")),
        ] {
            let data = try fixtures.data("media/hls-fmp4/\(name)")
            transport.stub(base.appendingPathComponent(name), reply: .resource(Data(data.map { $0 ^ mask })))
        }
        let expected = try expectedFile()
        let destination = temporaryFolder("fmp4-keys").appendingPathComponent("lesson.mp4")
        let downloader = MediaDownloader(engine: DownloadEngine(concurrency: 2, clock: clock, transport: transport))
        let result = try await downloader.downloadHLSVideo(from: url, to: destination, decryptor: XORDecryptor())
            .result()
        #expect(try Data(contentsOf: result.file) == expected)
    }
}

@Suite("One entry point for a lesson")
struct LessonDownloadTests {
    let clock = ManualClock()
    let transport: InMemoryHTTPTransport<ManualClock>
    let fixtures = FixtureLoader(bundle: .module)

    init() {
        transport = InMemoryHTTPTransport(clock: clock)
    }

    func downloader() -> MediaDownloader<ManualClock> {
        MediaDownloader(engine: DownloadEngine(concurrency: 2, clock: clock, transport: transport))
    }

    @Test(
        "RFC 8216 §4: a playlist is known by its first line or its content type; media by its signature, then its type",
        arguments: [
            ("https://a.example/v", "application/vnd.apple.mpegurl", "#EXTM3U\n", "playlist"),
            ("https://a.example/v", "audio/mpegurl; charset=utf-8", "", "playlist"),
            ("https://a.example/v.bin", "text/plain", "\u{FEFF}  #EXTM3U\n#EXT-X-VERSION:3", "playlist"),
            ("https://a.example/v.mp4", "video/mp4", "\0\0\0 ftypisom", "mp4"),
            ("https://a.example/v.m3u8", "video/mp4", "\0\0\0 ftypisom", "mp4"),
            ("https://a.example/v", "application/octet-stream", "\0\0\0 ftypM4A ", "m4a"),
            ("https://a.example/v", "application/octet-stream", "G\u{40}\0\u{10}", "ts"),
            ("https://a.example/v", "audio/mp4", "\u{1}\u{2}\u{3}\u{4}\u{5}", "m4a"),
            ("https://a.example/v", "application/octet-stream", "\u{1}\u{2}\u{3}\u{4}\u{5}", "not media"),
            ("https://a.example/v", "audio/mp4", "", "not media"),
            ("https://a.example/v.m3u8", "application/octet-stream", "", "not media"),
            ("https://a.example/v.m3u8", "text/html", "<!DOCTYPE html><html><body>Sign in</body></html>", "not media"),
            ("https://a.example/v.mp4", "video/mp4", "<html><head><title>Wi-Fi</title></head></html>", "not media"),
            ("https://a.example/v.mp4", "application/json", "{\"error\": \"not found\"}", "not media"),
        ])
    func sniffing(address: String, type: String, body: String, expected: String) throws {
        let url = try #require(URL(string: address))
        let response = try #require(
            HTTPURLResponse(url: url, statusCode: 206, httpVersion: nil, headerFields: ["Content-Type": type]))
        let found: String
        do {
            switch try LessonContent.classify(Data(body.utf8), response: response, url: url) {
            case .playlist: found = "playlist"
            case .media(let fileExtension): found = fileExtension
            }
        } catch {
            guard case .notMedia = error.kind else {
                Issue.record("unexpected \(error)")
                return
            }
            found = "not media"
        }
        #expect(found == expected)
    }

    @Test(
        "the photography school's HLS video_link ends as an .mp4 in the offline library; a media file keeps its bytes and gets its extension; a captive portal's page fails"
    )
    func offlineLibrary() async throws {
        let base = URL(literal: "https://videos.example/lesson/")
        let master = "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=300000,RESOLUTION=192x108\nmuxed.m3u8\n"
        transport.stub(
            base.appendingPathComponent("master"),
            reply: .response(
                status: 200, headers: ["Content-Type": "application/vnd.apple.mpegurl"], body: Data(master.utf8)))
        transport.stub(
            base.appendingPathComponent("muxed.m3u8"),
            reply: .response(
                status: 200, body: Data("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\nav.ts\n#EXT-X-ENDLIST\n".utf8)))
        transport.stub(
            base.appendingPathComponent("av.ts"), reply: .resource(try fixtures.data("media/av-h264-aac.ts")))
        let plain = try fixtures.data("media/hls-fmp4/init.mp4") + fixtures.data("media/hls-fmp4/seg0.m4s")
        transport.stub(base.appendingPathComponent("clip"), reply: .resource(plain))
        let portal = Data("<!DOCTYPE html><html><body>Accept the terms to go online</body></html>".utf8)
        transport.stub(
            base.appendingPathComponent("portal.m3u8"),
            reply: .response(status: 200, headers: ["Content-Type": "text/html"], body: portal))
        let folder = temporaryFolder("library")
        let downloader = downloader()
        let library = OfflineLibrary(directory: folder) { remote, destination in
            downloader.downloadLesson(from: remote, to: destination)
        }
        try await library.download("950", from: base.appendingPathComponent("master"))
        try await library.download("951", from: base.appendingPathComponent("clip"))
        try await library.download("952", from: base.appendingPathComponent("portal.m3u8"))
        await library.waitForDownload("950")
        await library.waitForDownload("951")
        await library.waitForDownload("952")
        let video = try #require(await library.localFile(of: "950"))
        #expect(video.pathExtension == "mp4")
        #expect(try HLSVideoDownloadTests.sampleCount(video, handler: "vide") == 50)
        let clip = try #require(await library.localFile(of: "951"))
        #expect(clip.pathExtension == "mp4")
        #expect(try Data(contentsOf: clip) == plain)
        guard case .failed(let failure) = await library.state(of: "952") else {
            Issue.record("the portal's page became \(await library.state(of: "952"))")
            return
        }
        #expect(failure.category == .notMedia)
        #expect(failure.message.contains("text/html"))
        #expect(await library.localFile(of: "952") == nil)
        // Only the records that find each downloaded lesson again: no partial file of the page.
        #expect(
            files(in: folder).filter { $0.hasPrefix(".") } == [
                ".950-5538e771949ffec150f6e8260b2e3801.mp4.item", ".951-8a8b2d66735ed03d0841027e42d38806.mp4.item",
            ])
    }
}
