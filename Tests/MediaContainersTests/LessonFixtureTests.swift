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

extension LessonFixtureTests {
    /// The drift at the end of each discontinuity part, stated in microseconds (as
    /// ``LessonComparison/drifts`` states it at the end): the fMP4 parts keep the video edit
    /// rounded to 1/12,800 s, the transport-stream parts their 90 kHz timestamps exactly.
    static let partDrifts: [(name: String, microseconds: [Int])] = [
        ("cmaf-disc", [-31, -21]), ("disc-encoders", [0, 0]), ("disc-same", [0, 0]),
    ]

    @Test(
        "RFC 8216 §6.3.3: before every discontinuity too, sound and picture are where the source puts them (drift stated per part, under one audio frame)",
        arguments: partDrifts)
    func driftAtEveryDiscontinuity(lesson: (name: String, microseconds: [Int])) throws {
        let file = try Remux.lesson(lesson.name).file
        let drifts = try LessonComparison.partDrifts(file, as: lesson.name)
        #expect(drifts.count == lesson.microseconds.count)
        for (drift, stated) in zip(drifts, lesson.microseconds) {
            #expect(abs(drift * 1_000_000 - Double(stated)) < 1, "\(lesson.name): \(drifts.map { $0 * 1_000_000 }) µs")
        }
        let frame = try LessonComparison.drift(file, as: lesson.name).audioFrame
        #expect(drifts.allSatisfy { abs($0) < frame })
    }
}

extension LessonFixtureTests {
    @Test(
        "ISO/IEC 14496-12 §8.5.2, §8.7.4: a discontinuity into another encoder's picture size adds a sample entry, and stsc points every sample of the new part at it"
    )
    func newEncoderNewSampleEntry() throws {
        let file = try Remux.lesson("disc-encoders").file
        let video = try #require(file.tracks("vide").first)
        // VisualSampleEntry (§12.1.3): width and height after 24 bytes of fields.
        let sizes = video.entries.map { [Int($0[32]) << 8 | Int($0[33]), Int($0[34]) << 8 | Int($0[35])] }
        #expect(sizes == [[192, 108], [320, 180]])  // as ffprobe reports for parts A and B (facts.json)
        let parts = try LessonComparison.sourceFrames("disc-encoders", kind: "video").map(\.part)
        #expect(video.samples.map(\.description) == parts.map { $0 == parts.first ? 1 : 2 })
    }
}
