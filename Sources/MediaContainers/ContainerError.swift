/// Why media bytes could not be read or remuxed, and where: the segment and the byte offset.
public struct ContainerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong.
    public enum Kind: Hashable, Sendable {
        /// The bytes are not media of any format this module reads (an HTML page, JSON, text):
        /// `found` describes what they look like.
        case notMedia(found: String)
        /// A transport stream packet does not start with the sync byte 0x47 (ISO/IEC 13818-1
        /// §2.4.3.2): the stream lost sync or is not MPEG-TS.
        case lostSync(found: UInt8)
        /// The data ends inside a 188-byte packet.
        case truncatedPacket(bytes: Int)
        /// A packet's adaptation field is longer than the packet.
        case malformedAdaptationField(length: Int)
        /// A packet of this PID skipped continuity counter values: packets were lost.
        case continuityError(pid: UInt16, expected: UInt8, found: UInt8)
        /// A program table (PAT or PMT) is malformed; the reason says how.
        case malformedTable(reason: String)
        /// A PES packet does not start with the start code prefix 0x000001, or its header
        /// overruns it.
        case malformedPES(pid: UInt16, reason: String)
        /// A PES packet carries more bytes than its header declares.
        case pesLongerThanDeclared(pid: UInt16, declared: Int, found: Int)
        /// A unit (a PES packet, a table section, a box, a parameter set) is larger than the
        /// `limit` in bytes that this module accepts; `what` names it.
        case tooLarge(what: String, bytes: Int, limit: Int)
        /// An ADTS frame header is malformed (ISO/IEC 14496-3 §1.A.2); the reason says how.
        case malformedADTS(reason: String)
        /// An audio frame of `codec` is malformed (a bad header, a reserved value, a frame cut
        /// short); the reason says how.
        case malformedAudio(codec: MediaCodec, reason: String)
        /// A video stream's parameter sets or access units cannot be read; the reason says how.
        case malformedVideo(reason: String)
        /// An ISO base media file box (fragmented MP4) is malformed; `box` is its type.
        case malformedBox(box: String, reason: String)
        /// A fragmented MP4 segment arrived without the initialisation section its tracks are
        /// described in.
        case missingInitialization
        /// The stream's audio changed its format (sample rate, channels or profile) mid-stream,
        /// in a way one audio track cannot hold.
        case audioFormatChanged(from: String, to: String)
        /// The segments hold no audio or video this module can write.
        case noSupportedMedia
        /// A transport stream declares a stream in a codec that cannot be written into MP4
        /// (MPEG-2 video, LATM AAC…): the whole stream would be lost, so nothing is written.
        case unsupportedCodec(StreamType)
        /// A fragmented MP4 track is in a format that cannot be written (its sample entry's
        /// four-character code).
        case unsupportedFormat(String)
        /// The stream is encrypted sample by sample (`method`: SAMPLE-AES, CENC…), which this
        /// module cannot read.
        case encrypted(method: String)
        /// An ID3 tag (RFC 8216 §3.4's packed audio timestamp) is malformed.
        case malformedID3(reason: String)
        /// A WebVTT document (W3C WebVTT, as RFC 8216 §3.5 segments it) is malformed: `line` is
        /// its line number, from 1.
        case malformedWebVTT(line: Int, reason: String)
        /// A timestamp, duration or offset is out of the range a track can hold.
        case timestampOutOfRange(reason: String)
        /// A track's timestamps step back by `seconds` (more than a second) where no
        /// discontinuity is declared: the segments restart their clock without the
        /// `EXT-X-DISCONTINUITY` (RFC 8216 §4.3.2.3) that would place them after what came before,
        /// so they cannot be put on one timeline without guessing.
        case timestampsStepBack(seconds: Double)
        /// A checkpoint does not belong to this output (another file, or damaged).
        case invalidCheckpoint(reason: String)
        /// The output file could not be written: the file system's message, and the `errno` it
        /// failed with when the system gave one (`ENOSPC` for a full disk).
        case writeFailed(reason: String, code: Int32? = nil)
    }

    /// What was wrong.
    public var kind: Kind
    /// The index of the segment (or input part) being read, when there are several.
    public var segment: Int?
    /// The byte offset of the problem within that segment.
    public var offset: Int?

    /// Creates an error.
    public init(_ kind: Kind, segment: Int? = nil, offset: Int? = nil) {
        self.kind = kind
        self.segment = segment
        self.offset = offset
    }

    /// A sentence naming the segment and offset.
    public var description: String {
        var place: [String] = []
        if let segment { place.append("segment \(segment)") }
        if let offset { place.append("byte \(offset)") }
        let prefix = place.isEmpty ? "" : place.joined(separator: ", ") + ": "
        let what =
            switch kind {
            case .notMedia(let found): "not media: \(found)"
            case .lostSync(let found): "lost sync: 0x\(String(found, radix: 16)) where a packet starts with 0x47"
            case .truncatedPacket(let bytes): "the data ends \(bytes) bytes into a 188-byte packet"
            case .malformedAdaptationField(let length): "an adaptation field of \(length) bytes overruns its packet"
            case .continuityError(let pid, let expected, let found):
                "PID \(pid): continuity counter \(found) where \(expected) was due: packets were lost"
            case .malformedTable(let reason): "malformed program table: \(reason)"
            case .malformedPES(let pid, let reason): "PID \(pid): malformed PES packet: \(reason)"
            case .pesLongerThanDeclared(let pid, let declared, let found):
                "PID \(pid): a PES packet of \(found) bytes where its header declares \(declared)"
            case .tooLarge(let what, let bytes, let limit): "\(what) of \(bytes) bytes is over the \(limit) accepted"
            case .malformedADTS(let reason): "malformed ADTS frame: \(reason)"
            case .malformedAudio(let codec, let reason): "malformed \(codec) frame: \(reason)"
            case .malformedVideo(let reason): "malformed video: \(reason)"
            case .malformedBox(let box, let reason): "malformed '\(box)' box: \(reason)"
            case .missingInitialization: "a fragmented MP4 segment without its initialisation section"
            case .audioFormatChanged(let from, let to): "the audio changed from \(from) to \(to)"
            case .noSupportedMedia: "no audio or video that can be written"
            case .unsupportedCodec(let type): "\(type) cannot be remuxed into MP4"
            case .unsupportedFormat(let format): "the '\(format)' sample format cannot be remuxed into MP4"
            case .encrypted(let method): "the samples are encrypted (\(method))"
            case .malformedID3(let reason): "malformed ID3 tag: \(reason)"
            case .malformedWebVTT(let line, let reason): "malformed WebVTT at line \(line): \(reason)"
            case .timestampOutOfRange(let reason): "a timestamp is out of range: \(reason)"
            case .timestampsStepBack(let seconds):
                "the timestamps step back \(Self.seconds(seconds)) s where no discontinuity is declared"
            case .invalidCheckpoint(let reason): "the checkpoint cannot be used: \(reason)"
            case .writeFailed(let reason, _): "the file could not be written: \(reason)"
            }
        return prefix + what
    }

    /// `value` with at most three decimals (as Swift writes a `Double` when it is not finite or
    /// past 2⁵³, where a whole number would not fit an `Int`).
    static func seconds(_ value: Double) -> String {
        let rounded = (value * 1_000).rounded() / 1_000
        guard rounded.isFinite, rounded.magnitude < 9_007_199_254_740_992 else { return String(value) }
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
}
