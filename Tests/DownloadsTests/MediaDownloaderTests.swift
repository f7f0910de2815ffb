import Downloads
import Foundation
import HLS
import HTTPSupport
import OfflineLessons
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A decryptor for tests, standing in for an app's SAMPLE-AES or DRM code: XOR with the first
/// byte of the key URL's last path component.
struct XORDecryptor: SegmentDecryptor {
    func decrypt(_ data: Data, context: SegmentDecryptionContext) async throws -> Data {
        let mask = context.keyURL?.lastPathComponent.utf8.first ?? 0
        return Data(data.map { $0 ^ mask })
    }
}

@Suite("MediaDownloader")
struct MediaDownloaderTests {
    let clock = ManualClock()
    let transport: InMemoryHTTPTransport<ManualClock>
    let base = URL(literal: "https://media.example/arkiva/")
    let fixtures = FixtureLoader(bundle: .module)

    init() {
        transport = InMemoryHTTPTransport(clock: clock)
    }

    func downloader(concurrency: Int = 2) -> MediaDownloader<ManualClock> {
        let transport = transport
        return MediaDownloader(
            engine: DownloadEngine(concurrency: concurrency, clock: clock, transport: transport))
    }

    /// Serves the arkiva master and media playlists, and `.ts` files of their exact sizes made of
    /// real AAC audio in MPEG-TS (the 131-frame fixture, repeated within each byte range, then null
    /// packets). Returns how many copies of the fixture each file holds.
    func serveArkiva() throws -> (low: Int, high: Int) {
        let seed = [UInt8](try fixtures.data("audio-aac.ts"))
        func ranges(_ name: String) throws -> [Int] {
            byteRangeLengths(ofPlaylist: String(decoding: try fixtures.data("hls/arkiva/\(name)"), as: UTF8.self))
        }
        let low = syntheticTransportStream(rangeLengths: try ranges("hls_a192K_v4.m3u8"), seed: seed)
        let high = syntheticTransportStream(rangeLengths: try ranges("hls_a256K_v4.m3u8"), seed: seed)
        #expect(low.bytes.count == 6_116_016)
        #expect(high.bytes.count == 8_209_772)
        for name in ["hls_index.m3u8", "hls_a192K_v4.m3u8", "hls_a256K_v4.m3u8"] {
            transport.stub(
                base.appendingPathComponent(name),
                reply: .response(status: 200, body: try fixtures.data("hls/arkiva/\(name)")))
        }
        transport.stub(base.appendingPathComponent("hls_a192K.ts"), reply: .resource(Data(low.bytes)))
        transport.stub(base.appendingPathComponent("hls_a256K.ts"), reply: .resource(Data(high.bytes)))
        return (low.copies, high.copies)
    }

    /// The frames of the .m4a at `url`, from its `stsz` box.
    func frameCount(_ url: URL) throws -> UInt32 {
        let file = MP4BoxReader(bytes: [UInt8](try Data(contentsOf: url)))
        #expect(file.boxes().map(\.type) == ["ftyp", "mdat", "moov"])
        let stsz = try #require(file.find(["moov", "trak", "mdia", "minf", "stbl", "stsz"]))
        return file.uint32(stsz.start + 16)
    }

    @Test("the audio brief: the highest-quality track of the arkiva stream, 8,209,772 bytes of TS, ends as an .m4a")
    func arkivaAudio() async throws {
        let copies = try serveArkiva()
        let destination = temporaryFolder().appendingPathComponent("lesson.m4a")
        let result = try await downloader().downloadHLSAudio(
            from: base.appendingPathComponent("hls_index.m3u8"), to: destination
        )
        .result()
        #expect(try frameCount(destination) == UInt32(copies.high * 131))
        #expect(result.byteCount == UInt64(try Data(contentsOf: destination).count))
        #expect(files(in: destination.deletingLastPathComponent()) == ["lesson.m4a"])
        #expect(transport.maximumConcurrentRequests <= 2)
        // Byte ranges are inclusive on the wire: the first part asks for 0-363779, not 0-363780.
        #expect(transport.requests.contains { $0.value(forHTTPHeaderField: "Range") == "bytes=0-363779" })
    }

    @Test("the other rendition's playlist, 6,116,016 bytes of TS, remuxes too")
    func arkivaLowRendition() async throws {
        let copies = try serveArkiva()
        let destination = temporaryFolder().appendingPathComponent("low.m4a")
        // A media playlist URL downloads that playlist directly.
        _ = try await downloader().downloadHLSAudio(
            from: base.appendingPathComponent("hls_a192K_v4.m3u8"), to: destination
        )
        .result()
        #expect(try frameCount(destination) == UInt32(copies.low * 131))
    }

    @Test("the plan puts the initialisation section first and resolves every URI")
    func planWithMap() async throws {
        let media = URL(literal: "https://media.example/fmp4/audio.m3u8")
        let text = """
            #EXTM3U
            #EXT-X-TARGETDURATION:4
            #EXT-X-MAP:URI="init.mp4",BYTERANGE="800@0"
            #EXTINF:4,
            #EXT-X-BYTERANGE:1000@800
            seg.m4s
            #EXTINF:4,
            #EXT-X-BYTERANGE:1000
            seg.m4s
            #EXT-X-ENDLIST
            """
        transport.stub(media, reply: .response(status: 200, body: Data(text.utf8)))
        let plan = try await downloader().planHLSAudio(from: media)
        #expect(
            plan.parts == [
                DownloadPart(
                    url: URL(literal: "https://media.example/fmp4/init.mp4"),
                    byteRange: ByteRange(length: 800, offset: 0)),
                DownloadPart(
                    url: URL(literal: "https://media.example/fmp4/seg.m4s"),
                    byteRange: ByteRange(length: 1_000, offset: 800)),
                DownloadPart(
                    url: URL(literal: "https://media.example/fmp4/seg.m4s"),
                    byteRange: ByteRange(length: 1_000, offset: 1_800)),
            ])
    }

    @Test(
        "encrypted, live or hostile playlists are refused with a clear error",
        arguments: [
            (
                "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-KEY:METHOD=SAMPLE-AES,URI=\"k\"\n#EXTINF:4,\na.ts\n#EXT-X-ENDLIST\n",
                "encrypted"
            ),
            ("#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4,\na.ts\n", "liveStream"),
            ("#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4,\nfile:///etc/passwd\n#EXT-X-ENDLIST\n", "uri"),
            ("#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4,\ndata:,hello\n#EXT-X-ENDLIST\n", "uri"),
            // Text where a playlist should be is not media (a portal's or an error page); a
            // playlist that says it is one but breaks its grammar is a malformed playlist.
            ("not a playlist", "notMedia"),
            ("#EXTM3U\n#EXT-X-TARGETDURATION:four\n#EXTINF:4,\na.ts\n#EXT-X-ENDLIST\n", "playlist"),
        ]
    )
    func refusals(text: String, kind: String) async {
        let url = URL(literal: "https://media.example/refused.m3u8")
        transport.stub(url, reply: .response(status: 200, body: Data(text.utf8)))
        do {
            _ = try await downloader().planHLSAudio(from: url)
            Issue.record("planned")
        } catch let error as DownloadError {
            #expect(!error.description.isEmpty)
            #expect(error.url == url)
            switch (kind, error.kind) {
            case ("encrypted", .encrypted), ("liveStream", .liveStream), ("playlist", .playlist), ("uri", .uri),
                ("notMedia", .notMedia):
                break
            default: Issue.record("\(error)")
            }
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test(
        "a remote playlist that redirects to another scheme is refused; https to http is followed",
        arguments: [
            ("file:///etc/hls/index.m3u8", false), ("data:,x", false), ("http://cdn.example/a/index.m3u8", true),
        ]
    )
    func redirects(landing: String, followed: Bool) async throws {
        let requested = URL(literal: "https://media.example/redirected.m3u8")
        let final = try #require(URL(string: landing))
        let text = "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4,\nlocal.ts\n#EXT-X-ENDLIST\n"
        // A transport (or a proxy) that reports the redirect's final URL on the response.
        let engine = DownloadEngine(
            clock: clock,
            transport: AnyHTTPTransport { request in
                guard request.url == requested,
                    let response = HTTPURLResponse(
                        url: final, statusCode: 200, httpVersion: nil, headerFields: nil)
                else { throw URLError(.unsupportedURL) }
                return (Data(text.utf8), response)
            })
        do {
            let plan = try await MediaDownloader(engine: engine).planHLSAudio(from: requested)
            #expect(followed)
            #expect(plan.parts.first?.url.absoluteString == "http://cdn.example/a/local.ts")
        } catch let error as DownloadError {
            #expect(!followed, "\(error)")
            // A redirect to another scheme asks for what is never fetched: unsupported.
            guard case .unsupportedURL(let scheme) = error.kind else {
                Issue.record("\(error)")
                return
            }
            #expect(scheme == URL(string: landing)?.scheme)
            #expect(error.category == .unsupported)
        }
    }

    @Test("a playlist that drips slower than the part timeout is retried as the policy says, then a typed timeout")
    func playlistDrip() async throws {
        let url = URL(literal: "https://media.example/drip.m3u8")
        let text = "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4,\na.ts\n#EXT-X-ENDLIST\n"
        transport.stub(url, reply: .response(status: 200, body: Data(text.utf8), latency: .seconds(600)))
        let transport = transport
        let clock = clock
        let engine = DownloadEngine(
            retry: RetryPolicy(maximumAttempts: 2, initialDelay: .seconds(1), jitter: 0), idleTimeout: .seconds(30),
            clock: clock, transport: transport)
        let plan = Task { try await MediaDownloader(engine: engine).planHLSAudio(from: url) }
        // Each attempt's idle timer (30 s) and the backoff (1 s) come before the drip's answer
        // (600 s): move time to them, one at a time, until the plan gives up.
        let driver = Task {
            while !Task.isCancelled {
                let now = clock.now
                await clock.waitUntilSleepers { deadlines in deadlines.contains { now.duration(to: $0) <= .seconds(30) }
                }
                clock.advanceToNextDeadline()
                await Task.yield()
            }
        }
        defer { driver.cancel() }
        do {
            _ = try await plan.value
            Issue.record("planned")
        } catch {
            guard let error = error as? DownloadError, case .transport(let failure) = error.kind else {
                Issue.record("\(error)")
                return
            }
            #expect(error.url == url)
            #expect(error.part == nil)
            #expect(failure.code == .timedOut)
        }
        #expect(transport.requests.count == 2)
    }

    @Test("segments encrypted with a method MediaCore does not implement go to the supplied decryptor")
    func decryptor() async throws {
        let url = URL(literal: "https://media.example/enc/audio.m3u8")
        let clear = try fixtures.data("audio-aac.ts")
        let mask = UInt8(ascii: "k")
        transport.stub(
            url,
            reply: .response(
                status: 200,
                body: Data(
                    "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-KEY:METHOD=SAMPLE-AES,URI=\"k\"\n#EXTINF:4,\na.ts\n#EXT-X-ENDLIST\n"
                        .utf8)))
        transport.stub(URL(literal: "https://media.example/enc/a.ts"), reply: .resource(Data(clear.map { $0 ^ mask })))
        let destination = temporaryFolder().appendingPathComponent("clear.m4a")
        _ = try await downloader().downloadHLSAudio(from: url, to: destination, decryptor: XORDecryptor()).result()
        #expect(try frameCount(destination) == 131)
    }

    @Test("a single file is fetched by ranges in chunks, and whole from a server that ignores ranges")
    func singleFile() async throws {
        let file = resourceBytes(10_000, seed: 9)
        let ranged = URL(literal: "https://media.example/video.mp4")
        transport.stub(ranged, reply: .resource(file))
        let destination = temporaryFolder().appendingPathComponent("video.mp4")
        let result = try await downloader().downloadFile(from: ranged, to: destination, chunkSize: 3_000).result()
        #expect(try Data(contentsOf: destination) == file)
        #expect(result.partsFetched == 4)

        let plain = URL(literal: "https://media.example/plain.mp4")
        transport.stub(plain, reply: .response(status: 200, body: file))
        let plainDestination = temporaryFolder().appendingPathComponent("plain.mp4")
        let plainResult = try await downloader().downloadFile(from: plain, to: plainDestination, chunkSize: 3_000)
            .result()
        #expect(try Data(contentsOf: plainDestination) == file)
        #expect(plainResult.partsFetched == 1)
    }
}

@Suite("OfflineLibrary")
struct OfflineLibraryTests {
    let clock = ManualClock()
    let transport: InMemoryHTTPTransport<ManualClock>
    /// Every video of the photography API shares one URL; items are told apart by id.
    let sharedURL = URL(literal: "https://media.example/videos/lesson.mp4")
    let file = resourceBytes(5_000, seed: 4)

    init() {
        transport = InMemoryHTTPTransport(clock: clock)
        transport.stub(sharedURL, reply: .resource(file))
    }

    func library(in folder: URL) -> OfflineLibrary {
        let transport = transport
        let downloader = MediaDownloader(engine: DownloadEngine(clock: clock, transport: transport))
        return OfflineLibrary(directory: folder) { remote, destination in
            downloader.downloadFile(from: remote, to: destination, chunkSize: 2_000)
        }
    }

    @Test("downloads per item id, remembers across a relaunch, totals bytes, deletes")
    func lifecycle() async throws {
        let folder = temporaryFolder()
        let library = library(in: folder)
        try await library.load()
        #expect(await library.state(of: "13") == .notDownloaded)
        try await library.download("13", from: sharedURL)
        try await library.download("7", from: sharedURL)
        await library.waitForDownload("13")
        await library.waitForDownload("7")
        guard case .downloaded(_, 5_000) = await library.state(of: "13") else {
            Issue.record("not downloaded: \(await library.state(of: "13"))")
            return
        }
        #expect(await library.localFile(of: "13") != (await library.localFile(of: "7")))
        #expect(await library.totalBytes == 10_000)
        #expect(try Data(contentsOf: #require(await library.localFile(of: "7"))) == file)

        let relaunched = self.library(in: folder)
        try await relaunched.load()
        #expect(await relaunched.states.count == 2)
        try await relaunched.delete("13")
        #expect(await relaunched.state(of: "13") == .notDownloaded)
        #expect(await relaunched.totalBytes == 5_000)
    }

    @Test("on launch, a missing file means not downloaded and an interrupted download becomes paused")
    func reconcile() async throws {
        let folder = temporaryFolder()
        let library = library(in: folder)
        try await library.download("a", from: sharedURL)
        await library.waitForDownload("a")
        let file = try #require(await library.localFile(of: "a"))
        try FileManager.default.removeItem(at: file)
        // A state file as left by an app killed mid-download.
        let stateFile = folder.appendingPathComponent("offline-library.json")
        var saved = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: stateFile)) as? [String: Any])
        var items = try #require(saved["items"] as? [String: Any])
        items["b"] = ["remoteURL": "https://media.example/x.mp4", "state": ["downloading": ["fraction": 0.5]]]
        saved["items"] = items
        try JSONSerialization.data(withJSONObject: saved).write(to: stateFile)
        let relaunched = self.library(in: folder)
        try await relaunched.load()
        #expect(await relaunched.state(of: "a") == .notDownloaded)
        // Interrupted, not cancelled: its partial files are kept, and starting again resumes.
        #expect(await relaunched.state(of: "b") == .paused)
    }

    @Test("a failed download says why; a corrupted state file is moved aside with a notice")
    func failures() async throws {
        let folder = temporaryFolder()
        let missing = URL(literal: "https://media.example/missing.mp4")
        transport.stub(missing, reply: .response(status: 404))
        let library = library(in: folder)
        try await library.download("x", from: missing)
        await library.waitForDownload("x")
        guard case .failed(let failure) = await library.state(of: "x") else {
            Issue.record("not failed")
            return
        }
        #expect(failure.category == .notFound)
        #expect(failure.error?.kind == .httpStatus(404))
        #expect(failure.message.contains("404"))
        try Data("{".utf8).write(to: folder.appendingPathComponent("offline-library.json"))
        let notices = try await self.library(in: folder).load()
        guard case .stateFileRecovered(_, let aside, let recovered, _)? = notices.first, notices.count == 1 else {
            Issue.record("\(notices)")
            return
        }
        #expect(try Data(contentsOf: aside) == Data("{".utf8))
        #expect(recovered.isEmpty)  // the failed download left no file to find
    }

    @Test("a tampered state file cannot point outside the folder, and huge sizes saturate")
    func tamperedStateFile() async throws {
        let parent = temporaryFolder()
        let folder = parent.appendingPathComponent("library")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let victim = parent.appendingPathComponent("victim.mp4")
        try Data("keep me".utf8).write(to: victim)
        try Data("ok".utf8).write(to: folder.appendingPathComponent("real.mp4"))
        let items: [String: Any] = [
            "up": [
                "remoteURL": "https://m.example/a",
                "state": ["downloaded": ["fileName": "../victim.mp4", "byteCount": 7]],
            ],
            "abs": [
                "remoteURL": "https://m.example/b", "state": ["downloaded": ["fileName": victim.path, "byteCount": 7]],
            ],
            "big1": [
                "remoteURL": "https://m.example/c",
                "state": ["downloaded": ["fileName": "real.mp4", "byteCount": UInt64.max]],
            ],
            "big2": [
                "remoteURL": "https://m.example/d",
                "state": ["downloaded": ["fileName": "real.mp4", "byteCount": UInt64.max]],
            ],
        ]
        try JSONSerialization.data(withJSONObject: ["version": 1, "items": items])
            .write(to: folder.appendingPathComponent("offline-library.json"))
        let library = library(in: folder)
        try await library.load()
        for id in ["up", "abs"] {
            guard case .failed = await library.state(of: id) else {
                Issue.record("\(id): \(await library.state(of: id))")
                continue
            }
            #expect(await library.localFile(of: id) == nil)
            try await library.delete(id)
        }
        #expect(try Data(contentsOf: victim) == Data("keep me".utf8))
        #expect(await library.totalBytes == .max)
    }

    @Test("a state file cut at any byte is moved aside as it was, and the downloaded lesson is found again")
    func truncatedStateFile() async throws {
        let folder = temporaryFolder()
        let library = library(in: folder)
        try await library.download("13", from: sharedURL)
        await library.waitForDownload("13")
        let stateFile = folder.appendingPathComponent("offline-library.json")
        let whole = try Data(contentsOf: stateFile)
        for length in 0..<whole.count {
            let cut = whole.prefix(length)
            try cut.write(to: stateFile)
            let relaunched = self.library(in: folder)
            let notices = try await relaunched.load()
            guard case .stateFileRecovered(_, let aside, let recovered, let unclaimed)? = notices.first else {
                Issue.record("cut at \(length): \(notices)")
                continue
            }
            #expect(try Data(contentsOf: aside) == cut, "cut at \(length)")
            #expect(recovered == ["13"] && unclaimed.isEmpty, "cut at \(length)")
            #expect(await relaunched.localFile(of: "13") != nil, "cut at \(length)")
            try FileManager.default.removeItem(at: aside)
        }
        try whole.write(to: stateFile)
        let relaunched = self.library(in: folder)
        try await relaunched.load()
        #expect(await relaunched.localFile(of: "13") != nil)
    }
}
