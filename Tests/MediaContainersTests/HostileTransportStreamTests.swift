import Foundation
import MediaContainers
import TestSupport
import Testing

/// Hostile transport streams written packet by packet: a PES that never ends and H.264
/// parameter sets that would trap the arithmetic, each a typed ``ContainerError``.
@Suite("Hostile transport streams (ISO/IEC 13818-1, ITU-T H.264 §7.3.2.1)")
struct HostileTransportStreamTests {
    /// The start of a video PES of unbounded length (PES_packet_length 0) at PTS 90,000.
    static let videoHeader: [UInt8] = [0, 0, 1, 0xE0, 0, 0, 0x80, 0x80, 0x05, 0x21, 0x00, 0x05, 0xBF, 0x21]

    /// A builder whose tables announce H.264 on PID 0x100.
    static func videoStream() -> (builder: TransportStreamBuilder, bytes: [UInt8]) {
        var builder = TransportStreamBuilder(audioPID: 0x100)
        let tables = builder.tables(streamType: 0x1B)
        return (builder, tables)
    }

    @Test("§2.4.3.7: a PES packet that never ends is refused at its bound, not held in memory without limit")
    func endlessPES() throws {
        var (builder, bytes) = Self.videoStream()
        bytes += builder.packets(pid: 0x100, payload: Self.videoHeader + [0, 0, 0, 1, 0x09, 0xF0])
        // 40 MiB of continuation, no unit start ever again.
        let filler = [UInt8](repeating: 0x5A, count: 184)
        for _ in 0..<(40 << 20) / 184 { bytes += builder.packets(pid: 0x100, payload: filler, unitStart: false) }
        var demuxer = TransportStreamDemuxer()
        do {
            _ = try demuxer.startSegment(0)
            _ = try demuxer.append(Data(bytes))
            _ = try demuxer.finish()
            Issue.record("a 40 MiB PES was accepted")
        } catch {
            guard case .tooLarge = error.kind else {
                Issue.record("unexpected \(error)")
                return
            }
        }
    }

    /// Bits written most significant first, with Exp-Golomb codes (H.264 §9.1).
    struct Bits {
        var bytes: [UInt8] = []
        var count = 0

        mutating func put(_ value: UInt64, _ width: Int) {
            for index in stride(from: width - 1, through: 0, by: -1) {
                if count % 8 == 0 { bytes.append(0) }
                if (value >> UInt64(index)) & 1 == 1 { bytes[bytes.count - 1] |= UInt8(0x80 >> (count % 8)) }
                count += 1
            }
        }

        mutating func unsigned(_ value: UInt64) {
            let code = value + 1
            let width = 64 - code.leadingZeroBitCount
            put(0, width - 1)
            put(code, width)
        }
    }

    /// A High-profile SPS NAL unit whose bit_depth_luma_minus8 is `depth`, then a stop bit.
    static func sequenceParameterSet(lumaDepthMinus8 depth: UInt64) -> [UInt8] {
        var bits = Bits()
        bits.put(0x67, 8)  // NAL header: SPS
        bits.put(100, 8)  // profile_idc: High
        bits.put(0, 8)
        bits.put(31, 8)  // level 3.1
        bits.unsigned(0)  // seq_parameter_set_id
        bits.unsigned(1)  // chroma_format_idc 4:2:0
        bits.unsigned(depth)  // bit_depth_luma_minus8
        bits.unsigned(0)  // bit_depth_chroma_minus8
        bits.put(1, 1)  // rbsp_stop_one_bit
        // Emulation prevention: no 00 00 0x in the payload.
        var out: [UInt8] = []
        var zeros = 0
        for byte in bits.bytes {
            if zeros >= 2, byte <= 3 {
                out.append(3)
                zeros = 0
            }
            out.append(byte)
            zeros = byte == 0 ? zeros + 1 : 0
        }
        return out
    }

    @Test(
        "H.264 §7.4.2.1.1: a bit depth beyond 14 bits is a typed error, not an overflow",
        arguments: [(0, false), (6, false), (7, true), (1 << 20, true), (1 << 40, true)] as [(UInt64, Bool)])
    func hugeBitDepth(depth: UInt64, refused: Bool) throws {
        var (builder, bytes) = Self.videoStream()
        let unit =
            [0, 0, 0, 1, 0x09, 0xF0, 0, 0, 0, 1] + Self.sequenceParameterSet(lumaDepthMinus8: depth)
            + [0, 0, 0, 1, 0x68, 0xCE, 0x38, 0x80, 0, 0, 0, 1, 0x65, 0x88, 0x84, 0x00]
        var pes = Self.videoHeader + unit
        pes[4] = UInt8((pes.count - 6) >> 8)
        pes[5] = UInt8((pes.count - 6) & 0xFF)
        bytes += builder.packets(pid: 0x100, payload: pes)
        var reason = ""
        do {
            _ = try Remux.run([Data(bytes)])
        } catch let error as ContainerError {
            if case .malformedVideo(let why) = error.kind { reason = why } else { reason = "\(error)" }
        }
        #expect(reason.contains("bit depth") == refused, "bit_depth_luma_minus8 \(depth): \(reason)")
    }
}
