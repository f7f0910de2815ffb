import Foundation
import MediaContainers
import TestSupport
import Testing

@Suite("Remuxing to MP4 (ISO/IEC 14496-12, -14)")
struct RemuxTests {
    static func remux(_ segments: [Data], parts: Int = 1) throws -> (url: URL, seconds: Double) {
        let folder = temporaryFolder("remux")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let url = folder.appendingPathComponent("lesson.m4a")
        var remuxer = try AudioRemuxer(destination: url)
        for (index, segment) in segments.enumerated() {
            try remuxer.startSegment(index)
            let step = max(1, segment.count / parts)
            var start = segment.startIndex
            while start < segment.endIndex {
                let end = min(start + step, segment.endIndex)
                try remuxer.append(segment[start..<end])
                start = end
            }
        }
        let seconds = try remuxer.finish()
        return (url, seconds)
    }

    @Test("an AAC transport stream becomes an .m4a: ftyp, mdat, moov with the sample tables of every frame")
    func audioFile() throws {
        let (url, seconds) = try Self.remux([try Facts.data("audio-aac.ts")])
        let file = MP4BoxReader(bytes: [UInt8](try Data(contentsOf: url)))
        #expect(file.boxes().map(\.type) == ["ftyp", "mdat", "moov"])
        #expect(abs(seconds - 131 * 1_024 / 44_100) < 1e-9)
        let stsz = try #require(file.find(["moov", "trak", "mdia", "minf", "stbl", "stsz"]))
        #expect(file.uint32(stsz.start + 16) == 131)
        let mdhd = try #require(file.find(["moov", "trak", "mdia", "mdhd"]))
        #expect(file.uint32(mdhd.start + 20) == 44_100)
        #expect(file.uint32(mdhd.start + 24) == 131 * 1_024)
    }

    @Test("ISO/IEC 14496-14 §3.1.2: the esds carries the AudioSpecificConfig of the ADTS headers")
    func esds() throws {
        let (url, _) = try Self.remux([try Facts.data("audio-aac.ts")])
        let bytes = [UInt8](try Data(contentsOf: url))
        let file = MP4BoxReader(bytes: bytes)
        let stsd = try #require(file.find(["moov", "trak", "mdia", "minf", "stbl", "stsd"]))
        let entry = Array(bytes[stsd.start..<(stsd.start + stsd.size)])
        // DecoderSpecificInfo: tag 5, a four-byte length of 2, then the two config bytes.
        let specific: [UInt8] = [0x05, 0x80, 0x80, 0x80, 0x02, 0x12, 0x10]
        #expect(entry.indices.contains { entry[$0...].starts(with: specific) })
        #expect(entry.indices.contains { entry[$0...].starts(with: Array("mp4a".utf8)) })
    }

    @Test("remuxing is deterministic, whatever the size of the pieces the bytes arrive in", arguments: [1, 7, 101])
    func deterministic(parts: Int) throws {
        let data = try Facts.data("audio-aac.ts")
        let whole = try Data(contentsOf: try Self.remux([data]).url)
        let pieces = try Data(contentsOf: try Self.remux([data], parts: parts).url)
        #expect(pieces == whole)
    }

    @Test("HLS segments join into one continuous file: every frame, in order, the same audio as one stream")
    func segments() throws {
        let names = ["seg0.ts", "seg1.ts", "seg2.ts", "seg3.ts"]
        let segments = try names.map { try Facts.data("hls-audio/\($0)") }
        let (url, seconds) = try Self.remux(segments, parts: 3)
        #expect(abs(seconds - 131 * 1_024 / 44_100) < 1e-9)
        let joined = MP4BoxReader(bytes: [UInt8](try Data(contentsOf: url)))
        let single = MP4BoxReader(
            bytes: [UInt8](try Data(contentsOf: try Self.remux([try Facts.data("audio-aac.ts")]).url)))
        let stsz = ["moov", "trak", "mdia", "minf", "stbl", "stsz"]
        let a = try #require(joined.find(stsz))
        let b = try #require(single.find(stsz))
        #expect(joined.bytes[a.start..<(a.start + a.size)] == single.bytes[b.start..<(b.start + b.size)])
    }

    @Test("RFC 8216 §3.4: packed audio segments (an ID3 timestamp, then ADTS) remux like the transport stream")
    func packedAudio() throws {
        let frames = try Facts.aacFrames(try Facts.demux(try Facts.data("audio-aac.ts")).packets)
        let thirds = stride(from: 0, to: frames.count, by: 44).map { Array(frames[$0..<min($0 + 44, frames.count)]) }
        let segments = thirds.enumerated().map { index, part in
            AudioFramingTests.id3(timestamp: 126_000 + Int64(index) * 90_000) + AudioFramingTests.adts(part)
        }
        let packed = try Data(contentsOf: try Self.remux(segments, parts: 5).url)
        let transport = try Data(contentsOf: try Self.remux([try Facts.data("audio-aac.ts")]).url)
        #expect(packed == transport)
    }

    @Test(
        "segments concatenated into one file (as a download writes them) remux like separate segments",
        arguments: ["transport stream", "packed audio"])
    func concatenated(kind: String) throws {
        let single = try Data(contentsOf: try Self.remux([try Facts.data("audio-aac.ts")]).url)
        let joined: Data
        if kind == "transport stream" {
            joined = try ["seg0.ts", "seg1.ts", "seg2.ts", "seg3.ts"].reduce(into: Data()) {
                $0.append(try Facts.data("hls-audio/\($1)"))
            }
        } else {
            let frames = try Facts.aacFrames(try Facts.demux(try Facts.data("audio-aac.ts")).packets)
            joined = stride(from: 0, to: frames.count, by: 44).reduce(into: Data()) { data, start in
                data.append(AudioFramingTests.id3(timestamp: Int64(start) * 2_048))
                data.append(AudioFramingTests.adts(Array(frames[start..<min(start + 44, frames.count)])))
            }
        }
        for parts in [1, 3, 50] {
            #expect(try Data(contentsOf: try Self.remux([joined], parts: parts).url) == single, "\(parts) parts")
        }
    }

    @Test("a damaged segment is an error naming it; a stream without AAC is refused")
    func errors() throws {
        var damaged = try Facts.data("hls-audio/seg1.ts")
        damaged[damaged.startIndex + 188 * 3] = 0x00
        do {
            _ = try Self.remux([try Facts.data("hls-audio/seg0.ts"), damaged])
            Issue.record("remuxed")
        } catch let error as ContainerError {
            #expect(error.segment == 1)
            #expect(error.kind == .lostSync(found: 0))
            #expect(error.offset == 188 * 3)
        }
        #expect(throws: ContainerError(.noSupportedAudio)) { _ = try Self.remux([]) }
    }
}
