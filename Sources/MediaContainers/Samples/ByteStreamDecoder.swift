package import Foundation

/// A decoder of a byte stream that arrives in pieces of any size, in the shape of SwiftNIO's
/// `ByteToMessageDecoder`: it reads whole units (a transport packet, a box, an audio frame) from
/// the front of a ``ByteCursor`` and emits what they hold, and a ``ByteStreamDriver`` owns the
/// bytes that wait for the rest of a unit. Because the decoder only ever sees whole units in
/// order, its output is the same whatever the pieces' boundaries.
///
/// The segment readers of this module share it: the transport stream demuxer
/// (`TransportStreamDemuxer`), the ADTS reader (``ADTSReader``), the audio framer under the
/// transport stream and packed audio readers, the packed audio reader's tags (``PackedAudioReader``)
/// and the fragmented MP4 reader (``FragmentedMP4Reader``).
package protocol ByteStreamDecoder {
    /// What a unit decodes to.
    associatedtype Message

    /// Decodes the whole units at the front of `cursor`, moving it past each, and stops at the
    /// first unit that is not all there (the cursor at its first byte).
    ///
    /// - Throws: ``ContainerError`` for a malformed unit, with its stream offset.
    mutating func decode(_ cursor: inout ByteCursor, _ emit: (Message) throws(ContainerError) -> Void)
        throws(ContainerError)

    /// Decodes what is left when the stream ends: the last units, which the end of the stream
    /// may complete (a box of size 0 runs to the end); bytes that are not a whole unit are an
    /// error.
    ///
    /// - Throws: ``ContainerError`` for a malformed or cut short unit.
    mutating func decodeLast(_ cursor: inout ByteCursor, _ emit: (Message) throws(ContainerError) -> Void)
        throws(ContainerError)

    /// How many bytes the unit at the front of `cursor` has in all, once enough of it is there
    /// to say (its header); `nil` before. The driver completes a waiting unit with just the bytes
    /// it lacks, and reads everything after it in place.
    func unitLength(at cursor: ByteCursor) -> Int?
}

/// Feeds a ``ByteStreamDecoder`` the pieces of a stream and owns the bytes of a unit that waits
/// for the rest: a piece is read in place, and only the unfinished unit at its end is copied.
///
/// - Complexity: O(*n*) in the bytes fed: each byte is copied at most once (when its unit spans
///   two pieces), and a waiting unit is completed with the bytes it lacks only.
package struct ByteStreamDriver<Decoder: ByteStreamDecoder> {
    /// The decoder, whose state the caller may read between pieces.
    package var decoder: Decoder
    /// The bytes of the unit waiting for the rest of it.
    private var waiting: [UInt8] = []
    /// The stream offset of the first waiting byte: every byte before it is decoded.
    private(set) package var decodedLength = 0

    /// A driver of `decoder`, at stream offset `offset` (0 for a stream's start).
    package init(_ decoder: Decoder, at offset: Int = 0) {
        self.decoder = decoder
        decodedLength = offset
    }

    /// The bytes fed but not yet decoded (a unit still incomplete).
    package var pendingByteCount: Int { waiting.count }

    /// The stream offset of the next byte fed.
    package var fedLength: Int { decodedLength + waiting.count }

    /// Feeds the next piece; each message it completes goes to `emit`.
    ///
    /// - Throws: What the decoder throws.
    package mutating func feed(_ data: Data, _ emit: (Decoder.Message) throws(ContainerError) -> Void)
        throws(ContainerError)
    {
        try withBytes(of: data) { (raw) throws(ContainerError) in try feed(raw, emit) }
    }

    /// Feeds bytes in place; see ``feed(_:_:)-(Data,_)``.
    package mutating func feed(
        _ bytes: UnsafeRawBufferPointer, _ emit: (Decoder.Message) throws(ContainerError) -> Void
    ) throws(ContainerError) {
        var index = 0
        // A unit waits: complete it with what it lacks, a little at a time while its length is
        // not known, then decode it from the waiting bytes.
        while !waiting.isEmpty, index < bytes.count {
            let known = withBytes(of: waiting) { raw in
                decoder.unitLength(at: ByteCursor(raw, base: decodedLength))
            }
            let wanted = known.map { max($0 - waiting.count, 1) } ?? max(Self.headerStep, waiting.count)
            let taken = min(wanted, bytes.count - index)
            waiting.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[index..<(index + taken)]))
            index += taken
            guard known.map({ waiting.count >= $0 }) ?? true else { continue }
            try decodeWaiting(last: false, emit)
        }
        guard index < bytes.count else { return }
        // Nothing waits: the rest of the piece is read in place, and its unfinished unit kept.
        var cursor = ByteCursor(bytes, from: index, base: decodedLength - index)
        try decoder.decode(&cursor, emit)
        decodedLength += cursor.position - index
        if cursor.position < bytes.count {
            waiting.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[cursor.position...]))
        }
    }

    /// Ends the stream: decodes what waits as the last units.
    ///
    /// - Throws: What the decoder throws for bytes that are not whole units.
    package mutating func finish(_ emit: (Decoder.Message) throws(ContainerError) -> Void) throws(ContainerError) {
        // The stream has ended: nothing waits after this, whatever the decoder says.
        defer {
            decodedLength += waiting.count
            waiting = []
        }
        try decodeWaiting(last: true, emit)
    }

    /// How many bytes to add first to a waiting unit whose length its bytes do not tell yet: more
    /// than any header this module reads. While the length stays unknown (a last box of size 0
    /// runs to the end), each step adds as many bytes as wait, so the attempts stay linear in
    /// the bytes.
    static var headerStep: Int { 64 }

    /// Decodes the waiting bytes, keeping those of a unit still incomplete.
    private mutating func decodeWaiting(last: Bool, _ emit: (Decoder.Message) throws(ContainerError) -> Void)
        throws(ContainerError)
    {
        // The bytes move out while they are read, so that cutting the decoded ones off below
        // does not copy the rest.
        var pending = waiting
        waiting = []
        defer { waiting = pending }
        let used = try withBytes(of: pending) { (raw) throws(ContainerError) -> Int in
            var cursor = ByteCursor(raw, base: decodedLength)
            if last {
                try decoder.decodeLast(&cursor, emit)
            } else {
                try decoder.decode(&cursor, emit)
            }
            return cursor.position
        }
        decodedLength += used
        pending.removeSubrange(0..<used)
    }
}

/// Calls `body` with the bytes of `bytes` in place, passing on its typed error: the one wrapper
/// over `withUnsafeBytes`, whose closure cannot throw a typed error.
///
/// - Complexity: O(1) beyond `body` for contiguous storage.
package func withBytes<Value, Failure: Error>(
    of bytes: some ContiguousBytes, _ body: (UnsafeRawBufferPointer) throws(Failure) -> Value
) throws(Failure) -> Value {
    let outcome = bytes.withUnsafeBytes { raw in
        Result { () throws(Failure) -> Value in try body(raw) }
    }
    return try outcome.get()
}

extension ByteStreamDriver: Sendable where Decoder: Sendable {}
