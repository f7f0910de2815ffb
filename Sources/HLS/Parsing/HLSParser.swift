public import Foundation

/// The result of parsing a playlist: the playlist and the recoverable violations found.
public struct HLSParseResult: Hashable, Sendable {
    /// The playlist.
    public var playlist: HLSPlaylist
    /// Violations that did not stop parsing, in line order.
    public var warnings: [HLSWarning]
}

/// Bounds that keep a hostile playlist from exhausting memory or time.
public struct HLSParserLimits: Hashable, Sendable {
    /// The longest line, in bytes.
    public var maximumLineLength: Int
    /// The most segments in a media playlist.
    public var maximumSegmentCount: Int
    /// The most attributes in one attribute list.
    public var maximumAttributeCount: Int
    /// The most variants, I-frame variants, renditions, session data and session keys in a
    /// multivariant playlist.
    public var maximumVariantCount: Int
    /// The most other tags kept: unknown tags and variable definitions.
    public var maximumKeptTagCount: Int
    /// The most warnings collected; beyond it one ``HLSWarning/Kind/moreWarnings(count:)`` says
    /// how many were dropped, so a hostile playlist cannot grow the list without bound.
    public var maximumWarningCount: Int
    /// The longest a URI or attribute value may grow by variable substitution, in bytes.
    public var maximumExpandedLength: Int
    /// The most bytes variable substitution may add to the whole playlist: a short playlist
    /// that repeats a long variable cannot make a huge one.
    public var maximumExpansion: Int

    /// Generous defaults: 64 KiB lines, a million segments (over three months of 10-second
    /// segments), 256 attributes, 10,000 variants and renditions, a million other tags kept,
    /// 1,000 warnings, 64 KiB substituted values and 16 MiB added by substitution in all.
    public init(
        maximumLineLength: Int = 65_536, maximumSegmentCount: Int = 1_000_000, maximumAttributeCount: Int = 256,
        maximumVariantCount: Int = 10_000, maximumKeptTagCount: Int = 1_000_000, maximumWarningCount: Int = 1_000,
        maximumExpandedLength: Int = 65_536, maximumExpansion: Int = 16 << 20
    ) {
        self.maximumExpandedLength = maximumExpandedLength
        self.maximumExpansion = maximumExpansion
        self.maximumLineLength = maximumLineLength
        self.maximumSegmentCount = maximumSegmentCount
        self.maximumAttributeCount = maximumAttributeCount
        self.maximumVariantCount = maximumVariantCount
        self.maximumKeptTagCount = maximumKeptTagCount
        self.maximumWarningCount = maximumWarningCount
    }
}

/// Parses HLS playlists (RFC 8216 and its successor draft) from bytes or text.
///
/// The parser makes one pass over the bytes and creates strings only for what the model keeps.
/// Violations that make a playlist unusable stop it with an ``HLSParseError`` carrying the line
/// number and the line; recoverable ones are collected as ``HLSWarning``s.
///
/// - Complexity: O(*n*) in the playlist's size.
public struct HLSParser: Sendable {
    /// How to parse.
    public struct Options: Sendable, Hashable {
        /// Accept a leading UTF-8 byte order mark with a warning instead of failing.
        public var allowsByteOrderMark: Bool
        /// Variables of the parent multivariant playlist, for `#EXT-X-DEFINE:IMPORT`; `nil` when
        /// the playlist has no parent.
        public var importedVariables: [String: String]?
        /// The playlist's own URL, for `#EXT-X-DEFINE:QUERYPARAM`.
        public var playlistURL: URL?
        /// The bounds enforced.
        public var limits: HLSParserLimits
        /// Read an `EXT-X-STREAM-INF` that carries its URI as a `URI` attribute instead of on
        /// the next line, as some production playlists do, with a warning. Off by default:
        /// RFC 8216 §4.3.4.2 puts the URI on the next line.
        public var allowsVariantURIAttribute: Bool

        /// Creates options; the defaults follow the RFC (a BOM fails, a variant's URI is on the
        /// next line) with generous limits.
        public init(
            allowsByteOrderMark: Bool = false, importedVariables: [String: String]? = nil, playlistURL: URL? = nil,
            limits: HLSParserLimits = HLSParserLimits(), allowsVariantURIAttribute: Bool = false
        ) {
            self.allowsByteOrderMark = allowsByteOrderMark
            self.importedVariables = importedVariables
            self.playlistURL = playlistURL
            self.limits = limits
            self.allowsVariantURIAttribute = allowsVariantURIAttribute
        }
    }

    /// How this parser parses.
    public var options: Options

    /// The highest `EXT-X-VERSION` whose features this parser knows (RFC 8216bis §8).
    public static let highestSupportedVersion = 12

    /// Whether the common segment (`#EXTINF` then a plain URI) takes the lean path; the tests
    /// turn it off to check that the general path gives the same results.
    package var usesPlainSegmentPath = true

    /// Creates a parser.
    public init(options: Options = Options()) {
        self.options = options
    }

    /// Parses a playlist from its bytes.
    ///
    /// - Throws: ``HLSParseError`` for a playlist that clients must reject.
    public func parse(_ data: Data) throws(HLSParseError) -> HLSParseResult {
        var result: Result<HLSParseResult, HLSParseError> = .failure(HLSParseError(.notUTF8, line: 0, text: ""))
        data.withUnsafeBytes { raw in
            result = parse(raw.assumingMemoryBound(to: UInt8.self))
        }
        return try result.get()
    }

    /// Parses a playlist from text.
    ///
    /// - Throws: ``HLSParseError`` for a playlist that clients must reject.
    public func parse(_ text: String) throws(HLSParseError) -> HLSParseResult {
        var text = text
        return try text.withUTF8 { parse($0) }.get()
    }

    /// Parses `bytes`. The parsed segments keep a copy of them, which the line search writes as
    /// it reads (no pass of its own).
    private func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Result<HLSParseResult, HLSParseError> {
        let copy = PlaylistBytes(count: bytes.count)
        return Result { () throws(HLSParseError) -> HLSParseResult in
            var state = ParserState(bytes: bytes, copy: copy, options: options)
            state.usesPlainSegmentPath = usesPlainSegmentPath
            return try state.run()
        }
    }
}
