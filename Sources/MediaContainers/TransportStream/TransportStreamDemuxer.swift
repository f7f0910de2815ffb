public import Foundation

/// An elementary stream type from a program map table (ISO/IEC 13818-1 Table 2-34).
public struct StreamType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
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
    /// AAC audio in ADTS frames (0x0F, ISO/IEC 13818-7).
    public static let adtsAAC = StreamType(rawValue: 0x0F)
    /// H.264 / AVC video (0x1B).
    public static let h264 = StreamType(rawValue: 0x1B)
    /// H.265 / HEVC video (0x24).
    public static let hevc = StreamType(rawValue: 0x24)

    /// Whether the demuxer reassembles this stream's packets (the types above); the others are
    /// skipped. (MPEG-1 and MPEG-2 audio are reassembled; the remuxers write AAC and H.264 or
    /// HEVC only, and name any other codec in a typed error.)
    public var isSupported: Bool {
        [Self.mpeg1Audio, .mpeg2Audio, .adtsAAC, .h264, .hevc].contains(self)
    }

    /// The type's name, or its byte in hexadecimal.
    public var description: String {
        switch self {
        case .mpeg1Audio: "MPEG-1 audio"
        case .mpeg2Audio: "MPEG-2 audio"
        case .adtsAAC: "AAC (ADTS)"
        case .h264: "H.264"
        case .hevc: "HEVC"
        default: "stream type 0x\(String(rawValue, radix: 16))"
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

/// Demultiplexes an MPEG transport stream (ISO/IEC 13818-1) into the PES packets of its audio and
/// video streams, incrementally: feed it bytes as they arrive, in parts of any size.
///
/// It reads the program association table (PAT) and the first program's map table (PMT),
/// reassembles PES packets across transport packets, skips adaptation fields (the PCR is not
/// needed to remux) and streams of unsupported types, checks each PID's continuity counter, and
/// unwraps the 33-bit PTS and DTS. Whatever the boundaries of the parts it is fed, it yields the
/// same packets.
///
/// An HLS download is a sequence of segments: call ``startSegment(_:)`` before each, so errors
/// name the segment and the continuity counters restart (segments are separate files). Segments
/// concatenated into one file can also be fed as one stream: a counter that restarts where a new
/// PES packet or table starts, with nothing of its PID half-assembled, is taken for a segment
/// boundary; a gap anywhere else is ``ContainerError/Kind/continuityError(pid:expected:found:)``.
///
/// - Complexity: O(*n*) in the bytes fed; memory holds one incomplete transport packet and one
///   incomplete PES packet per stream.
public struct TransportStreamDemuxer: Sendable {
    /// The size of a transport packet.
    static let packetSize = 188

    /// The elementary streams of the program, by PID, as the PMT declares them.
    public private(set) var streams: [UInt16: StreamType] = [:] {
        didSet {
            supported = [Bool](repeating: false, count: 8_192)
            for (pid, type) in streams where type.isSupported { supported[Int(pid)] = true }
        }
    }
    /// Whether each of the 8,192 PIDs is a supported stream: an array, not a dictionary, since
    /// it is asked for every packet.
    private var supported = [Bool](repeating: false, count: 8_192)
    /// Each PID's last continuity counter, or 0xFF before its first packet.
    private var counters = [UInt8](repeating: 0xFF, count: 8_192)

    private var carry: [UInt8] = []
    private var segment: Int?
    private var segmentOffset = 0
    private var pmtPID: UInt16?
    private var sections: [UInt16: [UInt8]] = [:]
    private var pending: [UInt16: PendingPES] = [:]
    private var lastTimes: [UInt16: Int64] = [:]

    /// A PES packet being reassembled.
    private struct PendingPES: Sendable {
        var bytes: [UInt8]
        var offset: Int
    }

    /// Creates a demuxer.
    public init() {}

    /// Marks the start of segment `index`: later errors name it, byte offsets count from its
    /// start, and continuity counters are checked afresh.
    ///
    /// - Throws: ``ContainerError`` when the previous segment ended inside a transport packet.
    public mutating func startSegment(_ index: Int) throws(ContainerError) -> [ElementaryStreamPacket] {
        let flushed = try finish()
        segment = index
        segmentOffset = 0
        counters = [UInt8](repeating: 0xFF, count: 8_192)
        return flushed
    }

    /// Feeds the next bytes of the stream and returns the PES packets they completed.
    ///
    /// - Throws: ``ContainerError`` naming the segment and byte offset: lost sync, a malformed
    ///   table, adaptation field or PES header, lost packets, or a PES longer than declared.
    ///   Packets returned by earlier calls stay valid.
    public mutating func append(_ data: Data) throws(ContainerError) -> [ElementaryStreamPacket] {
        var output: [ElementaryStreamPacket] = []
        var bytes = data[...]
        if !carry.isEmpty {
            let needed = Self.packetSize - carry.count
            carry.append(contentsOf: bytes.prefix(needed))
            bytes = bytes.dropFirst(needed)
            guard carry.count == Self.packetSize else { return output }
            let packet = carry
            carry = []
            var failure: ContainerError?
            packet.withUnsafeBufferPointer { buffer in
                do throws(ContainerError) {
                    try handlePacket(buffer, into: &output)
                } catch {
                    failure = error
                }
            }
            if let failure { throw failure }
        }
        let whole = bytes.count / Self.packetSize * Self.packetSize
        if whole > 0 {
            let body = bytes.prefix(whole)
            var failure: ContainerError?
            body.withUnsafeBytes { raw in
                let all = raw.bindMemory(to: UInt8.self)
                var start = 0
                while start < all.count {
                    let packet = UnsafeBufferPointer(rebasing: all[start..<(start + Self.packetSize)])
                    do throws(ContainerError) {
                        try handlePacket(packet, into: &output)
                    } catch {
                        failure = error
                        return
                    }
                    start += Self.packetSize
                }
            }
            if let failure { throw failure }
        }
        carry.append(contentsOf: bytes.dropFirst(whole))
        return output
    }

    /// Ends the stream (or the current segment): returns the PES packets still being assembled.
    ///
    /// - Throws: ``ContainerError/Kind/truncatedPacket(bytes:)`` when the data ended inside a
    ///   transport packet.
    public mutating func finish() throws(ContainerError) -> [ElementaryStreamPacket] {
        guard carry.isEmpty else {
            let error = ContainerError(.truncatedPacket(bytes: carry.count), segment: segment, offset: segmentOffset)
            carry = []
            throw error
        }
        var output: [ElementaryStreamPacket] = []
        for pid in pending.keys.sorted() {
            if let pes = pending.removeValue(forKey: pid), !pes.bytes.isEmpty {
                if let packet = try finishPES(pes, pid: pid) { output.append(packet) }
            }
        }
        return output
    }

    // MARK: Packets

    private mutating func handlePacket(
        _ packet: UnsafeBufferPointer<UInt8>, into output: inout [ElementaryStreamPacket]
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
        // §2.4.3.3: the counter increases by one per packet with a payload; one duplicate may
        // be sent; a discontinuity indicator allows a jump.
        let previous = counters[Int(pid)]
        if previous != 0xFF, !discontinuity {
            if counter == previous { return }
            let expected = (previous + 1) & 0x0F
            // Concatenated HLS segments restart their counters: a jump where a new unit starts,
            // with nothing of this PID half-assembled, is such a boundary, not a loss. Anywhere
            // else it means lost packets.
            let boundary = payloadStart && (pending[pid]?.bytes.isEmpty ?? true) && sections[pid] == nil
            guard counter == expected || boundary else {
                throw ContainerError(
                    .continuityError(pid: pid, expected: expected, found: counter), segment: segment, offset: offset)
            }
        }
        counters[Int(pid)] = counter
        let payload = UnsafeBufferPointer(rebasing: packet[index...])
        if pid == 0 || pid == pmtPID {
            try handleSection(payload, pid: pid, unitStart: payloadStart, offset: offset)
        } else if supported[Int(pid)] {
            try handlePES(payload, pid: pid, unitStart: payloadStart, offset: offset, into: &output)
        }
    }

    // MARK: Program tables

    private mutating func handleSection(
        _ payload: UnsafeBufferPointer<UInt8>, pid: UInt16, unitStart: Bool, offset: Int
    ) throws(ContainerError) {
        var bytes = Array(payload)
        if unitStart {
            // §2.4.4.2: the pointer field says where the new section starts.
            guard let pointer = bytes.first, 1 + Int(pointer) <= bytes.count else {
                throw ContainerError(
                    .malformedTable(reason: "a pointer field past the packet"), segment: segment, offset: offset)
            }
            bytes = Array(bytes[(1 + Int(pointer))...])
            sections[pid] = bytes
        } else {
            guard sections[pid] != nil else { return }
            sections[pid]?.append(contentsOf: bytes)
        }
        guard let section = sections[pid], section.count >= 3, section[0] != 0xFF else { return }
        let length = Int(section[1] & 0x0F) << 8 | Int(section[2])
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
                    streams = [:]
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
        var found: [UInt16: StreamType] = [:]
        while index + 5 <= end {
            let type = StreamType(rawValue: section[index])
            let pid = UInt16(section[index + 1] & 0x1F) << 8 | UInt16(section[index + 2])
            let esInfo = Int(section[index + 3] & 0x0F) << 8 | Int(section[index + 4])
            found[pid] = type
            index += 5 + esInfo
        }
        guard index == end else {
            throw ContainerError(
                .malformedTable(reason: "the stream loop overruns the section"), segment: segment, offset: offset)
        }
        streams = found
    }

    // MARK: PES

    private mutating func handlePES(
        _ payload: UnsafeBufferPointer<UInt8>, pid: UInt16, unitStart: Bool, offset: Int,
        into output: inout [ElementaryStreamPacket]
    ) throws(ContainerError) {
        if unitStart {
            var storage: [UInt8] = []
            if let previous = pending.removeValue(forKey: pid) {
                if !previous.bytes.isEmpty, let packet = try finishPES(previous, pid: pid) { output.append(packet) }
                // Reuse the finished packet's storage: PES packets of a stream are alike in size.
                storage = previous.bytes
                storage.removeAll(keepingCapacity: true)
            }
            storage.append(contentsOf: payload)
            pending[pid] = PendingPES(bytes: storage, offset: offset)
        } else {
            // Data of a packet whose start was never seen (the stream began mid-packet) is dropped.
            guard let current = pending[pid], !current.bytes.isEmpty else { return }
            pending[pid]?.bytes.append(contentsOf: payload)
        }
        guard let current = pending[pid], current.bytes.count >= 6 else { return }
        let declared = Int(current.bytes[4]) << 8 | Int(current.bytes[5])
        // A declared length completes the packet as soon as its bytes are in.
        if declared > 0, current.bytes.count >= 6 + declared {
            // Emptied, not removed: the next unit start reuses its storage.
            if let packet = try finishPES(current, pid: pid) { output.append(packet) }
            pending[pid]?.bytes.removeAll(keepingCapacity: true)
        }
    }

    private mutating func finishPES(_ pes: PendingPES, pid: UInt16) throws(ContainerError) -> ElementaryStreamPacket? {
        let bytes = pes.bytes
        guard bytes.count >= 9, bytes[0] == 0, bytes[1] == 0, bytes[2] == 1 else {
            throw ContainerError(
                .malformedPES(pid: pid, reason: "no start code prefix 0x000001"), segment: segment, offset: pes.offset)
        }
        let declared = Int(bytes[4]) << 8 | Int(bytes[5])
        if declared > 0 {
            // Stuffing after the packet in its last transport packet is 0xFF; anything else is data
            // the header did not declare.
            let extra = bytes[min(6 + declared, bytes.count)...]
            guard bytes.count >= 6 + declared else {
                throw ContainerError(
                    .malformedPES(pid: pid, reason: "\(bytes.count - 6) bytes where \(declared) were declared"),
                    segment: segment, offset: pes.offset)
            }
            guard extra.allSatisfy({ $0 == 0xFF }) else {
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
        guard let type = streams[pid] else { return nil }
        return ElementaryStreamPacket(
            pid: pid, streamType: type, presentationTime: pts, decodeTime: dts ?? pts,
            payload: bytes.withUnsafeBytes { Data(UnsafeRawBufferPointer(rebasing: $0[payloadStart..<payloadEnd])) })
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
        let period: Int64 = 1 << 33
        guard let last = lastTimes[pid] else {
            lastTimes[pid] = raw
            return raw
        }
        var value = raw + (last / period) * period
        if value - last > period / 2 { value -= period } else if last - value > period / 2 { value += period }
        lastTimes[pid] = value
        return value
    }
}
