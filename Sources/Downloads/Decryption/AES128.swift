package import Foundation

/// The lookup tables of AES (FIPS 197), computed once from the field arithmetic rather than
/// written out: the S-box and its inverse (§5.1.1, §5.3.2), and the round tables that fold
/// SubBytes, ShiftRows and MixColumns (or their inverses) into four lookups per column.
///
/// The tables live in one allocation that is never freed, so the cipher's inner loop reads them
/// through plain pointers, with no bounds checks or reference counting.
///
/// `@unchecked Sendable`: the tables are written once, in `init`, and only read afterwards.
package final class AESTables: @unchecked Sendable {
    /// The shared tables (immutable once built).
    package static let shared = AESTables()

    /// S-box, inverse S-box (256 bytes each).
    let sbox: UnsafeMutablePointer<UInt8>
    let inverseSbox: UnsafeMutablePointer<UInt8>
    /// Encryption tables Te0…Te3 and decryption tables Td0…Td3, 256 words each, one after the
    /// other.
    let encryption: UnsafeMutablePointer<UInt32>
    let decryption: UnsafeMutablePointer<UInt32>

    private init() {
        sbox = .allocate(capacity: 256)
        inverseSbox = .allocate(capacity: 256)
        encryption = .allocate(capacity: 1024)
        decryption = .allocate(capacity: 1024)
        // Powers and logarithms of the generator 3 in GF(2⁸) modulo x⁸ + x⁴ + x³ + x + 1.
        var power = [UInt8](repeating: 0, count: 256)
        var logarithm = [UInt8](repeating: 0, count: 256)
        var value: UInt8 = 1
        for exponent in 0..<255 {
            power[exponent] = value
            logarithm[Int(value)] = UInt8(exponent)
            value ^= Self.double(value)
        }
        func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
            guard a != 0, b != 0 else { return 0 }
            return power[(Int(logarithm[Int(a)]) + Int(logarithm[Int(b)])) % 255]
        }
        for byte in 0..<256 {
            let inverse: UInt8 = byte == 0 ? 0 : power[(255 - Int(logarithm[byte])) % 255]
            // The affine transformation of §5.1.1.
            var substituted = inverse
            var rotated = inverse
            for _ in 0..<4 {
                rotated = rotated << 1 | rotated >> 7
                substituted ^= rotated
            }
            substituted ^= 0x63
            sbox[byte] = substituted
            inverseSbox[Int(substituted)] = UInt8(byte)
        }
        for byte in 0..<256 {
            let s = sbox[byte]
            let forward =
                UInt32(multiply(s, 2)) << 24 | UInt32(s) << 16 | UInt32(s) << 8 | UInt32(multiply(s, 3))
            let i = inverseSbox[byte]
            let backward =
                UInt32(multiply(i, 14)) << 24 | UInt32(multiply(i, 9)) << 16 | UInt32(multiply(i, 13)) << 8
                | UInt32(multiply(i, 11))
            for table in 0..<4 {
                let shift = UInt32(8 * table)
                encryption[table * 256 + byte] = forward >> shift | forward << ((32 - shift) & 31)
                decryption[table * 256 + byte] = backward >> shift | backward << ((32 - shift) & 31)
            }
        }
    }

    /// `x · 2` in GF(2⁸) (§4.2.1, xtime).
    static func double(_ x: UInt8) -> UInt8 {
        x << 1 ^ (x & 0x80 != 0 ? 0x1B : 0)
    }
}

/// The AES-128 block cipher (FIPS 197) with its key schedule expanded once: the encryption
/// round keys (§5.2) and those of the equivalent inverse cipher (§5.3.5).
///
/// The implementation uses lookup tables, so the time it takes, and the memory it touches,
/// depend on the key and the data: it is not hardened against cache-timing side channels. For
/// HLS content keys that is the right trade: the key arrives in the clear at the device that
/// uses it, and one lesson is decrypted once, on a device the app runs on, where code able to
/// time the cache could read the key from memory anyway.
///
/// - Complexity: O(1) per 16-byte block (ten rounds of sixteen table lookups).
package struct AES128: Sendable {
    /// The key's length in bytes.
    package static let keyLength = 16
    /// The block's length in bytes.
    package static let blockLength = 16

    private let encryptionKeys: [UInt32]
    private let decryptionKeys: [UInt32]

    /// Expands `key`, or returns `nil` unless it is 16 bytes long.
    package init?(key: some Collection<UInt8>) {
        guard key.count == Self.keyLength else { return nil }
        let tables = AESTables.shared
        let bytes = Array(key)
        var words = [UInt32](repeating: 0, count: 44)
        for index in 0..<4 {
            words[index] = Self.word(bytes, at: 4 * index)
        }
        var roundConstant: UInt8 = 1
        for index in 4..<44 {
            var temp = words[index - 1]
            if index % 4 == 0 {
                // RotWord, SubWord, and the round constant (§5.2).
                temp = temp << 8 | temp >> 24
                temp =
                    UInt32(tables.sbox[Int(temp >> 24)]) << 24 | UInt32(tables.sbox[Int(temp >> 16 & 0xFF)]) << 16
                    | UInt32(tables.sbox[Int(temp >> 8 & 0xFF)]) << 8 | UInt32(tables.sbox[Int(temp & 0xFF)])
                temp ^= UInt32(roundConstant) << 24
                roundConstant = AESTables.double(roundConstant)
            }
            words[index] = words[index - 4] ^ temp
        }
        encryptionKeys = words
        // The equivalent inverse cipher's keys: the rounds in reverse, with InvMixColumns applied
        // to all but the first and the last.
        var inverse = [UInt32](repeating: 0, count: 44)
        for round in 0...10 {
            for column in 0..<4 {
                let word = words[4 * (10 - round) + column]
                if round == 0 || round == 10 {
                    inverse[4 * round + column] = word
                } else {
                    let td = tables.decryption
                    let s = tables.sbox
                    inverse[4 * round + column] =
                        td[Int(s[Int(word >> 24)])] ^ td[256 + Int(s[Int(word >> 16 & 0xFF)])]
                        ^ td[512 + Int(s[Int(word >> 8 & 0xFF)])] ^ td[768 + Int(s[Int(word & 0xFF)])]
                }
            }
        }
        decryptionKeys = inverse
    }

    private static func word(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8
            | UInt32(bytes[offset + 3])
    }

    /// The four big-endian words of a block starting at `pointer`.
    @inline(__always)
    package static func load(_ pointer: UnsafeRawPointer) -> (UInt32, UInt32, UInt32, UInt32) {
        (
            UInt32(bigEndian: pointer.loadUnaligned(as: UInt32.self)),
            UInt32(bigEndian: pointer.loadUnaligned(fromByteOffset: 4, as: UInt32.self)),
            UInt32(bigEndian: pointer.loadUnaligned(fromByteOffset: 8, as: UInt32.self)),
            UInt32(bigEndian: pointer.loadUnaligned(fromByteOffset: 12, as: UInt32.self))
        )
    }

    /// Stores four words as a big-endian block at `pointer`.
    @inline(__always)
    package static func store(_ block: (UInt32, UInt32, UInt32, UInt32), to pointer: UnsafeMutableRawPointer) {
        pointer.storeBytes(of: block.0.bigEndian, as: UInt32.self)
        pointer.storeBytes(of: block.1.bigEndian, toByteOffset: 4, as: UInt32.self)
        pointer.storeBytes(of: block.2.bigEndian, toByteOffset: 8, as: UInt32.self)
        pointer.storeBytes(of: block.3.bigEndian, toByteOffset: 12, as: UInt32.self)
    }

    /// Encrypts one block (FIPS 197 §5.1).
    package func encrypt(_ block: (UInt32, UInt32, UInt32, UInt32)) -> (UInt32, UInt32, UInt32, UInt32) {
        let tables = AESTables.shared
        let te = UnsafePointer(tables.encryption)
        let s = UnsafePointer(tables.sbox)
        return encryptionKeys.withUnsafeBufferPointer { keys in
            guard let k = keys.baseAddress else { return block }
            var s0 = block.0 ^ k[0]
            var s1 = block.1 ^ k[1]
            var s2 = block.2 ^ k[2]
            var s3 = block.3 ^ k[3]
            var offset = 4
            for _ in 1..<10 {
                let t0 = Self.column(te, s0, s1, s2, s3) ^ k[offset]
                let t1 = Self.column(te, s1, s2, s3, s0) ^ k[offset + 1]
                let t2 = Self.column(te, s2, s3, s0, s1) ^ k[offset + 2]
                let t3 = Self.column(te, s3, s0, s1, s2) ^ k[offset + 3]
                (s0, s1, s2, s3) = (t0, t1, t2, t3)
                offset += 4
            }
            return (
                Self.last(s, s0, s1, s2, s3) ^ k[40], Self.last(s, s1, s2, s3, s0) ^ k[41],
                Self.last(s, s2, s3, s0, s1) ^ k[42], Self.last(s, s3, s0, s1, s2) ^ k[43]
            )
        }
    }

    /// One column of a round: four lookups in the four tables at `tables` (Te or Td), one per
    /// byte of the words the row shifts bring to it.
    @inline(__always)
    private static func column(
        _ tables: UnsafePointer<UInt32>, _ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32
    ) -> UInt32 {
        tables[Int(a >> 24)] ^ tables[256 + Int(b >> 16 & 0xFF)] ^ tables[512 + Int(c >> 8 & 0xFF)]
            ^ tables[768 + Int(d & 0xFF)]
    }

    /// One column of the last round (no MixColumns): four S-box lookups.
    @inline(__always)
    private static func last(_ s: UnsafePointer<UInt8>, _ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32)
        -> UInt32
    {
        UInt32(s[Int(a >> 24)]) << 24 | UInt32(s[Int(b >> 16 & 0xFF)]) << 16 | UInt32(s[Int(c >> 8 & 0xFF)]) << 8
            | UInt32(s[Int(d & 0xFF)])
    }

    /// Decrypts `count` whole blocks at `pointer` in place in CBC mode (NIST SP 800-38A §6.2),
    /// chaining from `chain` (the IV, or the ciphertext block before them), and returns the last
    /// ciphertext block: the chain for the blocks that follow.
    ///
    /// - Complexity: O(`count`).
    package func decryptCBC(
        _ pointer: UnsafeMutableRawPointer, blocks count: Int, chain: (UInt32, UInt32, UInt32, UInt32)
    ) -> (UInt32, UInt32, UInt32, UInt32) {
        let tables = AESTables.shared
        let td = UnsafePointer(tables.decryption)
        let s = UnsafePointer(tables.inverseSbox)
        return decryptionKeys.withUnsafeBufferPointer { keys in
            guard let k = keys.baseAddress else { return chain }
            var previous = chain
            for index in 0..<count {
                let at = pointer + 16 * index
                let cipher = Self.load(at)
                var s0 = cipher.0 ^ k[0]
                var s1 = cipher.1 ^ k[1]
                var s2 = cipher.2 ^ k[2]
                var s3 = cipher.3 ^ k[3]
                var offset = 4
                for _ in 1..<10 {
                    let t0 = Self.column(td, s0, s3, s2, s1) ^ k[offset]
                    let t1 = Self.column(td, s1, s0, s3, s2) ^ k[offset + 1]
                    let t2 = Self.column(td, s2, s1, s0, s3) ^ k[offset + 2]
                    let t3 = Self.column(td, s3, s2, s1, s0) ^ k[offset + 3]
                    (s0, s1, s2, s3) = (t0, t1, t2, t3)
                    offset += 4
                }
                let clear = (
                    Self.last(s, s0, s3, s2, s1) ^ k[40] ^ previous.0,
                    Self.last(s, s1, s0, s3, s2) ^ k[41] ^ previous.1,
                    Self.last(s, s2, s1, s0, s3) ^ k[42] ^ previous.2, Self.last(s, s3, s2, s1, s0) ^ k[43] ^ previous.3
                )
                Self.store(clear, to: at)
                previous = cipher
            }
            return previous
        }
    }
}

/// AES-128-CBC decryption with PKCS#7 padding (RFC 8216 §5.2, RFC 5652 §6.3), fed in pieces
/// of any size as they arrive.
///
/// The last block is held back until ``finish()``, because only the end of the input says it
/// carries the padding.
///
/// - Complexity: O(n) for n bytes in all, with at most 31 bytes carried between pieces.
package struct CBCDecryptor: Sendable {
    /// Why ciphertext does not decrypt to padded plaintext.
    package enum Failure: Error, Equatable, Sendable {
        /// The ciphertext's length is not a positive multiple of 16 bytes.
        case length(Int)
        /// The last block does not end in valid PKCS#7 padding: the key or IV is wrong, or the
        /// bytes are not what was encrypted.
        case padding
    }

    private let cipher: AES128
    private var chain: (UInt32, UInt32, UInt32, UInt32)
    /// Bytes received and not yet decrypted: a partial block, or the last whole block held back.
    private var carry: [UInt8] = []
    private var total = 0

    /// Starts decrypting with `cipher` from the 16-byte `iv`.
    package init(cipher: AES128, iv: [UInt8]) {
        self.cipher = cipher
        chain = Self.chain(iv)
    }

    /// The IV as four big-endian words, a shorter one padded with zeros on the left.
    package static func chain(_ iv: [UInt8]) -> (UInt32, UInt32, UInt32, UInt32) {
        let padded = [UInt8](repeating: 0, count: max(0, 16 - iv.count)) + iv.suffix(16)
        var words = (UInt32(0), UInt32(0), UInt32(0), UInt32(0))
        padded.withUnsafeBytes { buffer in
            if let base = buffer.baseAddress { words = AES128.load(base) }
        }
        return words
    }

    /// Decrypts what it can of `input` and returns the clear bytes that are final.
    package mutating func update(_ input: Data) -> Data {
        total += input.count
        var bytes = carry
        bytes.append(contentsOf: input)
        // Keep the last whole block (and any partial one) for later.
        let whole = bytes.count / 16
        let ready = whole > 0 && bytes.count % 16 == 0 ? whole - 1 : whole
        guard ready > 0 else {
            carry = bytes
            return Data()
        }
        let length = ready * 16
        let current = chain
        var next = current
        var clear = Data(bytes[0..<length])
        clear.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress {
                next = cipher.decryptCBC(base, blocks: ready, chain: current)
            }
        }
        chain = next
        carry = Array(bytes[length...])
        return clear
    }

    /// Decrypts the held-back block and returns it without its padding.
    ///
    /// - Throws: ``Failure``.
    package mutating func finish() throws(Failure) -> Data {
        guard carry.count == 16, total % 16 == 0 else { throw .length(total) }
        var block = carry
        carry = []
        let current = chain
        block.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress { _ = cipher.decryptCBC(base, blocks: 1, chain: current) }
        }
        return Data(block.dropLast(try Self.paddingLength(block)))
    }

    /// Decrypts a whole ciphertext in place and removes its padding.
    ///
    /// - Throws: ``Failure``.
    /// - Complexity: O(n).
    package static func decrypt(_ data: Data, cipher: AES128, iv: [UInt8]) throws(Failure) -> Data {
        guard !data.isEmpty, data.count % 16 == 0 else { throw .length(data.count) }
        var clear = data
        let start = Self.chain(iv)
        clear.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress {
                _ = cipher.decryptCBC(base, blocks: buffer.count / 16, chain: start)
            }
        }
        clear.removeLast(try paddingLength(clear))
        return clear
    }

    /// The length of the PKCS#7 padding that ends `clear` (RFC 5652 §6.3): 1 to 16 bytes, each
    /// holding that length.
    ///
    /// - Throws: ``Failure/padding`` when `clear` does not end in such bytes.
    /// - Complexity: O(1).
    private static func paddingLength(_ clear: some BidirectionalCollection<UInt8>) throws(Failure) -> Int {
        guard let last = clear.last, (1...16).contains(last), clear.count >= Int(last),
            clear.suffix(Int(last)).allSatisfy({ $0 == last })
        else { throw .padding }
        return Int(last)
    }
}
