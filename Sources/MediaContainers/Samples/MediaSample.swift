public import Foundation

/// What a stream carries.
public enum MediaKind: String, Sendable, Hashable, Codable, CustomStringConvertible {
    /// Pictures.
    case video
    /// Sound.
    case audio
    /// Timed text (subtitles).
    case text

    /// The kind's name.
    public var description: String { rawValue }
}

/// A coding format that MediaContainers reads from segments and writes into MP4.
public enum MediaCodec: String, Sendable, Hashable, Codable, CustomStringConvertible {
    /// H.264 / AVC (ISO/IEC 14496-10), written as `avc1` with its `avcC`.
    case h264
    /// H.265 / HEVC (ISO/IEC 23008-2), written as `hvc1` with its `hvcC`.
    case hevc
    /// MPEG-4 AAC in any profile (LC, HE-AAC, HE-AAC v2), written as `mp4a` with its
    /// AudioSpecificConfig.
    case aac
    /// MPEG-1 or MPEG-2 audio layer III, written as `mp4a` with object type 0x6B or 0x69.
    case mp3
    /// Dolby Digital (AC-3, ETSI TS 102 366), written as `ac-3` with its `dac3`.
    case ac3
    /// Dolby Digital Plus (E-AC-3, ETSI TS 102 366 Annex E), written as `ec-3` with its `dec3`.
    case eac3
    /// 3GPP timed text (ISO/IEC 14496-17 / 3GPP TS 26.245), written as `tx3g`.
    case timedText

    /// The codec's common name.
    public var description: String {
        switch self {
        case .h264: "H.264"
        case .hevc: "HEVC"
        case .aac: "AAC"
        case .mp3: "MP3"
        case .ac3: "AC-3"
        case .eac3: "E-AC-3"
        case .timedText: "3GPP timed text"
        }
    }
}

/// How the samples of a stream are coded: what one entry of an MP4 track's sample description
/// box (`stsd`) says, with the facts a muxer needs beside it.
///
/// Two descriptions are equal when their sample entries are byte for byte the same, so a stream
/// whose parameters change (new parameter sets, a new picture size, another sample rate) gets a
/// new entry in its track, and the samples after the change point to it.
public struct SampleDescription: Sendable, Hashable, Codable {
    /// What the stream carries.
    public var kind: MediaKind
    /// The coding format.
    public var codec: MediaCodec
    /// The whole sample entry box (size, four-character code, fields and child boxes), as it goes
    /// into `stsd`.
    public var sampleEntry: Data
    /// The units per second of the stream's timestamps: 90,000 for video from a transport
    /// stream, the sample rate for audio, the track's own for fragmented MP4.
    public var timescale: Int
    /// The picture's displayed width in pixels; 0 for sound and text.
    public var width: Int
    /// The picture's displayed height in pixels; 0 for sound and text.
    public var height: Int
    /// The sample rate in hertz (the rate the decoder outputs, for HE-AAC the doubled one); 0
    /// for pictures and text.
    public var sampleRate: Int
    /// The number of audio channels; 0 for pictures and text.
    public var channelCount: Int
    /// How long each sample lasts in ``timescale`` units, when the format fixes it (an audio
    /// frame: 1,024 samples of AAC, 1,536 of AC-3, 1,152 of MP3); `nil` otherwise.
    public var frameDuration: Int?

    /// Creates a description.
    public init(
        kind: MediaKind, codec: MediaCodec, sampleEntry: Data, timescale: Int, width: Int = 0, height: Int = 0,
        sampleRate: Int = 0, channelCount: Int = 0, frameDuration: Int? = nil
    ) {
        self.kind = kind
        self.codec = codec
        self.sampleEntry = sampleEntry
        self.timescale = max(1, timescale)
        self.width = width
        self.height = height
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.frameDuration = frameDuration
    }

    /// The sample entry's four-character code (`avc1`, `mp4a`, `ec-3`…).
    public var format: String {
        guard sampleEntry.count >= 8 else { return "????" }
        return String(decoding: sampleEntry[(sampleEntry.startIndex + 4)..<(sampleEntry.startIndex + 8)], as: UTF8.self)
    }

    /// `H.264 1280×720` or `AAC 48000 Hz, 2 channels`.
    public var summary: String {
        switch kind {
        case .video: "\(codec) \(width)×\(height)"
        case .audio: "\(codec) \(sampleRate) Hz, \(channelCount) channels"
        case .text: "\(codec)"
        }
    }
}

/// One coded sample (an access unit of video, a frame of audio, a cue of text) with its timing,
/// as a segment reader yields it and an MP4 track stores it.
public struct MediaSample: Sendable {
    /// Which stream of its segment the sample belongs to.
    public var stream: StreamSlot
    /// How the sample is coded.
    public var description: SampleDescription
    /// The sample's bytes as MP4 stores them (length-prefixed NAL units, a raw AAC frame, a
    /// whole AC-3 or MP3 frame).
    public var data: Data
    /// When the sample is decoded, in `description.timescale` units.
    public var decodeTime: Int64
    /// When the sample is shown or heard, in `description.timescale` units.
    public var presentationTime: Int64
    /// How long the sample lasts, when the source says (a fragment's run, an audio frame).
    public var duration: Int64?
    /// Whether decoding can start at this sample.
    public var isSync: Bool

    /// Creates a sample.
    public init(
        stream: StreamSlot, description: SampleDescription, data: Data, decodeTime: Int64, presentationTime: Int64,
        duration: Int64? = nil, isSync: Bool
    ) {
        self.stream = stream
        self.description = description
        self.data = data
        self.decodeTime = decodeTime
        self.presentationTime = presentationTime
        self.duration = duration
        self.isSync = isSync
    }
}

/// A stream's place in its segment: its kind and its rank among the streams of that kind, in
/// the order the segment declares them (the program map table, the initialisation section's
/// tracks).
///
/// Segments of one rendition keep their streams in the same ranks even when an encoder change
/// gives them other packet identifiers or track numbers, so a rank names the same track of the
/// output across the whole lesson.
public struct StreamSlot: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The kind of media.
    public var kind: MediaKind
    /// The rank among the segment's streams of that kind, from 0.
    public var rank: Int

    /// Creates a slot.
    public init(_ kind: MediaKind, rank: Int = 0) {
        self.kind = kind
        self.rank = rank
    }

    /// `video 0`, `audio 1`.
    public var description: String { "\(kind) \(rank)" }
}
