public import Foundation

/// An elementary stream type from a program map table (ISO/IEC 13818-1 Table 2-34), with the
/// private types HLS uses.
public struct StreamType: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The `stream_type` byte.
    public var rawValue: UInt8

    /// Creates a stream type from its byte.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// MPEG-1 audio (0x03).
    public static let mpeg1Audio = StreamType(rawValue: 0x03)
    /// MPEG-2 audio (0x04).
    public static let mpeg2Audio = StreamType(rawValue: 0x04)
    /// PES packets with private data (0x06): AC-3 or E-AC-3 when a descriptor says so (DVB).
    public static let privateData = StreamType(rawValue: 0x06)
    /// AAC audio in ADTS frames (0x0F, ISO/IEC 13818-7).
    public static let adtsAAC = StreamType(rawValue: 0x0F)
    /// AAC audio in LATM (0x11), which MP4 remuxing does not take.
    public static let latmAAC = StreamType(rawValue: 0x11)
    /// Timed metadata in ID3 tags (0x15, Apple's HLS timed metadata).
    public static let metadata = StreamType(rawValue: 0x15)
    /// H.264 / AVC video (0x1B).
    public static let h264 = StreamType(rawValue: 0x1B)
    /// H.265 / HEVC video (0x24).
    public static let hevc = StreamType(rawValue: 0x24)
    /// AC-3 audio (0x81, ATSC A/52).
    public static let ac3 = StreamType(rawValue: 0x81)
    /// E-AC-3 audio (0x87, ATSC A/52).
    public static let eac3 = StreamType(rawValue: 0x87)
    /// SCTE-35 splice information (0x86).
    public static let scte35 = StreamType(rawValue: 0x86)

    /// The type's name, or its byte in hexadecimal.
    public var description: String {
        switch rawValue {
        case 0x01: "MPEG-1 video"
        case 0x02: "MPEG-2 video"
        case 0x03: "MPEG-1 audio"
        case 0x04: "MPEG-2 audio"
        case 0x06: "private data"
        case 0x0F: "AAC (ADTS)"
        case 0x10: "MPEG-4 video"
        case 0x11: "AAC (LATM)"
        case 0x15: "ID3 timed metadata"
        case 0x1B: "H.264"
        case 0x24: "HEVC"
        case 0x81: "AC-3"
        case 0x86: "SCTE-35"
        case 0x87: "E-AC-3"
        case 0xDB: "SAMPLE-AES H.264"
        case 0xCF: "SAMPLE-AES AAC"
        case 0xC1: "SAMPLE-AES AC-3"
        case 0xC2: "SAMPLE-AES E-AC-3"
        default: "stream type 0x\(String(rawValue, radix: 16))"
        }
    }
}

/// An elementary stream as a program map table declares it, and what it carries.
public struct DeclaredStream: Hashable, Sendable, Codable {
    /// What a declared stream carries, as far as MP4 remuxing goes.
    public enum Content: Hashable, Sendable, Codable {
        /// Media in a codec MP4 remuxing writes.
        case media(MediaKind, MediaCodec)
        /// Data that is not audio or video (timed metadata, splice information, private data of
        /// stream type 0x06 that no descriptor names as audio or video): not part of the lesson's
        /// picture or sound, and left out.
        case data
        /// Media in a codec MP4 remuxing cannot write.
        case unsupported
        /// Media encrypted sample by sample (SAMPLE-AES), by this method.
        case encrypted(String)
    }

    /// The packet identifier.
    public var pid: UInt16
    /// The stream type byte.
    public var streamType: StreamType
    /// What it carries.
    public var content: Content
    /// Its language, from an ISO 639 language descriptor, when it has one.
    public var language: String?

    /// Creates a declared stream.
    public init(pid: UInt16, streamType: StreamType, content: Content, language: String? = nil) {
        self.pid = pid
        self.streamType = streamType
        self.content = content
        self.language = language
    }

    /// The Dolby codec private data or a user-private stream declares: E-AC-3 or AC-3 by the
    /// DVB descriptors (0x7A, 0x6A), the ATSC ones (0xCC, 0x81) or a registration descriptor
    /// (`EAC3`, `AC-3`); `nil` when none says.
    static func dolbyAudio(descriptors: [(tag: UInt8, body: [UInt8])], registration: String?) -> MediaCodec? {
        if registration == "EAC3" || descriptors.contains(where: { $0.tag == 0x7A || $0.tag == 0xCC }) { return .eac3 }
        if registration == "AC-3" || descriptors.contains(where: { $0.tag == 0x6A || $0.tag == 0x81 }) { return .ac3 }
        return nil
    }

    /// What a stream of `type` with these descriptors carries.
    static func content(of type: StreamType, descriptors: [(tag: UInt8, body: [UInt8])]) -> Content {
        let registration = descriptors.first { $0.tag == 0x05 }.map {
            String(decoding: $0.body.prefix(4), as: UTF8.self)
        }
        switch type.rawValue {
        case 0x1B: return .media(.video, .h264)
        case 0x24: return .media(.video, .hevc)
        case 0x0F: return .media(.audio, .aac)
        case 0x03, 0x04: return .media(.audio, .mp3)
        case 0x81: return .media(.audio, .ac3)
        case 0x87: return .media(.audio, .eac3)
        case 0x06:
            if let codec = dolbyAudio(descriptors: descriptors, registration: registration) {
                return .media(.audio, codec)
            }
            if registration == "HEVC" { return .media(.video, .hevc) }
            // Audio this module cannot write, declared in private data (ETSI EN 300 468 DTS and
            // extension descriptors: AC-4, DTS-HD, DTS-UHD; registrations for DTS and Opus): a
            // typed refusal, never a silent drop.
            if descriptors.contains(where: { $0.tag == 0x7B || $0.tag == 0x73 })
                || descriptors.contains(where: { $0.tag == 0x7F && [0x0E, 0x15, 0x21].contains($0.body.first ?? 0) })
                || ["DTS1", "DTS2", "DTS3", "Opus", "AC-4", "BSSD"].contains(registration ?? "")
            {
                return .unsupported
            }
            return .data
        case 0x80:
            // User private: Blu-ray's LPCM, ATSC's DigiCipher II video, or AC-3 whose registration
            // or AC-3 descriptor names it (ATSC A/52 Annex A) where an encoder wrote 0x80 for 0x81.
            return dolbyAudio(descriptors: descriptors, registration: registration).map { .media(.audio, $0) }
                ?? .unsupported
        case 0xDB, 0xCF, 0xC1, 0xC2: return .encrypted("SAMPLE-AES")
        // Video and audio this module cannot write: MPEG-1/2 and MPEG-4 part 2 video, LATM and
        // raw MPEG-4 audio, SVC/MVC, JPEG 2000, MPEG-H 3D audio, VVC, AVS, VC-1, and the
        // ATSC/Blu-ray audio types (LPCM, DTS, TrueHD, DTS-HD, secondary E-AC-3 and DTS).
        case 0x01, 0x02, 0x10, 0x11, 0x1C, 0x1E, 0x1F, 0x20, 0x21, 0x2D, 0x2E, 0x33, 0x42, 0xD1, 0xEA, 0x82,
            0x83, 0x84, 0x85, 0x8A, 0xA1, 0xA2:
            return .unsupported
        default: return .data
        }
    }
}

/// One reassembled PES packet of an elementary stream, with its timestamps.
public struct ElementaryStreamPacket: Hashable, Sendable {
    /// The packet identifier of the stream.
    public var pid: UInt16
    /// The stream's type, from the program map table.
    public var streamType: StreamType
    /// The presentation time in 90 kHz ticks, unwrapped past the 33-bit field's wraparound, so it
    /// keeps increasing across a long stream; `nil` when the packet has none.
    public var presentationTime: Int64?
    /// The decode time in 90 kHz ticks, unwrapped; the presentation time when the packet gives
    /// only that, `nil` when it has neither.
    public var decodeTime: Int64?
    /// The PES payload: the elementary stream's bytes (ADTS frames, Annex B NAL units…).
    public var payload: Data
}

/// The transport packet decoder under ``TransportStreamDemuxer``: it reads one 188-byte packet
/// at a time from the front of the stream (a ``ByteStreamDecoder``), tables and PES headers
/// included, and emits each completed PES packet, its payload borrowed for the call.
struct TransportPacketDecoder: ByteStreamDecoder, Sendable {
    /// The size of a transport packet.
    static let packetSize = 188
    /// The longest PES packet reassembled: 32 MiB, far above any real access unit.
    static let maximumPESLength = 32 << 20
    /// The longest program table section (§2.4.4.11: section_length is at most 1,021).
    static let maximumSectionLength = 1_024

    /// The elementary streams of the program in the order the last PMT declares them.
    private(set) var declaredStreams: [DeclaredStream] = [] {
        didSet { indexStreams() }
    }
    /// How many PMTs have been read.
    private(set) var tableVersion = 0
    /// For each of the 8,192 PIDs, the index of its media stream in ``declaredStreams``, or -1:
    /// an array, not a dictionary, since it is asked for every packet.
    private var slots = [Int16](repeating: -1, count: 8_192)
    /// Each PID's last continuity counter, or 0xFF before its first packet.
    private var counters = [UInt8](repeating: 0xFF, count: 8_192)

    private var segment: Int?
    private var segmentOffset = 0
    private var pmtPID: UInt16?
    private var sections: [UInt16: [UInt8]] = [:]
    /// The PES packet being reassembled for each stream of ``declaredStreams``, by index.
    private var pending: [PendingPES] = []
    private var lastTimes: [UInt16: Int64] = [:]

    /// A PES packet being reassembled.
    private struct PendingPES: Sendable {
        var bytes: [UInt8]
        var offset: Int
    }

    /// Creates a decoder at the start of a stream.
    init() {}

    /// Points each media stream's PID at its index and gives it an empty PES packet.
    private mutating func indexStreams() {
        slots = [Int16](repeating: -1, count: 8_192)
        pending = declaredStreams.map { _ in PendingPES(bytes: [], offset: 0) }
        for (index, stream) in declaredStreams.enumerated() where slots[Int(stream.pid)] < 0 {
            if case .media = stream.content { slots[Int(stream.pid)] = Int16(index) }
        }
    }

    /// Creates a decoder that starts from the program map table and timestamps of an earlier
    /// segment (a segment without a PAT and PMT of its own uses the last ones seen).
    init(continuing previous: TransportStreamContext) {
        pmtPID = previous.pmtPID
        declaredStreams = previous.streams
        tableVersion = previous.streams.isEmpty ? 0 : 1
        // Property observers do not run in an initializer.
        indexStreams()
        for (pid, time) in previous.lastTimes { lastTimes[pid] = time }
    }

    /// What a later segment continues from.
    var context: TransportStreamContext {
        TransportStreamContext(pmtPID: pmtPID, streams: declaredStreams, lastTimes: lastTimes)
    }

    /// Marks the start of segment `index`: later errors name it, byte offsets count from its
    /// start, and continuity counters are checked afresh.
    mutating func startSegment(_ index: Int) {
        segment = index
        segmentOffset = 0
        counters = [UInt8](repeating: 0xFF, count: 8_192)
    }

    // MARK: The copy-free path

    /// A completed PES packet, its payload borrowed from the demuxer for the duration of a call.
    struct PESView {
        var pid: UInt16
        var stream: DeclaredStream
        /// The stream's index in ``declaredStreams``.
        var index: Int
        var presentationTime: Int64?
        var decodeTime: Int64?
        var payload: UnsafeRawBufferPointer
        /// The offset in the segment of the transport packet that started it.
        var offset: Int
        /// Every stream the table in force declares, and how many tables were read before it.
        var streams: [DeclaredStream]
        var tableVersion: Int
    }

    /// Decodes the whole transport packets at the front of `cursor`; each PES packet they
    /// complete goes to `emit`, its payload valid only during the call.
    ///
    /// - Throws: ``ContainerError`` naming the segment and byte offset.
    mutating func decode(_ cursor: inout ByteCursor, _ emit: (PESView) throws(ContainerError) -> Void)
        throws(ContainerError)
    {
        while cursor.remaining >= Self.packetSize {
            try handlePacket(cursor.peek(Self.packetSize), emit)
            cursor.position += Self.packetSize
        }
    }

    /// Decodes the last packets, then hands on the PES packets still being assembled.
    ///
    /// - Throws: ``ContainerError/Kind/truncatedPacket(bytes:)`` when the stream ends inside a
    ///   transport packet.
    mutating func decodeLast(_ cursor: inout ByteCursor, _ emit: (PESView) throws(ContainerError) -> Void)
        throws(ContainerError)
    {
        try decode(&cursor, emit)
        guard cursor.remaining == 0 else {
            throw ContainerError(.truncatedPacket(bytes: cursor.remaining), segment: segment, offset: segmentOffset)
        }
        for (slot, stream) in declaredStreams.enumerated() where slot < pending.count && !pending[slot].bytes.isEmpty {
            let finished = pending[slot]
            pending[slot].bytes = []
            try finishPES(finished, pid: stream.pid, emit)
        }
        sections = [:]
    }

    /// Every transport packet has 188 bytes.
    func unitLength(at cursor: ByteCursor) -> Int? { Self.packetSize }

    // MARK: Packets

    private mutating func handlePacket(
        _ packet: UnsafeRawBufferPointer, _ body: (PESView) throws(ContainerError) -> Void
    ) throws(ContainerError) {
        let offset = segmentOffset
        segmentOffset += Self.packetSize
        guard packet[0] == 0x47 else {
            throw ContainerError(.lostSync(found: packet[0]), segment: segment, offset: offset)
        }
        let payloadStart = packet[1] & 0x40 != 0
        let pid = UInt16(packet[1] & 0x1F) << 8 | UInt16(packet[2])
        let control = (packet[3] >> 4) & 0x03
        let counter = packet[3] & 0x0F
        var index = 4
        var discontinuity = false
        if control & 0x02 != 0 {
            let length = Int(packet[4])
            guard 5 + length <= Self.packetSize else {
                throw ContainerError(.malformedAdaptationField(length: length), segment: segment, offset: offset)
            }
            if length > 0 { discontinuity = packet[5] & 0x80 != 0 }
            index = 5 + length
        }
        guard control & 0x01 != 0, pid != 0x1FFF else { return }
        // Only the PIDs this demuxer reads are checked: an SDT or a stream left out may have
        // its counters reset by the muxer without harming the lesson.
        let isTable = pid == 0 || pid == pmtPID
        guard isTable || slots[Int(pid)] >= 0 else { return }
        // §2.4.3.3: the counter increases by one per packet with a payload; one duplicate may
        // be sent; a discontinuity indicator allows a jump.
        let previous = counters[Int(pid)]
        if previous != 0xFF, !discontinuity {
            if counter == previous { return }
            let expected = (previous + 1) & 0x0F
            guard counter == expected else {
                throw ContainerError(
                    .continuityError(pid: pid, expected: expected, found: counter), segment: segment, offset: offset)
            }
        }
        counters[Int(pid)] = counter
        let payload = UnsafeRawBufferPointer(rebasing: packet[index...])
        if isTable {
            try handleSection(payload, pid: pid, unitStart: payloadStart, offset: offset)
        } else if slots[Int(pid)] >= 0 {
            try handlePES(payload, pid: pid, unitStart: payloadStart, offset: offset, body)
        }
    }

    // MARK: Program tables

    private mutating func handleSection(
        _ payload: UnsafeRawBufferPointer, pid: UInt16, unitStart: Bool, offset: Int
    ) throws(ContainerError) {
        if unitStart {
            // §2.4.4.2: the pointer field says where the new section starts.
            guard let pointer = payload.first, 1 + Int(pointer) <= payload.count else {
                throw ContainerError(
                    .malformedTable(reason: "a pointer field past the packet"), segment: segment, offset: offset)
            }
            sections[pid] = Array(payload[(1 + Int(pointer))...])
        } else {
            guard sections[pid] != nil else { return }
            sections[pid]?.append(contentsOf: payload)
        }
        guard let section = sections[pid], !section.isEmpty else { return }
        // §2.4.4.1: stuffing bytes (0xFF) where a table_id would be end the section data.
        guard section[0] != 0xFF else {
            sections[pid] = nil
            return
        }
        guard section.count >= 3 else { return }
        let length = Int(section[1] & 0x0F) << 8 | Int(section[2])
        guard 3 + length <= Self.maximumSectionLength else {
            sections[pid] = nil
            throw ContainerError(
                .tooLarge(what: "a program table section", bytes: 3 + length, limit: Self.maximumSectionLength),
                segment: segment, offset: offset)
        }
        guard section.count >= 3 + length else { return }
        sections[pid] = nil
        let body = Array(section[0..<(3 + length)])
        if pid == 0 {
            try readPAT(body, offset: offset)
        } else {
            try readPMT(body, offset: offset)
        }
    }

    private mutating func readPAT(_ section: [UInt8], offset: Int) throws(ContainerError) {
        guard section[0] == 0x00, section.count >= 12 else {
            throw ContainerError(
                .malformedTable(reason: "not a program association table"), segment: segment, offset: offset)
        }
        // Header of 8 bytes, then 4 bytes per program, then the CRC.
        var index = 8
        while index + 4 <= section.count - 4 {
            let program = UInt16(section[index]) << 8 | UInt16(section[index + 1])
            let pid = UInt16(section[index + 2] & 0x1F) << 8 | UInt16(section[index + 3])
            index += 4
            // Program 0 is the network information table; the first other program is the one.
            if program != 0 {
                if pmtPID != pid {
                    pmtPID = pid
                    declaredStreams = []
                }
                return
            }
        }
    }

    private mutating func readPMT(_ section: [UInt8], offset: Int) throws(ContainerError) {
        guard section[0] == 0x02, section.count >= 16 else {
            throw ContainerError(.malformedTable(reason: "not a program map table"), segment: segment, offset: offset)
        }
        let infoLength = Int(section[10] & 0x0F) << 8 | Int(section[11])
        var index = 12 + infoLength
        let end = section.count - 4
        var found: [DeclaredStream] = []
        while index + 5 <= end {
            let type = StreamType(rawValue: section[index])
            let pid = UInt16(section[index + 1] & 0x1F) << 8 | UInt16(section[index + 2])
            let esInfo = Int(section[index + 3] & 0x0F) << 8 | Int(section[index + 4])
            guard index + 5 + esInfo <= end else { break }
            var descriptors: [(tag: UInt8, body: [UInt8])] = []
            var at = index + 5
            while at + 2 <= index + 5 + esInfo {
                let length = Int(section[at + 1])
                guard at + 2 + length <= index + 5 + esInfo else { break }
                descriptors.append((section[at], Array(section[(at + 2)..<(at + 2 + length)])))
                at += 2 + length
            }
            // ISO 639 language descriptor (§2.6.18): three letters.
            let language = descriptors.first { $0.tag == 0x0A && $0.body.count >= 3 }.map {
                String(decoding: $0.body.prefix(3), as: UTF8.self)
            }
            if !found.contains(where: { $0.pid == pid }) {
                found.append(
                    DeclaredStream(
                        pid: pid, streamType: type, content: DeclaredStream.content(of: type, descriptors: descriptors),
                        language: language?.allSatisfy({ $0.isLetter }) == true ? language : nil))
            }
            index += 5 + esInfo
        }
        guard index == end else {
            throw ContainerError(
                .malformedTable(reason: "the stream loop overruns the section"), segment: segment, offset: offset)
        }
        if found != declaredStreams {
            // A new table starts every stream afresh: a PES packet cut by it is incomplete.
            declaredStreams = found
        }
        tableVersion += 1
    }

    // MARK: PES

    private mutating func handlePES(
        _ payload: UnsafeRawBufferPointer, pid: UInt16, unitStart: Bool, offset: Int,
        _ body: (PESView) throws(ContainerError) -> Void
    ) throws(ContainerError) {
        let slot = Int(slots[Int(pid)])
        guard slot < pending.count else { return }
        if unitStart {
            if !pending[slot].bytes.isEmpty {
                var finished = pending[slot]
                pending[slot].bytes = []
                try finishPES(finished, pid: pid, body)
                // Reuse the finished packet's storage: PES packets of a stream are alike in size.
                finished.bytes.removeAll(keepingCapacity: true)
                pending[slot].bytes = finished.bytes
            }
            pending[slot].bytes.append(contentsOf: payload)
            pending[slot].offset = offset
        } else {
            // Data of a packet whose start was never seen (the stream began mid-packet) is not
            // part of any access unit: nothing can place it.
            let count = pending[slot].bytes.count
            guard count > 0 else { return }
            guard count + payload.count <= Self.maximumPESLength else {
                pending[slot].bytes = []
                throw ContainerError(
                    .tooLarge(
                        what: "PID \(pid): a PES packet", bytes: count + payload.count, limit: Self.maximumPESLength),
                    segment: segment, offset: offset)
            }
            pending[slot].bytes.append(contentsOf: payload)
        }
        let count = pending[slot].bytes.count
        guard count >= 6 else { return }
        let declared = Int(pending[slot].bytes[4]) << 8 | Int(pending[slot].bytes[5])
        // A declared length completes the packet as soon as its bytes are in.
        if declared > 0, count >= 6 + declared {
            var finished = pending[slot]
            pending[slot].bytes = []
            try finishPES(finished, pid: pid, body)
            // Emptied, not dropped: the next unit start reuses its storage.
            finished.bytes.removeAll(keepingCapacity: true)
            pending[slot].bytes = finished.bytes
        }
    }

    private mutating func finishPES(
        _ pes: PendingPES, pid: UInt16, _ body: (PESView) throws(ContainerError) -> Void
    ) throws(ContainerError) {
        let bytes = pes.bytes
        guard bytes.count >= 9, bytes[0] == 0, bytes[1] == 0, bytes[2] == 1 else {
            throw ContainerError(
                .malformedPES(pid: pid, reason: "no start code prefix 0x000001"), segment: segment, offset: pes.offset)
        }
        let declared = Int(bytes[4]) << 8 | Int(bytes[5])
        if declared > 0 {
            // Stuffing after the packet in its last transport packet is 0xFF; anything else is data
            // the header did not declare.
            guard bytes.count >= 6 + declared else {
                throw ContainerError(
                    .malformedPES(pid: pid, reason: "\(bytes.count - 6) bytes where \(declared) were declared"),
                    segment: segment, offset: pes.offset)
            }
            guard bytes[(6 + declared)...].allSatisfy({ $0 == 0xFF }) else {
                throw ContainerError(
                    .pesLongerThanDeclared(pid: pid, declared: declared, found: bytes.count - 6), segment: segment,
                    offset: pes.offset)
            }
        }
        let flags = bytes[7]
        let headerLength = Int(bytes[8])
        let payloadStart = 9 + headerLength
        let payloadEnd = declared > 0 ? 6 + declared : bytes.count
        guard payloadStart <= payloadEnd else {
            throw ContainerError(
                .malformedPES(pid: pid, reason: "a header of \(headerLength) bytes overruns the packet"),
                segment: segment, offset: pes.offset)
        }
        var pts: Int64?
        var dts: Int64?
        let timing = flags >> 6
        if timing & 0x02 != 0, headerLength >= 5 {
            pts = unwrap(Self.timestamp(bytes, at: 9), pid: pid)
        }
        if timing == 0x03, headerLength >= 10 {
            dts = unwrap(Self.timestamp(bytes, at: 14), pid: pid)
        }
        let slot = Int(slots[Int(pid)])
        guard slot >= 0, slot < declaredStreams.count else { return }
        try withBytes(of: bytes) { (raw) throws(ContainerError) in
            try body(
                PESView(
                    pid: pid, stream: declaredStreams[slot], index: slot, presentationTime: pts,
                    decodeTime: dts ?? pts,
                    payload: UnsafeRawBufferPointer(rebasing: raw[payloadStart..<payloadEnd]),
                    offset: pes.offset, streams: declaredStreams, tableVersion: tableVersion))
        }
    }

    /// A 33-bit PTS or DTS from its five bytes (§2.4.3.7).
    static func timestamp(_ bytes: [UInt8], at index: Int) -> Int64 {
        let high = Int64((bytes[index] >> 1) & 0x07) << 30
        let middle = Int64(bytes[index + 1]) << 22 | Int64(bytes[index + 2] >> 1) << 15
        let low = Int64(bytes[index + 3]) << 7 | Int64(bytes[index + 4] >> 1)
        return high | middle | low
    }

    /// The unwrapped value of a 33-bit timestamp: the one of `raw + k·2³³` nearest the stream's
    /// previous timestamp, so times keep increasing past the wrap (every 26.5 hours).
    private mutating func unwrap(_ raw: Int64, pid: UInt16) -> Int64 {
        let value = lastTimes[pid].map { unwrapped33(raw, near: $0) } ?? raw
        lastTimes[pid] = value
        return value
    }
}

/// What a transport stream segment leaves to the next one of the same timeline: the program map
/// table in force and each stream's last timestamp (for unwrapping).
struct TransportStreamContext: Sendable, Hashable, Codable {
    var pmtPID: UInt16?
    var streams: [DeclaredStream]
    var lastTimes: [UInt16: Int64]

    init(pmtPID: UInt16? = nil, streams: [DeclaredStream] = [], lastTimes: [UInt16: Int64] = [:]) {
        self.pmtPID = pmtPID
        self.streams = streams
        self.lastTimes = lastTimes
    }
}
