public import Foundation

/// The format of an AAC stream, as an ADTS header states it (ISO/IEC 14496-3 §1.A.2.2).
///
/// An HE-AAC or HE-AAC v2 stream in ADTS says "AAC LC at the core rate" (implicit signalling,
/// §1.6.5.2): a decoder finds the SBR and PS data in the frames themselves, and so does a player
/// of the MP4 this format describes.
public struct AACFormat: Hashable, Sendable, CustomStringConvertible {
    /// The audio object type (2 is AAC LC).
    public var objectType: UInt8
    /// The sampling frequency index (Table 1.18).
    public var frequencyIndex: UInt8
    /// The channel configuration (1 mono, 2 stereo…).
    public var channelConfiguration: UInt8

    /// Creates a format.
    public init(objectType: UInt8, frequencyIndex: UInt8, channelConfiguration: UInt8) {
        self.objectType = objectType
        self.frequencyIndex = frequencyIndex
        self.channelConfiguration = channelConfiguration
    }

    /// The sampling frequencies of Table 1.18, by index.
    static let frequencies: [Int] = [
        96_000, 88_200, 64_000, 48_000, 44_100, 32_000, 24_000, 22_050, 16_000, 12_000, 11_025, 8_000, 7_350,
    ]

    /// The sample rate in hertz.
    public var sampleRate: Int {
        Int(frequencyIndex) < Self.frequencies.count ? Self.frequencies[Int(frequencyIndex)] : 0
    }

    /// The number of channels (configuration 7 is 7.1, eight channels).
    public var channelCount: Int {
        channelConfiguration == 7 ? 8 : Int(channelConfiguration)
    }

    /// The two-byte AudioSpecificConfig (§1.6.2.1) that an MP4 `esds` carries: object type,
    /// frequency index and channel configuration, then three zero flags.
    public var audioSpecificConfig: Data {
        let bits =
            UInt16(objectType & 0x1F) << 11 | UInt16(frequencyIndex & 0x0F) << 7
            | UInt16(channelConfiguration & 0x0F) << 3
        return Data([UInt8(bits >> 8), UInt8(bits & 0xFF)])
    }

    /// The MP4 sample description: an `mp4a` entry whose `esds` carries the
    /// AudioSpecificConfig (ISO/IEC 14496-14 §5.6), timed at the sample rate, 1,024 samples a
    /// frame.
    var sampleDescription: SampleDescription {
        SampleDescription(
            kind: .audio, codec: .aac,
            sampleEntry: SampleEntries.mpeg4Audio(
                channelCount: channelCount, sampleRate: sampleRate, objectTypeIndication: 0x40,
                decoderSpecificInfo: [UInt8](audioSpecificConfig)),
            timescale: sampleRate, sampleRate: sampleRate, channelCount: channelCount, frameDuration: 1_024)
    }

    /// `AAC object type 2, 44100 Hz, 2 channels`.
    public var description: String { "AAC object type \(objectType), \(sampleRate) Hz, \(channelCount) channels" }
}

/// One AAC frame of an ADTS stream: 1,024 samples of raw AAC, without its header.
public struct ADTSFrame: Hashable, Sendable {
    /// The stream's format, from the frame's header.
    public var format: AACFormat
    /// The raw AAC data block.
    public var payload: Data
}

/// Reads ADTS frames (ISO/IEC 14496-3 §1.A.2) from bytes that arrive in pieces of any size.
///
/// Each frame starts with the 12-bit syncword 0xFFF and states its length, so frames are read
/// one after another; a frame split across two pieces waits for the rest. The header's layer
/// field is always `00` in ADTS: a header with another layer is an MPEG audio frame (MP3), never
/// read as AAC.
///
/// - Complexity: O(*n*) in the bytes fed.
public struct ADTSReader: Sendable {
    private var driver = ByteStreamDriver(ADTSFrameDecoder())

    /// Creates a reader.
    public init() {}

    /// Feeds bytes and returns the frames they completed.
    ///
    /// - Throws: ``ContainerError/Kind/malformedADTS(reason:)`` with the offset of the frame, for
    ///   a missing syncword, a layer other than `00`, a reserved sampling frequency, a frame
    ///   shorter than its header, or a frame of several raw data blocks.
    public mutating func append(_ data: Data) throws(ContainerError) -> [ADTSFrame] {
        var frames: [ADTSFrame] = []
        try driver.feed(data) { frame throws(ContainerError) in frames.append(frame) }
        return frames
    }

    /// The bytes fed but not yet read as a frame (a frame still incomplete).
    public var pendingByteCount: Int { driver.pendingByteCount }

    /// The header facts of the ADTS frame at `index` of `bytes`: its format, its whole length and
    /// its header's length; `nil` when fewer than 7 bytes remain.
    ///
    /// - Throws: ``ContainerError/Kind/malformedADTS(reason:)`` for a header that is not ADTS.
    static func header(in bytes: UnsafeRawBufferPointer, at index: Int, offset: Int) throws(ContainerError) -> (
        format: AACFormat, length: Int, headerLength: Int
    )? {
        guard bytes.count - index >= 7 else { return nil }
        guard bytes[index] == 0xFF, bytes[index + 1] & 0xF0 == 0xF0 else {
            throw ContainerError(.malformedADTS(reason: "no syncword"), offset: offset + index)
        }
        let layer = (bytes[index + 1] >> 1) & 0x03
        guard layer == 0 else {
            throw ContainerError(
                .malformedADTS(reason: "layer \(layer), not 0: an MPEG audio frame, not AAC"), offset: offset + index)
        }
        let protectionAbsent = bytes[index + 1] & 0x01 != 0
        let profile = (bytes[index + 2] >> 6) & 0x03
        let frequency = (bytes[index + 2] >> 2) & 0x0F
        let channels = (bytes[index + 2] & 0x01) << 2 | (bytes[index + 3] >> 6) & 0x03
        let length = Int(bytes[index + 3] & 0x03) << 11 | Int(bytes[index + 4]) << 3 | Int(bytes[index + 5] >> 5)
        let blocks = Int(bytes[index + 6] & 0x03) + 1
        let headerLength = protectionAbsent ? 7 : 9
        guard frequency < 13 else {
            throw ContainerError(
                .malformedADTS(reason: "reserved sampling frequency index \(frequency)"), offset: offset + index)
        }
        guard length > headerLength else {
            throw ContainerError(
                .malformedADTS(reason: "a frame of \(length) bytes, shorter than its header"), offset: offset + index)
        }
        guard blocks == 1 else {
            throw ContainerError(
                .malformedADTS(reason: "\(blocks) raw data blocks in one frame are not supported"),
                offset: offset + index)
        }
        let format = AACFormat(objectType: profile + 1, frequencyIndex: frequency, channelConfiguration: channels)
        return (format, length, headerLength)
    }
}

/// The ``ByteStreamDecoder`` of ADTS frames: a frame is whole when its header's length is there.
/// An ID3 tag where a frame should start stops reading.
struct ADTSFrameDecoder: ByteStreamDecoder, Sendable {
    mutating func decode(_ cursor: inout ByteCursor, _ emit: (ADTSFrame) throws(ContainerError) -> Void)
        throws(ContainerError)
    {
        while cursor.remaining >= 7 {
            if cursor[ahead: 0] == 0x49, cursor[ahead: 1] == 0x44, cursor[ahead: 2] == 0x33 { return }
            guard let header = try ADTSReader.header(in: cursor.bytes, at: cursor.position, offset: cursor.base),
                cursor.remaining >= header.length
            else { return }
            let payload = cursor.peek(header.length).dropFirst(header.headerLength)
            try emit(ADTSFrame(format: header.format, payload: Data(payload)))
            cursor.position += header.length
        }
    }

    /// ADTS has no end marker: the last bytes are read as any others, and an incomplete frame
    /// stays unread.
    mutating func decodeLast(_ cursor: inout ByteCursor, _ emit: (ADTSFrame) throws(ContainerError) -> Void)
        throws(ContainerError)
    {
        try decode(&cursor, emit)
    }

    func unitLength(at cursor: ByteCursor) -> Int? {
        (try? ADTSReader.header(in: cursor.bytes, at: cursor.position, offset: cursor.base))?.length
    }
}
