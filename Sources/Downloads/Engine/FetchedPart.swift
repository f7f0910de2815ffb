import Foundation

/// A part as a transfer ended: its bytes, or, when they streamed into the staging file, only
/// their length and digest.
struct FetchedPart: Sendable {
    var index: Int
    /// The bytes; empty when they streamed into the staging file.
    var data: Data
    /// How many bytes the part has.
    var length: UInt64
    /// The bytes' ``ChunkDigest``, when they streamed into the staging file.
    var digest: UInt64?
    /// How many bytes the transfer brought (before any transform).
    var fetched: UInt64

    init(index: Int, data: Data, length: UInt64, digest: UInt64?) {
        self.index = index
        self.data = data
        self.length = length
        self.digest = digest
        fetched = length
    }
}
