public import Foundation
public import HLS
import HTTPSupport
import MediaContainers

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Decrypts what MediaCore cannot decrypt itself: `SAMPLE-AES`, `SAMPLE-AES-CTR`, a key format
/// other than `identity`, or a DRM system.
///
/// `AES-128` with the `identity` key format (RFC 8216 §5.2) needs no decryptor: the download
/// fetches its keys and decrypts the segments itself. A download of a stream encrypted any other
/// way without a decryptor fails before it starts with
/// ``DownloadError/Kind/encrypted(method:)``.
public protocol SegmentDecryptor: Sendable {
    /// The clear bytes of one part (a segment or an initialisation section) of a download.
    ///
    /// - Parameters:
    ///   - data: The part's bytes as the server sent them.
    ///   - context: The key that applies, resolved, and where the part sits in the stream.
    /// - Returns: Bytes the remuxer reads as media (a transport stream, fragmented MP4 or packed
    ///   audio); anything else fails the download with
    ///   ``DownloadError/Kind/decryptionFailed(reason:)`` naming the part.
    func decrypt(_ data: Data, context: SegmentDecryptionContext) async throws -> Data
}

/// What a ``SegmentDecryptor`` is told about the part it decrypts.
public struct SegmentDecryptionContext: Sendable, Hashable {
    /// The `EXT-X-KEY` tag that applies, as the playlist wrote it.
    public var key: HLSKey
    /// The key's `METHOD` (`SAMPLE-AES`, `SAMPLE-AES-CTR`, …).
    public var method: String { key.method }
    /// The key's `KEYFORMAT` (`identity` when the tag has none).
    public var keyFormat: String { key.keyFormat }
    /// The key's `URI` resolved against the URL of the playlist that declared it, or `nil` when
    /// the tag has none.
    public var keyURL: URL?
    /// The initialisation vector: the tag's `IV`, or else the part's media sequence number as a
    /// big-endian 128-bit integer (RFC 8216 §5.2).
    public var initializationVector: [UInt8]
    /// Whether ``initializationVector`` came from the media sequence number rather than the tag.
    public var isInitializationVectorDerived: Bool
    /// The part's media sequence number (RFC 8216 §6.3.5); for an initialisation section, that
    /// of the first segment it applies to.
    public var mediaSequence: UInt64
    /// The rendition the part belongs to: 0 for the variant's own segments, then each separate
    /// rendition the download keeps, in order.
    public var rendition: Int
    /// The rendition's `LANGUAGE`, when it has one.
    public var renditionLanguage: String?
    /// The rendition's `NAME`, when it has one.
    public var renditionName: String?
    /// Whether the bytes are an initialisation section (`EXT-X-MAP`) rather than a segment.
    public var isInitializationSection: Bool
    /// The part's own URL.
    public var url: URL

    /// Creates a context.
    public init(
        key: HLSKey, keyURL: URL?, initializationVector: [UInt8], isInitializationVectorDerived: Bool,
        mediaSequence: UInt64, rendition: Int, renditionLanguage: String? = nil, renditionName: String? = nil,
        isInitializationSection: Bool, url: URL
    ) {
        self.key = key
        self.keyURL = keyURL
        self.initializationVector = initializationVector
        self.isInitializationVectorDerived = isInitializationVectorDerived
        self.mediaSequence = mediaSequence
        self.rendition = rendition
        self.renditionLanguage = renditionLanguage
        self.renditionName = renditionName
        self.isInitializationSection = isInitializationSection
        self.url = url
    }
}

/// How one part of a lesson is decrypted, settled when the lesson is planned.
struct PartDecryption: Sendable, Hashable {
    /// The key tag chosen: the `AES-128` `identity` one when there is one, else the first that
    /// encrypts.
    var key: HLSKey
    /// Its URI, resolved.
    var keyURL: URL?
    /// The IV: given, or derived from the media sequence number.
    var initializationVector: [UInt8]
    var isInitializationVectorDerived: Bool

    /// Whether MediaCore decrypts the part itself: `AES-128` with the `identity` key format and
    /// a key URI.
    var isBuiltIn: Bool {
        key.method == "AES-128" && key.keyFormat == "identity" && keyURL != nil
    }

    /// How a part under `keys` is decrypted, or `nil` when none of them encrypts.
    ///
    /// - Throws: ``DownloadError`` of kind ``DownloadError/Kind/unusablePlaylist(reason:)`` for an
    ///   `AES-128` key without a URI or with an IV longer than 128 bits, or ``DownloadError/Kind/uri(_:)``.
    static func choose(
        from keys: [HLSKey], mediaSequence: UInt64, playlist: URL, resolve: (String, URL) throws -> URL
    ) throws -> PartDecryption? {
        let encrypting = keys.filter(\.encrypts)
        guard let first = encrypting.first else { return nil }
        let key = encrypting.first { $0.method == "AES-128" && $0.keyFormat == "identity" } ?? first
        let keyURL = try key.uri.map { try resolve($0, playlist) }
        if key.method == "AES-128", keyURL == nil {
            throw DownloadError(.unusablePlaylist(reason: "an AES-128 EXT-X-KEY has no URI"), url: playlist)
        }
        if let given = key.attributes["IV"]?.value {
            guard let iv = key.initializationVector, iv.count <= 16, !iv.isEmpty else {
                throw DownloadError(
                    .unusablePlaylist(reason: "an EXT-X-KEY's IV \(given) is not a 128-bit hexadecimal number"),
                    url: playlist)
            }
            return PartDecryption(
                key: key, keyURL: keyURL, initializationVector: [UInt8](repeating: 0, count: 16 - iv.count) + iv,
                isInitializationVectorDerived: false)
        }
        var iv = [UInt8](repeating: 0, count: 16)
        for index in 0..<8 { iv[15 - index] = UInt8(truncatingIfNeeded: mediaSequence >> (8 * UInt64(index))) }
        return PartDecryption(key: key, keyURL: keyURL, initializationVector: iv, isInitializationVectorDerived: true)
    }
}
