import Downloads
import Foundation
import HTTPSupport
import OfflineLessons
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An audio lesson whose variant is its own rendition (the audio circle's shape): written once,
/// fetched once, whatever the spelling of the shared URI, and in the learner's language.
@Suite("A variant that is its own rendition is one track (RFC 8216 §4.3.4.2.1)")
struct AudioVariantRenditionTests {
    let lesson: ServedLesson
    let clock = ManualClock()
    let transport: InMemoryHTTPTransport<ManualClock>

    init() throws {
        lesson = try ServedLesson("audio-renditions")
        transport = InMemoryHTTPTransport(clock: clock)
        lesson.serve(on: transport)
    }

    func downloader() -> MediaDownloader<ManualClock> {
        MediaDownloader(engine: DownloadEngine(concurrency: 2, retry: .none, clock: clock, transport: transport))
    }

    /// The payload of every sample of `track`, in order.
    static func payloads(_ track: MP4Inspector.Track, in file: MP4Inspector) -> [[UInt8]] {
        track.samples.map(file.data(of:))
    }

    /// What `downloadHLSAudio` writes from the plain master: the reference.
    func reference() async throws -> (file: MP4Inspector, track: MP4Inspector.Track) {
        let result = try await downloader().downloadHLSAudio(
            from: lesson.base.appendingPathComponent("master.m3u8"),
            to: temporaryFolder("variant-reference").appendingPathComponent("lesson.m4a")
        ).result()
        let file = try MP4Inspector(url: result.file)
        return (file, try #require(file.tracks("soun").first))
    }

    @Test(
        "RFC 8216 §4.3.4.2.1: each spelling of the variant's own URI is one AAC track, each byte range fetched once",
        arguments: ["master.m3u8", "master-dot.m3u8", "master-absolute.m3u8", "master-no-uri.m3u8"])
    func oneTrackWhateverTheSpelling(master: String) async throws {
        let (referenceFile, referenceTrack) = try await reference()
        let before = transport.requests.count
        let result = try await downloader().downloadLesson(
            from: lesson.base.appendingPathComponent(master),
            to: temporaryFolder("variant-spelling").appendingPathComponent("lesson"), preferredLanguages: []
        ).result()
        #expect(result.file.pathExtension == "m4a")
        let file = try MP4Inspector(url: result.file)
        #expect(file.tracks.count == 1, "\(master): \(file.tracks.map(\.handler))")
        let track = try #require(file.tracks("soun").first)
        #expect(Self.payloads(track, in: file) == Self.payloads(referenceTrack, in: referenceFile))
        #expect(track.flags & 1 == 1)  // enabled
        let requests = transport.requests[before...].compactMap { $0.url?.lastPathComponent }
        #expect(requests.filter { $0 == "a96.m3u8" }.count == 1, "\(master): \(requests)")
        #expect(!requests.contains("a64.m3u8"))
        let ranges = transport.requests[before...].compactMap(lesson.key(of:))
        #expect(Set(ranges).count == ranges.count, "\(master): a range fetched twice: \(ranges)")
        #expect(ranges.count == 2)
    }

    @Test("with every rendition kept (.all), the same media is still written once")
    func allRenditionsOnce() async throws {
        let result = try await downloader().downloadLesson(
            from: lesson.base.appendingPathComponent("master.m3u8"),
            to: temporaryFolder("variant-all").appendingPathComponent("lesson"), preferredLanguages: [],
            audioRenditions: .all
        ).result()
        #expect(try MP4Inspector(url: result.file).tracks.count == 1)
    }

    @Test(
        "the learner's languages choose the audio kept and enabled first, and the subtitles enabled (RFC 8216 §4.3.4.1.1)",
        arguments: [
            ([String](), "eng", "a96", "English"), (["es-ES", "en"], "spa", "a64", "Español"),
            (["es"], "spa", "a64", "Español"), (["fr-FR", "en-GB"], "eng", "a96", "English"),
            (["de"], "eng", "a96", "English"),
        ])
    func languages(preferred: [String], language: String, media: String, subtitles: String) async throws {
        let result = try await downloader().downloadLesson(
            from: lesson.base.appendingPathComponent("master-languages.m3u8"),
            to: temporaryFolder("variant-languages").appendingPathComponent("lesson"),
            preferredLanguages: preferred
        ).result()
        let file = try MP4Inspector(url: result.file)
        let sound = file.tracks("soun")
        #expect(sound.count == 1)
        let track = try #require(sound.first)
        #expect(track.language == language)
        // Its samples are those of the chosen rendition's own download.
        let alone = try await downloader().downloadLesson(
            from: lesson.base.appendingPathComponent("\(media).m3u8"),
            to: temporaryFolder("variant-alone").appendingPathComponent("lesson"), preferredLanguages: []
        ).result()
        let aloneFile = try MP4Inspector(url: alone.file)
        let aloneTrack = try #require(aloneFile.tracks("soun").first)
        #expect(Self.payloads(track, in: file) == Self.payloads(aloneTrack, in: aloneFile))
        let enabledText = file.tracks.filter { $0.handler == "text" || $0.handler == "sbtl" }.filter {
            $0.flags & 1 == 1
        }
        #expect(enabledText.map(\.name) == [subtitles], "\(file.tracks.map { ($0.handler, $0.name, $0.flags) })")
    }

    @Test("every rendition kept for a Spanish learner: Spanish first and enabled, English after, each once")
    func allForASpanishLearner() async throws {
        let result = try await downloader().downloadLesson(
            from: lesson.base.appendingPathComponent("master-languages.m3u8"),
            to: temporaryFolder("variant-languages-all").appendingPathComponent("lesson"),
            preferredLanguages: ["es-MX"], audioRenditions: .all
        ).result()
        let sound = try MP4Inspector(url: result.file).tracks("soun")
        #expect(sound.map(\.language) == ["spa", "eng"])
        #expect(sound.map { $0.flags & 1 } == [1, 0])
    }

    @Test("the offline library passes the learner's languages on")
    func library() async throws {
        let folder = temporaryFolder("variant-library")
        let library = OfflineLibrary(directory: folder, downloader: downloader(), preferredLanguages: ["es"])
        try await library.download("circle", from: lesson.base.appendingPathComponent("master-languages.m3u8"))
        await library.waitForDownload("circle")
        let file = try #require(await library.localFile(of: "circle"))
        #expect(try MP4Inspector(url: file).tracks("soun").map(\.language) == ["spa"])
    }
}

/// The spelling no in-memory server can serve: a rendition URI on another host name that
/// redirects to the variant's own playlist, over a real URLSession.
@Suite("A rendition that redirects to the variant's playlist is the variant's media")
struct RedirectedRenditionTests {
    @Test(
        "another host name (localhost), redirected to the variant's playlist on 127.0.0.1: one track, no segment twice")
    func redirected() async throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        let folder = Lessons.loader.folder.appendingPathComponent("audio-renditions")
        for name in ["a96.m3u8", "a64.m3u8", "a96.ts", "a64.ts"] {
            server.route("/audio-renditions/\(name)", .file(try Data(contentsOf: folder.appendingPathComponent(name))))
        }
        let origin = server.url("/").absoluteString.dropLast()  // http://127.0.0.1:PORT
        let alias = origin.replacingOccurrences(of: "127.0.0.1", with: "localhost") + "/alias"
        let master = try String(contentsOf: folder.appendingPathComponent("master-redirect.m3u8"), encoding: .utf8)
            .replacingOccurrences(of: "{ALIAS}", with: alias)
        server.route("/audio-renditions/master-redirect.m3u8", .response(status: 200, body: Data(master.utf8)))
        for name in ["a96.m3u8", "a64.m3u8"] {
            server.route("/alias/audio-renditions/\(name)", .redirect(to: "\(origin)/audio-renditions/\(name)"))
        }
        let result = try await MediaDownloader(engine: loopbackEngine()).downloadLesson(
            from: server.url("/audio-renditions/master-redirect.m3u8"),
            to: temporaryFolder("variant-redirect").appendingPathComponent("lesson"), preferredLanguages: []
        ).result()
        #expect(try MP4Inspector(url: result.file).tracks.count == 1)
        let segments = server.requests.filter { $0.path.hasSuffix(".ts") }.map {
            "\($0.path) \($0.headers["range"] ?? "")"
        }
        #expect(Set(segments).count == segments.count, "\(segments)")
        #expect(segments.count == 2)
    }
}

/// No fixture lesson, downloaded with every rendition kept, holds the same media twice.
@Suite("No silent duplicates")
struct NoDuplicateTracksTests {
    /// Every fixture lesson but the benchmark's.
    static let lessons: [String] = {
        let folder = Lessons.loader.folder
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { name in
            name != "bench-720p" && !name.contains(".")
                && FileManager.default.fileExists(
                    atPath: folder.appendingPathComponent(name).appendingPathComponent("facts.json").path)
        }.sorted()
    }()

    @Test("the fixture lessons are found")
    func lessonsFound() {
        #expect(Self.lessons.count >= 30)
    }

    @Test("every fixture lesson, every rendition kept: no two tracks hold the same samples", arguments: lessons)
    func noTwoTracksAlike(name: String) async throws {
        let lesson = try ServedLesson(name)
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        lesson.serve(on: transport)
        let downloader = MediaDownloader(
            engine: DownloadEngine(concurrency: 2, retry: .none, clock: clock, transport: transport))
        let result = try await downloader.downloadLesson(
            from: lesson.entry, to: temporaryFolder("no-duplicates").appendingPathComponent("lesson"),
            preferredLanguages: [], audioRenditions: .all
        ).result()
        // No segment is fetched twice (a duplicate with a trimmed frame would not show in the samples).
        let keys = transport.requests.compactMap(lesson.key(of:))
        #expect(Set(keys).count == keys.count, "\(name): \(keys)")
        let file = try MP4Inspector(url: result.file)
        var seen: [[[UInt8]]: String] = [:]
        for track in file.tracks where !track.samples.isEmpty {
            let payloads = track.samples.map(file.data(of:))
            #expect(seen[payloads] == nil, "\(name): \(track.handler) \(track.name) repeats \(seen[payloads] ?? "")")
            seen[payloads] = "\(track.handler) \(track.name)"
        }
    }
}

/// The cases beyond the audio circle's: one media named three ways in a group, video variants
/// whose group describes their own muxed audio, ISO 639-2 tags, and the video plan.
@Suite("Each media once, the learner's audio enabled")
struct RenditionIdentityTests {
    let clock = ManualClock()
    let transport: InMemoryHTTPTransport<ManualClock>
    let base: URL

    init() throws {
        transport = InMemoryHTTPTransport(clock: clock)
        for name in ["audio-renditions", "webvtt", "multi-audio"] { try ServedLesson(name).serve(on: transport) }
        base = try ServedLesson("audio-renditions").base
        // The query spelling serves the same playlist.
        let playlist = try Data(
            contentsOf: Lessons.loader.folder.appendingPathComponent("audio-renditions/a96.m3u8"))
        transport.stub(
            URL(literal: "https://lessons.example/audio-renditions/a96.m3u8?session=2"),
            reply: .response(status: 200, body: playlist))
    }

    func download(
        _ master: String, languages: [String], audio: AudioRenditionSelection = .best
    ) async throws -> MP4Inspector {
        let downloader = MediaDownloader(
            engine: DownloadEngine(concurrency: 2, retry: .none, clock: clock, transport: transport))
        let result = try await downloader.downloadLesson(
            from: base.appendingPathComponent(master), to: temporaryFolder("identity").appendingPathComponent("l"),
            preferredLanguages: languages, audioRenditions: audio
        ).result()
        return try MP4Inspector(url: result.file)
    }

    /// Each request's path and range, in order.
    var requested: [String] {
        transport.requests.map { ($0.url?.path ?? "") + " " + ($0.value(forHTTPHeaderField: "Range") ?? "") }
    }

    @Test(
        "one media named plainly, percent-encoded (RFC 3986 §6.2.2) and with a query, every rendition kept: one track, each segment once"
    )
    func oneMediaThreeNames() async throws {
        let file = try await download("master-twice.m3u8", languages: [], audio: .all)
        #expect(file.tracks.count == 1)
        let segments = requested.filter { $0.contains(".ts") }
        #expect(Set(segments).count == segments.count && segments.count == 2, "\(segments)")
        // The plain spelling once (the percent-encoded one is it); the query spelling once.
        let playlists = transport.requests.compactMap { $0.url?.absoluteString }.filter { $0.contains("a96.m3u8") }
        #expect(playlists.sorted() == [base.absoluteString + "a96.m3u8", base.absoluteString + "a96.m3u8?session=2"])
    }

    @Test("a video variant whose group describes its muxed audio: the English learner keeps it, one audio track")
    func muxedAudioKept() async throws {
        let file = try await download("master-muxed.m3u8", languages: ["en"])
        #expect(file.tracks("vide").count == 1)
        #expect(file.tracks("soun").map(\.language) == ["eng"])
        #expect(file.tracks("soun").map { $0.flags & 1 } == [1])
        #expect(!requested.contains { $0.contains("audio_es") })
    }

    @Test("the same lesson for a Spanish learner: the Spanish rendition alone, enabled; the muxed English left out")
    func muxedAudioReplaced() async throws {
        let file = try await download("master-muxed.m3u8", languages: ["es-ES"])
        #expect(file.tracks("vide").count == 1)
        #expect(file.tracks("soun").map(\.language) == ["spa"])
        #expect(file.tracks("soun").map { $0.flags & 1 } == [1])
    }

    @Test("every rendition kept for a Spanish learner: the muxed English kept but not enabled, the Spanish enabled")
    func muxedAudioAll() async throws {
        let file = try await download("master-muxed.m3u8", languages: ["es"], audio: .all)
        let sound = file.tracks("soun")
        #expect(Set(sound.map(\.language)) == ["eng", "spa"])
        #expect(sound.filter { $0.flags & 1 == 1 }.map(\.language) == ["spa"])
    }

    @Test(
        "a video variant whose group names the variant's own playlist: one audio track, its playlist and segments fetched once"
    )
    func groupNamesTheVariant() async throws {
        let file = try await download("master-self.m3u8", languages: [], audio: .all)
        #expect(file.tracks("vide").count == 1)
        #expect(file.tracks("soun").map(\.language) == ["eng"])
        #expect(requested.filter { $0.contains("webvtt/video/index.m3u8") }.count == 1, "\(requested)")
        let segments = requested.filter { $0.contains(".ts") }
        #expect(Set(segments).count == segments.count, "\(segments)")
    }

    @Test("ISO 639-2 tags as packagers write them (eng, spa) match the learner's es-ES")
    func isoTags() async throws {
        let file = try await download("master-languages-iso.m3u8", languages: ["es-ES"])
        #expect(file.tracks("soun").map(\.language) == ["spa"])
    }

    @Test(
        "an audio-only variant whose English rendition has no URI, every rendition kept for a Spanish learner: both languages, Spanish first and enabled, nothing fetched twice"
    )
    func noURIWithAll() async throws {
        let master = """
            #EXTM3U
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",LANGUAGE="en",NAME="English",DEFAULT=YES,AUTOSELECT=YES
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",LANGUAGE="es",NAME="Español",AUTOSELECT=YES,URI="a64.m3u8"
            #EXT-X-STREAM-INF:BANDWIDTH=110000,CODECS="mp4a.40.2",AUDIO="a"
            a96.m3u8

            """
        transport.stub(
            base.appendingPathComponent("inline.m3u8"), reply: .response(status: 200, body: Data(master.utf8)))
        let file = try await download("inline.m3u8", languages: ["es"], audio: .all)
        let sound = file.tracks("soun")
        #expect(sound.map(\.language) == ["spa", "eng"])
        #expect(sound.map { $0.flags & 1 } == [1, 0])
        let playlists = requested.filter { $0.contains("m3u8") }
        #expect(Set(playlists).count == playlists.count, "\(playlists)")
    }

    @Test("planHLSVideo of a two-language audio lesson for a Spanish learner names the Spanish media")
    func videoPlanForALearner() async throws {
        let downloader = MediaDownloader(
            engine: DownloadEngine(concurrency: 2, retry: .none, clock: clock, transport: transport))
        let plan = try await downloader.planHLSVideo(
            from: base.appendingPathComponent("master-languages.m3u8"), preferredLanguages: ["es"])
        #expect(plan.videoParts.allSatisfy { $0.url.lastPathComponent == "a64.ts" })
        #expect(!plan.videoParts.isEmpty)
    }
}
