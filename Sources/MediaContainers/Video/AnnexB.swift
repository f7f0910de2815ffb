public import Foundation

/// The video codecs whose Annex B elementary streams the remuxer turns into MP4 samples.
public enum VideoCodec: Sendable, Hashable {
    /// H.264 / AVC (ISO/IEC 14496-10): NAL unit headers of one byte.
    case h264
    /// H.265 / HEVC (ISO/IEC 23008-2): NAL unit headers of two bytes.
    case hevc
}

/// One access unit of video, ready for an MP4 sample: its NAL units with four-byte lengths
/// instead of start codes (ISO/IEC 14496-15 §4.3), without the parameter sets and access unit
/// delimiters that the sample description carries instead.
public struct VideoSample: Hashable, Sendable {
    /// The length-prefixed NAL units.
    public var data: Data
    /// Whether the sample is a sync sample: an IDR picture (H.264) or an IRAP picture (HEVC).
    public var isSync: Bool
}

/// Splits Annex B byte streams (ISO/IEC 14496-10 Annex B) into NAL units and collects the
/// parameter sets an MP4 sample description needs.
public struct AnnexBReader: Sendable {
    /// The codec of the stream.
    public let codec: VideoCodec
    /// The first video parameter set seen (HEVC only).
    public private(set) var videoParameterSets: [Data] = []
    /// The sequence parameter sets seen, each once, in order.
    public private(set) var sequenceParameterSets: [Data] = []
    /// The picture parameter sets seen, each once, in order.
    public private(set) var pictureParameterSets: [Data] = []

    /// Creates a reader for `codec`.
    public init(codec: VideoCodec) {
        self.codec = codec
    }

    /// The NAL units of `data`, split at its start codes (`00 00 01`, or `00 00 00 01`).
    ///
    /// - Complexity: O(*n*).
    public static func nalUnits(_ data: Data) -> [Data] {
        var units: [Data] = []
        data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var index = 0
            var start: Int?
            while index + 2 < bytes.count {
                if bytes[index] == 0, bytes[index + 1] == 0, bytes[index + 2] == 1 {
                    if let start {
                        var end = index
                        // A four-byte start code's leading zero, and trailing zeros, are not data.
                        while end > start, bytes[end - 1] == 0 { end -= 1 }
                        if end > start { units.append(Data(UnsafeRawBufferPointer(rebasing: raw[start..<end]))) }
                    }
                    index += 3
                    start = index
                } else {
                    index += 1
                }
            }
            if let start, start < bytes.count {
                units.append(Data(UnsafeRawBufferPointer(rebasing: raw[start..<bytes.count])))
            }
        }
        return units
    }

    /// Turns one access unit (a PES payload) into a sample, collecting its parameter sets.
    ///
    /// - Returns: The sample, or `nil` when the access unit holds no picture data.
    /// - Complexity: O(*n*).
    public mutating func sample(fromAccessUnit data: Data) -> VideoSample? {
        var sample = Data()
        var isSync = false
        var hasPicture = false
        for unit in Self.nalUnits(data) {
            guard let first = unit.first else { continue }
            switch codec {
            case .h264:
                let type = first & 0x1F
                switch type {
                case 7: remember(unit, in: &sequenceParameterSets)
                case 8: remember(unit, in: &pictureParameterSets)
                case 9: continue  // access unit delimiter
                default:
                    if type == 5 { isSync = true }
                    if (1...5).contains(type) { hasPicture = true }
                    append(unit, to: &sample)
                }
            case .hevc:
                let type = (first >> 1) & 0x3F
                switch type {
                case 32: remember(unit, in: &videoParameterSets)
                case 33: remember(unit, in: &sequenceParameterSets)
                case 34: remember(unit, in: &pictureParameterSets)
                case 35: continue  // access unit delimiter
                default:
                    // IRAP pictures (BLA, IDR, CRA: types 16 to 21) are sync samples.
                    if (16...21).contains(type) { isSync = true }
                    if type < 32 { hasPicture = true }
                    append(unit, to: &sample)
                }
            }
        }
        return hasPicture ? VideoSample(data: sample, isSync: isSync) : nil
    }

    private func remember(_ unit: Data, in sets: inout [Data]) {
        if !sets.contains(unit) { sets.append(unit) }
    }

    private func append(_ unit: Data, to sample: inout Data) {
        let length = UInt32(unit.count)
        sample.append(contentsOf: [
            UInt8(length >> 24), UInt8((length >> 16) & 0xFF), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF),
        ])
        sample.append(unit)
    }
}

/// Reads the bits of a NAL unit's payload, with its emulation prevention bytes removed
/// (ISO/IEC 14496-10 §7.4.1): fixed-width fields and Exp-Golomb codes (§9.1).
struct BitReader {
    private let bytes: [UInt8]
    private var position = 0

    /// Reads `unit` from byte `offset` on, dropping each `03` of a `00 00 03` sequence.
    init(_ unit: Data, from offset: Int) {
        var clean: [UInt8] = []
        var zeros = 0
        for byte in unit.dropFirst(offset) {
            if zeros >= 2, byte == 3 {
                zeros = 0
                continue
            }
            clean.append(byte)
            zeros = byte == 0 ? zeros + 1 : 0
        }
        bytes = clean
    }

    /// Whether bits remain.
    var hasMore: Bool { position < bytes.count * 8 }

    /// The next `count` bits (at most 32) as an unsigned number; zeros past the end.
    mutating func bits(_ count: Int) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<count {
            let byte = position / 8 < bytes.count ? bytes[position / 8] : 0
            value = value << 1 | UInt32((byte >> (7 - UInt8(position % 8))) & 1)
            position += 1
        }
        return value
    }

    /// An unsigned Exp-Golomb code, `ue(v)`; `nil` for a code longer than 31 bits.
    mutating func unsigned() -> UInt32? {
        var zeros = 0
        while bits(1) == 0 {
            zeros += 1
            guard zeros < 32, hasMore else { return nil }
        }
        return (UInt32(1) << UInt32(zeros)) - 1 + bits(zeros)
    }

    /// A signed Exp-Golomb code, `se(v)`.
    mutating func signed() -> Int32? {
        guard let code = unsigned() else { return nil }
        return code % 2 == 1 ? Int32((code + 1) / 2) : -Int32(code / 2)
    }
}
