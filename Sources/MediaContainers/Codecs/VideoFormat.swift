import Foundation

/// What an MP4 sample description needs to know of a video stream, read from its parameter
/// sets: the picture size and the decoder configuration record (`avcC` or `hvcC`).
///
/// Every field a stream supplies is range-checked: a parameter set that would make a size
/// negative or absurd, or a bit depth that does not fit its field, is a typed error, never a trap.
struct VideoFormat: Hashable, Sendable {
    /// The codec.
    var codec: MediaCodec
    /// The displayed width in pixels (after cropping).
    var width: Int
    /// The displayed height in pixels (after cropping).
    var height: Int
    /// The decoder configuration record: `AVCDecoderConfigurationRecord` (ISO/IEC 14496-15
    /// §5.3.3.1) or `HEVCDecoderConfigurationRecord` (§8.3.3.1).
    var configuration: [UInt8]

    /// Reads the format from the parameter sets in force: the picture size and profile of the
    /// sequence parameter set `active` (the one the pictures use), or of the lowest-numbered one
    /// when that is unknown; the configuration record lists every set, that one first.
    ///
    /// - Returns: `nil` while a needed parameter set is missing.
    /// - Throws: ``ContainerError/Kind/malformedVideo(reason:)`` for a sequence parameter set
    ///   that cannot be read or describes an impossible picture.
    init?(_ sets: ParameterSets, codec: MediaCodec, active: UInt32? = nil) throws(ContainerError) {
        self.codec = codec
        var sps = sets.ordered(.sequence)
        if let active, let chosen = sets.sequence[active], let index = sps.firstIndex(of: chosen), index > 0 {
            sps.remove(at: index)
            sps.insert(chosen, at: 0)
        }
        switch codec {
        case .hevc:
            let vps = sets.ordered(.video)
            let pps = sets.ordered(.picture)
            guard let first = sps.first, !vps.isEmpty, !pps.isEmpty else { return nil }
            let info = try Self.hevc(first)
            (width, height) = (info.width, info.height)
            configuration = Self.hvcC(vps: vps, sps: sps, pps: pps, info: info)
        default:
            let pps = sets.ordered(.picture)
            guard let first = sps.first, !pps.isEmpty else { return nil }
            let info = try Self.h264(first)
            (width, height) = (info.width, info.height)
            configuration = Self.avcC(sps: sps, pps: pps, info: info)
        }
    }

    /// The sample description: `avc1` with `avcC`, or `hvc1` with `hvcC` (the parameter sets
    /// live in the sample entry, none in the samples), timed at 90 kHz.
    var sampleDescription: SampleDescription {
        let hevc = codec == .hevc
        return SampleDescription(
            kind: .video, codec: codec,
            sampleEntry: SampleEntries.visual(
                format: hevc ? "hvc1" : "avc1", width: width, height: height,
                configurationType: hevc ? "hvcC" : "avcC", configuration: configuration),
            timescale: 90_000, width: width, height: height)
    }

    /// The fields of a sequence parameter set that the configuration record and the sample entry
    /// repeat.
    struct SequenceInfo {
        var width = 0
        var height = 0
        var chromaFormat: UInt32 = 1
        var bitDepthLuma: UInt32 = 8
        var bitDepthChroma: UInt32 = 8
        /// HEVC: the 12 bytes of the general profile, tier and level.
        var profileTierLevel: [UInt8] = []
        /// HEVC: sps_max_sub_layers_minus1 + 1.
        var temporalLayers: UInt32 = 1
        /// HEVC: sps_temporal_id_nesting_flag.
        var temporalIDNested = true
    }

    private static func malformed(_ reason: String) -> ContainerError {
        ContainerError(.malformedVideo(reason: reason))
    }

    /// The picture size after cropping, checked: each side within 1…65,535.
    private static func cropped(
        width: Int64, height: Int64, unitX: Int64, unitY: Int64, crop: (UInt32, UInt32, UInt32, UInt32)
    ) throws(ContainerError) -> (Int, Int) {
        let shownWidth = width - unitX * (Int64(crop.0) + Int64(crop.1))
        let shownHeight = height - unitY * (Int64(crop.2) + Int64(crop.3))
        guard shownWidth > 0, shownHeight > 0, shownWidth < 65_536, shownHeight < 65_536 else {
            throw malformed("a picture of \(shownWidth)×\(shownHeight) after cropping")
        }
        return (Int(shownWidth), Int(shownHeight))
    }

    // MARK: H.264

    /// Reads an H.264 SPS (ISO/IEC 14496-10 §7.3.2.1.1) as far as the cropped picture size.
    static func h264(_ sps: Data) throws(ContainerError) -> SequenceInfo {
        guard sps.count >= 4 else { throw malformed("a sequence parameter set of \(sps.count) bytes") }
        var bits = BitReader(nalUnit: sps, from: 1)
        let profile = bits.bits(8)
        _ = bits.bits(16)  // constraint flags, level
        guard bits.unsigned() != nil else { throw malformed("no seq_parameter_set_id") }
        var info = SequenceInfo()
        if [100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135].contains(profile) {
            guard let chroma = bits.unsigned(), chroma <= 3 else { throw malformed("chroma_format_idc out of range") }
            info.chromaFormat = chroma
            if chroma == 3 { _ = bits.bits(1) }
            guard let luma = bits.unsigned(), let chromaDepth = bits.unsigned(), luma <= 6, chromaDepth <= 6 else {
                throw malformed("a bit depth out of range")
            }
            info.bitDepthLuma = luma + 8
            info.bitDepthChroma = chromaDepth + 8
            _ = bits.bits(1)  // qpprime_y_zero_transform_bypass_flag
            if bits.flag() {  // seq_scaling_matrix_present_flag
                for list in 0..<(chroma == 3 ? 12 : 8) where bits.flag() {
                    var last: Int32 = 8
                    var next: Int32 = 8
                    for _ in 0..<(list < 6 ? 16 : 64) where next != 0 {
                        guard let delta = bits.signed(), (-128...127).contains(delta) else {
                            throw malformed("a scaling list delta out of range")
                        }
                        next = (last + delta + 256) % 256
                        last = next == 0 ? last : next
                    }
                }
            }
        }
        guard bits.unsigned() != nil, let pocType = bits.unsigned() else {
            throw malformed("no picture order count type")
        }
        if pocType == 0 {
            guard bits.unsigned() != nil else { throw malformed("no log2_max_pic_order_cnt_lsb") }
        } else if pocType == 1 {
            _ = bits.bits(1)
            guard bits.signed() != nil, bits.signed() != nil, let cycle = bits.unsigned(), cycle < 256 else {
                throw malformed("a picture order count cycle out of range")
            }
            for _ in 0..<cycle {
                guard bits.signed() != nil else { throw malformed("a picture order count cycle cut short") }
            }
        } else if pocType > 2 {
            throw malformed("picture order count type \(pocType)")
        }
        guard bits.unsigned() != nil else { throw malformed("no max_num_ref_frames") }
        _ = bits.bits(1)  // gaps_in_frame_num_value_allowed_flag
        guard let widthInMacroblocks = bits.unsigned(), let heightInMapUnits = bits.unsigned() else {
            throw malformed("no picture size")
        }
        let frameMacroblocksOnly = Int64(bits.bits(1))
        if frameMacroblocksOnly == 0 { _ = bits.bits(1) }
        _ = bits.bits(1)  // direct_8x8_inference_flag
        var crop: (UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0)
        if bits.flag() {
            guard let left = bits.unsigned(), let right = bits.unsigned(), let top = bits.unsigned(),
                let bottom = bits.unsigned()
            else { throw malformed("a cropping window cut short") }
            crop = (left, right, top, bottom)
        }
        guard !bits.isExhausted else { throw malformed("the sequence parameter set ends early") }
        // §7.4.2.1.1: crop units are 2 luma samples for 4:2:0 and 4:2:2 horizontally, 2 for 4:2:0
        // vertically, doubled for field coding.
        let unitX: Int64 = info.chromaFormat == 1 || info.chromaFormat == 2 ? 2 : 1
        let unitY: Int64 = (info.chromaFormat == 1 ? 2 : 1) * (2 - frameMacroblocksOnly)
        (info.width, info.height) = try cropped(
            width: (Int64(widthInMacroblocks) + 1) * 16,
            height: (Int64(heightInMapUnits) + 1) * 16 * (2 - frameMacroblocksOnly), unitX: unitX, unitY: unitY,
            crop: crop)
        return info
    }

    /// The `AVCDecoderConfigurationRecord` (ISO/IEC 14496-15 §5.3.3.1), with four-byte lengths.
    /// Callers pass at most 31 sequence and 255 picture parameter sets of at most 65,535 bytes.
    static func avcC(sps: [Data], pps: [Data], info: SequenceInfo) -> [UInt8] {
        let first = [UInt8](sps[0])
        var record: [UInt8] = [1, first[1], first[2], first[3], 0xFF, 0xE0 | UInt8(min(sps.count, 31))]
        for set in sps.prefix(31) { record += [UInt8(set.count >> 8 & 0xFF), UInt8(set.count & 0xFF)] + set }
        record.append(UInt8(min(pps.count, 255)))
        for set in pps.prefix(255) { record += [UInt8(set.count >> 8 & 0xFF), UInt8(set.count & 0xFF)] + set }
        if [100, 110, 122, 144].contains(first[1]) {
            record += [
                0xFC | UInt8(info.chromaFormat & 0x03), 0xF8 | UInt8((info.bitDepthLuma - 8) & 0x07),
                0xF8 | UInt8((info.bitDepthChroma - 8) & 0x07), 0,
            ]
        }
        return record
    }

    // MARK: HEVC

    /// Skips profile_tier_level(1, `subLayers`) (ISO/IEC 23008-2 §7.3.3) after its 12 general
    /// bytes, which it returns.
    @discardableResult
    static func skipProfileTierLevel(_ bits: inout BitReader, subLayers: Int) -> [UInt8] {
        var general: [UInt8] = []
        for _ in 0..<12 { general.append(UInt8(bits.bits(8))) }
        var profilePresent: [Bool] = []
        var levelPresent: [Bool] = []
        for _ in 0..<subLayers {
            profilePresent.append(bits.flag())
            levelPresent.append(bits.flag())
        }
        if subLayers > 0 { for _ in subLayers..<8 { _ = bits.bits(2) } }
        for layer in 0..<subLayers {
            if profilePresent[layer] { bits.skip(88) }
            if levelPresent[layer] { bits.skip(8) }
        }
        return general
    }

    /// Reads an HEVC SPS (ISO/IEC 23008-2 §7.3.2.2) as far as the cropped picture size.
    static func hevc(_ sps: Data) throws(ContainerError) -> SequenceInfo {
        guard sps.count >= 15 else { throw malformed("a sequence parameter set of \(sps.count) bytes") }
        var bits = BitReader(nalUnit: sps, from: 2)
        _ = bits.bits(4)  // sps_video_parameter_set_id
        let subLayers = Int(bits.bits(3))
        let nesting = bits.flag()
        var info = SequenceInfo()
        info.temporalLayers = UInt32(subLayers) + 1
        info.temporalIDNested = nesting
        info.profileTierLevel = skipProfileTierLevel(&bits, subLayers: subLayers)
        guard bits.unsigned() != nil, let chroma = bits.unsigned(), chroma <= 3 else {
            throw malformed("chroma_format_idc out of range")
        }
        info.chromaFormat = chroma
        if chroma == 3 { _ = bits.bits(1) }
        guard let width = bits.unsigned(), let height = bits.unsigned() else { throw malformed("no picture size") }
        var crop: (UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0)
        if bits.flag() {
            guard let left = bits.unsigned(), let right = bits.unsigned(), let top = bits.unsigned(),
                let bottom = bits.unsigned()
            else { throw malformed("a conformance window cut short") }
            crop = (left, right, top, bottom)
        }
        // §7.4.3.2.1 allows up to 16 bits; hvcC's bitDepthLumaMinus8 has 3 bits (ISO/IEC
        // 14496-15 §8.3.3.1.2), so a 16-bit stream cannot be described and is refused.
        guard let luma = bits.unsigned(), let chromaDepth = bits.unsigned(), luma <= 7, chromaDepth <= 7 else {
            throw malformed("a bit depth over the 15 bits an hvcC record can say")
        }
        info.bitDepthLuma = luma + 8
        info.bitDepthChroma = chromaDepth + 8
        guard !bits.isExhausted else { throw malformed("the sequence parameter set ends early") }
        let unitX: Int64 = chroma == 1 || chroma == 2 ? 2 : 1
        let unitY: Int64 = chroma == 1 ? 2 : 1
        (info.width, info.height) = try cropped(
            width: Int64(width), height: Int64(height), unitX: unitX, unitY: unitY, crop: crop)
        return info
    }

    /// The `HEVCDecoderConfigurationRecord` (ISO/IEC 14496-15 §8.3.3.1), with four-byte lengths.
    static func hvcC(vps: [Data], sps: [Data], pps: [Data], info: SequenceInfo) -> [UInt8] {
        var record: [UInt8] = [1]
        record += info.profileTierLevel  // profile space, tier, profile, compatibility, constraints, level
        record += [0xF0, 0x00]  // min_spatial_segmentation_idc: unknown
        record.append(0xFC)  // parallelismType: unknown
        record.append(0xFC | UInt8(info.chromaFormat & 0x03))
        record.append(0xF8 | UInt8((info.bitDepthLuma - 8) & 0x07))
        record.append(0xF8 | UInt8((info.bitDepthChroma - 8) & 0x07))
        record += [0, 0]  // avgFrameRate: unknown
        // constantFrameRate 0, numTemporalLayers, temporalIdNested, lengthSizeMinusOne 3
        record.append(UInt8((info.temporalLayers & 0x07) << 3) | (info.temporalIDNested ? 0x04 : 0) | 0x03)
        let arrays: [(UInt8, [Data])] = [(32, vps), (33, sps), (34, pps)]
        record.append(UInt8(arrays.count))
        for (type, sets) in arrays {
            record.append(0x80 | type)  // array_completeness 1: every set is here, none in the samples
            let listed = sets.prefix(0xFFFF)
            record += [UInt8(listed.count >> 8), UInt8(listed.count & 0xFF)]
            for set in listed { record += [UInt8(set.count >> 8 & 0xFF), UInt8(set.count & 0xFF)] + set }
        }
        return record
    }
}
