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

/// The AES-128 keys of a lesson, fetched before anything is written and held in memory only.
struct LessonKeys: Sendable {
    /// Each key URI's expanded key.
    var ciphers: [URL: AES128] = [:]

    /// Fetches every key URI the plan's built-in decryption needs, once each, through the
    /// engine (its retries and its allowed schemes), `engine.concurrency` at a time.
    ///
    /// - Throws: ``DownloadError`` of kind ``DownloadError/Kind/keyRefused(status:)`` for a 4xx
    ///   answer, ``DownloadError/Kind/invalidKey(byteCount:)`` for an answer that is not 16
    ///   bytes, or the engine's error for the transfer.
    static func fetch<C: Clock>(for plan: LessonPlan, engine: DownloadEngine<C>) async throws -> LessonKeys
    where C.Duration == Duration {
        var urls: [URL] = []
        var seen = Set<URL>()
        for part in plan.parts {
            guard let decryption = part.decryption, decryption.isBuiltIn, let url = decryption.keyURL,
                seen.insert(url).inserted
            else { continue }
            urls.append(url)
        }
        guard !urls.isEmpty else { return LessonKeys() }
        return try await withThrowingTaskGroup(of: (URL, AES128).self) { group in
            var keys = LessonKeys()
            var next = 0
            func start() {
                guard next < urls.count else { return }
                let url = urls[next]
                next += 1
                group.addTask { (url, try await fetchKey(url, engine: engine)) }
            }
            for _ in 0..<engine.concurrency { start() }
            while let (url, cipher) = try await group.next() {
                keys.ciphers[url] = cipher
                start()
            }
            return keys
        }
    }

    private static func fetchKey<C: Clock>(_ url: URL, engine: DownloadEngine<C>) async throws -> AES128
    where C.Duration == Duration {
        let body: Data
        do {
            body = try await engine.sendWithRetry(URLRequest(url: url), part: nil).0
        } catch let error as DownloadError {
            if case .httpStatus(let status) = error.kind, (400..<500).contains(status) {
                throw DownloadError(.keyRefused(status: status), url: url)
            }
            throw error
        }
        guard let cipher = AES128(key: body) else {
            throw DownloadError(.invalidKey(byteCount: body.count), url: url)
        }
        return cipher
    }
}

/// Turns the parts of a lesson into clear bytes: AES-128 with the keys fetched up front, any
/// other method with the app's decryptor, then a check that the result is media.
struct LessonDecryption: Sendable {
    let keys: LessonKeys
    let decryptor: (any SegmentDecryptor)?
    let renditions: [SegmentRemuxer.Rendition]

    /// The clear bytes of media part `index`: decrypted (``decrypt(_:part:index:)``), then
    /// checked to be media (a transport stream, ISO base media or packed audio).
    ///
    /// - Throws: ``DownloadError`` of kind ``DownloadError/Kind/decryptionFailed(reason:)``
    ///   naming the part, or ``DownloadError/Kind/encrypted(method:)`` when nothing can decrypt
    ///   it.
    /// - Complexity: O(n) in the part's size.
    func clear(_ data: Data, part: LessonPlan.Part, index: Int) async throws -> Data {
        guard part.decryption != nil else { return data }
        let clear = try await decrypt(data, part: part, index: index)
        do {
            _ = try SegmentFormat.detect(clear.prefix(512))
        } catch {
            let found: String
            if case .notMedia(let what) = error.kind { found = what } else { found = "\(error)" }
            throw DownloadError(
                .decryptionFailed(reason: "the decrypted bytes are not media but \(found)"), part: index, url: part.url)
        }
        return clear
    }

    /// The bytes of part `index` decrypted, whatever they hold (a media segment, a WebVTT
    /// segment): with the built-in AES-128, else the app's decryptor; clear parts as they are.
    ///
    /// - Throws: As ``clear(_:part:index:)``, without the media check.
    /// - Complexity: O(n) in the part's size.
    func decrypt(_ data: Data, part: LessonPlan.Part, index: Int) async throws -> Data {
        guard let decryption = part.decryption else { return data }
        let clear: Data
        if decryption.isBuiltIn, let url = decryption.keyURL, let cipher = keys.ciphers[url] {
            do {
                clear = try CBCDecryptor.decrypt(data, cipher: cipher, iv: decryption.initializationVector)
            } catch {
                let reason =
                    switch error {
                    case .length(let count): "\(count) bytes of AES-128-CBC ciphertext, not a multiple of 16"
                    case .padding: "the decrypted bytes end without PKCS#7 padding (a wrong key or IV?)"
                    }
                throw DownloadError(.decryptionFailed(reason: reason), part: index, url: part.url)
            }
        } else if let decryptor {
            let rendition = part.rendition < renditions.count ? renditions[part.rendition] : nil
            let context = SegmentDecryptionContext(
                key: decryption.key, keyURL: decryption.keyURL, initializationVector: decryption.initializationVector,
                isInitializationVectorDerived: decryption.isInitializationVectorDerived,
                mediaSequence: part.mediaSequence, rendition: part.rendition, renditionLanguage: rendition?.language,
                renditionName: rendition?.name, isInitializationSection: part.role == .initialization, url: part.url)
            do {
                clear = try await decryptor.decrypt(data, context: context)
            } catch let error as DownloadError {
                throw error
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                throw DownloadError(
                    .decryptionFailed(reason: "the decryptor failed: \(error)"), part: index, url: part.url)
            }
        } else {
            throw DownloadError(.encrypted(method: decryption.key.method), part: index, url: part.url)
        }
        return clear
    }
}
