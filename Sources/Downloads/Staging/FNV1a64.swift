/// The 64-bit FNV-1a hash, fed in pieces: the fingerprint that names a download in its journal
/// (a file's parts, a lesson's plan). A part's bytes are checked with a ``ChunkDigest`` instead.
struct FNV1a64 {
    /// The hash of the bytes added so far.
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    /// Adds `bytes` to the hash.
    ///
    /// - Complexity: O(*n*) for *n* bytes.
    mutating func add(_ bytes: some Sequence<UInt8>) {
        for byte in bytes {
            value ^= UInt64(byte)
            value &*= 0x0000_0100_0000_01b3
        }
    }
}
