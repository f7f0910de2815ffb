import Foundation

/// Coded silence, for filling a gap in an audio track so that the sound after it stays where the
/// source places it.
enum SilentAudio {
    /// One AAC-LC raw data block that decodes to 1,024 samples of digital silence per channel, for
    /// channel configurations 1 to 6 (ISO/IEC 14496-3 §4.4.2): each channel element codes its one
    /// scale factor band with the zero codebook, so it has no spectral data and no sample rate of
    /// its own. The bytes were checked by decoding them with ffmpeg's AAC decoder: every sample is
    /// exactly zero.
    private static let lowComplexityFrames: [Int: [UInt8]] = [
        1: [0x00, 0xC8, 0x00, 0x80, 0x23, 0x80],
        2: [0x21, 0x00, 0x49, 0x90, 0x02, 0x19, 0x00, 0x23, 0x80],
        3: [0x00, 0xC8, 0x00, 0x80, 0x20, 0x84, 0x01, 0x26, 0x40, 0x08, 0x64, 0x00, 0x8E],
        4: [
            0x00, 0xC8, 0x00, 0x80, 0x20, 0x84, 0x01, 0x26, 0x40, 0x08, 0x64, 0x00, 0x80, 0x2C, 0x80, 0x08, 0x02, 0x38,
        ],
        5: [
            0x00, 0xC8, 0x00, 0x80, 0x20, 0x84, 0x01, 0x26, 0x40, 0x08, 0x64, 0x00, 0x82, 0x30, 0x04, 0x99, 0x00, 0x21,
            0x90, 0x02, 0x38,
        ],
        6: [
            0x00, 0xC8, 0x00, 0x80, 0x20, 0x84, 0x01, 0x26, 0x40, 0x08, 0x64, 0x00, 0x82, 0x30, 0x04, 0x99, 0x00, 0x21,
            0x90, 0x02, 0x00, 0xB2, 0x00, 0x20, 0x08, 0xE0,
        ],
    ]

    /// A silent frame for samples of `description`, to go before `next` (the frame after the
    /// gap), or `nil` when the codec or profile has none this module can make (AC-3 and E-AC-3
    /// code silence in frames this module does not write).
    static func frame(for description: SampleDescription, before next: Data) -> Data? {
        switch description.codec {
        case .aac: lowComplexityFrame(for: description)
        case .mp3: mpegAudioFrame(like: next)
        default: nil
        }
    }

    /// An MPEG audio frame of `next`'s version, layer, rate, bit rate and channel mode that
    /// decodes to silence: its header without CRC or padding (ISO/IEC 11172-3 §2.4.2.3), then
    /// zeros. Zeros are a layer I or II frame with no bits allocated to any subband, and a
    /// layer III frame whose side information gives every granule no main data (the bit
    /// reservoir's `main_data_begin` 0, `part2_3_length` 0), so no spectral value is coded.
    /// Checked by decoding with ffmpeg: after the previous frame's overlap, every sample is zero.
    /// A layer III frame after the silence that draws on the bit reservoir of the frames before
    /// the gap (a gap inside one encode) finds zeros there and decodes silent too, as a stream
    /// joined mid-encode does; after a discontinuity, the new encode starts with an empty
    /// reservoir.
    static func mpegAudioFrame(like next: Data) -> Data? {
        guard next.count >= 4 else { return nil }
        var header = [UInt8](next.prefix(4))
        header[1] |= 0x01  // protection_bit 1: no CRC follows
        header[2] &= ~0x02  // padding_bit 0
        guard let parsed = header.withUnsafeBytes({ MPEGAudioHeader.read($0, at: 0) }) else { return nil }
        return Data(header + [UInt8](repeating: 0, count: parsed.frameLength - 4))
    }

    /// An AAC-LC silent block for `description`'s channel configuration.
    private static func lowComplexityFrame(for description: SampleDescription) -> Data? {
        guard let config = audioSpecificConfig(in: description.sampleEntry), config.count >= 2 else { return nil }
        let objectType = config[0] >> 3
        let channels = Int((config[1] >> 3) & 0x0F)
        // AAC LC (object type 2). An HE-AAC stream signalled implicitly (ADTS) says LC too; a
        // frame without SBR data then decodes as silence at the core rate, which the decoder's
        // SBR tool upsamples like any other.
        guard objectType == 2, let bytes = lowComplexityFrames[channels] else { return nil }
        return Data(bytes)
    }

    /// The AudioSpecificConfig inside an `mp4a` entry's `esds`, found by its descriptor tag 0x05.
    static func audioSpecificConfig(in entry: Data) -> [UInt8]? {
        let bytes = [UInt8](entry)
        guard bytes.count > 36, String(decoding: bytes[4..<8], as: UTF8.self) == "mp4a" else { return nil }
        var index = 36
        while index + 8 <= bytes.count {
            let size =
                Int(bytes[index]) << 24 | Int(bytes[index + 1]) << 16 | Int(bytes[index + 2]) << 8
                | Int(bytes[index + 3])
            guard size >= 8, index + size <= bytes.count else { return nil }
            if String(decoding: bytes[(index + 4)..<(index + 8)], as: UTF8.self) == "esds" {
                var at = index + 12
                while at + 2 <= index + size {
                    let tag = bytes[at]
                    at += 1
                    var length = 0
                    for _ in 0..<4 {
                        guard at < bytes.count else { return nil }
                        let byte = bytes[at]
                        at += 1
                        length = length << 7 | Int(byte & 0x7F)
                        if byte & 0x80 == 0 { break }
                    }
                    switch tag {
                    case 0x03: at += 3  // ES_ID and flags (none set by this module's writer)
                    case 0x04: at += 13  // objectTypeIndication … avgBitrate
                    case 0x05:
                        guard at + length <= bytes.count else { return nil }
                        return Array(bytes[at..<(at + length)])
                    default: at += length
                    }
                }
                return nil
            }
            index += size
        }
        return nil
    }
}

/// Converts a time from one timescale to another, rounding to the nearest tick, without overflow
/// for any time a track can hold.
@inline(__always)
func rescale(_ value: Int64, from source: Int, to target: Int) -> Int64 {
    guard source != target, source > 0, target > 0 else { return value }
    if target % source == 0 {
        let (product, overflow) = value.multipliedReportingOverflow(by: Int64(target / source))
        if !overflow { return product }
    }
    if source % target == 0 {
        let divisor = Int64(source / target)
        let half = divisor / 2
        return value >= 0 ? (value + half) / divisor : -((-value + half) / divisor)
    }
    let wide = value.multipliedFullWidth(by: Int64(target))
    let divisor = Int64(source)
    // |value × target| < 2⁶³ × |source| keeps the quotient in range; a time of centuries does not.
    guard wide.high == 0 || wide.high == -1 || abs(wide.high) < divisor / 2 else {
        // Beyond any real lesson: clamped where later sums cannot overflow, so the timeline's
        // checks report it instead of a trap.
        let scaled = (Double(value) * Double(target) / Double(source)).rounded()
        let limit = Double(Int64.max / 4)
        guard scaled.isFinite else { return value < 0 ? -Int64.max / 4 : Int64.max / 4 }
        return Int64(min(max(scaled, -limit), limit))
    }
    let (quotient, remainder) = divisor.dividingFullWidth(wide)
    if remainder * 2 >= divisor { return quotient + 1 }
    if remainder * 2 <= -divisor { return quotient - 1 }
    return quotient
}
