import Foundation
import MediaContainers
import TestSupport
import Testing

/// Hostile transport streams written packet by packet: a PES that never ends and H.264
/// parameter sets that would trap the arithmetic, each a typed ``ContainerError``.
@Suite("Hostile transport streams (ISO/IEC 13818-1, ITU-T H.264 §7.3.2.1)")
struct HostileTransportStreamTests {
    /// Writes transport packets with continuity counters that never skip.
    struct Writer {
        var counters: [UInt16: UInt8] = [:]
        var bytes: [UInt8] = []

        /// `payload` on `pid` as whole packets (the last padded with stuffing).
        mutating func write(pid: UInt16, payload: [UInt8], unitStart: Bool) {
            var start = 0
            repeat {
                let chunk = min(184, payload.count - start)
                let counter = (counters[pid, default: 15] &+ 1) & 0x0F
                counters[pid] = counter
                let first: UInt8 = start == 0 && unitStart ? 0x40 : 0
                bytes += [0x47, first | UInt8(pid >> 8), UInt8(pid & 0xFF)]
                if chunk == 184 {
                    bytes += [0x10 | counter]
                } else {
                    // An adaptation field of stuffing fills the packet.
                    let fill = 184 - chunk - 1
                    bytes += [0x30 | counter, UInt8(fill)]
                    if fill > 0 { bytes += [0x00] + [UInt8](repeating: 0xFF, count: fill - 1) }
                }
                bytes += payload[start..<(start + chunk)]
                start += chunk
            } while start < payload.count
        }

        /// A PAT and a PMT announcing one stream of `streamType` on PID 0x100.
        mutating func tables(streamType: UInt8) {
            write(
                pid: 0,
                payload: [0, 0x00, 0xB0, 0x0D, 0x00, 0x01, 0xC1, 0x00, 0x00, 0x00, 0x01, 0xF0, 0x00, 0, 0, 0, 0],
                unitStart: true)
            write(
                pid: 0x1000,
                payload: [
                    0, 0x02, 0xB0, 0x12, 0x00, 0x01, 0xC1, 0x00, 0x00, 0xE1, 0x00, 0xF0, 0x00, streamType, 0xE1, 0x00,
                    0xF0, 0x00, 0, 0, 0, 0,
                ], unitStart: true)
        }

        /// The start of a video PES of unbounded length (PES_packet_length 0) at PTS 90,000.
        static func videoHeader() -> [UInt8] {
            [0, 0, 1, 0xE0, 0, 0, 0x80, 0x80, 0x05, 0x21, 0x00, 0x05, 0xBF, 0x21]
        }
    }

    @Test("§2.4.3.7: a PES packet that never ends is refused at its bound, not held in memory without limit")
    func endlessPES() throws {
        var writer = Writer()
        writer.tables(streamType: 0x1B)
        writer.write(pid: 0x100, payload: Writer.videoHeader() + [0, 0, 0, 1, 0x09, 0xF0], unitStart: true)
        // 40 MiB of continuation, no unit start ever again.
        let filler = [UInt8](repeating: 0x5A, count: 184)
        for _ in 0..<(40 << 20) / 184 { writer.write(pid: 0x100, payload: filler, unitStart: false) }
        var demuxer = TransportStreamDemuxer()
        do {
            _ = try demuxer.startSegment(0)
            _ = try demuxer.append(Data(writer.bytes))
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
        var writer = Writer()
        writer.tables(streamType: 0x1B)
        let unit =
            [0, 0, 0, 1, 0x09, 0xF0, 0, 0, 0, 1] + Self.sequenceParameterSet(lumaDepthMinus8: depth)
            + [0, 0, 0, 1, 0x68, 0xCE, 0x38, 0x80, 0, 0, 0, 1, 0x65, 0x88, 0x84, 0x00]
        var pes = Writer.videoHeader() + unit
        pes[4] = UInt8((pes.count - 6) >> 8)
        pes[5] = UInt8((pes.count - 6) & 0xFF)
        writer.write(pid: 0x100, payload: pes, unitStart: true)
        var reason = ""
        do {
            _ = try Remux.run([Data(writer.bytes)])
        } catch let error as ContainerError {
            if case .malformedVideo(let why) = error.kind { reason = why } else { reason = "\(error)" }
        }
        #expect(reason.contains("bit depth") == refused, "bit_depth_luma_minus8 \(depth): \(reason)")
    }
}
