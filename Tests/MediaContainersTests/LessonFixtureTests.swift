import Foundation
import MediaContainers
import TestSupport
import Testing

/// Every ffmpeg-made lesson of `Tests/TestSupport/Lessons` that needs no key, remuxed whole and
/// compared with what ffprobe reported about its segments (`facts.json`) and with every frame
/// ffmpeg's demuxers read from them (`packets.json`).
@Suite("The ffmpeg-made lessons, remuxed and compared with ffprobe's facts")
struct LessonFixtureTests {
    static let lessons = [
        "cmaf", "cmaf-disc", "cmaf-hevc", "disc-encoders", "disc-same", "multi-audio", "packed-aac", "packed-ac3",
        "packed-eac3", "packed-heaac", "packed-mp3", "ts-ac3", "ts-captions", "ts-eac3", "ts-heaac", "ts-heaacv2",
        "ts-hevc-cra", "ts-mp3", "ts-opengop",
    ]

    @Test(
        "ISO/IEC 14496-12 §8.6/§8.7: every frame ffprobe counts is a sample, in one ftyp, mdat, moov file",
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
    }

    @Test(
        "ISO/IEC 14496-12 §8.5.2/§8.6.1: each sample carries its source frame's bytes, decoded against the source's parameter sets, and key frames stay sync samples",
        arguments: lessons)
    func sameFramesAsTheSource(name: String) throws {
        let file = try Remux.lesson(name).file
        try LessonComparison.expectSameFrames(file, as: name)
    }

    @Test("the frame comparison tells two lessons apart: another source's frames and parameter sets are differences")
    func comparisonCanFail() throws {
        let file = try Remux.lesson("disc-same").file
        withKnownIssue("another lesson's frames") {
            try LessonComparison.expectSameFrames(file, as: "disc-encoders")
        }
    }

    @Test(
        "RFC 8216 §6.3.3: at the end of the lesson, sound and picture are where the source puts them (drift stated per lesson, under one audio frame)",
        arguments: LessonComparison.drifts.filter { $0.fillingWithSilence != nil },
        [SegmentRemuxer.GapPolicy.keepTimestamps, .fillWithSilence])
    func driftAtTheEnd(
        lesson: LessonComparison.StatedDrift, gaps: SegmentRemuxer.GapPolicy
    ) throws {
        let file = try Remux.lesson(lesson.name, gaps: gaps).file
        let drift = try LessonComparison.drift(file, as: lesson.name)
        let stated = try #require(
            (gaps == .keepTimestamps ? lesson.keepingTimestamps : lesson.fillingWithSilence).map(Double.init))
        #expect(
            abs(drift.seconds * 1_000_000 - stated) < 1,
            "\(lesson.name): drift \(drift.seconds * 1_000_000) µs, stated \(stated) µs")
        #expect(abs(drift.seconds) < drift.audioFrame, "\(lesson.name): drift \(drift.seconds) s")
    }
}
