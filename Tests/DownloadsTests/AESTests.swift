import Downloads
import Foundation
import TestSupport
import Testing

/// Bytes from a hexadecimal string (test vectors).
func hexBytes(_ text: String) -> [UInt8] {
    let digits = Array(text.filter { !$0.isWhitespace }.utf8)
    return stride(from: 0, to: digits.count - 1, by: 2).compactMap {
        UInt8(String(decoding: digits[$0...$0 + 1], as: UTF8.self), radix: 16)
    }
}

/// AES-128-CBC encryption with PKCS#7 padding, built on the cipher's block encryption: what
/// `openssl aes-128-cbc` and ffmpeg's HLS muxer produce, for tests of the decryption.
func encryptCBC(_ plain: [UInt8], cipher: AES128, iv: [UInt8], padding: Bool = true) -> [UInt8] {
    var bytes = plain
    if padding {
        let count = 16 - bytes.count % 16
        bytes += [UInt8](repeating: UInt8(count), count: count)
    }
    var chain = CBCDecryptor.chain(iv)
    var out = [UInt8](repeating: 0, count: bytes.count)
    bytes.withUnsafeBytes { source in
        out.withUnsafeMutableBytes { target in
            guard let from = source.baseAddress, let to = target.baseAddress else { return }
            for index in 0..<(bytes.count / 16) {
                let block = AES128.load(from + 16 * index)
                chain = cipher.encrypt(
                    (block.0 ^ chain.0, block.1 ^ chain.1, block.2 ^ chain.2, block.3 ^ chain.3))
                AES128.store(chain, to: to + 16 * index)
            }
        }
    }
    return out
}

@Suite("AES-128 (FIPS 197) in CBC mode with PKCS#7 padding (NIST SP 800-38A, RFC 8216 §5.2)")
struct AESTests {
    /// NIST SP 800-38A Appendix F.2.1/F.2.2 (CBC-AES128), and its key.
    static let spKey = hexBytes("2b7e151628aed2a6abf7158809cf4f3c")
    static let spIV = hexBytes("000102030405060708090a0b0c0d0e0f")
    static let spPlain = hexBytes(
        """
        6bc1bee22e409f96e93d7e117393172a ae2d8a571e03ac9c9eb76fac45af8e51
        30c81c46a35ce411e5fbc1191a0a52ef f69f2445df4f9b17ad2b417be66c3710
        """)
    static let spCipher = hexBytes(
        """
        7649abac8119b246cee98e9b12e9197d 5086cb9b507219ee95db113a917678b2
        73bed6b8e3c1743b7116e69e22229516 3ff1caa1681fac09120eca307586e1a7
        """)

    @Test(
        "FIPS 197 Appendix C.1 and B: one block encrypted and decrypted",
        arguments: [
            (
                "000102030405060708090a0b0c0d0e0f", "00112233445566778899aabbccddeeff",
                "69c4e0d86a7b0430d8cdb78070b4c55a"
            ),
            (
                "2b7e151628aed2a6abf7158809cf4f3c", "3243f6a8885a308d313198a2e0370734",
                "3925841d02dc09fbdc118597196a0b32"
            ),
        ])
    func fipsBlock(key: String, plain: String, cipher expected: String) throws {
        let cipher = try #require(AES128(key: hexBytes(key)))
        let block = hexBytes(plain).withUnsafeBytes { AES128.load($0.baseAddress.unsafelyUnwrapped) }
        var encrypted = [UInt8](repeating: 0, count: 16)
        encrypted.withUnsafeMutableBytes { AES128.store(cipher.encrypt(block), to: $0.baseAddress.unsafelyUnwrapped) }
        #expect(encrypted == hexBytes(expected))
        // Decrypting with a zero chain is the inverse cipher alone.
        var decrypted = encrypted
        decrypted.withUnsafeMutableBytes {
            _ = cipher.decryptCBC($0.baseAddress.unsafelyUnwrapped, blocks: 1, chain: (0, 0, 0, 0))
        }
        #expect(decrypted == hexBytes(plain))
    }

    @Test("NIST SP 800-38A F.2.1 and F.2.2: CBC-AES128 encrypts and decrypts the four-block vector")
    func spVectors() throws {
        let cipher = try #require(AES128(key: Self.spKey))
        #expect(encryptCBC(Self.spPlain, cipher: cipher, iv: Self.spIV, padding: false) == Self.spCipher)
        var decrypted = Self.spCipher
        decrypted.withUnsafeMutableBytes {
            _ = cipher.decryptCBC($0.baseAddress.unsafelyUnwrapped, blocks: 4, chain: CBCDecryptor.chain(Self.spIV))
        }
        #expect(decrypted == Self.spPlain)
    }

    @Test("RFC 8216 §5.2: PKCS#7 padding is removed; a key of any length but 16 bytes is refused")
    func padding() throws {
        let cipher = try #require(AES128(key: Self.spKey))
        for length in [0, 1, 15, 16, 17, 64] {
            let plain = Array(Self.spPlain.prefix(length))
            let encrypted = encryptCBC(plain, cipher: cipher, iv: Self.spIV)
            #expect(encrypted.count == (length / 16 + 1) * 16)
            let clear = try CBCDecryptor.decrypt(Data(encrypted), cipher: cipher, iv: Self.spIV)
            #expect([UInt8](clear) == plain)
        }
        #expect(AES128(key: [UInt8](repeating: 1, count: 15)) == nil)
        #expect(AES128(key: [UInt8](repeating: 1, count: 32)) == nil)
    }

    @Test(
        "a wrong key, a truncated or an unpadded ciphertext is a typed failure, never clear bytes",
        arguments: ["wrong key", "truncated", "no padding", "empty"])
    func failures(kind: String) throws {
        let cipher = try #require(AES128(key: Self.spKey))
        let other = try #require(AES128(key: Self.spIV))
        let encrypted = encryptCBC(Array(Self.spPlain.prefix(40)), cipher: cipher, iv: Self.spIV)
        let expected: CBCDecryptor.Failure
        let input: [UInt8]
        var key = cipher
        switch kind {
        case "wrong key": (input, key, expected) = (encrypted, other, .padding)
        case "truncated": (input, expected) = (Array(encrypted.dropLast(3)), .length(45))
        case "no padding": (input, expected) = (Self.spCipher, .padding)
        default: (input, expected) = ([], .length(0))
        }
        #expect(throws: expected) { try CBCDecryptor.decrypt(Data(input), cipher: key, iv: Self.spIV) }
        var stream = CBCDecryptor(cipher: key, iv: Self.spIV)
        _ = stream.update(Data(input))
        #expect(throws: expected) { try stream.finish() }
    }

    @Test("decrypting in pieces of any size gives the bytes of a whole decryption (seeded)", arguments: 0..<8)
    func pieces(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let key = (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }
        let iv = (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }
        let cipher = try #require(AES128(key: key))
        let plain = (0..<Int.random(in: 0...5_000, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random)
        }
        let encrypted = encryptCBC(plain, cipher: cipher, iv: iv)
        var stream = CBCDecryptor(cipher: cipher, iv: iv)
        var clear = Data()
        var offset = 0
        while offset < encrypted.count {
            let size = Int.random(in: 0...70, using: &random)
            let end = min(encrypted.count, offset + size)
            clear.append(stream.update(Data(encrypted[offset..<end])))
            offset = end
        }
        clear.append(try stream.finish())
        #expect([UInt8](clear) == plain)
        #expect([UInt8](try CBCDecryptor.decrypt(Data(encrypted), cipher: cipher, iv: iv)) == plain)
    }
}
