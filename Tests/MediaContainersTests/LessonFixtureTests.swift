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
        "cmaf", "cmaf-ac3", "cmaf-disc", "cmaf-eac3", "cmaf-heaac", "cmaf-heaacv2", "cmaf-hevc", "cmaf-mp3",
        "cmaf-renditions-disc",
        "disc-encoders", "disc-rates", "disc-same", "fmp4-base-offset", "multi-audio", "packed-aac", "packed-ac3",
        "packed-beside-video",
        "packed-eac3",
        "packed-heaac", "packed-mp3", "ts-ac3", "ts-captions", "ts-eac3", "ts-heaac", "ts-heaacv2", "ts-hevc-cra",
        "ts-mp3", "ts-opengop", "ts-renditions-disc",
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

    @Test(
        "a step remuxed whole from its bytes in pieces, each let go once read, makes the file its joined bytes make",
        arguments: lessons, [(100, false), (188, true), (65_536, false)])
    func wholeInPieces(name: String, split: (pieceSize: Int, firstPieceInData: Bool)) throws {
        let joined = try Remux.lesson(name).bytes
        let pieces = try Remux.lesson(
            name, wholePieces: split.pieceSize, firstPieceInData: split.firstPieceInData
        ).bytes
        #expect(pieces == joined, "\(name) in pieces of \(split.pieceSize) bytes")
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
        ("cmaf-disc", [-31, -21]), ("cmaf-renditions-disc", [-31, -21]), ("disc-encoders", [0, 0]),
        ("disc-rates", [-4, 7]),
        ("disc-same", [0, 0]), ("ts-renditions-disc", [0, 0]),
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

extension LessonFixtureTests {
    @Test(
        "ISO/IEC 14496-12 §12.2.3: a discontinuity into audio of another sample rate and channel count adds an audio sample entry, and stsc points every sample of the new part at it"
    )
    func newAudioFormatNewSampleEntry() throws {
        let file = try Remux.lesson("disc-rates").file
        let audio = try #require(file.tracks("soun").first)
        // AudioSampleEntry: channelcount at byte 24, the sample rate's integer part at 32.
        let formats = audio.entries.map { [Int($0[24]) << 8 | Int($0[25]), Int($0[32]) << 8 | Int($0[33])] }
        #expect(formats == [[2, 44_100], [1, 48_000]])  // as ffprobe reports for parts A and B (facts.json)
        #expect(audio.timescale == 44_100)
        let parts = try LessonComparison.sourceFrames("disc-rates", kind: "audio").map(\.part)
        #expect(audio.samples.map(\.description) == parts.map { $0 == parts.first ? 1 : 2 })
        // 1,024 samples at 48 kHz are 940.8 ticks: part B's frames last 940 or 941, as the
        // source's times fall.
        #expect(Set(audio.samples.filter { $0.description == 2 }.map(\.duration)) == [940, 941])
    }
}

extension LessonFixtureTests {
    /// The child box `type` of an audio sample entry (ISO/IEC 14496-12 §12.2.3: the boxes after the
    /// entry's 28 bytes of fields), with its header.
    static func child(_ type: String, of entry: [UInt8]) -> [UInt8]? {
        MP4BoxReader(bytes: entry).boxes(from: 36).first { $0.type == type }
            .map { Array(entry[$0.start..<($0.start + $0.size)]) }
    }

    /// The body of the first descriptor with `tag` in `entry`'s `esds` (ISO/IEC 14496-1 §7.2.6), found
    /// by its tag and a size written in four bytes (80 80 80 nn, §8.3.3), as both ffmpeg and
    /// MediaContainers write it.
    static func descriptor(_ tag: UInt8, in entry: [UInt8]) -> ArraySlice<UInt8>? {
        guard let esds = child("esds", of: entry) else { return nil }
        for start in 0..<max(esds.count - 5, 0) where esds[start..<(start + 4)] == [tag, 0x80, 0x80, 0x80] {
            return esds[(start + 5)..<min(start + 5 + Int(esds[start + 4]), esds.count)]
        }
        return nil
    }

    /// The first audio sample entry of the init section ffmpeg wrote for lesson `name`'s audio rendition.
    static func ffmpegAudioEntry(_ name: String) throws -> [UInt8] {
        let initSection = try MP4Inspector(bytes: [UInt8](Lessons.data("\(name)/audio_en/init_1.mp4")))
        return try #require(initSection.tracks("soun").first?.entries.first)
    }

    @Test(
        "ISO/IEC 14496-12 §8.5.2, §12.2.3: an fMP4 audio rendition's sample entry (esds, dac3, dec3) is written as its init section has it, byte for byte",
        arguments: ["cmaf", "cmaf-ac3", "cmaf-eac3", "cmaf-heaac", "cmaf-heaacv2", "cmaf-mp3"])
    func fragmentedAudioEntryKept(name: String) throws {
        let file = try Remux.lesson(name).file
        let written = try #require(file.tracks("soun").first).entries
        #expect(written == [try Self.ffmpegAudioEntry(name)])
    }

    @Test(
        "ETSI TS 102 366 §F.4, §F.6: the dac3 or dec3 built from the AC-3 or E-AC-3 frames of a transport stream or packed audio is the one ffmpeg's MP4 muxer writes for the same encoder settings",
        arguments: [
            ("ts-ac3", "cmaf-ac3", "dac3"), ("packed-ac3", "cmaf-ac3", "dac3"), ("ts-eac3", "cmaf-eac3", "dec3"),
            ("packed-eac3", "cmaf-eac3", "dec3"),
        ])
    func dolbyConfigurationAsFFmpegWritesIt(lesson: String, reference: String, box: String) throws {
        let written = try #require(Remux.lesson(lesson).file.tracks("soun").first?.entries.first)
        let ffmpeg = try Self.ffmpegAudioEntry(reference)
        #expect(written[4..<8] == ffmpeg[4..<8])  // the sample entry's type: ac-3 or ec-3
        #expect(written[24..<36] == ffmpeg[24..<36])  // channelcount, samplesize, samplerate (§12.2.3.2)
        let config = try #require(Self.child(box, of: written))
        #expect(config == Self.child(box, of: ffmpeg))
    }

    @Test(
        "ISO/IEC 14496-3 §1.5.1.1, ISO/IEC 14496-1 §7.2.6.6: MP3 from a transport stream or packed audio is mp4a with the object type ffmpeg's MP4 muxer gives it (0x6B, MPEG-1 audio)",
        arguments: ["ts-mp3", "packed-mp3"])
    func mp3ObjectTypeAsFFmpegWritesIt(lesson: String) throws {
        let written = try #require(Remux.lesson(lesson).file.tracks("soun").first?.entries.first)
        let ffmpeg = try Self.ffmpegAudioEntry("cmaf-mp3")
        #expect(written[4..<8] == ffmpeg[4..<8])
        // The DecoderConfigDescriptor (tag 4) starts with objectTypeIndication.
        func objectType(_ entry: [UInt8]) -> UInt8? { Self.descriptor(4, in: entry)?.first }
        #expect(objectType(written) == 0x6B)
        #expect(objectType(written) == objectType(ffmpeg))
    }

    @Test(
        "ISO/IEC 14496-12 §8.5.2, §8.7.4: separate audio that changes from mono to stereo across a discontinuity gets a second audio sample entry, as its second init section has it"
    )
    func audioChangeNewSampleEntry() throws {
        let file = try Remux.lesson("cmaf-renditions-disc").file
        let audio = try #require(file.tracks("soun").first)
        let initB = try MP4Inspector(bytes: [UInt8](Lessons.data("cmaf-renditions-disc/audio_en/initB_audio_en.mp4")))
        let initA = try MP4Inspector(bytes: [UInt8](Lessons.data("cmaf-renditions-disc/audio_en/initA_audio_en.mp4")))
        #expect(
            audio.entries == [initA.tracks("soun").first?.entries.first, initB.tracks("soun").first?.entries.first])
        // ffmpeg writes 2 in every entry's channelcount; the AudioSpecificConfig (DecoderSpecificInfo,
        // tag 5) says mono, then stereo: its channelConfiguration (ISO/IEC 14496-3 §1.6.2.1).
        func channels(_ entry: [UInt8]) -> Int? {
            Self.descriptor(5, in: entry).flatMap { $0.count >= 2 ? Int($0[$0.startIndex + 1] >> 3 & 0x0F) : nil }
        }
        #expect(audio.entries.map(channels) == [1, 2])
        let parts = try LessonComparison.sourceFrames("cmaf-renditions-disc", kind: "audio").map(\.part)
        #expect(audio.samples.map(\.description) == parts.map { $0 == parts.first ? 1 : 2 })
    }
}
