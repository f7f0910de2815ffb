import Foundation

/// Builds the sample entry boxes of an MP4 sample description box (`stsd`, ISO/IEC 14496-12
/// §8.5.2).
enum SampleEntries {
    /// An `AudioSampleEntry` (§12.2.3) of `format` with `children` (already built boxes) after
    /// its fields.
    static func audio(format: String, channelCount: Int, sampleRate: Int, children: [UInt8]) -> Data {
        var box = BoxWriter()
        box.begin(format)
        box.appendZeros(6)
        box.append16(1)  // data reference index
        box.appendZeros(8)  // reserved (version 0)
        box.append16(UInt16(clamping: channelCount))
        box.append16(16)  // sample size
        box.append16(0)  // pre-defined
        box.append16(0)  // reserved
        // 16.16 fixed point; a rate above 65,535 Hz cannot be written here, and 0 says so.
        box.append32(sampleRate > 0 && sampleRate <= 0xFFFF ? UInt32(sampleRate) << 16 : 0)
        box.append(children)
        box.end()
        return Data(box.bytes)
    }

    /// An `mp4a` entry with its `esds` (ISO/IEC 14496-14 §5.6): `objectTypeIndication` 0x40
    /// (MPEG-4 audio, with its AudioSpecificConfig as decoder-specific information), 0x6B
    /// (MPEG-1 audio) or 0x69 (MPEG-2 audio, neither with decoder-specific information).
    static func mpeg4Audio(
        channelCount: Int, sampleRate: Int, objectTypeIndication: UInt8, decoderSpecificInfo: [UInt8],
        bitrate: UInt32 = 0
    ) -> Data {
        var esds = BoxWriter()
        esds.beginFull("esds")
        var decoderConfig: [UInt8] = [objectTypeIndication, 0x15]  // audio stream, upstream 0, reserved 1
        decoderConfig += [0, 0x18, 0]  // buffer size: 6,144 bytes, an AAC frame's maximum
        for value in [bitrate, bitrate] {
            decoderConfig += [
                UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF),
            ]
        }
        if !decoderSpecificInfo.isEmpty {
            var specific = BoxWriter()
            specific.appendDescriptor(tag: 0x05, decoderSpecificInfo)
            decoderConfig += specific.bytes
        }
        var esContent: [UInt8] = [0, 0, 0]  // ES ID 0, no flags
        var config = BoxWriter()
        config.appendDescriptor(tag: 0x04, decoderConfig)
        esContent += config.bytes
        var sl = BoxWriter()
        sl.appendDescriptor(tag: 0x06, [0x02])
        esContent += sl.bytes
        esds.appendDescriptor(tag: 0x03, esContent)
        esds.end()
        return audio(format: "mp4a", channelCount: channelCount, sampleRate: sampleRate, children: esds.bytes)
    }

    /// A `VisualSampleEntry` (§12.1.3) of `format` (`avc1`, `hvc1`) holding `configuration` in
    /// a box of type `configurationType` (`avcC`, `hvcC`).
    static func visual(
        format: String, width: Int, height: Int, configurationType: String, configuration: [UInt8]
    ) -> Data {
        var box = BoxWriter()
        box.begin(format)
        box.appendZeros(6)
        box.append16(1)  // data reference index
        box.appendZeros(16)  // pre-defined and reserved
        box.append16(UInt16(clamping: width))
        box.append16(UInt16(clamping: height))
        box.append32(0x0048_0000)  // 72 dpi
        box.append32(0x0048_0000)
        box.append32(0)
        box.append16(1)  // frame count
        box.appendZeros(32)  // compressor name
        box.append16(0x0018)  // depth
        box.append16(0xFFFF)  // pre-defined: -1
        box.begin(configurationType)
        box.append(configuration)
        box.end()
        box.end()
        return Data(box.bytes)
    }
}
