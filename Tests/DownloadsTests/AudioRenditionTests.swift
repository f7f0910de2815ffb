import Downloads
import Foundation
import TestSupport
import Testing

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
            from: lesson.entry, to: folder.appendingPathComponent("lesson"), audioRenditions: selection
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
}
