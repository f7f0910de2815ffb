import Foundation
import MediaContainers
import TestSupport

/// H.264 elementary streams written bit by bit for the tests (ITU-T H.264 §7.3): parameter sets
/// with the fields a test chooses, and transport streams of access units on PID 0x100.
enum H264TestStream {
    /// The start of a video PES of unbounded length (PES_packet_length 0) at PTS 90,000.
    static let videoHeader: [UInt8] = [0, 0, 1, 0xE0, 0, 0, 0x80, 0x80, 0x05, 0x21, 0x00, 0x05, 0xBF, 0x21]

    /// A builder whose tables announce H.264 on PID 0x100.
    static func videoStream() -> (builder: TransportStreamBuilder, bytes: [UInt8]) {
        var builder = TransportStreamBuilder(audioPID: 0x100)
        let tables = builder.tables(streamType: 0x1B)
        return (builder, tables)
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
        id: UInt64 = 0, columns: UInt64, rows: UInt64, crop: (UInt64, UInt64, UInt64, UInt64)?
    ) -> [UInt8] {
        var bits = Bits()
        bits.put(0x67, 8)  // NAL header: SPS
        bits.put(66, 8)  // profile_idc: Baseline
        bits.put(0xC0, 8)  // constraint_set0/1
        bits.put(31, 8)  // level 3.1
        bits.unsigned(id)  // seq_parameter_set_id
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
        segment(accessUnits: [
            [0, 0, 0, 1] + sps + [0, 0, 0, 1, 0x68, 0xCE, 0x38, 0x80, 0, 0, 0, 1, 0x65, 0x88, 0x84, 0x00]
        ])
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

    /// A PPS NAL unit (§7.3.2.2) numbered `id` that refers to SPS `sequence`: CAVLC, one slice
    /// group, no reference index overrides, default quantisers.
    static func pictureParameterSet(id: UInt64, sequence: UInt64) -> [UInt8] {
        var bits = Bits()
        bits.put(0x68, 8)  // NAL header: PPS
        bits.unsigned(id)  // pic_parameter_set_id
        bits.unsigned(sequence)  // seq_parameter_set_id
        bits.put(0, 2)  // entropy_coding_mode_flag, bottom_field_pic_order_in_frame_present_flag
        for _ in 0..<3 { bits.unsigned(0) }  // num_slice_groups_minus1, num_ref_idx_l0/l1_default_active_minus1
        bits.put(0, 3)  // weighted_pred_flag, weighted_bipred_idc
        for _ in 0..<3 { bits.unsigned(0) }  // pic_init_qp_minus26, pic_init_qs_minus26, chroma_qp_index_offset: se(0)
        bits.put(0b100, 3)  // deblocking_filter_control_present_flag, constrained_intra_pred, redundant_pic_cnt_present
        bits.put(1, 1)  // rbsp_stop_one_bit
        return escaped(bits.bytes)
    }

    /// The start of an IDR slice NAL unit (§7.3.3) whose picture uses PPS `pps`.
    static func idrSlice(pps: UInt64) -> [UInt8] {
        var bits = Bits()
        bits.put(0x65, 8)  // NAL header: IDR slice
        bits.unsigned(0)  // first_mb_in_slice
        bits.unsigned(7)  // slice_type: I, all slices
        bits.unsigned(pps)  // pic_parameter_set_id
        bits.put(0b1000_0100, 8)  // the rest of a header the remuxer does not read
        return escaped(bits.bytes)
    }

    /// An HEVC SPS NAL unit (ISO/IEC 23008-2 §7.3.2.2) of 192×108 Main-profile 4:2:0 pictures
    /// whose bit_depth_luma_minus8 is `depth`, then a stop bit.
    static func hevcSequenceParameterSet(lumaDepthMinus8 depth: UInt64) -> [UInt8] {
        var bits = Bits()
        bits.put(0x4201, 16)  // NAL header: SPS (type 33), layer 0, temporal id 1
        bits.put(0, 4)  // sps_video_parameter_set_id
        bits.put(0, 3)  // sps_max_sub_layers_minus1
        bits.put(1, 1)  // sps_temporal_id_nesting_flag
        // profile_tier_level (§7.3.3): Main profile, its compatibility flag, progressive and
        // frame-only among 48 bits of constraints, level 3.
        bits.put(1, 8)
        bits.put(0x4000_0000, 32)
        bits.put(0x9000_0000_0000, 48)
        bits.put(90, 8)
        bits.unsigned(0)  // sps_seq_parameter_set_id
        bits.unsigned(1)  // chroma_format_idc 4:2:0
        bits.unsigned(192)  // pic_width_in_luma_samples
        bits.unsigned(108)  // pic_height_in_luma_samples
        bits.put(0, 1)  // conformance_window_flag
        bits.unsigned(depth)  // bit_depth_luma_minus8
        bits.unsigned(0)  // bit_depth_chroma_minus8
        bits.put(1, 1)  // rbsp_stop_one_bit
        return escaped(bits.bytes)
    }

    /// A transport stream of one PES per access unit in `units` (each Annex B bytes, without an
    /// access unit delimiter), 40 ms apart from PTS 90,000, as H.264 (stream type 0x1B) or HEVC
    /// (0x24).
    static func segment(accessUnits units: [[UInt8]], hevc: Bool = false) -> Data {
        var builder = TransportStreamBuilder(audioPID: 0x100)
        var bytes = builder.tables(streamType: hevc ? 0x24 : 0x1B)
        let delimiter: [UInt8] = hevc ? [0, 0, 0, 1, 0x46, 0x01, 0x50] : [0, 0, 0, 1, 0x09, 0xF0]
        for (index, unit) in units.enumerated() {
            let pes = TransportStreamBuilder.pes(
                streamID: 0xE0, pts: 90_000 + Int64(index) * 3_600, payload: delimiter + unit)
            bytes += builder.packets(pid: 0x100, payload: pes)
        }
        return Data(bytes)
    }
}
