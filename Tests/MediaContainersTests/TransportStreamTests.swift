import Foundation
import MediaContainers
import TestSupport
import Testing

/// What ffprobe reported about the fixtures (`Fixtures/facts.json`, made by `make-fixtures.sh`).
enum Facts {
    static let fixtures = FixtureLoader(bundle: .module)

    static func data(_ name: String) throws -> Data { try fixtures.data(name) }

    /// Every PES packet of `data`, demuxed in one piece.
    static func demux(_ data: Data) throws -> (packets: [ElementaryStreamPacket], streams: [UInt16: StreamType]) {
        var demuxer = TransportStreamDemuxer()
        var packets = try demuxer.append(data)
        packets += try demuxer.finish()
        return (packets, demuxer.streams)
    }

    /// The ADTS frames of the AAC packets among `packets`.
    static func aacFrames(_ packets: [ElementaryStreamPacket]) throws -> [ADTSFrame] {
        var reader = ADTSReader()
        var frames: [ADTSFrame] = []
        for packet in packets where packet.streamType == .adtsAAC { frames += try reader.append(packet.payload) }
        #expect(reader.pendingByteCount == 0)
        return frames
    }
}

@Suite("MPEG-TS demuxing (ISO/IEC 13818-1)")
struct TransportStreamTests {
    @Test("§2.4.4: the PAT and PMT name one AAC stream; ADTS frames and the first PTS match ffprobe")
    func audioOnly() throws {
        let (packets, streams) = try Facts.demux(try Facts.data("audio-aac.ts"))
        #expect(Array(streams.values) == [.adtsAAC])
        let frames = try Facts.aacFrames(packets)
        #expect(frames.count == 131)
        #expect(packets.first?.presentationTime == 126_000)
        let format = try #require(frames.first?.format)
        #expect(format.objectType == 2)
        #expect(format.sampleRate == 44_100)
        #expect(format.channelCount == 2)
        // ISO/IEC 14496-3 §1.6.2.1: object type 2, frequency index 4, two channels.
        #expect(format.audioSpecificConfig == Data([0x12, 0x10]))
    }

    @Test("§2.4.3.7: H.264 with B-frames and AAC: one PES per video frame, PTS and DTS as ffprobe reports")
    func videoAndAudio() throws {
        let (packets, streams) = try Facts.demux(try Facts.data("av-h264-aac.ts"))
        #expect(Set(streams.values) == [.h264, .adtsAAC])
        let video = packets.filter { $0.streamType == .h264 }
        #expect(video.count == 50)
        #expect(video.first?.presentationTime == 133_200)
        #expect(video.first?.decodeTime == 126_000)
        #expect(video.filter { $0.presentationTime != $0.decodeTime }.count == 50)
        // Decode times only increase; presentation times are reordered by the B-frames.
        let decodeTimes = video.compactMap(\.decodeTime)
        #expect(zip(decodeTimes, decodeTimes.dropFirst()).allSatisfy { $0 < $1 })
        let audio = try Facts.aacFrames(packets)
        #expect(audio.count == 88)
        #expect(packets.first { $0.streamType == .adtsAAC }?.presentationTime == 131_110)
        #expect(audio.first?.format.channelCount == 1)
    }

    @Test("each HLS segment demuxes on its own: first PTS and frames per segment as ffprobe reports")
    func segments() throws {
        let expected: [(String, Int64, Int)] = [
            ("seg0.ts", 126_000, 44), ("seg1.ts", 217_951, 43), ("seg2.ts", 307_812, 43), ("seg3.ts", 397_674, 1),
        ]
        var demuxer = TransportStreamDemuxer()
        for (index, (name, firstPTS, frameCount)) in expected.enumerated() {
            var packets = try demuxer.startSegment(index)
            packets += try demuxer.append(try Facts.data("hls-audio/\(name)"))
            packets += try demuxer.finish()
            #expect(packets.first?.presentationTime == firstPTS, "\(name)")
            #expect(try Facts.aacFrames(packets).count == frameCount, "\(name)")
        }
    }

    /// A seeded property: 200 random splittings of the stream into parts of 1 to 2,000 bytes.
    @Test(
        "the demuxer yields the same packets whatever the part boundaries",
        arguments: ["audio-aac.ts", "av-h264-aac.ts"])
    func partBoundaries(file: String) throws {
        let data = try Facts.data(file)
        let whole = try Facts.demux(data).packets
        for seed in UInt64(0)..<200 {
            var generator = SplitMix64(seed: seed)
            var demuxer = TransportStreamDemuxer()
            var packets: [ElementaryStreamPacket] = []
            var start = data.startIndex
            while start < data.endIndex {
                let size = Int.random(in: 1...2_000, using: &generator)
                let end = min(start + size, data.endIndex)
                packets += try demuxer.append(data[start..<end])
                start = end
            }
            packets += try demuxer.finish()
            #expect(packets == whole, "seed \(seed)")
            if packets != whole { break }
        }
    }

    @Test("§2.4.3.7: PTS past the 33-bit wrap (every 26.5 hours) keeps increasing after unwrapping")
    func wraparound() throws {
        let start: Int64 = (1 << 33) - 90_000 * 2  // two seconds before the wrap
        let stream = TransportStreamBuilder.audioStream(pesCount: 200, startPTS: start)
        let (packets, streams) = try Facts.demux(Data(stream))
        #expect(Array(streams.values) == [.adtsAAC])
        let times = packets.compactMap(\.presentationTime)
        #expect(times.count == 200)
        #expect(times.first == start)
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 })
        #expect((times.last ?? 0) > 1 << 33)
        // Written as 33 bits, each is its unwrapped value modulo 2³³.
        let expected = (0..<200).map { start + Int64($0) * 1_024 * 90_000 / 44_100 }
        #expect(times == expected)
    }

    @Test("a built stream demuxes and remuxes: 300 frames in 150 PES packets")
    func builtStream() throws {
        let stream = Data(TransportStreamBuilder.audioStream(pesCount: 150, framesPerPES: 2))
        let frames = try Facts.aacFrames(try Facts.demux(stream).packets)
        #expect(frames.count == 300)
        #expect(frames.allSatisfy { $0.payload.count == 200 })
    }

    @Test("§2.4.3.2: a packet without the sync byte is an error naming its offset; nothing before it is lost")
    func lostSync() throws {
        var data = try Facts.data("audio-aac.ts")
        data[data.startIndex + 188 * 20] = 0x48
        var demuxer = TransportStreamDemuxer()
        _ = try demuxer.startSegment(3)
        let before = try demuxer.append(data.prefix(188 * 20))
        #expect(!before.isEmpty)
        #expect(throws: ContainerError(.lostSync(found: 0x48), segment: 3, offset: 188 * 20)) {
            _ = try demuxer.append(data.dropFirst(188 * 20))
        }
    }

    @Test("§2.4.3.7: a PES packet carrying more than its declared length is a typed error naming its offset")
    func pesLongerThanDeclared() throws {
        var stream = TransportStreamBuilder.audioStream(pesCount: 3)
        // The first PES starts in the third packet, after its 4-byte header: declare 100 bytes.
        let pes = 188 * 2 + 4
        #expect(Array(stream[pes..<(pes + 4)]) == [0, 0, 1, 0xC0])
        stream[pes + 4] = 0
        stream[pes + 5] = 100
        #expect(
            throws: ContainerError(.pesLongerThanDeclared(pid: 0x101, declared: 100, found: 178), offset: 188 * 2)
        ) {
            _ = try Facts.demux(Data(stream))
        }
    }

    @Test("the data ending inside a packet is a typed error")
    func truncated() throws {
        let data = try Facts.data("audio-aac.ts").dropLast(100)
        var demuxer = TransportStreamDemuxer()
        _ = try demuxer.append(data)
        #expect(throws: ContainerError(.truncatedPacket(bytes: 88), offset: data.count - 88)) {
            _ = try demuxer.finish()
        }
    }

    @Test("§2.4.3.3: a lost packet breaks the continuity counter: a typed error naming the PID")
    func continuity() throws {
        let data = try Facts.data("audio-aac.ts")
        let (_, streams) = try Facts.demux(data)
        let audioPID = try #require(streams.keys.first)
        // Drop the fifth packet of the audio PID.
        var seen = 0
        var damaged = Data()
        for start in stride(from: 0, to: data.count, by: 188) {
            let packet = data[(data.startIndex + start)..<(data.startIndex + start + 188)]
            let pid = UInt16(packet[packet.startIndex + 1] & 0x1F) << 8 | UInt16(packet[packet.startIndex + 2])
            if pid == audioPID {
                seen += 1
                if seen == 5 { continue }
            }
            damaged.append(packet)
        }
        do {
            _ = try Facts.demux(damaged)
            Issue.record("demuxed")
        } catch let error as ContainerError {
            guard case .continuityError(let pid, _, _) = error.kind else {
                Issue.record("\(error)")
                return
            }
            #expect(pid == audioPID)
        }
    }
}

@Suite("ADTS and ID3 (ISO/IEC 14496-3 §1.A.2, RFC 8216 §3.4)")
struct AudioFramingTests {
    @Test("ADTS frames split across pieces of any size read the same", arguments: [1, 7, 100, 4_096])
    func pieces(size: Int) throws {
        let frames = try Facts.aacFrames(try Facts.demux(try Facts.data("audio-aac.ts")).packets)
        let stream = Self.adts(frames)
        var reader = ADTSReader()
        var read: [ADTSFrame] = []
        var start = stream.startIndex
        while start < stream.endIndex {
            let end = min(start + size, stream.endIndex)
            read += try reader.append(stream[start..<end])
            start = end
        }
        #expect(read == frames)
    }

    @Test("bytes that are not ADTS are a typed error with their offset")
    func garbage() {
        var reader = ADTSReader()
        #expect(throws: ContainerError(.malformedADTS(reason: "no syncword"), offset: 0)) {
            _ = try reader.append(Data("not audio at all".utf8))
        }
    }

    @Test(
        "ISO/IEC 14496-3 §1.A.2.2.1: an ADTS header's layer is 00; any other layer is an MPEG audio frame, refused",
        arguments: [1, 2, 3])
    func layerIsChecked(layer: UInt8) throws {
        let frames = try Facts.aacFrames(try Facts.demux(try Facts.data("audio-aac.ts")).packets)
        var stream = Self.adts(Array(frames.prefix(2)))
        var intact = ADTSReader()
        #expect(try intact.append(stream).count == 2)
        // The layer is bits 2 and 1 of the second byte (after the syncword and the ID bit).
        stream[stream.startIndex + 1] = (stream[stream.startIndex + 1] & 0b1111_1001) | (layer << 1)
        var reader = ADTSReader()
        #expect(
            throws: ContainerError(
                .malformedADTS(reason: "layer \(layer), not 0: an MPEG audio frame, not AAC"), offset: 0)
        ) {
            _ = try reader.append(stream)
        }
    }

    @Test("an MPEG-1 Layer III frame header (FF FB) is never read as ADTS")
    func mp3HeaderIsNotADTS() {
        var reader = ADTSReader()
        #expect(
            throws: ContainerError(.malformedADTS(reason: "layer 1, not 0: an MPEG audio frame, not AAC"), offset: 0)
        ) {
            _ = try reader.append(Data([0xFF, 0xFB, 0x90, 0x64] + Array(repeating: 0, count: 413)))
        }
    }

    @Test("RFC 8216 §3.4: the PRIV frame's transport stream timestamp is read, and the tag's length")
    func id3Timestamp() throws {
        let tag = Self.id3(timestamp: 8_589_934_591 + 5)  // past 33 bits: only the low 33 count
        let read = try #require(try ID3Tag.read(tag + Data([0xFF, 0xF1])))
        #expect(read.length == tag.count)
        #expect(read.transportStreamTimestamp == 4)
        #expect(try ID3Tag.read(Data("ADTS".utf8)) == nil)
    }

    /// ADTS bytes for `frames`: a 7-byte header (no CRC) before each payload.
    static func adts(_ frames: [ADTSFrame]) -> Data {
        var data = Data()
        for frame in frames {
            let length = frame.payload.count + 7
            let format = frame.format
            data.append(contentsOf: [
                0xFF, 0xF1,
                (format.objectType - 1) << 6 | format.frequencyIndex << 2 | format.channelConfiguration >> 2,
                (format.channelConfiguration & 0x03) << 6 | UInt8((length >> 11) & 0x03),
                UInt8((length >> 3) & 0xFF), UInt8((length & 0x07) << 5) | 0x1F, 0xFC,
            ])
            data.append(frame.payload)
        }
        return data
    }

    /// An ID3v2.4 tag holding the HLS timestamp `PRIV` frame.
    static func id3(timestamp: Int64) -> Data {
        let owner = Array("com.apple.streaming.transportStreamTimestamp".utf8) + [0]
        let stamp = (0..<8).map { UInt8((timestamp >> (56 - 8 * $0)) & 0xFF) }
        let content = owner + stamp
        var frame: [UInt8] = Array("PRIV".utf8)
        frame += [0, 0, 0, UInt8(content.count)] + [0, 0] + content
        let size = frame.count
        let header: [UInt8] = [0x49, 0x44, 0x33, 4, 0, 0, 0, 0, UInt8(size >> 7), UInt8(size & 0x7F)]
        return Data(header + frame)
    }
}
