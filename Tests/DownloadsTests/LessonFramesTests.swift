import Downloads
import Foundation
import TestSupport
import Testing

/// Every ffmpeg-made lesson, downloaded by ``MediaDownloader/downloadLesson(from:to:)`` as an app
/// would, and compared frame by frame with what ffmpeg's demuxers read from its source
/// (`packets.json`): the one file plays the source's frames, decoded with the source's
/// parameter sets, with sound and picture where the source puts them.
@Suite("Downloaded lessons against their sources, frame by frame")
struct LessonFramesTests {
    static let lessons = [
        "aes-explicit-iv", "aes-fmp4-init", "aes-implicit-iv", "aes-rotation", "cmaf", "cmaf-disc", "cmaf-hevc",
        "disc-encoders", "disc-same", "multi-audio", "packed-aac", "packed-ac3", "packed-eac3", "packed-heaac",
        "packed-mp3", "ts-ac3", "ts-captions", "ts-eac3", "ts-heaac", "ts-heaacv2", "ts-hevc-cra", "ts-mp3",
        "ts-opengop", "webvtt",
    ]

    @Test(
        "RFC 8216 §6.3 and ISO/IEC 14496-12 §8.6: a downloaded lesson holds its source's frames in order, and its drift at the end is the one stated",
        arguments: lessons)
    func downloadedLesson(name: String) async throws {
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        let lesson = try ServedLesson(name)
        lesson.serve(on: transport)
        let downloader = MediaDownloader(engine: DownloadEngine(concurrency: 2, clock: clock, transport: transport))
        let folder = temporaryFolder("frames-\(name)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try await downloader.downloadLesson(
            from: lesson.entry, to: folder.appendingPathComponent("lesson")
        )
        .result()
        let file = try MP4Inspector(url: result.file)
        try LessonComparison.expectSameFrames(file, as: name)
        guard let stated = LessonComparison.drifts.first(where: { $0.name == name }) else {
            #expect(file.tracks("vide").isEmpty || file.tracks("soun").isEmpty, "\(name): no drift stated")
            return
        }
        let drift = try LessonComparison.drift(file, as: name)
        #expect(
            abs(drift.seconds * 1_000_000 - Double(stated.keepingTimestamps)) < 1,
            "\(name): drift \(drift.seconds * 1_000_000) µs, stated \(stated.keepingTimestamps) µs")
    }
}
