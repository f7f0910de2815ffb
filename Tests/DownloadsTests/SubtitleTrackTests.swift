import Downloads
import Foundation
import HTTPSupport
import MediaContainers
import OfflineLessons
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The `webvtt` lesson (muxed TS whose video starts at PTS 900000, two WebVTT renditions in group
/// `subs`: English, and English forced; every segment maps `MPEGTS:900000` to `LOCAL:0`, and the
/// cue spanning the segment boundary is in both segments) downloaded with its subtitles.
@Suite("Subtitles inside the file")
struct SubtitleTrackTests {
    let clock = ManualClock()
    let transport: InMemoryHTTPTransport<ManualClock>

    init() {
        transport = InMemoryHTTPTransport(clock: clock)
    }

    /// The cues of each rendition as its segments state them (facts.json, from the fixture's
    /// generator), in seconds after the video's first frame (MPEGTS 900000 is that frame).
    static let english: [(start: Double, end: Double, text: String)] = [
        (0.1, 0.7, "Welcome to the lesson."), (0.8, 1.5, "This cue spans the segment boundary."),
        (1.6, 1.95, "Goodbye."),
    ]
    static let forced: [(start: Double, end: Double, text: String)] = [(0.5, 1.3, "[Sign: EXIT]")]

    func download(
        _ handling: SubtitleHandling, folder: URL, failing: String? = nil
    ) async throws -> DownloadResult {
        let lesson = try ServedLesson("webvtt")
        lesson.serve(on: transport, failing: failing, with: .response(status: 404))
        let downloader = MediaDownloader(
            engine: DownloadEngine(concurrency: 2, retry: .none, clock: clock, transport: transport))
        return try await downloader.downloadLesson(
            from: lesson.entry, to: folder.appendingPathComponent("lesson"), subtitles: handling
        ).result()
    }

    /// A subtitle track's non-empty samples: text, and start and end in seconds after the
    /// video's first frame.
    func cues(of track: MP4Inspector.Track, in file: MP4Inspector) throws -> [(
        start: Double, end: Double, text: String
    )] {
        let video = try #require(file.tracks("vide").first)
        let origin = try #require(video.presentationTimes().min())
        return zip(track.samples, track.presentationTimes()).compactMap { sample, time in
            let bytes = file.data(of: sample)
            guard bytes.count >= 2 else { return nil }
            let length = Int(bytes[0]) << 8 | Int(bytes[1])
            guard length > 0, bytes.count >= 2 + length else { return nil }
            let text = String(decoding: bytes[2..<(2 + length)], as: UTF8.self)
            return (time - origin, time - origin + Double(sample.duration) / Double(track.timescale), text)
        }
    }

    func expectCues(
        _ actual: [(start: Double, end: Double, text: String)], _ expected: [(start: Double, end: Double, text: String)]
    ) {
        #expect(actual.map(\.text) == expected.map(\.text))
        for (found, wanted) in zip(actual, expected) {
            // One tick of the 90 kHz clock, and the rounding of the video's start in the movie timescale.
            #expect(abs(found.start - wanted.start) < 0.001, "\(found.text) starts at \(found.start)")
            #expect(abs(found.end - wanted.end) < 0.001, "\(found.text) ends at \(found.end)")
        }
    }

    @Test(
        "RFC 8216 §3.5 and ISO/IEC 14496-17: each WebVTT rendition is a tx3g track with its language and name, cues placed by X-TIMESTAMP-MAP, a cue repeated in two segments kept once"
    )
    func embedded() async throws {
        let folder = temporaryFolder("subtitles")
        let result = try await download(.embedded, folder: folder)
        #expect(result.omissions.isEmpty)
        #expect(files(in: folder) == ["lesson.mp4"])
        let file = try MP4Inspector(url: result.file)
        let text = file.tracks("sbtl")
        try #require(text.count == 2)
        #expect(text.map(\.formats) == [["tx3g"], ["tx3g"]])
        #expect(text.map(\.language) == ["eng", "eng"])
        #expect(text.map(\.extendedLanguage) == ["en", "en"])
        #expect(text.map(\.name) == ["English", "English (forced)"])
        #expect(text.allSatisfy { $0.alternateGroup == 2 })
        // DEFAULT=YES is enabled; the forced one is not (a player shows it by its flag).
        #expect(text.map { $0.flags & 1 } == [1, 0])
        expectCues(try cues(of: text[0], in: file), Self.english)
        expectCues(try cues(of: text[1], in: file), Self.forced)
        // Timed text tiles its time: every sample starts where the one before ended.
        for track in text {
            let times = track.presentationTimes()
            for (index, sample) in track.samples.enumerated().dropLast() {
                let end = times[index] + Double(sample.duration) / Double(track.timescale)
                #expect(abs(end - times[index + 1]) < 1e-9)
            }
        }
    }

    @Test(
        "FORCED=YES: the tx3g sample entry says all samples are forced, and the track's kind box says forced-subtitle")
    func forcedFlags() async throws {
        let result = try await download(.embedded, folder: temporaryFolder("subtitles-forced"))
        let file = try MP4Inspector(url: result.file)
        let text = file.tracks("sbtl")
        try #require(text.count == 2)
        func displayFlags(_ track: MP4Inspector.Track) throws -> UInt32 {
            let entry = try #require(track.entries.first)
            // size, type, 6 reserved bytes, data reference index, then the display flags.
            return entry[16..<20].reduce(0) { $0 << 8 | UInt32($1) }
        }
        #expect(try displayFlags(text[0]) == 0)
        #expect(try displayFlags(text[1]) == 0x8000_0000)
        let bytes = try Data(contentsOf: result.file)
        #expect(bytes.range(of: Data("urn:mpeg:dash:role:2011\u{0}forced-subtitle\u{0}".utf8)) != nil)
    }

    @Test("a sidecar WebVTT file per rendition, on the file's timeline, each cue once and no X-TIMESTAMP-MAP")
    func sidecar() async throws {
        let folder = temporaryFolder("subtitles-sidecar")
        let result = try await download([.embedded, .sidecarFiles], folder: folder)
        #expect(files(in: folder) == ["lesson.en.forced.vtt", "lesson.en.vtt", "lesson.mp4"])
        let file = try MP4Inspector(url: result.file)
        let video = try #require(file.tracks("vide").first)
        let origin = try #require(video.presentationTimes().min())
        let text = try String(contentsOf: folder.appendingPathComponent("lesson.en.vtt"), encoding: .utf8)
        #expect(!text.contains("X-TIMESTAMP-MAP"))
        let document = try WebVTTDocument(parsing: text)
        #expect(document.cues.map(\.text) == Self.english.map(\.text))
        for (cue, wanted) in zip(document.cues, Self.english) {
            #expect(abs(Double(cue.start) / 1_000 - origin - wanted.start) <= 0.001)
            #expect(abs(Double(cue.end) / 1_000 - origin - wanted.end) <= 0.001)
        }
        // The same cues as the track inside the file.
        let track = try #require(file.tracks("sbtl").first)
        #expect(try cues(of: track, in: file).map(\.text) == document.cues.map(\.text))
    }

    @Test(
        "a subtitle segment that fails leaves its rendition out and says so; the lesson and the other rendition are complete",
        arguments: ["subs_en/seg1.vtt", "subs_en/index.m3u8"])
    func failure(failing: String) async throws {
        let folder = temporaryFolder("subtitles-failing")
        let result = try await download(.embedded, folder: folder, failing: failing)
        #expect(result.omissions.count == 1)
        guard case .subtitles(let language, let reason)? = result.omissions.first else {
            Issue.record("no subtitle omission: \(result.omissions)")
            return
        }
        #expect(language == "en")
        #expect(reason.contains("404"))
        let file = try MP4Inspector(url: result.file)
        #expect(file.tracks("sbtl").map(\.name) == ["English (forced)"])
        #expect(file.tracks("vide").first?.samples.count == 50)
        #expect(files(in: folder) == ["lesson.mp4"])
    }

    @Test("without subtitles, no subtitle playlist or segment is asked for and the file has no text track")
    func none() async throws {
        let result = try await download([], folder: temporaryFolder("subtitles-none"))
        #expect(try MP4Inspector(url: result.file).tracks("sbtl").isEmpty)
        #expect(!transport.requests.contains { $0.url?.path.contains("subs_") ?? false })
    }

    @Test("the offline library's delete removes the lesson and the subtitle files saved beside it")
    func libraryDelete() async throws {
        let lesson = try ServedLesson("webvtt")
        lesson.serve(on: transport)
        let downloader = MediaDownloader(engine: DownloadEngine(concurrency: 2, clock: clock, transport: transport))
        let folder = temporaryFolder("subtitles-library")
        let library = OfflineLibrary(directory: folder) { remote, destination in
            downloader.downloadLesson(from: remote, to: destination, subtitles: [.embedded, .sidecarFiles])
        }
        try await library.download("lesson", from: lesson.entry)
        await library.waitForDownload("lesson")
        guard case .downloaded = await library.state(of: "lesson") else {
            Issue.record("not downloaded: \(await library.state(of: "lesson"))")
            return
        }
        #expect(files(in: folder).filter { $0.hasSuffix(".vtt") }.count == 2)
        try await library.delete("lesson")
        #expect(files(in: folder) == ["offline-library.json"])
    }
}
