import Foundation
import MediaContainers
import TestSupport
import Testing

/// Hostile transport streams written packet by packet: a PES that never ends, stuffing where a
/// table section would start, and H.264 parameter sets that would trap the arithmetic (bit
/// depths, cropping windows, lengths past the configuration record's 16 bits), each a typed
/// ``ContainerError`` or read as the standard says.
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

    /// `rbsp` with emulation prevention bytes (H.264 §7.4.1): no 00 00 0x left in the payload.
    static func escaped(_ rbsp: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var zeros = 0
        for byte in rbsp {
            if zeros >= 2, byte <= 3 {
                out.append(3)
                zeros = 0
            }
            out.append(byte)
            zeros = byte == 0 ? zeros + 1 : 0
        }
        return out
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
        return escaped(bits.bytes)
    }

    /// A complete Baseline-profile SPS NAL unit (4:2:0, frames only) of `columns` × `rows`
    /// macroblocks with the cropping window `crop` (left, right, top, bottom, in crop units).
    static func sequenceParameterSet(
        columns: UInt64, rows: UInt64, crop: (UInt64, UInt64, UInt64, UInt64)?
    ) -> [UInt8] {
        var bits = Bits()
        bits.put(0x67, 8)  // NAL header: SPS
        bits.put(66, 8)  // profile_idc: Baseline
        bits.put(0xC0, 8)  // constraint_set0/1
        bits.put(31, 8)  // level 3.1
        bits.unsigned(0)  // seq_parameter_set_id
        bits.unsigned(0)  // log2_max_frame_num_minus4
        bits.unsigned(2)  // pic_order_cnt_type
        bits.unsigned(1)  // max_num_ref_frames
        bits.put(0, 1)  // gaps_in_frame_num_value_allowed_flag
        bits.unsigned(columns - 1)  // pic_width_in_mbs_minus1
        bits.unsigned(rows - 1)  // pic_height_in_map_units_minus1
        bits.put(1, 1)  // frame_mbs_only_flag
        bits.put(1, 1)  // direct_8x8_inference_flag
        if let crop {
            bits.put(1, 1)  // frame_cropping_flag
            for offset in [crop.0, crop.1, crop.2, crop.3] { bits.unsigned(offset) }
        } else {
            bits.put(0, 1)
        }
        bits.put(0, 1)  // vui_parameters_present_flag
        bits.put(1, 1)  // rbsp_stop_one_bit
        return escaped(bits.bytes)
    }

    /// A transport stream of one video PES: an access unit delimiter, `sps`, a PPS and the
    /// start of an IDR slice.
    static func videoSegment(sps: [UInt8]) -> Data {
        var (builder, bytes) = Self.videoStream()
        let unit =
            [0, 0, 0, 1, 0x09, 0xF0, 0, 0, 0, 1] + sps
            + [0, 0, 0, 1, 0x68, 0xCE, 0x38, 0x80, 0, 0, 0, 1, 0x65, 0x88, 0x84, 0x00]
        var pes = Self.videoHeader + unit
        if pes.count - 6 <= 0xFFFF {
            pes[4] = UInt8((pes.count - 6) >> 8)
            pes[5] = UInt8((pes.count - 6) & 0xFF)
        }
        bytes += builder.packets(pid: 0x100, payload: pes)
        return Data(bytes)
    }

    /// The `malformedVideo` reason of remuxing `segment`, or `nil` when it remuxes.
    static func refusal(_ segment: Data) throws -> (reason: String?, result: Remux.Result?) {
        do {
            return (nil, try Remux.run([segment]))
        } catch let error as ContainerError {
            if case .malformedVideo(let why) = error.kind { return (why, nil) }
            return ("\(error)", nil)
        }
    }

    @Test(
        "H.264 §7.4.2.1.1: a bit depth beyond 14 bits is a typed error, not an overflow",
        arguments: [(0, false), (6, false), (7, true), (1 << 20, true), (1 << 40, true)] as [(UInt64, Bool)])
    func hugeBitDepth(depth: UInt64, refused: Bool) throws {
        let segment = Self.videoSegment(sps: Self.sequenceParameterSet(lumaDepthMinus8: depth))
        let reason = try Self.refusal(segment).reason ?? ""
        #expect(reason.contains("bit depth") == refused, "bit_depth_luma_minus8 \(depth): \(reason)")
    }

    /// A cropping window and the picture it leaves, or `nil` where the SPS must be refused.
    struct Cropping: Sendable, CustomTestStringConvertible {
        var columns: UInt64
        var rows: UInt64
        var crop: (UInt64, UInt64, UInt64, UInt64)?
        var picture: (width: Int, height: Int)?
        var testDescription: String {
            let window = crop.map { "crop \($0.0),\($0.1),\($0.2),\($0.3)" } ?? "no crop"
            return "\(columns)×\(rows) macroblocks, \(window)"
        }
    }

    static let croppings: [Cropping] = [
        Cropping(columns: 120, rows: 68, crop: nil, picture: (1920, 1088)),
        Cropping(columns: 120, rows: 68, crop: (0, 0, 0, 4), picture: (1920, 1080)),
        Cropping(columns: 40, rows: 23, crop: (1, 1, 2, 2), picture: (636, 360)),
        Cropping(columns: 1, rows: 1, crop: nil, picture: (16, 16)),
        // A window that leaves nothing, or less than nothing, and offsets that overflow 32 bits
        // once doubled into luma samples.
        Cropping(columns: 120, rows: 68, crop: (480, 480, 0, 0), picture: nil),
        Cropping(columns: 120, rows: 68, crop: (0, 0, 300, 300), picture: nil),
        Cropping(columns: 120, rows: 68, crop: (1 << 31, 0, 0, 0), picture: nil),
        Cropping(columns: 120, rows: 68, crop: (0, 0, (1 << 32) - 2, (1 << 32) - 2), picture: nil),
        // A picture wider than an MP4 sample entry's 16 bits.
        Cropping(columns: 4_096, rows: 1, crop: nil, picture: nil),
        Cropping(columns: 1 << 28, rows: 1, crop: nil, picture: nil),
    ]

    @Test(
        "H.264 §7.4.2.1.1: the cropping window's arithmetic is checked, an impossible picture is a typed error",
        arguments: croppings)
    func cropping(case cropping: Cropping) throws {
        let sps = Self.sequenceParameterSet(columns: cropping.columns, rows: cropping.rows, crop: cropping.crop)
        let (reason, result) = try Self.refusal(Self.videoSegment(sps: sps))
        guard let picture = cropping.picture else {
            #expect(reason != nil, "accepted")
            return
        }
        #expect(reason == nil)
        let entry = try #require(result?.file.tracks("vide").first?.entries.first)
        // VisualSampleEntry (ISO/IEC 14496-12 §12.1.3): width and height after 24 bytes of fields.
        let width = Int(entry[32]) << 8 | Int(entry[33])
        let height = Int(entry[34]) << 8 | Int(entry[35])
        #expect(width == picture.width && height == picture.height, "\(width)×\(height)")
    }

    @Test(
        "ISO/IEC 14496-15 §5.3.3.1: a parameter set fits the record's 16-bit length or is a typed error",
        arguments: [(65_535, true), (65_536, false), (200_000, false)])
    func parameterSetLength(length: Int, fits: Bool) throws {
        // A real SPS, then filler the parser never reads: it ends after the fields it needs.
        let head = Self.sequenceParameterSet(columns: 40, rows: 23, crop: nil)
        let sps = head + [UInt8](repeating: 0x5A, count: length - head.count)
        do {
            let result = try Remux.run([Self.videoSegment(sps: sps)])
            #expect(fits, "a parameter set of \(length) bytes was written")
            let entry = try #require(result.file.tracks("vide").first?.entries.first)
            // avcC after the 86-byte visual entry: version, profile, compatibility, level, length
            // size, SPS count, then the first SPS's 16-bit length.
            let recorded = Int(entry[86 + 8 + 6]) << 8 | Int(entry[86 + 8 + 7])
            #expect(recorded == length)
        } catch let error as ContainerError {
            guard case .tooLarge(let what, let bytes, _) = error.kind else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(!fits && what == "a parameter set" && bytes == length, "\(error)")
        }
    }

    @Test(
        "§2.4.4.1: stuffing (0xFF) where a table_id would be ends the section; what follows it is not a table, and the next tables are read"
    )
    func stuffingWhereASectionStarts() throws {
        var builder = TransportStreamBuilder()
        var bytes: [UInt8] = []
        // A PAT packet of nothing but stuffing after its pointer field, continued by packets of
        // bytes that would read as an endless section if the stuffing were taken for a table.
        bytes += builder.packets(pid: 0, payload: [0] + [UInt8](repeating: 0xFF, count: 183))
        for _ in 0..<64 {
            bytes += builder.packets(pid: 0, payload: [UInt8](repeating: 0x30, count: 184), unitStart: false)
        }
        bytes += builder.packets(pid: builder.mapPID, payload: [0] + [UInt8](repeating: 0xFF, count: 183))
        bytes += builder.tables()
        for index in 0..<4 { bytes += builder.audioPES(pts: 90_000 + Int64(index) * 2_090) }
        var demuxer = TransportStreamDemuxer()
        _ = try demuxer.startSegment(0)
        let frames = try demuxer.append(Data(bytes)) + demuxer.finish()
        #expect(demuxer.declaredStreams.map(\.pid) == [builder.audioPID])
        #expect(frames.count == 4)
    }
}
