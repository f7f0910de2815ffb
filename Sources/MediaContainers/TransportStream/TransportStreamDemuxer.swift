public import Foundation

/// Demultiplexes an MPEG transport stream (ISO/IEC 13818-1) into the PES packets of its audio and
/// video streams, incrementally: feed it bytes as they arrive, in parts of any size.
///
/// It reads the program association table (PAT) and the first program's map table (PMT),
/// reassembles PES packets across transport packets, skips adaptation fields (the PCR is not
/// needed to remux), checks each PID's continuity counter, and unwraps the 33-bit PTS and DTS.
/// Whatever the boundaries of the parts it is fed, it yields the same packets.
///
/// An HLS download is a sequence of segments: call ``startSegment(_:)`` before each, so errors
/// name the segment and the continuity counters restart (segments are separate files).
///
/// Hostile input is bounded: a PES packet longer than ``maximumPESLength`` and a table section
/// longer than its 1,024-byte maximum are typed errors, and stuffing (0xFF) where a section
/// starts ends the section.
///
/// - Complexity: O(*n*) in the bytes fed; memory holds one incomplete transport packet, one
///   incomplete PES packet per stream and one incomplete section per table.
public struct TransportStreamDemuxer: Sendable {
    /// The packet decoder, fed through the one byte stream driver.
    private(set) var driver: ByteStreamDriver<TransportPacketDecoder>

    /// The longest PES packet reassembled: 32 MiB, far above any real access unit.
    public static var maximumPESLength: Int { TransportPacketDecoder.maximumPESLength }

    /// Creates a demuxer.
    public init() {
        driver = ByteStreamDriver(TransportPacketDecoder())
    }

    /// Creates a demuxer that starts from the program map table and timestamps of an earlier
    /// segment (a segment without a PAT and PMT of its own uses the last ones seen).
    init(continuing previous: TransportStreamContext) {
        driver = ByteStreamDriver(TransportPacketDecoder(continuing: previous))
    }

    /// The elementary streams of the program, by PID, as the last PMT declares them.
    public var streams: [UInt16: StreamType] {
        Dictionary(declaredStreams.map { ($0.pid, $0.streamType) }, uniquingKeysWith: { first, _ in first })
    }

    /// The elementary streams of the program in the order the last PMT declares them.
    public var declaredStreams: [DeclaredStream] { driver.decoder.declaredStreams }

    /// How many PMTs have been read.
    public var tableVersion: Int { driver.decoder.tableVersion }

    /// What a later segment continues from.
    var context: TransportStreamContext { driver.decoder.context }

    /// Marks the start of segment `index`: later errors name it, byte offsets count from its
    /// start, and continuity counters are checked afresh.
    ///
    /// - Throws: ``ContainerError`` when the previous segment ended inside a transport packet.
    public mutating func startSegment(_ index: Int) throws(ContainerError) -> [ElementaryStreamPacket] {
        let flushed = try finish()
        driver.decoder.startSegment(index)
        return flushed
    }

    /// Feeds the next bytes of the stream and returns the PES packets they completed.
    ///
    /// - Throws: ``ContainerError`` naming the segment and byte offset: lost sync, a malformed
    ///   table, adaptation field or PES header, lost packets, a PES longer than declared, or a
    ///   unit over its bound. Packets returned by earlier calls stay valid.
    public mutating func append(_ data: Data) throws(ContainerError) -> [ElementaryStreamPacket] {
        var output: [ElementaryStreamPacket] = []
        try driver.feed(data) { packet throws(ContainerError) in output.append(Self.copy(packet)) }
        return output
    }

    /// Ends the stream (or the current segment): returns the PES packets still being assembled.
    ///
    /// - Throws: ``ContainerError/Kind/truncatedPacket(bytes:)`` when the data ended inside a
    ///   transport packet.
    public mutating func finish() throws(ContainerError) -> [ElementaryStreamPacket] {
        var output: [ElementaryStreamPacket] = []
        try driver.finish { packet throws(ContainerError) in output.append(Self.copy(packet)) }
        return output
    }

    /// Feeds bytes in place, handing each completed PES packet to `body`, its payload borrowed
    /// for the call (the copy-free path of ``TransportStreamReader``).
    mutating func feed(
        _ bytes: UnsafeRawBufferPointer, _ body: (TransportPacketDecoder.PESView) throws(ContainerError) -> Void
    )
        throws(ContainerError)
    {
        try driver.feed(bytes, body)
    }

    /// Ends the segment, handing the PES packets still being assembled to `body`.
    mutating func finish(_ body: (TransportPacketDecoder.PESView) throws(ContainerError) -> Void) throws(ContainerError)
    {
        try driver.finish(body)
    }

    /// A packet copied out of the decoder's memory.
    private static func copy(_ packet: TransportPacketDecoder.PESView) -> ElementaryStreamPacket {
        ElementaryStreamPacket(
            pid: packet.pid, streamType: packet.stream.streamType, presentationTime: packet.presentationTime,
            decodeTime: packet.decodeTime, payload: Data(packet.payload))
    }
}
