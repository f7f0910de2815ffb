/// CRC-32 (the IEEE 802.3 polynomial, reflected, as in zlib and PNG), for detecting damage to
/// cached files.
///
/// It catches every single-bit error and every burst of up to 32 bits, which covers a flipped
/// bit or a mangled character anywhere in an entry; it is not a defence against deliberate
/// tampering (nothing stored in the app's own cache folder needs one).
struct CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? (value >> 1) ^ 0xEDB8_8320 : value >> 1 }
        return value
    }

    /// The running remainder, inverted.
    private var state: UInt32 = 0xFFFF_FFFF

    /// The checksum of the bytes fed so far.
    var value: UInt32 { ~state }

    /// Feeds `bytes`.
    ///
    /// - Complexity: O(*n*) in the number of bytes.
    mutating func update(_ bytes: some Sequence<UInt8>) {
        let table = Self.table
        var state = state
        for byte in bytes {
            state = table[Int((state ^ UInt32(byte)) & 0xFF)] ^ (state >> 8)
        }
        self.state = state
    }
}
