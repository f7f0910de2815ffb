public import Foundation
public import HLS

/// One piece of a download: a URL and, optionally, the byte range to take from it.
public struct DownloadPart: Hashable, Sendable, Codable {
    /// Where the bytes are.
    public var url: URL
    /// The bytes to take; `nil` for the whole resource.
    public var byteRange: ByteRange?

    /// Creates a part.
    public init(url: URL, byteRange: ByteRange? = nil) {
        self.url = url
        self.byteRange = byteRange
    }
}

/// A span of bytes in a remote resource: `length` bytes from `offset`.
///
/// The downloads module's own range type: a plain file is downloaded in ranges that have
/// nothing to do with HLS, and a playlist's `HLSByteRange` converts with
/// ``init(_:)``. It encodes as `{"length": …, "offset": …}`; decoding refuses a range that
/// ends past 2⁶⁴, and the engine refuses such a part with a typed error before any transfer.
public struct ByteRange: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The number of bytes.
    public var length: UInt64
    /// The first byte's offset in the resource.
    public var offset: UInt64

    /// Creates a range of `length` bytes from `offset`.
    public init(length: UInt64, offset: UInt64) {
        self.length = length
        self.offset = offset
    }

    /// The same bytes as a playlist's range.
    public init(_ range: HLSByteRange) {
        self.init(length: range.length, offset: range.offset)
    }

    /// Whether the range ends within 2⁶⁴ bytes, as every real resource does.
    public var isRepresentable: Bool { offset <= UInt64.max - length }

    /// The offset just past the range; it wraps for a range that is not
    /// ``isRepresentable``, which the engine refuses before using it.
    public var end: UInt64 { offset &+ length }

    private enum CodingKeys: String, CodingKey {
        case length, offset
    }

    /// Decodes a range, refusing one that ends past 2⁶⁴ (a tampered file).
    ///
    /// - Throws: `DecodingError.dataCorrupted` for such a range.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let length = try container.decode(UInt64.self, forKey: .length)
        let offset = try container.decode(UInt64.self, forKey: .offset)
        guard offset <= UInt64.max - length else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: container.codingPath, debugDescription: "\(length)@\(offset) ends past 2⁶⁴"))
        }
        self.init(length: length, offset: offset)
    }

    /// The HTTP `Range` header value: `bytes=first-last`, both inclusive (RFC 9110 §14.1.2).
    public var httpRangeHeader: String {
        length == 0 ? "bytes=\(offset)-\(offset)" : "bytes=\(offset)-\(offset &+ (length - 1))"
    }

    /// `length@offset`, as a playlist writes it.
    public var description: String { "\(length)@\(offset)" }
}
