import Foundation
import MediaContainers
import TestSupport
import Testing

/// Every ffmpeg-made lesson of `Tests/TestSupport/Lessons` that needs no key, remuxed whole and
/// compared with what ffprobe reported about its segments (`facts.json`).
@Suite("The ffmpeg-made lessons, remuxed and compared with ffprobe's facts")
struct LessonFixtureTests {
    static let lessons = [
        "cmaf", "cmaf-disc", "cmaf-hevc", "disc-encoders", "disc-same", "multi-audio", "packed-aac", "packed-ac3",
        "packed-eac3", "packed-heaac", "packed-mp3", "ts-ac3", "ts-captions", "ts-eac3", "ts-heaac", "ts-heaacv2",
        "ts-hevc-cra", "ts-mp3", "ts-opengop",
    ]

    @Test(
        "ISO/IEC 14496-12 §8.6/§8.7: every frame ffprobe counts is a sample, and sound and picture end within a frame of each other",
        arguments: lessons)
    func everyFrame(name: String) throws {
        let result = try Remux.lesson(name)
        let file = result.file
        #expect(file.topLevel == ["ftyp", "mdat", "moov"])
        let packets = try Lessons.sourcePackets(name)
        let video = file.tracks("vide")
        let audio = file.tracks("soun")
        #expect(video.reduce(0) { $0 + $1.samples.count } == packets["video", default: 0], "\(name)")
        #expect(audio.reduce(0) { $0 + $1.samples.count } == packets["audio", default: 0], "\(name)")
        // Every source's sound and picture were encoded for the same length, so the tracks end
        // within one audio frame and one video frame of each other; the difference is stated.
        if let picture = video.first, let sound = audio.first, let audioFrame = sound.samples.first,
            let videoFrame = picture.samples.first
        {
            let audioSeconds = Double(audioFrame.duration) / Double(sound.timescale)
            let videoSeconds = Double(videoFrame.duration) / Double(picture.timescale)
            let difference = sound.end - picture.end
            #expect(
                abs(difference) <= audioSeconds + videoSeconds + 0.000_1,
                "\(name): audio ends at \(sound.end) s, video at \(picture.end) s (\(difference) s apart)")
        }
    }
}
