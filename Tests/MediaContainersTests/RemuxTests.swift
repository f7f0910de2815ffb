import Foundation
import MediaContainers
import TestSupport
import Testing

@Suite("Remuxing audio to MP4 (ISO/IEC 14496-12, -14)")
struct RemuxTests {
    @Test("an AAC transport stream becomes an .m4a: ftyp, mdat, moov with the sample tables of every frame")
    func audioFile() throws {
        let result = try Remux.run([try Facts.data("audio-aac.ts")], brand: .audio)
        #expect(result.file.topLevel == ["ftyp", "mdat", "moov"])
        #expect(String(decoding: result.bytes[8..<12], as: UTF8.self) == "M4A ")
        let track = try #require(result.file.tracks("soun").first)
        #expect(track.samples.count == 131)
        #expect(track.timescale == 44_100)
        #expect(track.samples.allSatisfy { $0.duration == 1_024 })
        #expect(abs(result.summary.duration - 131 * 1_024 / 44_100) < 0.001)
    }

    @Test("ISO/IEC 14496-14 §3.1.2: the esds carries the AudioSpecificConfig of the ADTS headers")
    func esds() throws {
        let result = try Remux.run([try Facts.data("audio-aac.ts")], brand: .audio)
        let entry = try #require(result.file.tracks("soun").first?.entries.first)
        #expect(String(decoding: entry[4..<8], as: UTF8.self) == "mp4a")
        // DecoderSpecificInfo: tag 5, a four-byte length of 2, then the two config bytes.
        let specific: [UInt8] = [0x05, 0x80, 0x80, 0x80, 0x02, 0x12, 0x10]
        #expect(entry.indices.contains { entry[$0...].starts(with: specific) })
    }

    @Test(
        "ISO/IEC 14496-12 §8.6: fed in pieces of any size as they arrive, the file is byte for byte the one remuxed whole",
        arguments: [1, 188, 1_000, 65_536])
    func streamedInPieces(size: Int) throws {
        let segments = try ["seg0.ts", "seg1.ts", "seg2.ts", "seg3.ts"].map { try Facts.data("hls-audio/\($0)") }
        let whole = try Remux.run(segments, brand: .audio)
        let streamed = try Remux.run(segments, brand: .audio, pieces: size)
        #expect(streamed.bytes == whole.bytes)
    }

    @Test(
        "ISO/IEC 14496-12 §8.6.1.2: ten minutes at 48 kHz after a discontinuity from 44.1 kHz keep the source's time in the 44.1 kHz track, every frame kept"
    )
    func otherSampleRateAfterADiscontinuity() throws {
        // Part A: one second of 44.1 kHz frames; part B: ten minutes of 48 kHz frames whose
        // timestamps restart, 25 frames to a PES packet. A 48 kHz frame is 940.8 ticks of the
        // track's 44.1 kHz timescale.
        var first = TransportStreamBuilder(seed: 3)
        var partA = first.tables()
        for index in 0..<43 {
            partA += first.audioPES(pts: 126_000 + Int64(index) * 1_024 * 90_000 / 44_100, frameSize: 4)
        }
        var second = TransportStreamBuilder(seed: 4)
        var partB = second.tables()
        let frameCount = 28_125
        for start in stride(from: 0, to: frameCount, by: 25) {
            partB += second.audioPES(
                pts: 126_000 + Int64(start) * 1_920, frameCount: 25, frameSize: 4, sampleRate: 48_000)
        }
        let result = try Remux.run(
            [
                [SegmentRemuxer.Segment(data: Data(partA), discontinuity: 0, index: 0)],
                [SegmentRemuxer.Segment(data: Data(partB), discontinuity: 1, index: 1)],
            ], brand: .audio)
        let track = try #require(result.file.tracks("soun").first)
        #expect(track.timescale == 44_100)
        #expect(track.entries.count == 2)
        #expect(track.samples.count == 43 + frameCount)
        #expect(result.report.framesTrimmed == 0)
        let partBSamples = track.samples.dropFirst(43)
        #expect(partBSamples.allSatisfy { $0.description == 2 })
        #expect(Set(partBSamples.map(\.duration)) == [940, 941])
        // Part B starts where A ends and lasts exactly 600 s: 26,460,000 ticks.
        let last = try #require(track.samples.last)
        let firstOfB = try #require(partBSamples.first)
        #expect(firstOfB.decodeTime == 43 * 1_024)
        #expect(last.decodeTime + last.duration == 43 * 1_024 + 26_460_000)
    }

    @Test("HLS segments join into one continuous track: every frame of the stream, in order, 1,024 samples apart")
    func segments() throws {
        let segments = try ["seg0.ts", "seg1.ts", "seg2.ts", "seg3.ts"].map { try Facts.data("hls-audio/\($0)") }
        let joined = try Remux.run(segments, brand: .audio)
        let single = try Remux.run([try Facts.data("audio-aac.ts")], brand: .audio)
        let joinedTrack = try #require(joined.file.tracks("soun").first)
        let singleTrack = try #require(single.file.tracks("soun").first)
        #expect(
            joinedTrack.samples.map { joined.file.data(of: $0) } == singleTrack.samples.map { single.file.data(of: $0) }
        )
        #expect(joinedTrack.samples.map(\.decodeTime) == singleTrack.samples.map(\.decodeTime))
    }

    @Test("RFC 8216 §3.4: packed audio (an ID3 timestamp, then ADTS) gives the transport stream's frames at its times")
    func packedAudio() throws {
        let frames = try Facts.aacFrames(try Facts.demux(try Facts.data("audio-aac.ts")).packets)
        let segments = stride(from: 0, to: frames.count, by: 44).enumerated().map { index, start in
            AudioFramingTests.id3(timestamp: 126_000 + Int64(index) * 44 * 1_024 * 90_000 / 44_100)
                + AudioFramingTests.adts(Array(frames[start..<min(start + 44, frames.count)]))
        }
        let packed = try Remux.run(segments, brand: .audio, pieces: 5)
        let transport = try Remux.run([try Facts.data("audio-aac.ts")], brand: .audio)
        #expect(packed.bytes == transport.bytes)
    }

    @Test("a damaged segment is an error naming it and the byte; no media is refused; a web page is not media")
    func errors() throws {
        var damaged = try Facts.data("hls-audio/seg1.ts")
        damaged[damaged.startIndex + 188 * 3] = 0x00
        do {
            _ = try Remux.run([try Facts.data("hls-audio/seg0.ts"), damaged])
            Issue.record("remuxed")
        } catch let error as ContainerError {
            #expect(error.segment == 1)
            #expect(error.kind == .lostSync(found: 0))
            #expect(error.offset == 188 * 3)
        }
        #expect(throws: ContainerError(.noSupportedMedia)) { _ = try Remux.run([Data]()) }
        let page = Data("<!doctype html><html><body>Sign in to the hotel Wi-Fi</body></html>".utf8)
        #expect(throws: ContainerError(.notMedia(found: "an HTML page"), segment: 0)) { _ = try Remux.run([page]) }
    }
}

/// Audio placed by its own timestamps (RFC 8216 §6.3.3 leaves a lesson's timestamps to the
/// source): overlaps trimmed, gaps kept or filled, and the report counting each.
@Suite("Audio gaps and overlaps")
struct AudioGapTests {
    @Test(
        "an overlap is trimmed by whole frames, a gap kept in the timestamps or filled with silent frames, and the report counts each",
        arguments: [SegmentRemuxer.GapPolicy.keepTimestamps, .fillWithSilence])
    func gapsAndOverlaps(gaps: SegmentRemuxer.GapPolicy) throws {
        var builder = TransportStreamBuilder()
        let frame = 1_024.0 * 90_000 / 44_100
        func pts(_ frames: Double) -> Int64 { 126_000 + Int64((frames * frame).rounded()) }
        var bytes = builder.tables()
        bytes += builder.audioPES(pts: pts(0), frameCount: 4)
        // Frames 2 to 5: the first two overlap frames 2 and 3 already written.
        bytes += builder.audioPES(pts: pts(2), frameCount: 4)
        // Frames 10 and 11: four frames missing after frame 5.
        bytes += builder.audioPES(pts: pts(10), frameCount: 2)
        let result = try Remux.run(
            [[SegmentRemuxer.Segment(data: Data(bytes), discontinuity: 0, index: 0)]], gaps: gaps)
        #expect(result.report.framesTrimmed == 2)
        let sound = try #require(result.file.tracks("soun").first)
        let times = sound.presentationTimes()
        let seconds = 1_024.0 / 44_100
        switch gaps {
        case .keepTimestamps:
            #expect(result.report.gapsKept == 1 && result.report.silentFramesInserted == 0)
            #expect(sound.samples.count == 8)
        case .fillWithSilence:
            #expect(result.report.gapsKept == 0 && result.report.silentFramesInserted == 4)
            #expect(sound.samples.count == 12)
        }
        // Either way, the last frame is presented where its timestamp puts it: frame 11.
        let last = try #require(times.last)
        let first = try #require(times.first)
        #expect(abs((last - first) - 11 * seconds) < 0.000_1)
    }

    @Test(
        "RFC 8216 §3.4: packed audio is placed by its ID3 PRIV timestamp: a later one leaves a gap, an earlier one an overlap trimmed by whole frames",
        arguments: [
            (9_000, SegmentRemuxer.GapPolicy.keepTimestamps), (9_000, .fillWithSilence), (-4_180, .keepTimestamps),
            (0, .keepTimestamps),
        ]
            as [(Int64, SegmentRemuxer.GapPolicy)])
    func packedAudioTimestamps(ticks: Int64, gaps: SegmentRemuxer.GapPolicy) throws {
        let first = try Lessons.data("packed-aac/seg0.aac")
        let second = try Lessons.data("packed-aac/seg1.aac")
        func run(_ segments: [Data]) throws -> Remux.Result { try Remux.run(segments, brand: .audio, gaps: gaps) }
        let alone = try #require(try run([first]).file.tracks("soun").first)
        let plain = try #require(try run([first, second]).file.tracks("soun").first)
        let moved = try run([first, try Lessons.packedAudio(second, shiftedBy: ticks)])
        let track = try #require(moved.file.tracks("soun").first)
        let frame = 1_024 / Double(track.timescale)
        let shift = Double(ticks) / 90_000
        let head = alone.samples.count
        // Where the second segment's first frame is presented, against the unmoved remux.
        let times = track.presentationTimes()
        let plainTimes = plain.presentationTimes()
        let tail = try #require(plainTimes.last)
        if ticks > 0 {
            let silent = gaps == .fillWithSilence ? moved.report.silentFramesInserted : 0
            #expect(moved.report.gapsKept + (silent > 0 ? 1 : 0) == 1)
            #expect(silent == (gaps == .fillWithSilence ? Int((shift / frame).rounded()) : 0))
            #expect(track.samples.count == plain.samples.count + silent)
            let resumed = times[head + silent]
            #expect(abs(resumed - (plainTimes[head] + shift)) < frame / 2, "resumed at \(resumed) s")
        } else if ticks < 0 {
            // Whole frames: what is left under half a frame keeps the track continuous.
            let overlap = Int((-shift / frame).rounded())
            #expect(moved.report.framesTrimmed == overlap)
            #expect(track.samples.count == plain.samples.count - overlap)
        } else {
            #expect(moved.bytes == (try run([first, second]).bytes))
        }
        // The last frame is presented where its timestamp puts it.
        let last = try #require(times.last)
        #expect(abs(last - (tail + shift)) < frame / 2, "last frame at \(last) s, expected \(tail + shift) s")
    }
}

@Suite("Fragmented MP4 segments read in pieces (ISO/IEC 14496-12 §8.8)")
struct FragmentedMP4PieceTests {
    /// The CMAF lesson's audio initialisation section and first segment.
    func fixture() throws -> (initialization: Data, segment: Data) {
        (try Lessons.data("cmaf/audio_en/init_1.mp4"), try Lessons.data("cmaf/audio_en/seg0.m4s"))
    }

    /// The samples of `segment` read in pieces of `size` bytes: sizes, times and sync flags.
    func read(_ initialization: Data, _ segment: Data, pieces size: Int) throws -> [[Int64]] {
        var reader = try FragmentedMP4Reader(initialization: initialization)
        var samples: [MediaSample] = []
        var start = segment.startIndex
        while start < segment.endIndex {
            let end = min(start + size, segment.endIndex)
            samples += try reader.read(segment[start..<end])
            start = end
        }
        samples += try reader.finish()
        return samples.map { [Int64($0.data.count), $0.decodeTime, $0.presentationTime, $0.isSync ? 1 : 0] }
    }

    /// `segment` with its last box (`mdat`) given size 0, which §4.2 reads as "to the end".
    func lastBoxSizeZero(_ segment: Data) throws -> Data {
        var bytes = [UInt8](segment)
        var at = 0
        var last = 0
        while at + 8 <= bytes.count {
            let size = bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) }
            guard size >= 8 else { break }
            last = at
            at += size
        }
        try #require(String(decoding: bytes[(last + 4)..<(last + 8)], as: UTF8.self) == "mdat")
        bytes.replaceSubrange(last..<(last + 4), with: [0, 0, 0, 0])
        return Data(bytes)
    }

    @Test(
        "§8.8: a segment read in pieces of any size gives the samples it gives whole, a last box of size 0 (§4.2: to the end) included",
        arguments: [1, 7, 100, 4_096])
    func piecesMatchWhole(size: Int) throws {
        let (initialization, segment) = try fixture()
        let whole = try read(initialization, segment, pieces: segment.count)
        #expect(!whole.isEmpty)
        #expect(try read(initialization, segment, pieces: size) == whole)
        let open = try lastBoxSizeZero(segment)
        #expect(try read(initialization, open, pieces: open.count) == whole)
        #expect(try read(initialization, open, pieces: size) == whole)
    }
}

extension RemuxTests {
    @Test(
        "RFC 8216 §3.3: a segment that holds no sample (only a styp) leaves the timeline unplaced, and the next segment streamed in pieces is held and placed whole, as appended"
    )
    func streamingAfterASegmentWithoutSamples() throws {
        let initialization = try Lessons.data("cmaf/audio_en/init_1.mp4")
        let media = try ["seg0.m4s", "seg1.m4s"].map { try Lessons.data("cmaf/audio_en/\($0)") }
        // ISO/IEC 14496-12 §8.16.2: a segment type box (major brand msdh, version 0, msdh msix).
        let typeOnly = Data([0, 0, 0, 24] + Array("stypmsdh".utf8) + [0, 0, 0, 0] + Array("msdhmsix".utf8))
        func segment(_ data: Data, _ index: Int) -> SegmentRemuxer.Segment {
            SegmentRemuxer.Segment(
                data: data, discontinuity: 0, initialization: index == 0 ? initialization : nil, index: index)
        }
        let steps = [[segment(typeOnly, 0)], [segment(media[0], 1)], [segment(media[1], 2)]]
        let whole = try Remux.run(steps, brand: .audio)
        #expect(try #require(whole.file.tracks("soun").first).samples.count > 0)

        let folder = temporaryFolder("held")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("lesson.m4a")
        var remuxer = try SegmentRemuxer(output: try MP4FileOutput(url: url), brand: .audio)
        try remuxer.append(steps[0])
        #expect(!remuxer.canStream(discontinuity: 0))
        for step in steps.dropFirst() {
            let segment = try #require(step.first)
            var header = segment
            header.data = Data()
            try remuxer.begin(header)
            for start in stride(from: segment.data.startIndex, to: segment.data.endIndex, by: 1_000) {
                try remuxer.feed(segment.data[start..<min(start + 1_000, segment.data.endIndex)])
            }
            try remuxer.end()
        }
        _ = try remuxer.finish()
        #expect(try Data(contentsOf: url) == whole.bytes)
    }
}

extension RemuxTests {
    @Test(
        "ISO/IEC 14496-12 §8.5.2: a discontinuity into another audio codec (AAC, then AC-3) gives the one track a sample entry of the new format, every frame of both kept"
    )
    func otherCodecAfterADiscontinuity() throws {
        let steps = try [("packed-aac/seg0.aac", 0), ("packed-aac/seg1.aac", 0), ("packed-ac3/seg0.ac3", 1)]
            .enumerated().map { index, entry in
                [SegmentRemuxer.Segment(data: try Lessons.data(entry.0), discontinuity: entry.1, index: index)]
            }
        let result = try Remux.run(steps, brand: .audio)
        let tracks = result.file.tracks("soun")
        #expect(tracks.count == 1)
        let track = try #require(tracks.first)
        #expect(track.formats == ["mp4a", "ac-3"])
        let aacFrames = try Lessons.sourceSegments("packed-aac/index.m3u8").flatMap(\.streams).reduce(0) {
            $0 + $1.frames.count
        }
        let ac3Frames = try #require(
            Lessons.sourceSegments("packed-ac3/index.m3u8").first?.streams.first?.frames.count)
        #expect(track.samples.filter { $0.description == 1 }.count == aacFrames)
        #expect(track.samples.filter { $0.description == 2 }.count == ac3Frames)
    }
}

extension RemuxTests {
    @Test(
        "ISO/IEC 11172-3 §2.4.2.3: a gap in MP3 is filled with silent frames of the stream's own header over zeros, as many as the gap holds"
    )
    func mp3GapFilledWithSilence() throws {
        let first = try Lessons.data("packed-mp3/seg0.mp3")
        let second = try Lessons.data("packed-mp3/seg1.mp3")
        func run(_ segments: [Data]) throws -> Remux.Result {
            try Remux.run(segments, brand: .audio, gaps: .fillWithSilence)
        }
        let plain = try run([first, second])
        // The second segment a tenth of a second later: 4.2 frames of 1,152 samples at 48 kHz.
        let moved = try run([first, try Lessons.packedAudio(second, shiftedBy: 9_000)])
        #expect(moved.report.silentFramesInserted == 4)
        #expect(moved.report.gapsKept == 0)
        let track = try #require(moved.file.tracks("soun").first)
        let plainTrack = try #require(plain.file.tracks("soun").first)
        #expect(track.samples.count == plainTrack.samples.count + 4)
        // The four frames after the first segment's: the next frame's header, no CRC, no
        // padding, then zeros to the frame's length.
        let head = try #require(
            Lessons.sourceSegments("packed-mp3/index.m3u8").first?.streams.first?.frames.count)
        let next = moved.file.data(of: track.samples[head + 4])
        for sample in track.samples[head..<(head + 4)] {
            let silent = moved.file.data(of: sample)
            #expect(silent[0] == next[0] && silent[1] == next[1] | 0x01 && silent[2] == next[2] & ~0x02)
            #expect(silent.dropFirst(4).allSatisfy { $0 == 0 })
            #expect(sample.duration == Int64(track.timescale) * 1_152 / 48_000)
        }
    }
}

extension RemuxTests {
    /// The CRC-16 of ETSI TS 102 366 Annex A (x¹⁶ + x¹⁵ + x² + 1, most significant bit first,
    /// from 0), written here apart from the module's so that the test checks it.
    static func ac3CRC(_ bytes: some Sequence<UInt8>) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            for bit in (0..<8).reversed() {
                let top = (crc >> 15) ^ UInt16((byte >> UInt8(bit)) & 1)
                crc <<= 1
                if top == 1 { crc ^= 0x8005 }
            }
        }
        return crc
    }

    /// Whether `frame` (one AC-3 syncframe) passes both CRCs: the first five eighths after the
    /// syncword, and the whole frame after it (§4.4.1.2, §4.4.5.2).
    static func passesCRCs(_ frame: [UInt8]) -> Bool {
        let fiveEighths = ((frame.count >> 2) + (frame.count >> 4)) << 1
        return ac3CRC(frame[2..<fiveEighths]) == 0 && ac3CRC(frame[2...]) == 0
    }

    @Test("ETSI TS 102 366 Annex A: the test's CRC is CRC-16/BUYPASS, and real AC-3 frames pass both of theirs")
    func ac3CRCs() throws {
        #expect(Self.ac3CRC(Array("123456789".utf8)) == 0xFEE8)
        let stream = [UInt8](try Facts.data("ac3-layouts/stereo.ac3"))
        #expect(stream.count == 8 * 384)
        for start in stride(from: 0, to: stream.count, by: 384) {
            #expect(Self.passesCRCs(Array(stream[start..<(start + 384)])))
        }
    }

    /// The syncframes of a raw AC-3 or E-AC-3 stream, each as long as its header says
    /// (frmsizecod, 44.1 kHz adding a word to odd codes; E-AC-3's frmsiz).
    static func syncframes(_ stream: Data) -> [Data] {
        let words48 = [
            64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448, 512, 640, 768, 896, 1_024, 1_152, 1_280,
        ]
        let words44 = [
            69, 87, 104, 121, 139, 174, 208, 243, 278, 348, 417, 487, 557, 696, 835, 975, 1_114, 1_253, 1_393,
        ]
        var frames: [Data] = []
        var at = stream.startIndex
        while at + 6 <= stream.endIndex {
            let enhanced = stream[at + 5] >> 3 > 10
            let words: Int
            if enhanced {
                words = (Int(stream[at + 2] & 0x07) << 8 | Int(stream[at + 3])) + 1
            } else {
                let code = Int(stream[at + 4] & 0x3F)
                words = stream[at + 4] >> 6 == 1 ? words44[code / 2] + code % 2 : words48[code / 2]
            }
            frames.append(stream[at..<min(at + 2 * words, stream.endIndex)])
            at += 2 * words
        }
        return frames
    }

    @Test(
        "ETSI TS 102 366 §4.3 and Annex E: a gap in AC-3 or E-AC-3 is filled with silent syncframes of the stream's rate, size and channel layout, their CRCs right",
        arguments: ["ac3", "eac3"], ["mono", "stereo", "3.0", "2.1", "quad", "5.1"])
    func dolbyGapFilledWithSilence(codec: String, layout: String) throws {
        let frames = Self.syncframes(try Facts.data("\(codec)-layouts/\(layout).\(codec)"))
        #expect(frames.count >= 6)
        // fscod: 48, 44.1 or 32 kHz.
        let sampleRate = [48_000, 44_100, 32_000][Int(frames[0][frames[0].startIndex + 4] >> 6)]
        // Two packed-audio segments of three frames each, the second a tenth of a second late.
        let frameTicks = Int64(1_536 * 90_000 / sampleRate)
        func segment(_ range: Range<Int>, at timestamp: Int64) -> Data {
            frames[range].reduce(AudioFramingTests.id3(timestamp: timestamp), +)
        }
        let late = 900_000 + 3 * frameTicks + 9_000
        let result = try Remux.run(
            [
                [SegmentRemuxer.Segment(data: segment(0..<3, at: 900_000), discontinuity: 0, index: 0)],
                [SegmentRemuxer.Segment(data: segment(3..<6, at: late), discontinuity: 0, index: 1)],
            ], brand: .audio, gaps: .fillWithSilence)
        let silent = Int((9_000.0 / Double(frameTicks)).rounded())
        #expect(silent >= 2)
        #expect(result.report.silentFramesInserted == silent)
        #expect(result.report.gapsKept == 0)
        let track = try #require(result.file.tracks("soun").first)
        #expect(track.formats == [codec == "ac3" ? "ac-3" : "ec-3"])
        #expect(track.samples.count == 6 + silent)
        let next = [UInt8](frames[3])
        for sample in track.samples[3..<(3 + silent)] {
            let bytes = result.file.data(of: sample)
            #expect(bytes.count == next.count)
            if codec == "ac3" {
                // fscod and frmsizecod, bsid and bsmod, and acmod.
                #expect(bytes[4] == next[4] && bytes[5] == next[5] && bytes[6] >> 5 == next[6] >> 5)
                #expect(Self.passesCRCs(bytes), "\(layout)")
            } else {
                // frmsiz, fscod and numblkscod, acmod, lfeon and bsid.
                #expect(bytes[2...5] == next[2...5])
                #expect(Self.ac3CRC(bytes[2...]) == 0, "\(layout)")
            }
        }
    }
}

extension RemuxTests {
    @Test(
        "RFC 8216 §3.4: packed audio whose 33-bit ID3 timestamp wraps past 2³³ between segments carries on, every frame kept, as unwrapped"
    )
    func packedAudioClockWraps() throws {
        let first = try Lessons.data("packed-aac/seg0.aac")
        let second = try Lessons.data("packed-aac/seg1.aac")
        func run(_ segments: [Data]) throws -> Remux.Result { try Remux.run(segments, brand: .audio) }
        // The first segment half a second before the wrap (its stamp 900,000 moved to 2³³ − 45,000);
        // the second one, 90,240 ticks later, lands past 2³³ and is written as its low 33 bits.
        let shift: Int64 = (1 << 33) - 900_000 - 45_000
        let wrapped = try run([
            try Lessons.packedAudio(first, shiftedBy: shift),
            try Lessons.packedAudio(second, shiftedBy: shift - (1 << 33)),
        ])
        let plain = try run([first, second])
        #expect(wrapped.report.framesTrimmed == 0 && wrapped.report.gapsKept == 0)
        let track = try #require(wrapped.file.tracks("soun").first)
        let plainTrack = try #require(plain.file.tracks("soun").first)
        #expect(track.samples.map(\.duration) == plainTrack.samples.map(\.duration))
        #expect(track.samples.map { wrapped.file.data(of: $0) } == plainTrack.samples.map { plain.file.data(of: $0) })
    }
}

extension RemuxTests {
    @Test(
        "a gap of more than ten minutes is kept in the timestamps even with fillWithSilence: a clock that jumped, not missing sound"
    )
    func longGapIsNotFilled() throws {
        let first = try Lessons.data("packed-aac/seg0.aac")
        let second = try Lessons.data("packed-aac/seg1.aac")
        func run(late ticks: Int64) throws -> Remux.Result {
            try Remux.run(
                [first, try Lessons.packedAudio(second, shiftedBy: ticks)], brand: .audio, gaps: .fillWithSilence)
        }
        let long = try run(late: 90_000 * 660)
        #expect(long.report.silentFramesInserted == 0)
        #expect(long.report.gapsKept == 1)
        // Nine minutes are filled: 540 s of frames of 1,024 samples at the stream's rate, 25,312.5
        // at 48 kHz. The half frame left over moves what follows by half a frame, and no frame
        // after the gap is trimmed for it (every other one was, before: a tie read as an
        // overlap, then the next as a gap).
        let filled = try run(late: 90_000 * 540)
        let track = try #require(filled.file.tracks("soun").first)
        let frames = (540 * Double(track.timescale) / 1_024).rounded()
        #expect(Double(filled.report.silentFramesInserted) == frames)
        #expect(filled.report.gapsKept == 0)
        #expect(filled.report.framesTrimmed == 0)
    }
}
