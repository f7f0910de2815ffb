public import Foundation

/// What an MP4 sample description needs to know of a video stream, read from its parameter
/// sets: the picture size and the decoder configuration record (`avcC` or `hvcC`).
public struct VideoFormat: Hashable, Sendable {
    /// The codec.
    public var codec: VideoCodec
    /// The displayed width in pixels (after cropping).
    public var width: Int
    /// The displayed height in pixels (after cropping).
    public var height: Int
    /// The decoder configuration record: `AVCDecoderConfigurationRecord` (ISO/IEC 14496-15
    /// §5.3.3.1) or `HEVCDecoderConfigurationRecord` (§8.3.3.1).
    public var configuration: Data

    /// Reads the format from the parameter sets a ``AnnexBReader`` collected.
    ///
    /// - Returns: `nil` when a needed parameter set is missing or cannot be read.
    public init?(_ reader: AnnexBReader) {
        switch reader.codec {
        case .h264:
            guard let sps = reader.sequenceParameterSets.first, !reader.pictureParameterSets.isEmpty,
                let info = Self.h264(sps)
            else { return nil }
            codec = .h264
            (width, height) = (info.width, info.height)
            configuration = Self.avcC(
                sps: reader.sequenceParameterSets, pps: reader.pictureParameterSets, info: info)
        case .hevc:
            guard let vps = reader.videoParameterSets.first, let sps = reader.sequenceParameterSets.first,
                !reader.pictureParameterSets.isEmpty, let info = Self.hevc(sps)
            else { return nil }
            codec = .hevc
            (width, height) = (info.width, info.height)
            configuration = Self.hvcC(
                vps: [vps] + reader.videoParameterSets.dropFirst(), sps: reader.sequenceParameterSets,
                pps: reader.pictureParameterSets, info: info)
        }
    }

    /// The fields of a sequence parameter set that the configuration record and the sample
    /// entry repeat.
    struct SequenceInfo {
        var width: Int
        var height: Int
        var chromaFormat: UInt32 = 1
        var bitDepthLuma: UInt32 = 8
        var bitDepthChroma: UInt32 = 8
        /// HEVC: the 12 bytes of the general profile, tier and level.
        var profileTierLevel: [UInt8] = []
    }

    // MARK: H.264

    /// Reads an H.264 SPS (ISO/IEC 14496-10 §7.3.2.1.1) as far as the cropped picture size.
    static func h264(_ sps: Data) -> SequenceInfo? {
        guard sps.count >= 4 else { return nil }
        var bits = BitReader(sps, from: 1)
        let profile = bits.bits(8)
        _ = bits.bits(16)  // constraint flags, level
        guard bits.unsigned() != nil else { return nil }  // seq_parameter_set_id
        var info = SequenceInfo(width: 0, height: 0)
        if [100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135].contains(profile) {
            guard let chroma = bits.unsigned() else { return nil }
            info.chromaFormat = chroma
            if chroma == 3 { _ = bits.bits(1) }
            guard let luma = bits.unsigned(), let chromaDepth = bits.unsigned() else { return nil }
            info.bitDepthLuma = luma + 8
            info.bitDepthChroma = chromaDepth + 8
            _ = bits.bits(1)  // qpprime_y_zero_transform_bypass_flag
            if bits.bits(1) == 1 {  // seq_scaling_matrix_present_flag
                for list in 0..<(chroma == 3 ? 12 : 8) where bits.bits(1) == 1 {
                    var last: Int32 = 8
                    var next: Int32 = 8
                    for _ in 0..<(list < 6 ? 16 : 64) where next != 0 {
                        guard let delta = bits.signed() else { return nil }
                        next = (last + delta + 256) % 256
                        last = next == 0 ? last : next
                    }
                }
            }
        }
        guard bits.unsigned() != nil, let pocType = bits.unsigned() else { return nil }  // log2_max_frame_num
        if pocType == 0 {
            guard bits.unsigned() != nil else { return nil }
        } else if pocType == 1 {
            _ = bits.bits(1)
            guard bits.signed() != nil, bits.signed() != nil, let cycle = bits.unsigned(), cycle < 256 else {
                return nil
            }
            for _ in 0..<cycle { guard bits.signed() != nil else { return nil } }
        }
        guard bits.unsigned() != nil else { return nil }  // max_num_ref_frames
        _ = bits.bits(1)  // gaps_in_frame_num_value_allowed_flag
        guard let widthInMacroblocks = bits.unsigned(), let heightInMapUnits = bits.unsigned() else { return nil }
        let frameMacroblocksOnly = bits.bits(1)
        if frameMacroblocksOnly == 0 { _ = bits.bits(1) }
        _ = bits.bits(1)  // direct_8x8_inference_flag
        var crop = (left: UInt32(0), right: UInt32(0), top: UInt32(0), bottom: UInt32(0))
        if bits.bits(1) == 1 {
            guard let left = bits.unsigned(), let right = bits.unsigned(), let top = bits.unsigned(),
                let bottom = bits.unsigned()
            else { return nil }
            crop = (left, right, top, bottom)
        }
        // §7.4.2.1.1: crop units are 2 luma samples for 4:2:0 (and 1 vertically more per field).
        let cropX: UInt32 = info.chromaFormat == 1 || info.chromaFormat == 2 ? 2 : 1
        let cropY: UInt32 = (info.chromaFormat == 1 ? 2 : 1) * (2 - frameMacroblocksOnly)
        let width = Int64(widthInMacroblocks + 1) * 16 - Int64(cropX * (crop.left + crop.right))
        let height =
            Int64(heightInMapUnits + 1) * 16 * Int64(2 - frameMacroblocksOnly) - Int64(cropY * (crop.top + crop.bottom))
        guard width > 0, height > 0, width < 65_536, height < 65_536 else { return nil }
        info.width = Int(width)
        info.height = Int(height)
        return info
    }

    /// The `AVCDecoderConfigurationRecord` (ISO/IEC 14496-15 §5.3.3.1), with four-byte lengths.
    static func avcC(sps: [Data], pps: [Data], info: SequenceInfo) -> Data {
        let first = [UInt8](sps[0])
        var record: [UInt8] = [1, first[1], first[2], first[3], 0xFF, 0xE0 | UInt8(min(sps.count, 31))]
        for set in sps.prefix(31) { record += [UInt8(set.count >> 8), UInt8(set.count & 0xFF)] + set }
        record.append(UInt8(min(pps.count, 255)))
        for set in pps.prefix(255) { record += [UInt8(set.count >> 8), UInt8(set.count & 0xFF)] + set }
        if [100, 110, 122, 144].contains(first[1]) {
            record += [
                0xFC | UInt8(info.chromaFormat & 0x03), 0xF8 | UInt8((info.bitDepthLuma - 8) & 0x07),
                0xF8 | UInt8((info.bitDepthChroma - 8) & 0x07), 0,
            ]
        }
        return Data(record)
    }

    // MARK: HEVC

    /// Reads an HEVC SPS (ISO/IEC 23008-2 §7.3.2.2) as far as the cropped picture size.
    static func hevc(_ sps: Data) -> SequenceInfo? {
        guard sps.count >= 15 else { return nil }
        var bits = BitReader(sps, from: 2)
        _ = bits.bits(4)  // sps_video_parameter_set_id
        let subLayers = Int(bits.bits(3))
        _ = bits.bits(1)
        var info = SequenceInfo(width: 0, height: 0)
        // profile_tier_level(1, subLayers): the general part is 12 bytes.
        for _ in 0..<12 { info.profileTierLevel.append(UInt8(bits.bits(8))) }
        var profilePresent: [Bool] = []
        var levelPresent: [Bool] = []
        for _ in 0..<subLayers {
            profilePresent.append(bits.bits(1) == 1)
            levelPresent.append(bits.bits(1) == 1)
        }
        if subLayers > 0 { for _ in subLayers..<8 { _ = bits.bits(2) } }
        for layer in 0..<subLayers {
            if profilePresent[layer] {
                _ = bits.bits(32)
                _ = bits.bits(32)
                _ = bits.bits(24)
            }
            if levelPresent[layer] { _ = bits.bits(8) }
        }
        guard bits.unsigned() != nil, let chroma = bits.unsigned() else { return nil }
        info.chromaFormat = chroma
        if chroma == 3 { _ = bits.bits(1) }
        guard let width = bits.unsigned(), let height = bits.unsigned() else { return nil }
        var crop = (left: UInt32(0), right: UInt32(0), top: UInt32(0), bottom: UInt32(0))
        if bits.bits(1) == 1 {
            guard let left = bits.unsigned(), let right = bits.unsigned(), let top = bits.unsigned(),
                let bottom = bits.unsigned()
            else { return nil }
            crop = (left, right, top, bottom)
        }
        guard let luma = bits.unsigned(), let chromaDepth = bits.unsigned() else { return nil }
        info.bitDepthLuma = luma + 8
        info.bitDepthChroma = chromaDepth + 8
        let subWidth: UInt32 = chroma == 1 || chroma == 2 ? 2 : 1
        let subHeight: UInt32 = chroma == 1 ? 2 : 1
        let shownWidth = Int64(width) - Int64(subWidth * (crop.left + crop.right))
        let shownHeight = Int64(height) - Int64(subHeight * (crop.top + crop.bottom))
        guard shownWidth > 0, shownHeight > 0, shownWidth < 65_536, shownHeight < 65_536 else { return nil }
        info.width = Int(shownWidth)
        info.height = Int(shownHeight)
        return info
    }

    /// The `HEVCDecoderConfigurationRecord` (ISO/IEC 14496-15 §8.3.3.1), with four-byte lengths.
    static func hvcC(vps: [Data], sps: [Data], pps: [Data], info: SequenceInfo) -> Data {
        var record: [UInt8] = [1]
        record += info.profileTierLevel  // profile space, tier, profile, compatibility, constraints, level
        record += [0xF0, 0x00]  // min_spatial_segmentation_idc: unknown
        record.append(0xFC)  // parallelismType: unknown
        record.append(0xFC | UInt8(info.chromaFormat & 0x03))
        record.append(0xF8 | UInt8((info.bitDepthLuma - 8) & 0x07))
        record.append(0xF8 | UInt8((info.bitDepthChroma - 8) & 0x07))
        record += [0, 0]  // avgFrameRate: unknown
        record.append(0x0F)  // constantFrameRate 0, numTemporalLayers 1, temporalIdNested 1, lengthSizeMinusOne 3
        let arrays: [(UInt8, [Data])] = [(32, vps), (33, sps), (34, pps)]
        record.append(UInt8(arrays.count))
        for (type, sets) in arrays {
            record.append(0x80 | type)  // array_completeness 1
            record += [UInt8(sets.count >> 8), UInt8(sets.count & 0xFF)]
            for set in sets { record += [UInt8(set.count >> 8), UInt8(set.count & 0xFF)] + set }
        }
        return Data(record)
    }
}
