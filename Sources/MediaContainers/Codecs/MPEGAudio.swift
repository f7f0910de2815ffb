import Foundation

/// The header of an MPEG-1, MPEG-2 or MPEG-2.5 audio frame (ISO/IEC 11172-3 §2.4.2.3,
/// ISO/IEC 13818-3), as far as a muxer needs it: the frame's length, its samples, and the
/// stream's rate and channels.
///
/// The 11-bit sync and a layer field that is not `00` tell it from an ADTS header, whose layer is
/// always `00`.
struct MPEGAudioHeader: Hashable, Sendable {
    /// 1 for MPEG-1, 2 for MPEG-2, 25 for MPEG-2.5.
    var version: Int
    /// 1, 2 or 3.
    var layer: Int
    /// The sample rate in hertz.
    var sampleRate: Int
    /// The number of channels (1 for single channel, 2 otherwise).
    var channelCount: Int
    /// The frame's length in bytes, header included.
    var frameLength: Int
    /// The audio samples per channel in the frame.
    var samplesPerFrame: Int

    private static let rates: [[Int]] = [
        [44_100, 48_000, 32_000], [22_050, 24_000, 16_000], [11_025, 12_000, 8_000],
    ]
    /// Bit rates in kbit/s by bit rate index 1…14, for MPEG-1 layers I, II, III, then MPEG-2/2.5
    /// layer I, then layers II and III.
    private static let bitRates: [[Int]] = [
        [32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
        [32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
        [32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
        [32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
        [8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
    ]

    /// Reads the header of the four bytes at `index`, or `nil` when they are not an MPEG audio
    /// header this muxer can write (no sync, a reserved version, layer, rate or bit rate, or a
    /// free-format bit rate).
    static func read(_ bytes: UnsafeRawBufferPointer, at index: Int) -> MPEGAudioHeader? {
        guard bytes.count - index >= 4, bytes[index] == 0xFF, bytes[index + 1] & 0xE0 == 0xE0 else { return nil }
        let versionBits = (bytes[index + 1] >> 3) & 0x03
        let layerBits = (bytes[index + 1] >> 1) & 0x03
        let bitRateIndex = Int(bytes[index + 2] >> 4)
        let rateIndex = Int((bytes[index + 2] >> 2) & 0x03)
        let padding = Int((bytes[index + 2] >> 1) & 0x01)
        let mode = (bytes[index + 3] >> 6) & 0x03
        guard versionBits != 1, layerBits != 0, rateIndex != 3, bitRateIndex != 0, bitRateIndex != 15 else {
            return nil
        }
        let version = versionBits == 3 ? 1 : versionBits == 2 ? 2 : 25
        let layer = 4 - Int(layerBits)
        let sampleRate = rates[version == 1 ? 0 : version == 2 ? 1 : 2][rateIndex]
        let table = version == 1 ? layer - 1 : layer == 1 ? 3 : 4
        let bitRate = bitRates[table][bitRateIndex - 1] * 1_000
        let samples = layer == 1 ? 384 : (layer == 3 && version != 1) ? 576 : 1_152
        let length =
            layer == 1 ? (12 * bitRate / sampleRate + padding) * 4 : samples / 8 * bitRate / sampleRate + padding
        guard length > 4 else { return nil }
        return MPEGAudioHeader(
            version: version, layer: layer, sampleRate: sampleRate, channelCount: mode == 3 ? 1 : 2,
            frameLength: length, samplesPerFrame: samples)
    }

    /// The MP4 sample description: an `mp4a` entry with object type 0x6B (MPEG-1 audio) or 0x69
    /// (MPEG-2 and 2.5 audio), timed at the sample rate (ISO/IEC 14496-1 Table 5).
    var sampleDescription: SampleDescription {
        SampleDescription(
            kind: .audio, codec: .mp3,
            sampleEntry: SampleEntries.mpeg4Audio(
                channelCount: channelCount, sampleRate: sampleRate, objectTypeIndication: version == 1 ? 0x6B : 0x69,
                decoderSpecificInfo: []),
            timescale: sampleRate, sampleRate: sampleRate, channelCount: channelCount,
            frameDuration: samplesPerFrame)
    }
}
