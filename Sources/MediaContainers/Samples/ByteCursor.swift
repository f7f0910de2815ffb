/// Reads big-endian fields from bytes in place, refusing to read past the end.
///
/// It borrows the bytes: use it only inside the `withUnsafeBytes` scope that produced them.
///
/// A cursor over a stream fed in pieces (see ``ByteStreamDecoder``) knows where its bytes sit in
/// the stream: ``streamOffset`` is the stream offset of ``position``, for timestamps that belong
/// to a piece and for the offsets errors report.
package struct ByteCursor {
    package let bytes: UnsafeRawBufferPointer
    /// The next byte to read.
    package var position: Int
    /// The first byte not to read.
    package let end: Int
    /// The stream offset of `bytes[0]`.
    package let base: Int

    /// A cursor over `bytes[start..<end]` (all of them by default), whose first byte is at stream
    /// offset `base`.
    package init(_ bytes: UnsafeRawBufferPointer, from start: Int = 0, to end: Int? = nil, base: Int = 0) {
        self.bytes = bytes
        position = start
        self.end = min(end ?? bytes.count, bytes.count)
        self.base = base
    }

    /// The bytes left.
    package var remaining: Int { max(end - position, 0) }

    /// The stream offset of the next byte.
    package var streamOffset: Int { base + position }

    /// The byte `index` bytes past the next one; the caller checks ``remaining``.
    package subscript(ahead index: Int) -> UInt8 { bytes[position + index] }

    /// The next `count` bytes, without moving on; the caller checks ``remaining``.
    package func peek(_ count: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[position..<(position + count)])
    }

    /// Reads an unsigned integer of `width` bytes (at most 8), or `nil` past the end.
    package mutating func read(_ width: Int) -> UInt64? {
        guard width >= 0, width <= 8, remaining >= width else { return nil }
        var value: UInt64 = 0
        for index in 0..<width { value = value << 8 | UInt64(bytes[position + index]) }
        position += width
        return value
    }

    package mutating func uint8() -> UInt8? { read(1).map { UInt8(truncatingIfNeeded: $0) } }
    package mutating func uint16() -> UInt16? { read(2).map { UInt16(truncatingIfNeeded: $0) } }
    package mutating func uint24() -> UInt32? { read(3).map { UInt32(truncatingIfNeeded: $0) } }
    package mutating func uint32() -> UInt32? { read(4).map { UInt32(truncatingIfNeeded: $0) } }
    package mutating func uint64() -> UInt64? { read(8) }

    /// Skips `count` bytes; `false` when fewer remain.
    package mutating func skip(_ count: Int) -> Bool {
        guard count >= 0, remaining >= count else { return false }
        position += count
        return true
    }

    /// A four-character code.
    package mutating func fourCC() -> String? {
        guard remaining >= 4 else { return nil }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[position..<(position + 4)]), as: UTF8.self)
        position += 4
        return text
    }
}

/// Reads the bits of a NAL unit's or a header's payload, most significant first: fixed-width
/// fields and Exp-Golomb codes (ISO/IEC 14496-10 §9.1). Reading past the end yields zeros and
/// sets ``isExhausted``; it never traps.
struct BitReader {
    private let bytes: [UInt8]
    private var position = 0
    /// Whether a read went past the last bit.
    private(set) var isExhausted = false

    /// Reads `bytes` as they are (audio headers, whose fields need no unescaping).
    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Reads a NAL unit from byte `offset` on, dropping each `03` of a `00 00 03` sequence
    /// (emulation prevention, §7.4.1).
    init(nalUnit unit: some Collection<UInt8>, from offset: Int) {
        var clean: [UInt8] = []
        clean.reserveCapacity(unit.count)
        var zeros = 0
        for byte in unit.dropFirst(offset) {
            if zeros >= 2, byte == 3 {
                zeros = 0
                continue
            }
            clean.append(byte)
            zeros = byte == 0 ? zeros + 1 : 0
        }
        bytes = clean
    }

    /// Whether bits remain.
    var hasMore: Bool { position < bytes.count * 8 }

    /// The bits read so far.
    var bitPosition: Int { position }

    /// The next `count` bits (at most 32) as an unsigned number; zeros past the end.
    mutating func bits(_ count: Int) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<max(0, min(count, 32)) {
            let index = position / 8
            var bit: UInt32 = 0
            if index < bytes.count {
                bit = UInt32((bytes[index] >> (7 - UInt8(position % 8))) & 1)
            } else {
                isExhausted = true
            }
            value = value << 1 | bit
            position += 1
        }
        return value
    }

    /// Whether the next bit is set.
    mutating func flag() -> Bool { bits(1) == 1 }

    /// Skips `count` bits.
    mutating func skip(_ count: Int) {
        var left = max(count, 0)
        while left > 0 {
            let step = min(left, 32)
            _ = bits(step)
            left -= step
        }
    }

    /// An unsigned Exp-Golomb code, `ue(v)`; `nil` for a code longer than 31 bits or past the end.
    mutating func unsigned() -> UInt32? {
        var zeros = 0
        while bits(1) == 0 {
            zeros += 1
            guard zeros < 32, !isExhausted else { return nil }
        }
        let value = (UInt64(1) << UInt64(zeros)) - 1 + UInt64(bits(zeros))
        guard !isExhausted, value <= UInt64(UInt32.max) else { return nil }
        return UInt32(value)
    }

    /// A signed Exp-Golomb code, `se(v)`.
    mutating func signed() -> Int32? {
        guard let code = unsigned() else { return nil }
        let magnitude = Int64(code / 2) + Int64(code % 2)
        let value = code % 2 == 1 ? magnitude : -magnitude
        return Int32(exactly: value)
    }
}
