import Foundation
import MediaContainers
import TestSupport
import Testing

@Suite("Remuxing video to MP4 (ISO/IEC 14496-12, -15)")
struct VideoRemuxTests {
    @Test("ISO/IEC 14496-15 §5: H.264 with B-frames and AAC become one MP4 with every frame, sync samples and ctts")
    func videoAndAudio() throws {
        let result = try Remux.run([try Facts.data("av-h264-aac.ts")])
        #expect(result.file.topLevel == ["ftyp", "mdat", "moov"])
        let video = try #require(result.file.tracks("vide").first)
        let audio = try #require(result.file.tracks("soun").first)
        #expect(video.samples.count == 50)
        #expect(audio.samples.count == 88)
        #expect(video.samples.filter(\.isSync).count == 2)  // the two keyframes ffprobe counts
        #expect(video.samples.contains { $0.compositionOffset != 0 })
        // avc1 with avcC: Main profile (77), 192 × 108.
        let entry = try #require(video.entries.first)
        #expect(video.formats == ["avc1"])
        #expect(Int(entry[32]) << 8 | Int(entry[33]) == 192)
        let avcC = try #require(entry.indices.first { entry[$0...].starts(with: Array("avcC".utf8)) })
        #expect(entry[avcC + 4] == 1)
        #expect(entry[avcC + 5] == 77)
        // The video's first picture is shown 23 ms after the audio's first frame, as in the stream.
        #expect(abs((video.start - audio.start) - (133_200.0 - 131_110.0) / 90_000) < 0.001)
    }

    @Test("ISO/IEC 14496-15 §8: HEVC becomes hvc1 with its hvcC, every frame kept")
    func hevc() throws {
        let result = try Remux.run([try Facts.data("hevc.ts")])
        let video = try #require(result.file.tracks("vide").first)
        #expect(video.samples.count == 25)
        #expect(video.formats == ["hvc1"])
        let entry = try #require(video.entries.first)
        #expect(entry.indices.contains { entry[$0...].starts(with: Array("hvcC".utf8)) })
        #expect(Int(entry[32]) << 8 | Int(entry[33]) == 160)
        #expect(Int(entry[34]) << 8 | Int(entry[35]) == 90)
    }

    @Test("a separate audio rendition is muxed with the video: two media playlists, one file, one timeline")
    func separateAudio() throws {
        let video = try ["seg0.ts", "seg1.ts"].map { try Facts.data("hls-av/video/\($0)") }
        let audio = try ["seg0.ts", "seg1.ts", "seg2.ts"].map { try Facts.data("hls-av/audio/\($0)") }
        let steps: [[SegmentRemuxer.Segment]] = [
            [
                SegmentRemuxer.Segment(data: video[0], rendition: 0, discontinuity: 0, index: 0),
                SegmentRemuxer.Segment(data: audio[0], rendition: 1, discontinuity: 0, index: 0),
            ],
            [SegmentRemuxer.Segment(data: video[1], rendition: 0, discontinuity: 0, index: 1)],
            [SegmentRemuxer.Segment(data: audio[1], rendition: 1, discontinuity: 0, index: 1)],
            [SegmentRemuxer.Segment(data: audio[2], rendition: 1, discontinuity: 0, index: 2)],
        ]
        let result = try Remux.run(steps, renditions: 2, pieces: 100)
        #expect(try #require(result.file.tracks("vide").first).samples.count == 50)
        let sound = try #require(result.file.tracks("soun").first)
        #expect(sound.samples.count == 88)
        // The audio began 0.08 s before the video's first picture (126,000 against 133,200).
        let picture = try #require(result.file.tracks("vide").first)
        #expect(abs((picture.start - sound.start) - 7_200.0 / 90_000) < 0.001)
    }

    @Test("video remuxing is deterministic, whatever the size of the pieces", arguments: [1, 5, 97, 4_096])
    func deterministic(parts: Int) throws {
        // The same encode twice, the second after a discontinuity (its clock restarts).
        let segment = try Facts.data("disc-a.ts")
        let steps = [
            [SegmentRemuxer.Segment(data: segment, discontinuity: 0, index: 0)],
            [SegmentRemuxer.Segment(data: segment, discontinuity: 1, index: 1)],
        ]
        #expect(try Remux.run(steps, pieces: parts).bytes == Remux.run(steps).bytes)
    }

    @Test(
        "RFC 8216 §4.3.2.3: a clock that restarts where no discontinuity is declared is a typed error naming the segment, not a silently broken file",
        arguments: [false, true])
    func clockRestartsWithoutDiscontinuity(audioOnly: Bool) throws {
        // The same segment twice in one discontinuity number: its timestamps go back to where
        // they started (two seconds of picture and sound; 1.4 s of sound alone).
        let segment =
            audioOnly
            ? Data(TransportStreamBuilder.audioStream(pesCount: 60)) : try Facts.data("disc-a.ts")
        let error = try #require(throws: ContainerError.self) {
            _ = try Remux.run([segment, segment], brand: audioOnly ? .audio : .movie)
        }
        guard case .timestampsStepBack(let seconds) = error.kind else {
            Issue.record("unexpected error \(error)")
            return
        }
        #expect(seconds > 1)
        #expect(error.segment == 1)
        #expect(error.description.contains("no discontinuity is declared"))
    }

    @Test(
        "ISO/IEC 13818-1 §2.4.4.9: a declared stream in a codec MP4 remuxing does not take is a typed error naming the codec and segment, never dropped",
        arguments: [
            // MPEG-2 video, LATM AAC, MPEG-H 3D audio, VVC, user private without a registration
            // (Blu-ray LPCM, ATSC DigiCipher II video), DTS, TrueHD, DTS-HD, DTS secondary.
            0x02, 0x11, 0x2D, 0x33, 0x80, 0x82, 0x83, 0x85, 0xA2,
        ] as [UInt8])
    func unsupportedCodec(streamType: UInt8) throws {
        // The builder's stream, its PMT announcing `streamType` instead of AAC.
        var stream = TransportStreamBuilder.audioStream(pesCount: 5)
        let pmt = try #require((188..<376).first { stream[$0] == 0x02 && stream[$0 + 1] == 0xB0 })
        #expect(stream[pmt + 12] == 0x0F)
        stream[pmt + 12] = streamType
        #expect(throws: ContainerError(.unsupportedCodec(StreamType(rawValue: streamType)), segment: 0)) {
            _ = try Remux.run([Data(stream)])
        }
    }

    @Test(
        "ATSC A/52 Annex A: AC-3 declared as user private (stream type 0x80) with an AC-3 registration descriptor is read as AC-3"
    )
    func userPrivateAC3() throws {
        // ts-ac3's segments with each program map's stream type 0x81 changed to 0x80 (its
        // registration descriptor 'AC-3' kept; the demuxer does not check the table's CRC).
        func relabelled(_ name: String) throws -> Data {
            var bytes = [UInt8](try Lessons.data("ts-ac3/\(name)"))
            var changed = 0
            for packet in stride(from: 0, to: bytes.count - 187, by: 188) {
                let body = bytes[packet..<(packet + 188)]
                // The PMT's audio entry: 0x81, then the PID 0x101 (E1 01).
                if let at = (packet + 4..<(packet + 185)).first(where: {
                    bytes[$0] == 0x81 && bytes[$0 + 1] == 0xE1 && bytes[$0 + 2] == 0x01
                }), body.contains(0x02) {
                    bytes[at] = 0x80
                    changed += 1
                }
            }
            #expect(changed > 0)
            return Data(bytes)
        }
        let original = try Remux.run([try Lessons.data("ts-ac3/seg0.ts"), try Lessons.data("ts-ac3/seg1.ts")])
        let relabelledRun = try Remux.run([try relabelled("seg0.ts"), try relabelled("seg1.ts")])
        let audio = try #require(relabelledRun.file.tracks("soun").first)
        #expect(audio.formats == ["ac-3"])
        #expect(relabelledRun.bytes == original.bytes)
    }

    @Test(
        "H.264 §D.2.8, ISO/IEC 14496-12 §8.6.2: IDR pictures and recovery points with recovery_frame_cnt 0 are sync samples; a recovery point with frames to recover is not"
    )
    func recoveryPointsAsSyncSamples() throws {
        let sps = H264TestStream.sequenceParameterSet(columns: 40, rows: 23, crop: nil)
        let pps: [UInt8] = [0, 0, 0, 1, 0x68, 0xCE, 0x38, 0x80]
        let idr: [UInt8] = [0, 0, 0, 1, 0x65, 0x88, 0x84, 0x00]
        let slice: [UInt8] = [0, 0, 0, 1, 0x41, 0x9A, 0x02, 0x00]
        // SEI (§7.3.2.3) of one recovery point message (§D.1.8): recovery_frame_cnt,
        // exact_match_flag 1, broken_link_flag 0, changing_slice_group_idc 0, then the trailing bits.
        let recoverNow: [UInt8] = [0, 0, 0, 1, 0x06, 0x06, 0x01, 0b1100_0000, 0x80]  // ue(0) = 1
        let recoverInThree: [UInt8] = [0, 0, 0, 1, 0x06, 0x06, 0x02, 0b0010_0100, 0x00, 0x80]  // ue(3) = 00100
        let units: [[UInt8]] = [
            [0, 0, 0, 1] + sps + pps + idr, slice, recoverNow + slice, slice, recoverInThree + slice, slice, idr,
        ]
        let result = try Remux.run([H264TestStream.segment(accessUnits: units)])
        let video = try #require(result.file.tracks("vide").first)
        #expect(video.samples.map(\.isSync) == [true, false, true, false, false, false, true])
    }

    @Test(
        "ISO/IEC 14496-15 §5.3.3, H.264 §7.4.1.2.1: after an encoder change that numbers its parameter sets anew, the sample description gives the new SPS's picture size, with or without a discontinuity",
        arguments: [true, false])
    func renumberedParameterSets(discontinuity: Bool) throws {
        typealias Stream = H264TestStream
        let start: [UInt8] = [0, 0, 0, 1]
        // 640×368 with SPS 0 and PPS 0, then 1280×720 with SPS 1 and PPS 1: the old sets stay
        // in force beside the new ones.
        let small =
            start + Stream.sequenceParameterSet(id: 0, columns: 40, rows: 23, crop: nil) + start
            + Stream.pictureParameterSet(id: 0, sequence: 0) + start + Stream.idrSlice(pps: 0)
        let large =
            start + Stream.sequenceParameterSet(id: 1, columns: 80, rows: 45, crop: nil) + start
            + Stream.pictureParameterSet(id: 1, sequence: 1) + start + Stream.idrSlice(pps: 1)
        let first = Stream.segment(accessUnits: [small, start + Stream.idrSlice(pps: 0)])
        let second = Stream.segment(accessUnits: [large, start + Stream.idrSlice(pps: 1)])
        let result = try Remux.run([
            [SegmentRemuxer.Segment(data: first, discontinuity: 0, index: 0)],
            [SegmentRemuxer.Segment(data: second, discontinuity: discontinuity ? 1 : 0, index: 1)],
        ])
        let video = try #require(result.file.tracks("vide").first)
        // VisualSampleEntry (ISO/IEC 14496-12 §12.1.3): width and height after 24 bytes of fields.
        let sizes = video.entries.map { [Int($0[32]) << 8 | Int($0[33]), Int($0[34]) << 8 | Int($0[35])] }
        #expect(sizes == [[640, 368], [1280, 720]])
        #expect(video.samples.map(\.description) == [1, 1, 2, 2])
        // The new record lists SPS 1 first: its profile and level bytes are the new stream's.
        let record = video.entries[1][(86 + 8)...]
        let firstSetLength = Int(record[record.startIndex + 6]) << 8 | Int(record[record.startIndex + 7])
        let firstSet = Array(record[(record.startIndex + 8)..<(record.startIndex + 8 + firstSetLength)])
        #expect(firstSet == Stream.sequenceParameterSet(id: 1, columns: 80, rows: 45, crop: nil))
    }
}
