import Downloads
import Foundation
import HLS
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The `multi-audio` lesson (English `DEFAULT=YES`, Spanish `DEFAULT=NO`, each its own TS
/// rendition beside a video-only variant) downloaded keeping one or several audio renditions.
@Suite("Audio renditions kept as languages of one file")
struct AudioRenditionTests {
    let clock = ManualClock()
    let transport: InMemoryHTTPTransport<ManualClock>

    init() {
        transport = InMemoryHTTPTransport(clock: clock)
    }

    func download(_ selection: AudioRenditionSelection, label: String) async throws -> MP4Inspector {
        let lesson = try ServedLesson("multi-audio")
        lesson.serve(on: transport)
        let downloader = MediaDownloader(engine: DownloadEngine(concurrency: 2, clock: clock, transport: transport))
        let folder = temporaryFolder("audio-\(label)")
        let result = try await downloader.downloadLesson(
            from: lesson.entry, to: folder.appendingPathComponent("lesson"), preferredLanguages: [],
            audioRenditions: selection
        ).result()
        return try MP4Inspector(url: result.file)
    }

    /// The audio packets ffprobe counted in one rendition's segments.
    func audioPackets(_ rendition: String) throws -> Int {
        try Lessons.facts("multi-audio/\(rendition)/index.m3u8").joined().filter { $0.kind == "audio" }
            .reduce(0) { $0 + $1.packets }
    }

    @Test(
        "ISO/IEC 14496-12 §8.3.2, §8.4.2.3, §8.4.6: every rendition kept is a track of one alternate group with its language and name, the DEFAULT one alone enabled"
    )
    func all() async throws {
        let file = try await download(.all, label: "all")
        let audio = file.tracks("soun")
        try #require(audio.count == 2)
        #expect(audio.map(\.language) == ["eng", "spa"])
        #expect(audio.map(\.extendedLanguage) == ["en", "es"])
        #expect(audio.map(\.name) == ["English", "Español"])
        #expect(audio.allSatisfy { $0.alternateGroup == 1 })
        #expect(audio.map { $0.flags & 1 } == [1, 0])
        #expect(audio[0].samples.count == (try audioPackets("audio_en")))
        #expect(audio[1].samples.count == (try audioPackets("audio_es")))
        #expect(file.tracks("vide").count == 1)
    }

    @Test(
        "the app's languages choose the renditions kept; one kept alone is enabled; none matching keeps the best",
        arguments: [
            (AudioRenditionSelection.languages(["es-MX"]), ["spa"]), (.languages(["fr"]), ["eng"]), (.best, ["eng"]),
            (.languages(["es", "en"]), ["eng", "spa"]),
        ])
    func languages(selection: AudioRenditionSelection, expected: [String]) async throws {
        let file = try await download(selection, label: expected.joined())
        let audio = file.tracks("soun")
        #expect(audio.map(\.language) == expected)
        #expect(audio.first.map { $0.flags & 1 } == 1)
        #expect(audio.dropFirst().allSatisfy { $0.flags & 1 == 0 })
    }

    /// A master over the `multi-audio` renditions whose higher-ranked group (`best`: more
    /// BANDWIDTH, Spanish) declares `codec`, beside an AAC group (`aac`: English), or alone.
    func master(bestCodec codec: String, withAAC: Bool) -> Data {
        var lines = [
            "#EXTM3U",
            "#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"best\",NAME=\"Best\",DEFAULT=YES,URI=\"audio_es/index.m3u8\"",
            "#EXT-X-STREAM-INF:BANDWIDTH=900000,CODECS=\"avc1.64000b,\(codec)\",AUDIO=\"best\"",
            "video/index.m3u8",
        ]
        if withAAC {
            lines += [
                "#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"aac\",NAME=\"AAC\",DEFAULT=YES,URI=\"audio_en/index.m3u8\"",
                "#EXT-X-STREAM-INF:BANDWIDTH=100000,CODECS=\"avc1.64000b,mp4a.40.2\",AUDIO=\"aac\"",
                "video/index.m3u8",
            ]
        }
        return Data(lines.joined(separator: "\n").utf8)
    }

    @Test(
        "RFC 8216 §4.4.6.2: an audio lesson takes the best group whose CODECS the file can hold: Opus, AC-4, FLAC and ALAC are passed over for AAC; Dolby Digital Plus, with Atmos (ec+3) or without (ec-3), and AC-3 rank above it",
        arguments: [
            ("opus", "audio_en", "audio_es"), ("ac-4.02.01.01", "audio_en", "audio_es"),
            ("fLaC", "audio_en", "audio_es"), ("alac", "audio_en", "audio_es"), ("ec+3", "audio_es", "audio_en"),
            ("ec-3", "audio_es", "audio_en"), ("ac-3", "audio_es", "audio_en"),
        ])
    func audioLessonChoosesByCodec(codec: String, kept: String, passedOver: String) async throws {
        let (entry, downloader) = try servingChoice(
            master(bestCodec: codec, withAAC: true), on: transport, clock: clock)
        let folder = temporaryFolder("audio-choice")
        let result = try await downloader.downloadHLSAudio(from: entry, to: folder.appendingPathComponent("lesson.m4a"))
            .result()
        // The best group's segments are the Spanish AAC rendition: what is chosen is read from CODECS.
        let file = try MP4Inspector(url: result.file)
        #expect(file.tracks("soun").first?.samples.count == (try audioPackets(kept)))
        let paths = transport.requests.compactMap(\.url?.path)
        #expect(!paths.contains { $0.contains(passedOver) }, "fetched the group passed over: \(paths)")
    }

    @Test("an audio lesson whose every group declares a codec the file cannot hold fails before any segment is fetched")
    func audioLessonRefusesOnlyUnwritableGroups() async throws {
        let (entry, downloader) = try servingChoice(
            master(bestCodec: "opus", withAAC: false), on: transport, clock: clock)
        let folder = temporaryFolder("audio-refused")
        await #expect(throws: DownloadError(.unsupportedCodec("opus"), url: entry)) {
            try await downloader.downloadHLSAudio(from: entry, to: folder.appendingPathComponent("lesson.m4a")).result()
        }
        #expect(transport.requests.compactMap(\.url?.lastPathComponent) == ["choice.m3u8"])
    }
}

/// Video variants whose `CODECS` the file cannot hold (AV1, VP9, Dolby Vision, VVC) beside an
/// H.264 one, over the `multi-audio` lesson: the policy passes over them, and a master with none
/// other fails before any segment.
@Suite("Video variants the file can hold (RFC 8216 §4.4.6.2)")
struct VideoVariantCodecTests {
    let clock = ManualClock()
    let transport: InMemoryHTTPTransport<ManualClock>

    init() {
        transport = InMemoryHTTPTransport(clock: clock)
    }

    /// A master whose larger, richer variant declares `codec` (its playlist, `refused/`, is
    /// never served), beside the lesson's H.264 variant unless `withH264` is false.
    func master(refusedCodec codec: String, withH264: Bool) -> Data {
        var lines = [
            "#EXTM3U",
            "#EXT-X-STREAM-INF:BANDWIDTH=4000000,RESOLUTION=1280x720,CODECS=\"\(codec),mp4a.40.2\"",
            "refused/index.m3u8",
        ]
        if withH264 {
            lines += [
                "#EXT-X-STREAM-INF:BANDWIDTH=105600,RESOLUTION=192x108,CODECS=\"avc1.64000b\"", "video/index.m3u8",
            ]
        }
        return Data(lines.joined(separator: "\n").utf8)
    }

    static let refusedCodecs = ["av01.0.08M.08", "vp09.00.10.08", "dvh1.05.06", "vvc1.1.L123.CQA", "mjpg"]

    @Test(
        "the variant policies choose among the variants whose CODECS the file can hold, whatever the others' resolution or bandwidth",
        arguments: refusedCodecs)
    func policiesPassOverRefusedCodecs(codec: String) async throws {
        let (entry, downloader) = try servingChoice(
            master(refusedCodec: codec, withH264: true), on: transport, clock: clock)
        for policy in [VariantPolicy.default, .highestBandwidth(atMost: 10_000_000), .highestBandwidth(atMost: 1)] {
            let plan = try await downloader.planHLSVideo(from: entry, policy: policy)
            #expect(plan.variant?.codecs == ["avc1.64000b"], "\(policy)")
        }
        let folder = temporaryFolder("video-choice")
        let result = try await downloader.downloadLesson(from: entry, to: folder.appendingPathComponent("lesson"))
            .result()
        #expect(try MP4Inspector(url: result.file).tracks("vide").count == 1)
        let paths = transport.requests.compactMap(\.url?.path)
        #expect(!paths.contains { $0.contains("refused") }, "fetched the refused variant: \(paths)")
    }

    @Test(
        "a master whose every variant declares a video codec the file cannot hold fails with unsupportedCodec before any segment, on every entry point",
        arguments: refusedCodecs)
    func onlyRefusedCodecs(codec: String) async throws {
        let (entry, downloader) = try servingChoice(
            master(refusedCodec: codec, withH264: false), on: transport, clock: clock)
        let folder = temporaryFolder("video-refused")
        await #expect(throws: DownloadError(.unsupportedCodec(codec), url: entry)) {
            try await downloader.downloadLesson(from: entry, to: folder.appendingPathComponent("lesson")).result()
        }
        await #expect(throws: DownloadError(.unsupportedCodec(codec), url: entry)) {
            try await downloader.downloadHLSVideo(from: entry, to: folder.appendingPathComponent("lesson.mp4"))
                .result()
        }
        await #expect(throws: DownloadError(.unsupportedCodec(codec), url: entry)) {
            try await downloader.planHLSVideo(from: entry)
        }
        #expect(Set(transport.requests.compactMap(\.url?.lastPathComponent)) == ["choice.m3u8"])
        #expect(files(in: folder).isEmpty)
    }
}

extension VideoVariantCodecTests {
    @Test(
        "RFC 6381 §3.3: a variant declaring an audio codec the file holds (MPEG-4 and MPEG-2 AAC, MP3, AC-3, E-AC-3) beside H.264 is chosen",
        arguments: [
            "mp4a.40", "mp4a.40.2", "mp4a.40.5", "mp4a.40.29", "mp4a.40.34", "mp4a.66", "mp4a.67", "mp4a.68",
            "mp4a.69", "mp4a.6B", "MP4A.6b", "ac-3", "ec-3", "ec+3",
        ])
    func writableAudioCodec(codec: String) async throws {
        let master = Data(
            [
                "#EXTM3U", "#EXT-X-STREAM-INF:BANDWIDTH=105600,RESOLUTION=192x108,CODECS=\"avc1.64000b,\(codec)\"",
                "video/index.m3u8",
            ]
            .joined(separator: "\n").utf8)
        let (entry, downloader) = try servingChoice(master, on: transport, clock: clock)
        let plan = try await downloader.planHLSVideo(from: entry)
        #expect(plan.variant?.codecs == ["avc1.64000b", codec])
    }
}

/// The `multi-audio` lesson served on `transport`, with `master` as its multivariant playlist at
/// `choice.m3u8`: that playlist's URL and a downloader over the transport.
func servingChoice(
    _ master: Data, on transport: InMemoryHTTPTransport<ManualClock>, clock: ManualClock
) throws -> (entry: URL, downloader: MediaDownloader<ManualClock>) {
    let lesson = try ServedLesson("multi-audio")
    lesson.serve(on: transport)
    let entry = lesson.base.appendingPathComponent("choice.m3u8")
    transport.stub(entry, reply: .resource(master))
    return (entry, MediaDownloader(engine: DownloadEngine(concurrency: 2, clock: clock, transport: transport)))
}
