/// Why media bytes could not be demuxed or remuxed, and where: the segment and the byte offset.
public struct ContainerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong.
    public enum Kind: Hashable, Sendable {
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
        /// A PES packet does not start with the start code prefix 0x000001.
        case malformedPES(pid: UInt16, reason: String)
        /// A PES packet carries more bytes than its header declares.
        case pesLongerThanDeclared(pid: UInt16, declared: Int, found: Int)
        /// An ADTS frame header is malformed (ISO/IEC 14496-3 §1.A.2); the reason says how.
        case malformedADTS(reason: String)
        /// The stream's audio changed its format (sample rate, channels or profile) mid-stream,
        /// which one audio track cannot hold.
        case audioFormatChanged(from: String, to: String)
        /// The stream holds no audio this remuxer supports (AAC in ADTS).
        case noSupportedAudio
        /// The stream's media is in a codec this remuxer cannot write into MP4 (MPEG-2 video,
        /// MPEG audio…): nothing of it could be kept.
        case unsupportedCodec(StreamType)
        /// An ID3 tag (RFC 8216 §3.4's packed audio timestamp) is malformed.
        case malformedID3(reason: String)
        /// The output file could not be written; the file system's message.
        case writeFailed(reason: String)
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
            case .lostSync(let found): "lost sync: 0x\(String(found, radix: 16)) where a packet starts with 0x47"
            case .truncatedPacket(let bytes): "the data ends \(bytes) bytes into a 188-byte packet"
            case .malformedAdaptationField(let length): "an adaptation field of \(length) bytes overruns its packet"
            case .continuityError(let pid, let expected, let found):
                "PID \(pid): continuity counter \(found) where \(expected) was due: packets were lost"
            case .malformedTable(let reason): "malformed program table: \(reason)"
            case .malformedPES(let pid, let reason): "PID \(pid): malformed PES packet: \(reason)"
            case .pesLongerThanDeclared(let pid, let declared, let found):
                "PID \(pid): a PES packet of \(found) bytes where its header declares \(declared)"
            case .malformedADTS(let reason): "malformed ADTS frame: \(reason)"
            case .audioFormatChanged(let from, let to): "the audio changed from \(from) to \(to)"
            case .noSupportedAudio: "no AAC audio in the stream"
            case .unsupportedCodec(let type): "\(type) cannot be remuxed into MP4"
            case .malformedID3(let reason): "malformed ID3 tag: \(reason)"
            case .writeFailed(let reason): "the file could not be written: \(reason)"
            }
        return prefix + what
    }
}
