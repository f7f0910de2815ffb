import Foundation
import MediaContainers
import TestSupport
import Testing

@Suite("Remuxing video to MP4 (ISO/IEC 14496-12, -15)")
struct VideoRemuxTests {
    static func remux(_ segments: [Data], audio: [Data] = [], parts: Int = 1) throws -> URL {
        let folder = temporaryFolder("video-remux")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let url = folder.appendingPathComponent("lesson.mp4")
        var remuxer = try MediaRemuxer(destination: url, audio: audio.isEmpty ? .muxed : .separate)
        for (input, list) in [(MediaRemuxer.Input.video, segments), (.audio, audio)] {
            for (index, segment) in list.enumerated() {
                try remuxer.startSegment(index, of: input)
                let step = max(1, segment.count / parts)
                var start = segment.startIndex
                while start < segment.endIndex {
                    let end = min(start + step, segment.endIndex)
                    try remuxer.append(segment[start..<end], to: input)
                    start = end
                }
            }
        }
        try remuxer.finish()
        return url
    }

    /// The payload of the box at `path` below `moov`'s first track of `handler` (`vide`/`soun`).
    static func trackBox(_ file: MP4BoxReader, handler: String, _ path: [String]) throws -> (start: Int, size: Int) {
        let moov = try #require(file.find(["moov"]))
        let traks = file.boxes(from: moov.start + 8, to: moov.start + moov.size).filter { $0.type == "trak" }
        for trak in traks {
            let sub = MP4BoxReader(bytes: Array(file.bytes[trak.start..<(trak.start + trak.size)]))
            guard let hdlr = sub.find(["trak", "mdia", "hdlr"]), sub.type(hdlr.start + 12) == handler else { continue }
            let box = try #require(sub.find(["trak"] + path))
            return (trak.start + box.start, box.size)
        }
        throw ContainerError(.noSupportedAudio)
    }

    static func count(_ file: MP4BoxReader, _ handler: String, _ box: String) throws -> UInt32 {
        let found = try trackBox(file, handler: handler, ["mdia", "minf", "stbl", box])
        return file.uint32(found.start + (box == "stsz" ? 16 : 12))
    }

    @Test("ISO/IEC 14496-15: H.264 with B-frames and AAC become one MP4 with every frame, sync samples and ctts")
    func videoAndAudio() throws {
        let url = try Self.remux([try Facts.data("av-h264-aac.ts")])
        let file = MP4BoxReader(bytes: [UInt8](try Data(contentsOf: url)))
        #expect(file.boxes().map(\.type) == ["ftyp", "mdat", "moov"])
        #expect(try Self.count(file, "vide", "stsz") == 50)
        #expect(try Self.count(file, "soun", "stsz") == 88)
        #expect(try Self.count(file, "vide", "stss") == 2)  // the two keyframes ffprobe counts
        let ctts = try Self.trackBox(file, handler: "vide", ["mdia", "minf", "stbl", "ctts"])
        #expect(ctts.size > 16)
        // avc1 with avcC: Main profile (77), 192 × 108.
        let stsd = try Self.trackBox(file, handler: "vide", ["mdia", "minf", "stbl", "stsd"])
        let entry = Array(file.bytes[stsd.start..<(stsd.start + stsd.size)])
        #expect(String(decoding: entry[20..<24], as: UTF8.self) == "avc1")
        #expect(file.uint32(stsd.start + 16 + 32) >> 16 == 192)
        let avcC = try #require(entry.indices.first { entry[$0...].starts(with: Array("avcC".utf8)) })
        #expect(entry[avcC + 4] == 1)
        #expect(entry[avcC + 5] == 77)
        // The video began 23 ms after the audio: its edit list waits for it.
        let elst = try Self.trackBox(file, handler: "vide", ["edts", "elst"])
        #expect(file.uint32(elst.start + 12) == 2)
        #expect(file.uint32(elst.start + 16) == 23)
    }

    @Test("ISO/IEC 14496-15 §8: HEVC becomes hvc1 with its hvcC, every frame kept")
    func hevc() throws {
        let url = try Self.remux([try Facts.data("hevc.ts")])
        let file = MP4BoxReader(bytes: [UInt8](try Data(contentsOf: url)))
        #expect(try Self.count(file, "vide", "stsz") == 25)
        let stsd = try Self.trackBox(file, handler: "vide", ["mdia", "minf", "stbl", "stsd"])
        let entry = Array(file.bytes[stsd.start..<(stsd.start + stsd.size)])
        #expect(String(decoding: entry[20..<24], as: UTF8.self) == "hvc1")
        #expect(entry.indices.contains { entry[$0...].starts(with: Array("hvcC".utf8)) })
        #expect(file.uint32(stsd.start + 16 + 32) >> 16 == 160)
        #expect(file.uint32(stsd.start + 16 + 32) & 0xFFFF == 90)
    }

    @Test("a separate audio rendition is muxed with the video: two media playlists, one file")
    func separateAudio() throws {
        let video = try ["seg0.ts", "seg1.ts"].map { try Facts.data("hls-av/video/\($0)") }
        let audio = try ["seg0.ts", "seg1.ts", "seg2.ts"].map { try Facts.data("hls-av/audio/\($0)") }
        let url = try Self.remux(video, audio: audio, parts: 3)
        let file = MP4BoxReader(bytes: [UInt8](try Data(contentsOf: url)))
        #expect(try Self.count(file, "vide", "stsz") == 50)
        #expect(try Self.count(file, "soun", "stsz") == 88)
    }

    @Test("RFC 8216 §4.3.2.3: across a discontinuity, where timestamps restart, the timeline stays continuous")
    func discontinuity() throws {
        let url = try Self.remux([try Facts.data("disc-a.ts"), try Facts.data("disc-b.ts")])
        let file = MP4BoxReader(bytes: [UInt8](try Data(contentsOf: url)))
        #expect(try Self.count(file, "vide", "stsz") == 50)
        #expect(try Self.count(file, "soun", "stsz") == 90)
        // Every decode duration is one frame at 25 fps: no jump back, no gap.
        let stts = try Self.trackBox(file, handler: "vide", ["mdia", "minf", "stbl", "stts"])
        #expect(file.uint32(stts.start + 12) == 1)
        #expect(file.uint32(stts.start + 16) == 50)
        #expect(file.uint32(stts.start + 20) == 3_600)
    }

    @Test("video remuxing is deterministic, whatever the size of the pieces", arguments: [1, 5, 97])
    func deterministic(parts: Int) throws {
        let data = try Facts.data("av-h264-aac.ts")
        #expect(try Data(contentsOf: Self.remux([data], parts: parts)) == Data(contentsOf: Self.remux([data])))
    }

    @Test("a stream in a codec MP4 remuxing does not take (MPEG-2 video) is a typed error naming the codec and segment")
    func unsupportedCodec() throws {
        // The builder's stream, its PMT announcing stream type 0x02 (MPEG-2 video) instead of AAC.
        var stream = TransportStreamBuilder.audioStream(pesCount: 5)
        let pmt = try #require((188..<376).first { stream[$0] == 0x02 && stream[$0 + 1] == 0xB0 })
        #expect(stream[pmt + 12] == 0x0F)
        stream[pmt + 12] = 0x02
        do {
            _ = try Self.remux([Data(stream)])
            Issue.record("remuxed")
        } catch let error as ContainerError {
            #expect(error == ContainerError(.unsupportedCodec(StreamType(rawValue: 0x02)), segment: 0))
        }
    }
}
