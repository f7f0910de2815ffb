import Foundation

/// Builds ISO base media file format boxes (ISO/IEC 14496-12 §4.2) into bytes: big-endian
/// integers, four-character codes, and nested boxes whose sizes are filled in when they close.
struct BoxWriter: BigEndianAppending {
    private(set) var bytes: [UInt8] = []
    private var open: [Int] = []

    /// Starts a box of `type`; its size is written when ``end()`` closes it.
    mutating func begin(_ type: String) {
        open.append(bytes.count)
        append32(0)
        appendType(type)
    }

    /// Starts a full box (§4.2): a box with a version and 24 bits of flags.
    mutating func beginFull(_ type: String, version: UInt8 = 0, flags: UInt32 = 0) {
        begin(type)
        append8(version)
        append8(UInt8((flags >> 16) & 0xFF))
        append8(UInt8((flags >> 8) & 0xFF))
        append8(UInt8(flags & 0xFF))
    }

    /// Closes the innermost open box, writing its size.
    mutating func end() {
        guard let start = open.popLast() else { return }
        let size = UInt32(truncatingIfNeeded: bytes.count - start)
        bytes[start] = UInt8(size >> 24)
        bytes[start + 1] = UInt8((size >> 16) & 0xFF)
        bytes[start + 2] = UInt8((size >> 8) & 0xFF)
        bytes[start + 3] = UInt8(size & 0xFF)
    }

    mutating func append8(_ value: UInt8) { bytes.append(value) }

    mutating func append(_ data: some Sequence<UInt8>) { bytes.append(contentsOf: data) }

    /// An MPEG-4 descriptor (ISO/IEC 14496-1 §7.2.2.1): a tag, then its length in the four-byte
    /// expandable form, which every reader accepts.
    mutating func appendDescriptor(tag: UInt8, _ content: [UInt8]) {
        append8(tag)
        let length = content.count
        append8(UInt8(0x80 | ((length >> 21) & 0x7F)))
        append8(UInt8(0x80 | ((length >> 14) & 0x7F)))
        append8(UInt8(0x80 | ((length >> 7) & 0x7F)))
        append8(UInt8(length & 0x7F))
        append(content)
    }
}

/// Appends the fields of ISO base media file format boxes (§4.2) in big-endian order: integers,
/// four-character codes, zeros and the unity matrix, over two primitives a writer provides.
protocol BigEndianAppending {
    /// Appends one byte.
    mutating func append8(_ value: UInt8)
    /// Appends `bytes` as they are.
    mutating func append(_ bytes: some Sequence<UInt8>)
}

extension BigEndianAppending {
    mutating func append16(_ value: UInt16) {
        append8(UInt8(value >> 8))
        append8(UInt8(value & 0xFF))
    }

    mutating func append32(_ value: UInt32) {
        append8(UInt8(value >> 24))
        append8(UInt8((value >> 16) & 0xFF))
        append8(UInt8((value >> 8) & 0xFF))
        append8(UInt8(value & 0xFF))
    }

    mutating func append64(_ value: UInt64) {
        append32(UInt32(truncatingIfNeeded: value >> 32))
        append32(UInt32(truncatingIfNeeded: value))
    }

    /// A four-character code, padded with spaces.
    mutating func appendType(_ type: String) {
        let code = Array(type.utf8)
        for index in 0..<4 { append8(index < code.count ? code[index] : 0x20) }
    }

    mutating func appendZeros(_ count: Int) { append(repeatElement(0, count: max(count, 0))) }

    /// The unity transformation matrix of `mvhd` and `tkhd` (§8.2.2).
    mutating func appendUnityMatrix() {
        for value: UInt32 in [0x0001_0000, 0, 0, 0, 0x0001_0000, 0, 0, 0, 0x4000_0000] { append32(value) }
    }
}
