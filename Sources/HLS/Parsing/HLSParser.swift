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

// MARK: - The parse

private let hash = UInt8(ascii: "#")
private let colon = UInt8(ascii: ":")
private let comma = UInt8(ascii: ",")
private let newline = UInt8(ascii: "\n")
private let carriageReturn = UInt8(ascii: "\r")
private let space = UInt8(ascii: " ")

/// The playlist kind that owns a tag.
private enum TagKind {
    case multivariant, media
}

/// The tags each playlist kind owns, for detecting a playlist that mixes both: one lookup per tag.
private let tagKinds: [String: TagKind] = Dictionary(
    uniqueKeysWithValues: multivariantTags.map { ($0, TagKind.multivariant) } + mediaTags.map { ($0, .media) })

private let multivariantTags: Set<String> = [
    "EXT-X-STREAM-INF", "EXT-X-I-FRAME-STREAM-INF", "EXT-X-MEDIA", "EXT-X-SESSION-DATA", "EXT-X-SESSION-KEY",
    "EXT-X-CONTENT-STEERING",
]
private let mediaTags: Set<String> = [
    "EXTINF", "EXT-X-TARGETDURATION", "EXT-X-MEDIA-SEQUENCE", "EXT-X-DISCONTINUITY-SEQUENCE", "EXT-X-ENDLIST",
    "EXT-X-PLAYLIST-TYPE", "EXT-X-I-FRAMES-ONLY", "EXT-X-BYTERANGE", "EXT-X-KEY", "EXT-X-MAP",
    "EXT-X-PROGRAM-DATE-TIME",
    "EXT-X-DISCONTINUITY", "EXT-X-GAP", "EXT-X-SERVER-CONTROL", "EXT-X-PART-INF", "EXT-X-PART", "EXT-X-SKIP",
    "EXT-X-PRELOAD-HINT", "EXT-X-RENDITION-REPORT", "EXT-X-DATERANGE",
]

/// Known attributes per tag (RFC 8216bis); others are kept and reported as warnings.
private let knownAttributes: [String: Set<String>] = [
    "EXT-X-STREAM-INF": [
        "BANDWIDTH", "AVERAGE-BANDWIDTH", "SCORE", "CODECS", "SUPPLEMENTAL-CODECS", "RESOLUTION", "FRAME-RATE",
        "HDCP-LEVEL",
        "ALLOWED-CPC", "VIDEO-RANGE", "REQ-VIDEO-LAYOUT", "STABLE-VARIANT-ID", "AUDIO", "VIDEO", "SUBTITLES",
        "CLOSED-CAPTIONS", "PATHWAY-ID", "PROGRAM-ID", "NAME",
    ],
    "EXT-X-I-FRAME-STREAM-INF": [
        "BANDWIDTH", "AVERAGE-BANDWIDTH", "SCORE", "CODECS", "SUPPLEMENTAL-CODECS", "RESOLUTION", "HDCP-LEVEL",
        "ALLOWED-CPC", "VIDEO-RANGE", "REQ-VIDEO-LAYOUT", "STABLE-VARIANT-ID", "VIDEO", "PATHWAY-ID", "PROGRAM-ID",
        "URI",
    ],
    "EXT-X-MEDIA": [
        "TYPE", "URI", "GROUP-ID", "LANGUAGE", "ASSOC-LANGUAGE", "NAME", "STABLE-RENDITION-ID", "DEFAULT", "AUTOSELECT",
        "FORCED", "INSTREAM-ID", "BIT-DEPTH", "SAMPLE-RATE", "CHARACTERISTICS", "CHANNELS", "BANDWIDTH",
    ],
    "EXT-X-KEY": ["METHOD", "URI", "IV", "KEYFORMAT", "KEYFORMATVERSIONS"],
    "EXT-X-MAP": ["URI", "BYTERANGE"],
    "EXT-X-SERVER-CONTROL": [
        "CAN-SKIP-UNTIL", "CAN-SKIP-DATERANGES", "HOLD-BACK", "PART-HOLD-BACK", "CAN-BLOCK-RELOAD",
    ],
    "EXT-X-PART-INF": ["PART-TARGET"],
    "EXT-X-PART": ["URI", "DURATION", "INDEPENDENT", "BYTERANGE", "GAP"],
    "EXT-X-PRELOAD-HINT": ["TYPE", "URI", "BYTERANGE-START", "BYTERANGE-LENGTH"],
    "EXT-X-RENDITION-REPORT": ["URI", "LAST-MSN", "LAST-PART"],
    "EXT-X-SKIP": ["SKIPPED-SEGMENTS", "RECENTLY-REMOVED-DATERANGES"],
    "EXT-X-CONTENT-STEERING": ["SERVER-URI", "PATHWAY-ID"],
]

private let yesOrNo: Set<String> = ["YES", "NO"]

/// The values each enumerated-string attribute may take (RFC 8216bis §4.4). A value outside
/// these makes a client ignore the tag (§6.3.1). Attributes whose only value is `YES` accept
/// `NO` too, read as absent: servers write it and it cannot mean anything else.
private let enumeratedValues: [String: [String: Set<String>]] = [
    "EXT-X-MEDIA": [
        "TYPE": Set(HLSRendition.MediaType.allCases.map(\.rawValue)), "DEFAULT": yesOrNo, "AUTOSELECT": yesOrNo,
        "FORCED": yesOrNo,
    ],
    "EXT-X-STREAM-INF": [
        "HDCP-LEVEL": ["TYPE-0", "TYPE-1", "NONE"], "VIDEO-RANGE": ["SDR", "HLG", "PQ"], "CLOSED-CAPTIONS": ["NONE"],
    ],
    "EXT-X-I-FRAME-STREAM-INF": ["HDCP-LEVEL": ["TYPE-0", "TYPE-1", "NONE"], "VIDEO-RANGE": ["SDR", "HLG", "PQ"]],
    "EXT-X-KEY": ["METHOD": ["NONE", "AES-128", "SAMPLE-AES", "SAMPLE-AES-CTR"]],
    "EXT-X-SESSION-KEY": ["METHOD": ["AES-128", "SAMPLE-AES", "SAMPLE-AES-CTR"]],
    "EXT-X-SESSION-DATA": ["FORMAT": ["JSON", "RAW"]],
    "EXT-X-START": ["PRECISE": yesOrNo],
    "EXT-X-SERVER-CONTROL": ["CAN-SKIP-DATERANGES": yesOrNo, "CAN-BLOCK-RELOAD": yesOrNo],
    "EXT-X-PART": ["INDEPENDENT": yesOrNo, "GAP": yesOrNo],
    "EXT-X-PRELOAD-HINT": ["TYPE": Set(HLSPreloadHint.HintType.allCases.map(\.rawValue))],
    "EXT-X-DATERANGE": ["END-ON-NEXT": yesOrNo],
]

/// What a tag's attribute list may hold: its known names (others are reported), and the values
/// each enumerated attribute may take. Small arrays: scanning a few names, comparing lengths
/// first, costs less than hashing each.
private struct AttributeRules {
    var known: [String]?
    var enumerated: [(name: String, values: [String])]?
}

/// ``AttributeRules`` by tag, one lookup per tag.
private let attributeRules: [String: AttributeRules] = {
    var rules: [String: AttributeRules] = [:]
    for (tag, names) in knownAttributes { rules[tag, default: AttributeRules()].known = names.sorted() }
    for (tag, attributes) in enumeratedValues {
        rules[tag, default: AttributeRules()].enumerated = attributes.map { ($0.key, $0.value.sorted()) }
    }
    return rules
}()

private struct PendingSegment {
    var duration: Double?
    /// The title's bytes in the playlist (`titleLength` 0 for none).
    var titleStart = 0
    var titleLength = 0
    var byteRange: (length: UInt64, offset: UInt64?)?
    var isDiscontinuity = false
    var programDateTime: String?
    var isGap = false
    var precedingTags: [String] = []
    var parts: [HLSPartialSegment] = []
    var durationLine = 0

    /// Clears the fields for the next segment, touching the rarely set ones only when set.
    mutating func reset() {
        duration = nil
        byteRange = nil
        isDiscontinuity = false
        isGap = false
        titleLength = 0
        if programDateTime != nil { programDateTime = nil }
        if !precedingTags.isEmpty { precedingTags = [] }
        if !parts.isEmpty { parts = [] }
    }
}

private struct ParserState {
    let bytes: UnsafeBufferPointer<UInt8>
    /// The playlist, kept by the parsed segments (their URIs are read from it on demand).
    /// The copy of the bytes that the parsed segments keep (their URIs and titles are read from
    /// it on demand), filled by the line search.
    let copy: PlaylistBytes
    let options: HLSParser.Options
    var warnings: [HLSWarning] = []
    var droppedWarningCount = 0
    /// Bytes variable substitution has added so far.
    var expandedBytes = 0
    var keptTagCount = 0
    var lineNumber = 0
    var variables: [String: String] = [:]
    var definitions: [HLSDefinition] = []
    var sawMultivariantTag = false
    var sawMediaTag = false

    // Shared header values.
    var version: Int?
    var independentSegments = false
    var start: HLSAttributeList?

    // Multivariant state.
    var renditions: [HLSRendition] = []
    var variants: [HLSVariant] = []
    var iFrameVariants: [HLSIFrameVariant] = []
    var sessionData: [HLSAttributeList] = []
    var sessionKeys: [HLSAttributeList] = []
    var unknownTags: [String] = []
    var pendingVariant: (attributes: HLSAttributeList, line: Int, text: String)?
    /// An ignored `EXT-X-STREAM-INF`'s URI line is still to come, and is skipped.
    var skipsVariantURI = false
    /// The tag being handled is ignored (RFC 8216 §6.3.1).
    var ignoresTag = false
    var contentSteering: HLSContentSteering?
    /// Features that need a compatibility version above 1, each with the line it first appears
    /// on (RFC 8216 §7, RFC 8216bis §8), checked against `EXT-X-VERSION` at the end.
    var versionFeatures: [(feature: String, required: Int, line: Int)] = []
    var sawFractionalDuration = false
    var sawByteRange = false
    var sawMap = false

    // Media state.
    var targetDuration: Int?
    var targetDurationLine = 0
    var mediaSequence: UInt64 = 0
    var discontinuitySequence: UInt64 = 0
    var playlistType: HLSMediaPlaylist.PlaylistType?
    var endList = false
    var iFramesOnly = false
    var serverControl: HLSServerControl?
    var partTarget: Double?
    var skip: HLSSkip?
    var dateRanges: [HLSDateRange] = []
    /// Each date range ID's attributes so far, joined, for the rules between tags of one ID.
    var dateRangesByID: [String: HLSAttributeList] = [:]
    var preloadHints: [HLSPreloadHint] = []
    var renditionReports: [HLSRenditionReport] = []
    var sawProgramDateTime = false
    var sawParts = false
    /// Whether the playlist has a `{` anywhere: when it has none, no URI needs the search for a
    /// variable reference.
    var containsBrace = true
    /// Whether the text is ASCII, known once every line has been read.
    var isASCII = false
    /// Whether `appendPlainSegment` may take a segment (see `HLSParser.usesPlainSegmentPath`).
    var usesPlainSegmentPath = true
    // Segments, compact: nothing counted by reference per segment (see HLSSegmentList).
    var records: [CompactSegments.Record] = []
    var substitutedURIs: [String] = []
    /// The segments' shared contexts; `contextIndex` is the one for the current keys and map
    /// (-1 for none), made anew when either changes.
    var contexts: [HLSSegmentContext] = []
    var contextIndex: Int32 = -1
    /// Titles made when parsing (see `handleURI`), each segment pointing to one by index.
    var storedTitles: [String] = []
    /// Where the last stored title's bytes are, for reusing it when the next title repeats it.
    var lastStoredTitle: (start: Int, length: Int, index: Int32)?
    var pending = PendingSegment()
    /// The keys in effect; a change is recorded in `keySets` at the next segment.
    var keys: [HLSKey] = [] {
        didSet { keysChanged = true }
    }
    var keysChanged = false
    var map: HLSMap? {
        didSet { mapChanged = true }
    }
    var mapChanged = false
    /// Segments seen before `#EXT-X-TARGETDURATION` (index and `#EXTINF` line), checked
    /// against it at the end; later ones are checked as they come.
    var segmentsBeforeTarget: [(index: Int, line: Int)] = []
    init(bytes: UnsafeBufferPointer<UInt8>, copy: PlaylistBytes, options: HLSParser.Options) {
        self.bytes = bytes
        self.copy = copy
        self.options = options
    }

    mutating func run() throws(HLSParseError) -> HLSParseResult {
        var position = 0
        // A media segment takes at least ~20 bytes ("#EXTINF:1,\na.ts\n") and rarely under 32:
        // reserving for 32 avoids re-copying every segment when the array would grow.
        records.reserveCapacity(Swift.min(bytes.count / 32, options.limits.maximumSegmentCount))
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF {
            guard options.allowsByteOrderMark else { throw HLSParseError(.byteOrderMark, line: 1, text: "") }
            warn(HLSWarning(.byteOrderMark, line: 1))
            position = 3
        }
        guard let base = bytes.baseAddress else { throw HLSParseError(.missingHeader, line: 1, text: "") }
        containsBrace = memchr(base + position, Int32(UInt8(ascii: "{")), bytes.count - position) != nil
        // The line search copies every byte it reads; the byte order mark is copied here.
        copy.base.copyMemory(from: base, byteCount: position)
        // The line search ORs every byte it reads into `highBits`, so the text is known to be
        // ASCII, or checked as UTF-8, without a pass of its own. Text that is not UTF-8 is
        // reported as such even when a line fails first.
        let textStart = position
        var highBits = HighBits()
        do throws(HLSParseError) {
            position = try header(from: position, highBits: &highBits)
            while position < bytes.count {
                let line = try nextLine(from: position, highBits: &highBits)
                try handleLine(position, line.end)
                position = line.next
            }
        } catch {
            try checkUTF8(from: textStart)
            throw error
        }
        isASCII = highBits.isASCII
        if !isASCII { try checkUTF8(from: textStart) }
        return try finish()
    }

    /// Reads the first line, which must be `#EXTM3U`, and returns where the next one starts.
    mutating func header(from start: Int, highBits: inout HighBits) throws(HLSParseError) -> Int {
        guard start < bytes.count else { throw HLSParseError(.missingHeader, line: 1, text: "") }
        let line = try nextLine(from: start, highBits: &highBits)
        guard text(start, line.end).trimmingCharacters(in: " ") == "#EXTM3U" else {
            throw HLSParseError(.missingHeader, line: lineNumber, text: text(start, line.end))
        }
        return line.next
    }

    /// Counts the line that starts at `start` and finds it: where its text ends (before the line
    /// feed and a carriage return) and where the next line starts. A line longer than the limit
    /// fails.
    ///
    /// - Complexity: O(*n*) in the line's length.
    @inline(__always)
    mutating func nextLine(from start: Int, highBits: inout HighBits) throws(HLSParseError) -> (end: Int, next: Int) {
        lineNumber += 1
        let lineFeed = Self.lineBreak(from: start, in: bytes, copyingTo: copy.base, highBits: &highBits)
        var end = lineFeed
        if end > start, bytes[end - 1] == carriageReturn { end -= 1 }
        guard end - start <= options.limits.maximumLineLength else {
            throw HLSParseError(
                .limitExceeded(limit: "line length", value: end - start), line: lineNumber,
                text: text(start, Swift.min(end, start + 200)))
        }
        return (end, lineFeed + 1)
    }

    /// Throws ``HLSParseError/Kind/notUTF8`` unless the bytes from `start` are UTF-8.
    func checkUTF8(from start: Int) throws(HLSParseError) {
        // `String(validating:as:)` needs iOS 18; decoding repairs, so a repaired string differs.
        let rest = UnsafeBufferPointer(rebasing: bytes[start...])
        guard String(decoding: rest, as: UTF8.self).utf8.elementsEqual(rest) else {
            throw HLSParseError(.notUTF8, line: 0, text: "")
        }
    }

    /// The longest title, in bytes, that a `String` holds without allocating (on 64-bit
    /// platforms): one is made when parsing rather than each time the segment is read.
    static let smallTitleLength = 15

    /// The high bits of every byte the line search has read.
    struct HighBits {
        var chunks = SIMD16<UInt8>()
        var words: UInt64 = 0

        /// Whether every byte read was below 0x80.
        var isASCII: Bool {
            (chunks & SIMD16<UInt8>(repeating: 0x80)) == SIMD16<UInt8>() && words & 0x8080_8080_8080_8080 == 0
        }
    }

    /// The offset of the first line feed at or after `start`, or the end of `bytes`, inline
    /// (playlist lines are short, and a call to `memchr` per line cost more than the search);
    /// every byte read is copied to the same offset of `copy` and ORed into `highBits`.
    ///
    /// - Complexity: O(*n*) in the line's length.
    @inline(__always)
    static func lineBreak(
        from start: Int, in bytes: UnsafeBufferPointer<UInt8>, copyingTo copy: UnsafeMutableRawPointer,
        highBits: inout HighBits
    ) -> Int {
        guard let base = bytes.baseAddress else { return bytes.count }
        let raw = UnsafeRawPointer(base)
        var offset = start
        // Sixteen bytes at a time find the chunk that holds the line feed; eight at a time then
        // place it.
        let lineFeeds = SIMD16<UInt8>(repeating: newline)
        while offset &+ 16 <= bytes.count {
            let chunk = raw.loadUnaligned(fromByteOffset: offset, as: SIMD16<UInt8>.self)
            copy.storeBytes(of: chunk, toByteOffset: offset, as: SIMD16<UInt8>.self)
            highBits.chunks |= chunk
            if any(chunk .== lineFeeds) { break }
            offset &+= 16
        }
        while offset &+ 8 <= bytes.count {
            let loaded = raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            copy.storeBytes(of: loaded, toByteOffset: offset, as: UInt64.self)
            let word = UInt64(littleEndian: loaded)
            highBits.words |= word
            // A zero byte in `word ^ 0x0A…` marks a line feed (the classic "has zero byte" test;
            // its lowest set bit is exact, later ones may be false positives).
            let marked = word ^ 0x0A0A_0A0A_0A0A_0A0A
            let found = (marked &- 0x0101_0101_0101_0101) & ~marked & 0x8080_8080_8080_8080
            if found != 0 { return offset &+ (found.trailingZeroBitCount >> 3) }
            offset &+= 8
        }
        while offset < bytes.count {
            copy.storeBytes(of: bytes[offset], toByteOffset: offset, as: UInt8.self)
            highBits.words |= UInt64(bytes[offset])
            if bytes[offset] == newline { break }
            offset &+= 1
        }
        return offset
    }

    func text(_ start: Int, _ end: Int) -> String {
        Self.text(start, end, in: bytes)
    }

    // The hot path calls static helpers with `bytes`: calling an instance method from a
    // mutating one made the compiler copy the whole parser state (about 480 bytes) per line.

    /// The text of `bytes[start..<end]`.
    static func text(_ start: Int, _ end: Int, in bytes: UnsafeBufferPointer<UInt8>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
    }

    mutating func handleLine(_ start: Int, _ end: Int) throws(HLSParseError) {
        var lineStart = start
        var lineEnd = end
        while lineStart < lineEnd, bytes[lineStart] == space || bytes[lineStart] == UInt8(ascii: "\t") {
            lineStart += 1
        }
        // A CR left before trailing blanks ("a.ts\r \n") is line-ending debris, not part of the URI.
        while lineEnd > lineStart,
            bytes[lineEnd - 1] == space || bytes[lineEnd - 1] == UInt8(ascii: "\t")
                || bytes[lineEnd - 1] == carriageReturn
        {
            lineEnd -= 1
        }
        guard lineEnd > lineStart else { return }
        if bytes[lineStart] == hash {
            // The two tags of every segment take a path that creates no strings.
            if Self.matches("#EXTINF:", at: lineStart, end: lineEnd, in: bytes) {
                try mediaTagSeen(lineStart, lineEnd)
                try parseDuration(lineStart + 8, lineEnd, lineStart: lineStart)
                return
            }
            if Self.matches("#EXT-X-BYTERANGE:", at: lineStart, end: lineEnd, in: bytes) {
                try mediaTagSeen(lineStart, lineEnd)
                pending.byteRange = try byteRange(from: lineStart + 17, to: lineEnd, lineStart: lineStart)
                if !sawByteRange {
                    sawByteRange = true
                    uses("EXT-X-BYTERANGE", version: 4)
                }
                return
            }
            // Live playlists date every few segments, and mark discontinuities: no name string.
            if Self.matches("#EXT-X-PROGRAM-DATE-TIME:", at: lineStart, end: lineEnd, in: bytes),
                lineEnd > lineStart + 25
            {
                try mediaTagSeen(lineStart, lineEnd)
                pending.programDateTime = text(lineStart + 25, lineEnd)
                sawProgramDateTime = true
                return
            }
            if lineEnd - lineStart == 20, Self.matches("#EXT-X-DISCONTINUITY", at: lineStart, end: lineEnd, in: bytes) {
                try mediaTagSeen(lineStart, lineEnd)
                pending.isDiscontinuity = true
                return
            }
            // A tag starts with "#EXT"; any other "#" line is a comment.
            guard lineEnd - lineStart >= 4, bytes[lineStart + 1] == UInt8(ascii: "E"),
                bytes[lineStart + 2] == UInt8(ascii: "X"),
                bytes[lineStart + 3] == UInt8(ascii: "T")
            else { return }
            var nameEnd = lineStart + 1
            while nameEnd < lineEnd, bytes[nameEnd] != colon { nameEnd += 1 }
            let name = text(lineStart + 1, nameEnd)
            try handleTag(name, valueStart: Swift.min(nameEnd + 1, lineEnd), lineStart: lineStart, lineEnd: lineEnd)
        } else {
            try handleURI(lineStart, lineEnd)
        }
    }

    /// Whether the line at `start` begins with `literal` (ASCII), compared 8 bytes at a time.
    static func matches(
        _ literal: StaticString, at start: Int, end: Int, in bytes: UnsafeBufferPointer<UInt8>
    ) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard end - start >= count, let base = bytes.baseAddress else { return false }
        let line = UnsafeRawPointer(base + start)
        let expected = UnsafeRawPointer(literal.utf8Start)
        var offset = 0
        while offset + 8 <= count {
            guard
                line.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                    == expected.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            else { return false }
            offset += 8
        }
        while offset < count {
            guard
                line.load(fromByteOffset: offset, as: UInt8.self)
                    == expected.load(fromByteOffset: offset, as: UInt8.self)
            else { return false }
            offset += 1
        }
        return true
    }

    /// Records a media playlist tag seen on the fast path, with the checks the slow path makes.
    mutating func mediaTagSeen(_ lineStart: Int, _ lineEnd: Int) throws(HLSParseError) {
        sawMediaTag = true
        if sawMultivariantTag {
            throw HLSParseError(.mixedPlaylistKinds, line: lineNumber, text: text(lineStart, lineEnd))
        }
        if let variant = pendingVariant {
            throw HLSParseError(.variantWithoutURI, line: variant.line, text: variant.text)
        }
    }

    /// `<length>[@<offset>]` from bytes.
    func byteRange(from start: Int, to end: Int, lineStart: Int) throws(HLSParseError) -> (
        length: UInt64, offset: UInt64?
    ) {
        var at = start
        while at < end, bytes[at] != UInt8(ascii: "@") { at += 1 }
        guard let length = Self.integer(start, at, in: bytes) else {
            throw HLSParseError(
                .invalidTagValue(tag: "EXT-X-BYTERANGE", value: text(start, end)), line: lineNumber,
                text: text(lineStart, end))
        }
        guard at < end else { return (length, nil) }
        guard let offset = Self.integer(at + 1, end, in: bytes) else {
            throw HLSParseError(
                .invalidTagValue(tag: "EXT-X-BYTERANGE", value: text(start, end)), line: lineNumber,
                text: text(lineStart, end))
        }
        guard offset <= UInt64.max - length else {
            throw HLSParseError(
                .impossibleByteRange(reason: "\(length)@\(offset) ends past 2⁶⁴"), line: lineNumber,
                text: text(lineStart, end))
        }
        return (length, offset)
    }

    /// A decimal-integer of at most 19 digits from bytes.
    static func integer(_ start: Int, _ end: Int, in bytes: UnsafeBufferPointer<UInt8>) -> UInt64? {
        guard end > start, end - start <= 19 else { return nil }
        var value: UInt64 = 0
        for index in start..<end {
            let byte = bytes[index]
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            value = value * 10 + UInt64(byte - 0x30)
        }
        return value
    }

    // MARK: Tags

    mutating func handleTag(_ name: String, valueStart: Int, lineStart: Int, lineEnd: Int) throws(HLSParseError) {
        if name == "EXTINF" {
            sawMediaTag = true
            try parseDuration(valueStart, lineEnd, lineStart: lineStart)
            return
        }
        let line = text(lineStart, lineEnd)
        // The value starts after "#NAME:", counted in bytes (counting characters is far slower).
        let value = line[line.utf8.index(line.startIndex, offsetBy: Swift.min(name.utf8.count + 2, line.utf8.count))...]
        let kindsBefore = (sawMultivariantTag, sawMediaTag)
        switch tagKinds[name] {
        case .multivariant?: sawMultivariantTag = true
        case .media?: sawMediaTag = true
        case nil: break
        }
        if sawMultivariantTag && sawMediaTag { throw HLSParseError(.mixedPlaylistKinds, line: lineNumber, text: line) }
        // An ignored tag (§6.3.1) does not decide what kind of playlist this is.
        defer {
            if ignoresTag {
                ignoresTag = false
                (sawMultivariantTag, sawMediaTag) = kindsBefore
            }
        }
        if let variant = pendingVariant {
            throw HLSParseError(.variantWithoutURI, line: variant.line, text: variant.text)
        }
        // Cases are compared in order: the tags that recur through a media playlist come first.
        switch name {
        case "EXT-X-KEY":
            guard let list = try attributes(value, tag: name, line: line) else { return }
            try key(list, line: line)
        case "EXT-X-MAP":
            guard let list = try attributes(value, tag: name, line: line) else { return }
            try require(["URI"], in: list, tag: name, line: line)
            var range: HLSByteRange?
            if let text = list.quotedString("BYTERANGE") {
                let parsed = try byteRange(Substring(text), tag: name, line: line)
                range = HLSByteRange(length: parsed.length, offset: parsed.offset ?? 0)
            }
            // The keys in effect here decrypt the section (RFC 8216bis §4.4.4.5).
            map = HLSMap(uri: list.quotedString("URI") ?? "", byteRange: range, keys: keys)
            if keys.contains(where: { $0.method == "AES-128" && $0.initializationVector == nil }) {
                warn(HLSWarning(.mapKeyWithoutIV(uri: list.quotedString("URI") ?? ""), line: lineNumber))
            }
            if !sawMap {
                sawMap = true
                uses("EXT-X-MAP", version: 5)
            }
        case "EXT-X-VERSION":
            // §4.3.1.2: a client MUST fail to parse a playlist with more than one.
            guard version == nil else { throw HLSParseError(.duplicateTag(tag: name), line: lineNumber, text: line) }
            let declared = try integer(value, tag: name, line: line)
            if declared > HLSParser.highestSupportedVersion {
                warn(
                    HLSWarning(
                        .versionNotSupported(declared: declared, highestSupported: HLSParser.highestSupportedVersion),
                        line: lineNumber))
            }
            version = declared
        case "EXT-X-INDEPENDENT-SEGMENTS":
            independentSegments = true
        case "EXT-X-START":
            guard let list = try attributes(value, tag: name, line: line) else { return }
            // §4.3.5.2: TIME-OFFSET is REQUIRED, a signed-decimal-floating-point.
            try require(["TIME-OFFSET"], in: list, tag: name, line: line)
            guard list.signedDecimalFloat("TIME-OFFSET") != nil else {
                throw HLSParseError(
                    .invalidAttribute(tag: name, attribute: "TIME-OFFSET", value: list["TIME-OFFSET"]?.value ?? ""),
                    line: lineNumber, text: line)
            }
            start = list
        case "EXT-X-DEFINE":
            guard let list = try attributes(value, tag: name, line: line, substitute: false) else { return }
            try define(list, line: line)
        case "EXT-X-STREAM-INF":
            guard let list = try attributes(value, tag: name, line: line) else {
                skipsVariantURI = true
                return
            }
            try require(["BANDWIDTH"], in: list, tag: name, line: line)
            try requireInteger("BANDWIDTH", in: list, tag: name, line: line)
            if options.allowsVariantURIAttribute, let uri = list.quotedString("URI") {
                var attributes = list
                attributes.attributes.removeAll { $0.name == "URI" }
                warn(HLSWarning(.variantURIAttribute, line: lineNumber))
                try countVariantLevelTag("variants", line: line)
                variants.append(HLSVariant(attributes: attributes, uri: uri))
                return
            }
            pendingVariant = (list, lineNumber, line)
        case "EXT-X-I-FRAME-STREAM-INF":
            guard let list = try attributes(value, tag: name, line: line) else { return }
            try require(["BANDWIDTH", "URI"], in: list, tag: name, line: line)
            try requireInteger("BANDWIDTH", in: list, tag: name, line: line)
            try countVariantLevelTag("I-frame variants", line: line)
            iFrameVariants.append(HLSIFrameVariant(attributes: list))
        case "EXT-X-MEDIA":
            guard let list = try attributes(value, tag: name, line: line) else { return }
            try rendition(list, line: line)
        case "EXT-X-SESSION-DATA":
            guard let list = try attributes(value, tag: name, line: line) else { return }
            try require(["DATA-ID"], in: list, tag: name, line: line)
            try countVariantLevelTag("session data", line: line)
            sessionData.append(list)
        case "EXT-X-SESSION-KEY":
            guard let list = try attributes(value, tag: name, line: line) else { return }
            try require(["METHOD"], in: list, tag: name, line: line)
            try countVariantLevelTag("session keys", line: line)
            sessionKeys.append(list)
        case "EXT-X-CONTENT-STEERING":
            guard let list = try attributes(value, tag: name, line: line) else { return }
            try requireQuoted(["SERVER-URI"], in: list, tag: name, line: line)
            contentSteering = HLSContentSteering(attributes: list)
        case "EXT-X-TARGETDURATION":
            targetDuration = try integer(value, tag: name, line: line)
            targetDurationLine = lineNumber
        case "EXT-X-MEDIA-SEQUENCE":
            mediaSequence = try unsigned(value, tag: name, line: line)
        case "EXT-X-DISCONTINUITY-SEQUENCE":
            discontinuitySequence = try unsigned(value, tag: name, line: line)
        case "EXT-X-PLAYLIST-TYPE":
            guard let type = HLSMediaPlaylist.PlaylistType(rawValue: String(value)) else {
                throw HLSParseError(.invalidTagValue(tag: name, value: String(value)), line: lineNumber, text: line)
            }
            playlistType = type
        case "EXT-X-ENDLIST":
            endList = true
        case "EXT-X-I-FRAMES-ONLY":
            iFramesOnly = true
            uses("EXT-X-I-FRAMES-ONLY", version: 4)
        case "EXT-X-DISCONTINUITY":
            pending.isDiscontinuity = true
        case "EXT-X-GAP":
            pending.isGap = true
        case "EXT-X-PROGRAM-DATE-TIME":
            guard !value.isEmpty else {
                throw HLSParseError(.invalidTagValue(tag: name, value: ""), line: lineNumber, text: line)
            }
            pending.programDateTime = String(value)
            sawProgramDateTime = true
        case "EXT-X-BYTERANGE":
            pending.byteRange = try byteRange(value, tag: name, line: line)
            if !sawByteRange {
                sawByteRange = true
                uses("EXT-X-BYTERANGE", version: 4)
            }
        case "EXT-X-SERVER-CONTROL":
            guard let list = try attributes(value, tag: name, line: line) else { return }
            for attribute in ["CAN-SKIP-UNTIL", "HOLD-BACK", "PART-HOLD-BACK"] where list.contains(attribute) {
                try requireFloat(attribute, in: list, tag: name, line: line)
            }
            serverControl = HLSServerControl(attributes: list)
        case "EXT-X-PART-INF":
            guard let list = try attributes(value, tag: name, line: line) else { return }
            try require(["PART-TARGET"], in: list, tag: name, line: line)
            try requireFloat("PART-TARGET", in: list, tag: name, line: line)
            partTarget = list.decimalFloat("PART-TARGET")
        case "EXT-X-PART":
            guard let list = try attributes(value, tag: name, line: line) else { return }
            try part(list, line: line)
        case "EXT-X-PRELOAD-HINT":
            guard let list = try attributes(value, tag: name, line: line) else { return }
            try preloadHint(list, line: line)
        case "EXT-X-RENDITION-REPORT":
            guard let list = try attributes(value, tag: name, line: line) else { return }
            try requireQuoted(["URI"], in: list, tag: name, line: line)
            for attribute in ["LAST-MSN", "LAST-PART"] where list.contains(attribute) {
                try requireInteger(attribute, in: list, tag: name, line: line)
            }
            try keepTag(line)
            renditionReports.append(
                HLSRenditionReport(
                    uri: list.quotedString("URI") ?? "", lastMediaSequenceNumber: list.decimalInteger("LAST-MSN"),
                    lastPartIndex: list.decimalInteger("LAST-PART")))
        case "EXT-X-SKIP":
            guard let list = try attributes(value, tag: name, line: line) else { return }
            try skip(list, line: line)
        case "EXT-X-DATERANGE":
            guard let list = try attributes(value, tag: name, line: line) else { return }
            try dateRange(list, line: line)
        default:
            // Unknown tags are kept verbatim, where they stood: before the next segment of a
            // media playlist (moved to the header list if the playlist turns out multivariant).
            try keepTag(line)
            let verbatim = String(line.dropFirst())
            if sawMultivariantTag {
                unknownTags.append(verbatim)
            } else {
                pending.precedingTags.append(verbatim)
            }
        }
    }

    /// Records that the playlist uses `feature`, which needs compatibility version `required`,
    /// on the current line, unless an earlier line already did.
    mutating func uses(_ feature: String, version required: Int) {
        guard !versionFeatures.contains(where: { $0.feature == feature }) else { return }
        versionFeatures.append((feature, required, lineNumber))
    }

    /// `#EXT-X-PART`: a partial segment of the segment that follows (RFC 8216bis §4.4.4.9).
    mutating func part(_ list: HLSAttributeList, line: String) throws(HLSParseError) {
        let tag = "EXT-X-PART"
        try requireQuoted(["URI"], in: list, tag: tag, line: line)
        try require(["DURATION"], in: list, tag: tag, line: line)
        try requireFloat("DURATION", in: list, tag: tag, line: line)
        let uri = list.quotedString("URI") ?? ""
        let duration = list.decimalFloat("DURATION") ?? 0
        var range: HLSByteRange?
        if let attribute = list["BYTERANGE"] {
            guard attribute.isQuoted else {
                throw HLSParseError(
                    .invalidAttribute(tag: tag, attribute: "BYTERANGE", value: attribute.value), line: lineNumber,
                    text: line)
            }
            let parsed = try byteRange(Substring(attribute.value), tag: tag, line: line)
            if let offset = parsed.offset {
                range = HLSByteRange(length: parsed.length, offset: offset)
            } else {
                // The range follows the previous part of the same parent segment, in the same resource.
                guard let previous = pending.parts.last, let previousRange = previous.byteRange, previous.uri == uri
                else {
                    throw HLSParseError(
                        .impossibleByteRange(reason: "no offset, and the previous part is not a range of \(uri)"),
                        line: lineNumber, text: line)
                }
                guard previousRange.end <= UInt64.max - parsed.length else {
                    throw HLSParseError(
                        .impossibleByteRange(
                            reason: "\(parsed.length)@\(previousRange.end) (offset implied) ends past 2⁶⁴"),
                        line: lineNumber, text: line)
                }
                range = HLSByteRange(length: parsed.length, offset: previousRange.end)
            }
        }
        try keepTag(line)
        if let partTarget, duration > partTarget {
            warn(HLSWarning(.partLongerThanTarget(duration: duration, target: partTarget), line: lineNumber))
        }
        sawParts = true
        pending.parts.append(
            HLSPartialSegment(
                uri: uri, duration: duration, byteRange: range, isIndependent: list.boolean("INDEPENDENT") ?? false,
                isGap: list.boolean("GAP") ?? false))
    }

    /// `#EXT-X-PRELOAD-HINT` (RFC 8216bis §4.4.5.3).
    mutating func preloadHint(_ list: HLSAttributeList, line: String) throws(HLSParseError) {
        let tag = "EXT-X-PRELOAD-HINT"
        try require(["TYPE"], in: list, tag: tag, line: line)
        try requireQuoted(["URI"], in: list, tag: tag, line: line)
        guard let type = list.enumeratedString("TYPE").flatMap(HLSPreloadHint.HintType.init(rawValue:)) else {
            throw HLSParseError(
                .invalidAttribute(tag: tag, attribute: "TYPE", value: list["TYPE"]?.value ?? ""), line: lineNumber,
                text: line)
        }
        for attribute in ["BYTERANGE-START", "BYTERANGE-LENGTH"] where list.contains(attribute) {
            try requireInteger(attribute, in: list, tag: tag, line: line)
        }
        let start = list.decimalInteger("BYTERANGE-START") ?? 0
        let length = list.decimalInteger("BYTERANGE-LENGTH")
        if let length, start > UInt64.max - length {
            throw HLSParseError(
                .impossibleByteRange(reason: "\(length)@\(start) ends past 2⁶⁴"), line: lineNumber, text: line)
        }
        try keepTag(line)
        preloadHints.append(
            HLSPreloadHint(
                type: type, uri: list.quotedString("URI") ?? "", byteRangeStart: start, byteRangeLength: length))
    }

    /// `#EXT-X-SKIP`: the first segments of a delta update, left out (RFC 8216bis §4.4.5.2).
    mutating func skip(_ list: HLSAttributeList, line: String) throws(HLSParseError) {
        let tag = "EXT-X-SKIP"
        guard skip == nil else { throw HLSParseError(.duplicateTag(tag: tag), line: lineNumber, text: line) }
        guard records.isEmpty, pending.duration == nil, pending.parts.isEmpty else {
            throw HLSParseError(
                .misplacedTag(tag: tag, reason: "it replaces the first segments, and segments precede it"),
                line: lineNumber, text: line)
        }
        try require(["SKIPPED-SEGMENTS"], in: list, tag: tag, line: line)
        try requireInteger("SKIPPED-SEGMENTS", in: list, tag: tag, line: line)
        var removed: [String]?
        if list.contains("RECENTLY-REMOVED-DATERANGES") {
            try requireQuoted(["RECENTLY-REMOVED-DATERANGES"], in: list, tag: tag, line: line)
            let text = list.quotedString("RECENTLY-REMOVED-DATERANGES") ?? ""
            removed = text.isEmpty ? [] : text.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            uses("EXT-X-SKIP replacing date ranges", version: 10)
        }
        uses("EXT-X-SKIP", version: 9)
        skip = HLSSkip(
            skippedSegmentCount: list.decimalInteger("SKIPPED-SEGMENTS") ?? 0, recentlyRemovedDateRanges: removed)
    }

    /// `#EXT-X-DATERANGE`, kept unless it breaks a rule of RFC 8216bis §4.4.5.1, which clients
    /// SHOULD answer by ignoring the tag.
    mutating func dateRange(_ list: HLSAttributeList, line: String) throws(HLSParseError) {
        guard let id = list.quotedString("ID") else {
            warn(HLSWarning(.dateRangeIgnored(id: "", reason: "it has no quoted ID"), line: lineNumber))
            return
        }
        if let reason = Self.dateRangeProblem(list, earlier: dateRangesByID[id]) {
            warn(HLSWarning(.dateRangeIgnored(id: id, reason: reason), line: lineNumber))
            return
        }
        try keepTag(line)
        var combined = dateRangesByID[id] ?? HLSAttributeList()
        for attribute in list where !combined.contains(attribute.name) { combined.attributes.append(attribute) }
        dateRangesByID[id] = combined
        dateRanges.append(HLSDateRange(attributes: list))
    }

    /// Why a date range tag breaks RFC 8216bis §4.4.5.1, given the earlier tags of its ID
    /// joined, or `nil` if it does not.
    static func dateRangeProblem(_ list: HLSAttributeList, earlier: HLSAttributeList?) -> String? {
        if let earlier, let clash = list.first(where: { new in earlier[new.name].map { $0 != new } ?? false }) {
            return "\(clash.name) differs from an earlier tag with this ID"
        }
        var combined = earlier ?? HLSAttributeList()
        for attribute in list where !combined.contains(attribute.name) { combined.attributes.append(attribute) }
        guard combined.contains("START-DATE") else { return "no START-DATE in it or an earlier tag with this ID" }
        guard let start = combined.quotedString("START-DATE").flatMap(HLSDate.parse) else {
            return "START-DATE is not an ISO 8601 date"
        }
        for name in ["DURATION", "PLANNED-DURATION"] where combined.contains(name) {
            guard combined.decimalFloat(name) != nil else { return "\(name) is not a non-negative number" }
        }
        for name in ["SCTE35-CMD", "SCTE35-OUT", "SCTE35-IN"] where combined.contains(name) {
            guard combined.isHexadecimalSequence(name) else { return "\(name) is not a hexadecimal sequence" }
        }
        if let text = combined["END-DATE"] {
            guard text.isQuoted, let end = HLSDate.parse(text.value) else { return "END-DATE is not an ISO 8601 date" }
            guard end >= start else { return "END-DATE is before START-DATE" }
            // Dates carry milliseconds: a sum that misses by less than one still agrees.
            if let duration = combined.decimalFloat("DURATION"),
                abs(end.timeIntervalSince(start) - duration) >= 0.001
            {
                return "END-DATE is not START-DATE plus DURATION"
            }
        }
        if combined.boolean("END-ON-NEXT") == true {
            guard combined.contains("CLASS") else { return "END-ON-NEXT=YES without a CLASS" }
            guard !combined.contains("DURATION"), !combined.contains("END-DATE") else {
                return "END-ON-NEXT=YES with a DURATION or END-DATE"
            }
        }
        return nil
    }

    /// `#EXTINF:<duration>,[<title>]`, read from the bytes: the hot path of media playlists.
    mutating func parseDuration(_ start: Int, _ end: Int, lineStart: Int) throws(HLSParseError) {
        if sawMultivariantTag { throw HLSParseError(.mixedPlaylistKinds, line: lineNumber, text: text(lineStart, end)) }
        if let variant = pendingVariant {
            throw HLSParseError(.variantWithoutURI, line: variant.line, text: variant.text)
        }
        // The common duration ("6.006,") is read in the same pass that finds the comma, and is
        // finite (at most 15 digits).
        var commaIndex = start
        let duration: Double
        if let short = Self.shortDecimal(from: start, to: end, stoppingAt: &commaIndex, in: bytes) {
            duration = short
        } else {
            commaIndex = start
            while commaIndex < end, bytes[commaIndex] != comma { commaIndex += 1 }
            guard let long = Self.decimal(UnsafeBufferPointer(rebasing: bytes[start..<commaIndex])), long.isFinite
            else {
                throw HLSParseError(
                    .invalidTagValue(tag: "EXTINF", value: text(start, commaIndex)), line: lineNumber,
                    text: text(lineStart, end))
            }
            duration = long
        }
        // RFC 8216 §7: a duration written with a decimal point needs version 3.
        if !sawFractionalDuration, let base = bytes.baseAddress,
            memchr(base + start, Int32(UInt8(ascii: ".")), commaIndex - start) != nil
        {
            sawFractionalDuration = true
            uses("a decimal EXTINF duration", version: 3)
        }
        if commaIndex == end {
            warn(HLSWarning(.durationWithoutComma, line: lineNumber))
            pending.titleLength = 0
        } else {
            // The title stays in the bytes until a segment is read.
            pending.titleStart = commaIndex + 1
            pending.titleLength = end - commaIndex - 1
        }
        pending.duration = duration
        pending.durationLine = lineNumber
    }

    /// A non-negative decimal number (`10`, `10.5`, `.5`) from bytes, correctly rounded, or `nil`.
    ///
    /// Most durations have at most 15 significant digits: their digits form an integer below
    /// 2⁵³, and dividing it by an exact power of ten is a single, correctly rounded operation
    /// (Clinger's fast path). Encoders also write 17-digit durations (`10.007799999999996`):
    /// up to 19 digits, ``roundedQuotient(_:powerOfTen:)`` divides exactly in integers. Anything
    /// else goes through the standard library.
    static func decimal(_ digits: UnsafeBufferPointer<UInt8>) -> Double? {
        // The common case in one pass: at most 15 digits in all, so the digits form an integer
        // below 10¹⁵ < 2⁵³ and one division by an exact power of ten rounds correctly.
        let scan = scanDecimal(from: 0, to: digits.count, in: digits)
        guard scan.stop == digits.count, scan.digitCount > 0 else { return nil }
        return scan.digitCount <= 15 ? scan.value : longDecimal(digits)
    }

    /// A duration of at most 15 digits that ends at a comma or at `end`, read in one pass, with
    /// `stop` set to the comma (or `end`); `nil` for anything else, which ``decimal(_:)`` reads.
    ///
    /// - Complexity: O(*n*) in the digits.
    @inline(__always)
    static func shortDecimal(
        from start: Int, to end: Int, stoppingAt stop: inout Int, in bytes: UnsafeBufferPointer<UInt8>
    ) -> Double? {
        let scan = scanDecimal(from: start, to: end, in: bytes)
        guard scan.stop == end || bytes[scan.stop] == comma, scan.digitCount > 0, scan.digitCount <= 15 else {
            return nil
        }
        stop = scan.stop
        return scan.value
    }

    /// Digits, then optionally `.` and more digits, read from `start` up to the first other byte
    /// or `end`: where the scan stopped, how many digits it read, and their value as a decimal
    /// when there are at most 15 of them (meaningless beyond).
    ///
    /// - Complexity: O(*n*) in the digits.
    @inline(__always)
    static func scanDecimal(from start: Int, to end: Int, in bytes: UnsafeBufferPointer<UInt8>) -> (
        stop: Int, digitCount: Int, value: Double
    ) {
        var index = start
        var significand: UInt64 = 0
        while index < end {
            let digit = bytes[index] &- 0x30
            guard digit <= 9 else { break }
            significand = significand &* 10 &+ UInt64(digit)
            index += 1
        }
        let integerDigits = index - start
        var fractionDigits = 0
        if index < end, bytes[index] == UInt8(ascii: ".") {
            index += 1
            let fractionStart = index
            while index < end {
                let digit = bytes[index] &- 0x30
                guard digit <= 9 else { break }
                significand = significand &* 10 &+ UInt64(digit)
                index += 1
            }
            fractionDigits = index - fractionStart
        }
        // Below 10¹⁵ the signed conversion (one instruction) is exact, and one division by an
        // exact power of ten rounds correctly; the caller discards the value beyond.
        let value = Double(Int64(bitPattern: significand)) / exactPowerOfTen(Swift.min(fractionDigits, 15))
        return (index, integerDigits + fractionDigits, value)
    }

    /// 10ⁿ for 0 ≤ *n* ≤ 15, exact, without a lazily initialised table.
    @inline(__always)
    static func exactPowerOfTen(_ exponent: Int) -> Double {
        switch exponent {
        case 0: 1
        case 1: 1e1
        case 2: 1e2
        case 3: 1e3
        case 4: 1e4
        case 5: 1e5
        case 6: 1e6
        case 7: 1e7
        case 8: 1e8
        case 9: 1e9
        case 10: 1e10
        case 11: 1e11
        case 12: 1e12
        case 13: 1e13
        case 14: 1e14
        default: 1e15
        }
    }

    /// ``decimal(_:)`` for more than 15 digits (leading zeros included).
    static func longDecimal(_ digits: UnsafeBufferPointer<UInt8>) -> Double? {
        var significand: UInt64 = 0
        var significantDigits = 0
        var fractionDigits = 0
        var sawDigit = false
        var inFraction = false
        for byte in digits {
            switch byte {
            case 0x30...0x39:
                sawDigit = true
                if significantDigits > 0 || byte != 0x30 { significantDigits += 1 }
                if significantDigits <= 19 { significand = significand &* 10 &+ UInt64(byte - 0x30) }
                if inFraction { fractionDigits += 1 }
            case UInt8(ascii: ".") where !inFraction:
                inFraction = true
            default:
                return nil
            }
        }
        guard sawDigit else { return nil }
        if significantDigits <= 15, fractionDigits <= 22, significand < 1 << 53 {
            return Double(significand) / powersOfTen[fractionDigits]
        }
        if significantDigits <= 19, fractionDigits <= 19,
            let value = roundedQuotient(significand, powerOfTen: fractionDigits)
        {
            return value
        }
        return Double(String(decoding: digits, as: UTF8.self)).flatMap { $0.isFinite ? $0 : nil }
    }

    /// `numerator ÷ 10^exponent`, correctly rounded (to nearest, ties to even), for quotients
    /// below 2⁵²; `nil` otherwise.
    ///
    /// The numerator is shifted left so that the integer quotient has 53 or 54 bits; a 128-by-64
    /// bit division then gives it exactly, with the remainder deciding the rounding.
    ///
    /// - Complexity: O(1).
    static func roundedQuotient(_ numerator: UInt64, powerOfTen exponent: Int) -> Double? {
        guard exponent >= 0, exponent <= 19 else { return nil }
        if exponent == 0 { return Double(numerator) }  // the conversion rounds correctly
        let divisor = integerPowersOfTen[exponent]
        guard numerator > 0, numerator / divisor < 1 << 52 else { return numerator == 0 ? 0 : nil }
        let numeratorBits = UInt64.bitWidth - numerator.leadingZeroBitCount
        let divisorBits = UInt64.bitWidth - divisor.leadingZeroBitCount
        // numerator × 2^shift ÷ divisor lies in (2⁵², 2⁵⁴); shift is at most 53 + 64 = 117.
        var shift = 53 + divisorBits - numeratorBits
        let high = shift >= 64 ? numerator << (shift - 64) : numerator >> (64 - shift)
        let low = shift >= 64 ? 0 : numerator << shift
        var (quotient, remainder) = divisor.dividingFullWidth((high: high, low: low))
        var roundUp: Bool
        if quotient >= 1 << 53 {
            // One bit too many: the dropped bit is the half, the remainder the sticky rest.
            let half = quotient & 1 == 1
            quotient >>= 1
            shift -= 1
            roundUp = half && (remainder != 0 || quotient & 1 == 1)
        } else {
            let rest = divisor - remainder
            roundUp = remainder > rest || (remainder == rest && quotient & 1 == 1)
        }
        if roundUp { quotient += 1 }
        return Double(sign: .plus, exponent: -shift, significand: Double(quotient))
    }

    /// 10⁰ … 10¹⁹ as integers.
    static let integerPowersOfTen: [UInt64] = (0...19).map { exponent in
        (0..<exponent).reduce(UInt64(1)) { value, _ in value * 10 }
    }

    /// 10⁰ … 10²², all exactly representable.
    static let powersOfTen: [Double] = (0...22).map { exponent in
        (0..<exponent).reduce(1.0) { value, _ in value * 10 }
    }

    mutating func handleURI(_ start: Int, _ end: Int) throws(HLSParseError) {
        if appendPlainSegment(start, end) { return }
        // Only a URI with a "{" can hold a variable reference.
        let hasBrace =
            containsBrace
            && (bytes.baseAddress.map { memchr($0 + start, Int32(UInt8(ascii: "{")), end - start) != nil } ?? false)
        // An ignored variant's URI goes with it; a segment's URI (after an EXTINF) never does.
        if skipsVariantURI {
            skipsVariantURI = false
            if pending.duration == nil { return }
        }
        if let variant = pendingVariant {
            let raw = Self.text(start, end, in: bytes)
            let uri = hasBrace ? try substitute(raw, line: raw) : raw
            guard variants.count + renditions.count < options.limits.maximumVariantCount else {
                throw HLSParseError(
                    .limitExceeded(limit: "variants", value: variants.count + 1), line: lineNumber, text: raw)
            }
            variants.append(HLSVariant(attributes: variant.attributes, uri: uri))
            pendingVariant = nil
            return
        }
        guard let duration = pending.duration else {
            throw HLSParseError(.uriWithoutDuration, line: lineNumber, text: Self.text(start, end, in: bytes))
        }
        guard records.count < options.limits.maximumSegmentCount else {
            throw HLSParseError(
                .limitExceeded(limit: "segments", value: records.count + 1), line: lineNumber,
                text: Self.text(start, end, in: bytes))
        }
        // The URI stays in the bytes unless a variable changed it.
        var uriStart = start
        var uriLength = Int32(clamping: end - start)
        if hasBrace || end - start > Int(Int32.max) {
            let raw = Self.text(start, end, in: bytes)
            substitutedURIs.append(hasBrace ? try substitute(raw, line: raw) : raw)
            uriStart = substitutedURIs.count - 1
            uriLength = -1
        }
        var record = CompactSegments.Record(
            uriStart: uriStart, duration: duration, rangeLength: 0, rangeOffset: 0, uriLength: uriLength,
            context: -1, storedTitle: -1, titleDistance: 0, titleLength: 0, hasRange: false,
            isDiscontinuity: pending.isDiscontinuity)
        // A title is stored once when it repeats the previous one or is short enough to need no
        // allocation (encoders that write titles mostly repeat one); a long one is found from the
        // URI's position when the two are near enough to say so, and stored otherwise.
        var title: String?
        if pending.titleLength > 0 {
            let distance = start - pending.titleStart
            if let repeated = repeatedTitle() {
                record.storedTitle = repeated
            } else if pending.titleLength <= Self.smallTitleLength {
                title = Self.text(pending.titleStart, pending.titleStart + pending.titleLength, in: bytes)
            } else if uriLength >= 0, distance <= Int(UInt32.max), pending.titleLength <= Int(UInt16.max) {
                record.titleDistance = UInt32(distance)
                record.titleLength = UInt16(pending.titleLength)
            } else {
                title = Self.text(pending.titleStart, pending.titleStart + pending.titleLength, in: bytes)
            }
        }
        if let range = pending.byteRange {
            record.hasRange = true
            record.rangeLength = range.length
            if let offset = range.offset {
                record.rangeOffset = offset
            } else {
                // RFC 8216 §4.3.2.2: the sub-range follows the previous segment's, which must be
                // a sub-range of the same resource.
                guard let previous = records.last, previous.hasRange,
                    Self.sameURI(previous, record, in: bytes, substituted: substitutedURIs)
                else {
                    let uri = Self.uri(of: record, in: bytes, substituted: substitutedURIs)
                    throw HLSParseError(
                        .impossibleByteRange(reason: "no offset, and the previous segment is not a range of \(uri)"),
                        line: lineNumber, text: Self.text(start, end, in: bytes))
                }
                // Every kept range ends within 2⁶⁴, so the previous end cannot wrap.
                record.rangeOffset = previous.rangeOffset + previous.rangeLength
            }
            // An implied offset can put the end past 2⁶⁴ where the written numbers did not.
            guard record.rangeOffset <= UInt64.max - record.rangeLength else {
                throw HLSParseError(
                    .impossibleByteRange(
                        reason: "\(record.rangeLength)@\(record.rangeOffset) (offset implied) ends past 2⁶⁴"),
                    line: lineNumber, text: Self.text(start, end, in: bytes))
            }
        }
        if keysChanged || mapChanged {
            keysChanged = false
            mapChanged = false
            if let context = HLSSegmentContext.make(
                keys: keys, map: map, programDateTime: nil, isGap: false, precedingTags: [], parts: [])
            {
                contexts.append(context)
                contextIndex = Int32(contexts.count - 1)
            } else {
                contextIndex = -1
            }
        }
        record.context = contextIndex
        if pending.programDateTime != nil || pending.isGap || !pending.precedingTags.isEmpty || !pending.parts.isEmpty {
            // A segment with rare fields has a context of its own.
            contexts.append(
                HLSSegmentContext(
                    keys: keys, map: map, programDateTime: pending.programDateTime, isGap: pending.isGap,
                    precedingTags: pending.precedingTags, parts: pending.parts))
            record.context = Int32(contexts.count - 1)
        }
        if let title {
            storedTitles.append(title)
            record.storedTitle = Int32(storedTitles.count - 1)
            lastStoredTitle = (pending.titleStart, pending.titleLength, record.storedTitle)
        }
        // §4.3.3.1: each duration, rounded to the nearest integer, is at most the target.
        if let targetDuration {
            // Rounded half away from zero, a duration passes the target from target + ½ on.
            if duration >= Double(targetDuration) + 0.5 {
                warn(
                    HLSWarning(
                        .segmentLongerThanTarget(duration: duration, target: targetDuration),
                        line: pending.durationLine))
            }
        } else {
            segmentsBeforeTarget.append((records.count, pending.durationLine))
        }
        records.append(record)
        pending.reset()
    }

    /// Appends the segment whose URI is `bytes[start..<end]` when it is the common kind: after an
    /// `#EXTINF` within the target duration, with no variable, key or map change, rare tag other
    /// than a date or a byte range, or new title to store. Returns `false`, having changed
    /// nothing, for any other line, which the general path below handles; the two must agree,
    /// which a property test checks by parsing edited playlists both ways.
    ///
    /// - Complexity: O(*t*) for a title of *t* bytes.
    @inline(__always)
    mutating func appendPlainSegment(_ start: Int, _ end: Int) -> Bool {
        guard usesPlainSegmentPath, !containsBrace, !skipsVariantURI, pendingVariant == nil,
            let duration = pending.duration,
            let targetDuration, duration < Double(targetDuration) + 0.5,
            !keysChanged, !mapChanged, !pending.isGap,
            pending.precedingTags.isEmpty, pending.parts.isEmpty, records.count < options.limits.maximumSegmentCount,
            end - start <= Int(Int32.max)
        else { return false }
        // A byte range: an omitted offset follows the previous segment's range of the same URI
        // (RFC 8216 §4.3.2.2); anything the general path would refuse is left to it.
        var range: (length: UInt64, offset: UInt64)?
        if let written = pending.byteRange {
            var offset: UInt64
            if let explicit = written.offset {
                offset = explicit
            } else {
                guard let previous = records.last, previous.hasRange, previous.uriLength == Int32(end - start),
                    let base = bytes.baseAddress, memcmp(base + previous.uriStart, base + start, end - start) == 0
                else { return false }
                // Every kept range ends within 2⁶⁴, so the previous end cannot wrap.
                offset = previous.rangeOffset + previous.rangeLength
            }
            guard offset <= UInt64.max - written.length else { return false }
            range = (written.length, offset)
        }
        var storedTitle: Int32 = -1
        if pending.titleLength > 0 {
            guard let repeated = repeatedTitle() else { return false }
            storedTitle = repeated
        }
        var context = contextIndex
        if let date = pending.programDateTime {
            // A dated segment has a context of its own (as in the general path).
            contexts.append(
                HLSSegmentContext(
                    keys: keys, map: map, programDateTime: date, isGap: false, precedingTags: [], parts: []))
            context = Int32(contexts.count - 1)
            pending.programDateTime = nil
        }
        records.append(
            CompactSegments.Record(
                uriStart: start, duration: duration, rangeLength: range?.length ?? 0, rangeOffset: range?.offset ?? 0,
                uriLength: Int32(end - start), context: context, storedTitle: storedTitle, titleDistance: 0,
                titleLength: 0, hasRange: range != nil, isDiscontinuity: pending.isDiscontinuity))
        pending.duration = nil
        pending.byteRange = nil
        pending.isDiscontinuity = false
        pending.titleLength = 0
        return true
    }

    /// The index of the last stored title when the pending segment's title repeats it.
    ///
    /// - Complexity: O(*t*) for a title of *t* bytes.
    @inline(__always)
    func repeatedTitle() -> Int32? {
        guard let last = lastStoredTitle, last.length == pending.titleLength, let base = bytes.baseAddress,
            memcmp(base + last.start, base + pending.titleStart, last.length) == 0
        else { return nil }
        return last.index
    }

    /// The URI of a segment being parsed.
    static func uri(
        of record: CompactSegments.Record, in bytes: UnsafeBufferPointer<UInt8>, substituted: [String]
    ) -> String {
        record.uriLength < 0
            ? substituted[record.uriStart]
            : text(record.uriStart, record.uriStart + Int(record.uriLength), in: bytes)
    }

    /// Whether two segments being parsed name the same URI (compared as bytes when both are).
    static func sameURI(
        _ first: CompactSegments.Record, _ second: CompactSegments.Record, in bytes: UnsafeBufferPointer<UInt8>,
        substituted: [String]
    ) -> Bool {
        if first.uriLength >= 0, second.uriLength >= 0 {
            guard first.uriLength == second.uriLength, let base = bytes.baseAddress else { return false }
            return memcmp(base + first.uriStart, base + second.uriStart, Int(first.uriLength)) == 0
        }
        return uri(of: first, in: bytes, substituted: substituted)
            == uri(of: second, in: bytes, substituted: substituted)
    }

    // MARK: Values

    func integer(_ value: Substring, tag: String, line: String) throws(HLSParseError) -> Int {
        guard let number = HLSAttributeList.decimalInteger(value), number <= UInt64(Int.max) else {
            throw HLSParseError(.invalidTagValue(tag: tag, value: String(value)), line: lineNumber, text: line)
        }
        return Int(number)
    }

    func unsigned(_ value: Substring, tag: String, line: String) throws(HLSParseError) -> UInt64 {
        guard let number = HLSAttributeList.decimalInteger(value) else {
            throw HLSParseError(.invalidTagValue(tag: tag, value: String(value)), line: lineNumber, text: line)
        }
        return number
    }

    func byteRange(_ value: Substring, tag: String, line: String) throws(HLSParseError) -> (
        length: UInt64, offset: UInt64?
    ) {
        let parts = value.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 1 || parts.count == 2, let length = HLSAttributeList.decimalInteger(parts[0]) else {
            throw HLSParseError(.invalidTagValue(tag: tag, value: String(value)), line: lineNumber, text: line)
        }
        guard parts.count == 2 else { return (length, nil) }
        guard let offset = HLSAttributeList.decimalInteger(parts[1]) else {
            throw HLSParseError(.invalidTagValue(tag: tag, value: String(value)), line: lineNumber, text: line)
        }
        guard offset <= UInt64.max - length else {
            throw HLSParseError(
                .impossibleByteRange(reason: "\(length)@\(offset) ends past 2⁶⁴"), line: lineNumber, text: line)
        }
        return (length, offset)
    }

    /// The tag's attribute list, checked: `nil` when a known enumerated attribute has a value
    /// this parser does not know, and the tag is to be ignored (RFC 8216 §6.3.1).
    mutating func attributes(_ value: Substring, tag: String, line: String, substitute: Bool = true)
        throws(HLSParseError)
        -> HLSAttributeList?
    {
        var list: HLSAttributeList
        do {
            list = try HLSAttributeList.parse(value, maximumCount: options.limits.maximumAttributeCount)
        } catch .duplicateName(let name) {
            throw HLSParseError(.duplicateAttribute(tag: tag, attribute: name), line: lineNumber, text: line)
        } catch .tooMany(let count) {
            throw HLSParseError(.limitExceeded(limit: "attributes", value: count), line: lineNumber, text: line)
        } catch {
            throw HLSParseError(.malformedAttributeList(reason: error.reason), line: lineNumber, text: line)
        }
        let rules = attributeRules[tag]
        if let enumerated = rules?.enumerated {
            for attribute in list where !attribute.isQuoted {
                guard let allowed = enumerated.first(where: { Self.sameText($0.name, attribute.name) })?.values,
                    !allowed.contains(where: { Self.sameText($0, attribute.value) })
                else { continue }
                warn(
                    HLSWarning(
                        .unrecognizedValue(tag: tag, attribute: attribute.name, value: attribute.value),
                        line: lineNumber))
                ignoresTag = true
                return nil
            }
        }
        // Most names do not start with "R": one byte rules them out before the prefix test.
        if list.attributes.contains(where: { $0.name.utf8.first == UInt8(ascii: "R") && $0.name.hasPrefix("REQ-") }) {
            uses("an attribute named REQ-…", version: 12)
        }
        // A reference needs a "{"; most playlists have none at all.
        if substitute,
            !variables.isEmpty || (containsBrace && list.attributes.contains { Self.hasVariableReference($0.value) })
        {
            for index in list.attributes.indices
            where list.attributes[index].isQuoted || list.attributes[index].value.hasPrefix("0x") {
                list.attributes[index].value = try self.substitute(list.attributes[index].value, line: line)
            }
        }
        if let known = rules?.known {
            let adoptsURI = tag == "EXT-X-STREAM-INF" && options.allowsVariantURIAttribute
            for attribute in list
            where !known.contains(where: { Self.sameText($0, attribute.name) })
                && !(adoptsURI && attribute.name == "URI")
            {
                warn(HLSWarning(.unknownAttribute(tag: tag, attribute: attribute.name), line: lineNumber))
            }
        }
        return list
    }

    /// Whether two short strings are equal, comparing byte counts first (most names differ in
    /// length, and the count of a short string is read without a call).
    @inline(__always)
    static func sameText(_ first: String, _ second: String) -> Bool {
        first.utf8.count == second.utf8.count && first == second
    }

    func require(_ names: [String], in list: HLSAttributeList, tag: String, line: String) throws(HLSParseError) {
        for name in names where !list.contains(name) {
            throw HLSParseError(.missingAttribute(tag: tag, attribute: name), line: lineNumber, text: line)
        }
    }

    /// Checks that each of `names` is present as a quoted string.
    func requireQuoted(_ names: [String], in list: HLSAttributeList, tag: String, line: String) throws(HLSParseError) {
        try require(names, in: list, tag: tag, line: line)
        for name in names where list.quotedString(name) == nil {
            throw HLSParseError(
                .invalidAttribute(tag: tag, attribute: name, value: list[name]?.value ?? ""), line: lineNumber,
                text: line)
        }
    }

    /// Checks that `name` is a decimal-floating-point value.
    func requireFloat(_ name: String, in list: HLSAttributeList, tag: String, line: String) throws(HLSParseError) {
        guard list.decimalFloat(name) != nil else {
            throw HLSParseError(
                .invalidAttribute(tag: tag, attribute: name, value: list[name]?.value ?? ""), line: lineNumber,
                text: line)
        }
    }

    func requireInteger(_ name: String, in list: HLSAttributeList, tag: String, line: String) throws(HLSParseError) {
        guard list.decimalInteger(name) != nil else {
            throw HLSParseError(
                .invalidAttribute(tag: tag, attribute: name, value: list[name]?.value ?? ""), line: lineNumber,
                text: line)
        }
    }

    mutating func rendition(_ list: HLSAttributeList, line: String) throws(HLSParseError) {
        let tag = "EXT-X-MEDIA"
        try require(["TYPE", "GROUP-ID", "NAME"], in: list, tag: tag, line: line)
        guard let typeName = list.enumeratedString("TYPE"), let type = HLSRendition.MediaType(rawValue: typeName) else {
            throw HLSParseError(
                .invalidAttribute(tag: tag, attribute: "TYPE", value: list["TYPE"]?.value ?? ""), line: lineNumber,
                text: line)
        }
        for name in ["GROUP-ID", "NAME"] where list.quotedString(name) == nil {
            throw HLSParseError(
                .invalidAttribute(tag: tag, attribute: name, value: list[name]?.value ?? ""), line: lineNumber,
                text: line)
        }
        // Unknown values were ignored with the tag; what is left here is a quoted value.
        for name in ["DEFAULT", "AUTOSELECT", "FORCED"] where list.contains(name) && list.boolean(name) == nil {
            throw HLSParseError(
                .invalidAttribute(tag: tag, attribute: name, value: list[name]?.value ?? ""), line: lineNumber,
                text: line)
        }
        // §4.3.4.1: AUTOSELECT, when present, MUST be YES if DEFAULT is YES.
        if list.boolean("DEFAULT") == true, let autoselect = list.boolean("AUTOSELECT"), !autoselect {
            warn(HLSWarning(.defaultWithoutAutoselect(name: list.quotedString("NAME") ?? ""), line: lineNumber))
        }
        if list.quotedString("INSTREAM-ID")?.hasPrefix("SERVICE") == true {
            uses("INSTREAM-ID=\"SERVICE…\"", version: 7)
        }
        if type == .closedCaptions {
            // §4.4.6.1: captions live in the video; they have an INSTREAM-ID and no URI.
            if list.contains("URI") {
                throw HLSParseError(
                    .invalidAttribute(tag: tag, attribute: "URI", value: list["URI"]?.value ?? ""), line: lineNumber,
                    text: line)
            }
            try require(["INSTREAM-ID"], in: list, tag: tag, line: line)
        }
        if type == .subtitles { try require(["URI"], in: list, tag: tag, line: line) }
        guard variants.count + renditions.count < options.limits.maximumVariantCount else {
            throw HLSParseError(
                .limitExceeded(limit: "renditions", value: renditions.count + 1), line: lineNumber, text: line)
        }
        renditions.append(HLSRendition(attributes: list))
    }

    mutating func key(_ list: HLSAttributeList, line: String) throws(HLSParseError) {
        let tag = "EXT-X-KEY"
        try require(["METHOD"], in: list, tag: tag, line: line)
        guard let method = list.enumeratedString("METHOD") else {
            throw HLSParseError(
                .invalidAttribute(tag: tag, attribute: "METHOD", value: list["METHOD"]?.value ?? ""), line: lineNumber,
                text: line)
        }
        if method == "NONE" {
            // §4.3.2.4: NONE ends encryption; other attributes MUST NOT be present.
            if let extra = list.attributes.first(where: { $0.name != "METHOD" }) {
                throw HLSParseError(
                    .invalidAttribute(tag: tag, attribute: extra.name, value: extra.value), line: lineNumber, text: line
                )
            }
            keys = [HLSKey(attributes: list)]
            return
        }
        try require(["URI"], in: list, tag: tag, line: line)
        if list.contains("IV") {
            guard list.isHexadecimalSequence("IV") else {
                throw HLSParseError(
                    .invalidAttribute(tag: tag, attribute: "IV", value: list["IV"]?.value ?? ""), line: lineNumber,
                    text: line)
            }
            uses("the IV attribute of EXT-X-KEY", version: 2)
        }
        if method.hasPrefix("SAMPLE-AES") { uses("EXT-X-KEY METHOD=\(method)", version: 5) }
        for name in ["KEYFORMAT", "KEYFORMATVERSIONS"] where list.contains(name) {
            uses("the \(name) attribute of EXT-X-KEY", version: 5)
        }
        let new = HLSKey(attributes: list)
        // A key replaces the key of the same KEYFORMAT (and a NONE key).
        keys.removeAll { !$0.encrypts || $0.keyFormat == new.keyFormat }
        keys.append(new)
    }

    // MARK: Variables

    mutating func define(_ list: HLSAttributeList, line: String) throws(HLSParseError) {
        let tag = "EXT-X-DEFINE"
        uses("EXT-X-DEFINE", version: 8)
        if let name = list.quotedString("NAME") {
            guard let value = list.quotedString("VALUE") else {
                throw HLSParseError(.missingAttribute(tag: tag, attribute: "VALUE"), line: lineNumber, text: line)
            }
            try add(name, value: value, source: .value(value), line: line)
        } else if let name = list.quotedString("IMPORT") {
            guard let imported = options.importedVariables else {
                warn(HLSWarning(.importWithoutParent(name: name), line: lineNumber))
                try keepTag(line)
                definitions.append(HLSDefinition(name: name, source: .imported))
                return
            }
            guard let value = imported[name] else {
                throw HLSParseError(.undefinedVariable(name: name), line: lineNumber, text: line)
            }
            try add(name, value: value, source: .imported, line: line)
        } else if let name = list.quotedString("QUERYPARAM") {
            let items = options.playlistURL.flatMap {
                URLComponents(url: $0, resolvingAgainstBaseURL: true)?.queryItems
            }
            guard let value = items?.first(where: { $0.name == name })?.value else {
                throw HLSParseError(.missingQueryParameter(name: name), line: lineNumber, text: line)
            }
            try add(name, value: value, source: .queryParameter, line: line)
        } else {
            throw HLSParseError(.missingAttribute(tag: tag, attribute: "NAME"), line: lineNumber, text: line)
        }
    }

    mutating func add(_ name: String, value: String, source: HLSDefinition.Source, line: String) throws(HLSParseError) {
        guard variables[name] == nil else {
            throw HLSParseError(.duplicateVariable(name: name), line: lineNumber, text: line)
        }
        if source == .queryParameter { uses("EXT-X-DEFINE with QUERYPARAM", version: 11) }
        try keepTag(line)
        variables[name] = value
        definitions.append(HLSDefinition(name: name, source: source))
    }

    /// Checks that one more variant-level entry (an I-frame variant, session data or key) fits
    /// under ``HLSParserLimits/maximumVariantCount`` with the variants and renditions.
    func countVariantLevelTag(_ what: String, line: String) throws(HLSParseError) {
        let count = variants.count + renditions.count + iFrameVariants.count + sessionData.count + sessionKeys.count
        guard count < options.limits.maximumVariantCount else {
            throw HLSParseError(.limitExceeded(limit: what, value: count + 1), line: lineNumber, text: line)
        }
    }

    /// Counts one more kept tag (unknown, session data or key, definition) against its limit.
    mutating func keepTag(_ line: String) throws(HLSParseError) {
        keptTagCount += 1
        guard keptTagCount <= options.limits.maximumKeptTagCount else {
            throw HLSParseError(.limitExceeded(limit: "kept tags", value: keptTagCount), line: lineNumber, text: line)
        }
    }

    /// Collects `warning`, or counts it as dropped beyond the limit.
    mutating func warn(_ warning: HLSWarning) {
        if warnings.count < options.limits.maximumWarningCount {
            warnings.append(warning)
        } else {
            droppedWarningCount += 1
        }
    }

    /// The warnings in line order, then the count of those dropped, if any.
    func finalWarnings() -> [HLSWarning] {
        var sorted = warnings.sorted { $0.line < $1.line }
        if droppedWarningCount > 0 { sorted.append(HLSWarning(.moreWarnings(count: droppedWarningCount), line: 0)) }
        return sorted
    }

    /// Whether `text` holds `{$`, compared as bytes (Foundation's `contains` is far slower).
    static func hasVariableReference(_ text: String) -> Bool {
        var previous: UInt8 = 0
        for byte in text.utf8 {
            if byte == UInt8(ascii: "$"), previous == UInt8(ascii: "{") { return true }
            previous = byte
        }
        return false
    }

    /// Replaces every `{$name}` in `text`; an undefined name fails (§4.3: MUST).
    mutating func substitute(_ text: String, line: String) throws(HLSParseError) -> String {
        guard Self.hasVariableReference(text) else { return text }
        let limits = options.limits
        var result = ""
        var rest = Substring(text)
        // Bounds come before each append, so a hostile value never gets built.
        func append(_ piece: some StringProtocol) throws(HLSParseError) {
            let length = result.utf8.count + piece.utf8.count
            guard length <= limits.maximumExpandedLength else {
                throw HLSParseError(
                    .limitExceeded(limit: "expanded length", value: length), line: lineNumber, text: line)
            }
            result += piece
        }
        while let open = rest.range(of: "{$") {
            try append(rest[..<open.lowerBound])
            guard let close = rest[open.upperBound...].firstIndex(of: "}") else {
                try append(rest[open.lowerBound...])
                rest = rest[rest.endIndex...]
                break
            }
            let name = String(rest[open.upperBound..<close])
            guard let value = variables[name] else {
                throw HLSParseError(.undefinedVariable(name: name), line: lineNumber, text: line)
            }
            try append(value)
            rest = rest[rest.index(after: close)...]
        }
        try append(rest)
        expandedBytes += Swift.max(result.utf8.count - text.utf8.count, 0)
        guard expandedBytes <= limits.maximumExpansion else {
            throw HLSParseError(.limitExceeded(limit: "expansion", value: expandedBytes), line: lineNumber, text: line)
        }
        return result
    }

    // MARK: Finishing

    mutating func finish() throws(HLSParseError) -> HLSParseResult {
        if let variant = pendingVariant {
            throw HLSParseError(.variantWithoutURI, line: variant.line, text: variant.text)
        }
        if sawMultivariantTag {
            checkVersion()
            let playlist = HLSMultivariantPlaylist(
                version: version, hasIndependentSegments: independentSegments, start: start, definitions: definitions,
                renditions: renditions, variants: variants, iFrameVariants: iFrameVariants, sessionData: sessionData,
                sessionKeys: sessionKeys, contentSteering: contentSteering,
                unknownTags: pending.precedingTags + unknownTags)
            return HLSParseResult(playlist: .multivariant(playlist), warnings: finalWarnings())
        }
        guard let targetDuration else {
            throw HLSParseError(.missingTargetDuration, line: 0, text: "no #EXT-X-TARGETDURATION")
        }
        if pending.duration != nil {
            warn(HLSWarning(.danglingDuration, line: pending.durationLine))
        }
        for (index, line) in segmentsBeforeTarget where records[index].duration.rounded() > Double(targetDuration) {
            warn(
                HLSWarning(
                    .segmentLongerThanTarget(duration: records[index].duration, target: targetDuration), line: line))
        }
        if sawMap && !iFramesOnly {
            uses("EXT-X-MAP without EXT-X-I-FRAMES-ONLY", version: 6)
        }
        checkVersion()
        if !dateRanges.isEmpty && !sawProgramDateTime {
            warn(HLSWarning(.dateRangesWithoutProgramDateTime, line: 0))
        }
        if sawParts && partTarget == nil {
            warn(HLSWarning(.partsWithoutPartInformation, line: 0))
        }
        // What follows the last segment belongs to the segment still being produced.
        var inProgress: HLSSegmentInProgress?
        if !pending.parts.isEmpty || pending.programDateTime != nil || pending.isDiscontinuity {
            inProgress = HLSSegmentInProgress(
                parts: pending.parts, programDateTime: pending.programDateTime,
                isDiscontinuity: pending.isDiscontinuity, keys: keys, map: map)
        }
        var playlist = HLSMediaPlaylist(
            version: version, targetDuration: targetDuration, mediaSequence: mediaSequence,
            discontinuitySequence: discontinuitySequence, playlistType: playlistType, hasEndList: endList,
            isIFramesOnly: iFramesOnly, hasIndependentSegments: independentSegments, start: start,
            definitions: definitions, serverControl: serverControl, partTargetDuration: partTarget, skip: skip,
            dateRanges: dateRanges, segmentInProgress: inProgress, preloadHints: preloadHints,
            renditionReports: renditionReports, trailingTags: pending.precedingTags)
        playlist.segments = HLSSegmentList(
            compact: CompactSegments(
                bytes: copy, records: records, uris: substitutedURIs, contexts: contexts,
                titles: storedTitles, isASCII: isASCII))
        return HLSParseResult(playlist: .media(playlist), warnings: finalWarnings())
    }

    /// Warns of each feature used above the declared compatibility version, 1 when no
    /// `EXT-X-VERSION` is given (RFC 8216 §7, RFC 8216bis §8).
    mutating func checkVersion() {
        let declared = version ?? 1
        for use in versionFeatures where use.required > declared {
            warn(
                HLSWarning(
                    .versionTooLow(feature: use.feature, required: use.required, declared: declared), line: use.line))
        }
    }
}
