import MediaContainers

/// The one framing of a remux journal's records: a 4-byte magic naming the record's kind, the
/// payload's 4-byte length, the payload's ``ChunkDigest`` in 8 bytes, then the payload, all
/// big-endian. A frame cut short or damaged (a torn write at a crash) fails its length or its
/// digest, and reads as no frame.
enum JournalFrame {
    /// The bytes before the payload.
    static let headerLength = 16

    /// The frame of `payload` under `magic`.
    ///
    /// - Complexity: O(*n*) in the payload.
    static func encode(_ payload: [UInt8], magic: UInt32) -> [UInt8] {
        var digest = ChunkDigest()
        payload.withUnsafeBytes { digest.add($0) }
        var frame: [UInt8] = []
        frame.reserveCapacity(headerLength + payload.count)
        appendBigEndian(UInt64(magic), width: 4, to: &frame)
        appendBigEndian(UInt64(payload.count), width: 4, to: &frame)
        appendBigEndian(digest.value, width: 8, to: &frame)
        frame.append(contentsOf: payload)
        return frame
    }

    /// The intact frame at `position` of `bytes`: its magic, where its payload is, and where the
    /// next frame starts; `nil` when no whole frame with a matching digest is there.
    ///
    /// - Complexity: O(*n*) in the payload.
    static func decode(_ bytes: UnsafeRawBufferPointer, at position: Int) -> (
        magic: UInt32, payload: Range<Int>, end: Int
    )? {
        var header = ByteCursor(bytes, from: position)
        guard let magic = header.uint32(), let length = header.uint32(), let checksum = header.uint64(),
            Int(length) <= header.remaining
        else { return nil }
        let payload = header.position..<(header.position + Int(length))
        var digest = ChunkDigest()
        digest.add(UnsafeRawBufferPointer(rebasing: bytes[payload]))
        guard digest.value == checksum else { return nil }
        return (magic, payload, payload.upperBound)
    }

    /// Appends the low `width` bytes of `value`, most significant first: the one big-endian
    /// writer of the journal.
    static func appendBigEndian(_ value: UInt64, width: Int, to bytes: inout [UInt8]) {
        for shift in stride(from: (width - 1) * 8, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }
}
