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

    /// Generous defaults: 64 KiB lines, a million segments (over three months of 10-second
    /// segments), 256 attributes, 10,000 variants and renditions, a million other tags kept,
    /// 1,000 warnings.
    public init(
        maximumLineLength: Int = 65_536, maximumSegmentCount: Int = 1_000_000, maximumAttributeCount: Int = 256,
        maximumVariantCount: Int = 10_000, maximumKeptTagCount: Int = 1_000_000, maximumWarningCount: Int = 1_000
    ) {
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

        /// Creates options; the defaults follow the RFC (a BOM fails) with generous limits.
        public init(
            allowsByteOrderMark: Bool = false, importedVariables: [String: String]? = nil, playlistURL: URL? = nil,
            limits: HLSParserLimits = HLSParserLimits()
        ) {
            self.allowsByteOrderMark = allowsByteOrderMark
            self.importedVariables = importedVariables
            self.playlistURL = playlistURL
            self.limits = limits
        }
    }

    /// How this parser parses.
    public var options: Options

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
            let bytes = raw.bindMemory(to: UInt8.self)
            result = Result { () throws(HLSParseError) -> HLSParseResult in
                var state = ParserState(bytes: bytes, source: data, options: options)
                return try state.run()
            }
        }
        return try result.get()
    }

    /// Parses a playlist from text.
    ///
    /// - Throws: ``HLSParseError`` for a playlist that clients must reject.
    public func parse(_ text: String) throws(HLSParseError) -> HLSParseResult {
        try parse(Data(text.utf8))
    }
}

// MARK: - The parse

private let hash = UInt8(ascii: "#")
private let colon = UInt8(ascii: ":")
private let comma = UInt8(ascii: ",")
private let newline = UInt8(ascii: "\n")
private let carriageReturn = UInt8(ascii: "\r")
private let space = UInt8(ascii: " ")

/// The tags each playlist kind owns, for detecting a playlist that mixes both.
private let multivariantTags: Set<String> = [
    "EXT-X-STREAM-INF", "EXT-X-I-FRAME-STREAM-INF", "EXT-X-MEDIA", "EXT-X-SESSION-DATA", "EXT-X-SESSION-KEY",
]
private let mediaTags: Set<String> = [
    "EXTINF", "EXT-X-TARGETDURATION", "EXT-X-MEDIA-SEQUENCE", "EXT-X-DISCONTINUITY-SEQUENCE", "EXT-X-ENDLIST",
    "EXT-X-PLAYLIST-TYPE", "EXT-X-I-FRAMES-ONLY", "EXT-X-BYTERANGE", "EXT-X-KEY", "EXT-X-MAP",
    "EXT-X-PROGRAM-DATE-TIME",
    "EXT-X-DISCONTINUITY", "EXT-X-GAP",
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
]

private struct PendingSegment {
    var duration: Double?
    var title: String?
    var byteRange: (length: UInt64, offset: UInt64?)?
    var isDiscontinuity = false
    var programDateTime: String?
    var isGap = false
    var precedingTags: [String] = []
    var durationLine = 0

    /// Clears the fields for the next segment, touching the rarely set ones only when set.
    mutating func reset() {
        duration = nil
        byteRange = nil
        isDiscontinuity = false
        isGap = false
        if title != nil { title = nil }
        if programDateTime != nil { programDateTime = nil }
        if !precedingTags.isEmpty { precedingTags = [] }
    }
}

private struct ParserState {
    let bytes: UnsafeBufferPointer<UInt8>
    /// The playlist, kept by the parsed segments (their URIs are read from it on demand).
    let source: Data
    let options: HLSParser.Options
    var warnings: [HLSWarning] = []
    var droppedWarningCount = 0
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

    // Media state.
    var targetDuration: Int?
    var targetDurationLine = 0
    var mediaSequence: UInt64 = 0
    var discontinuitySequence: UInt64 = 0
    var playlistType: HLSMediaPlaylist.PlaylistType?
    var endList = false
    var iFramesOnly = false
    // Segments, compact: nothing counted by reference per segment (see HLSSegmentList).
    var records: [CompactSegments.Record] = []
    var substitutedURIs: [String] = []
    var keySets: [[HLSKey]] = [[]]
    var keySetIndex: Int32 = 0
    var maps: [HLSMap] = []
    var mapIndex: Int32 = -1
    var segmentExtras: [CompactSegments.Extras] = []
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
    /// The `#EXTINF` line of each segment, for warnings found after parsing.
    var segmentLines: [Int] = []
    init(bytes: UnsafeBufferPointer<UInt8>, source: Data, options: HLSParser.Options) {
        self.bytes = bytes
        self.source = source
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
        if !Self.isASCII(UnsafeBufferPointer(rebasing: bytes[position...])) {
            guard String(validating: bytes[position...], as: UTF8.self) != nil else {
                throw HLSParseError(.notUTF8, line: 0, text: "")
            }
        }
        var first = true
        guard let base = bytes.baseAddress else { throw HLSParseError(.missingHeader, line: 1, text: "") }
        while position < bytes.count {
            lineNumber += 1
            // memchr scans many bytes per step; the line break is the parser's most frequent search.
            let found = memchr(base + position, Int32(newline), bytes.count - position)
            let end = found.map { UnsafeRawPointer($0) - UnsafeRawPointer(base) } ?? bytes.count
            let next = end + 1
            var lineEnd = end
            if lineEnd > position, bytes[lineEnd - 1] == carriageReturn { lineEnd -= 1 }
            guard lineEnd - position <= options.limits.maximumLineLength else {
                throw HLSParseError(
                    .limitExceeded(limit: "line length", value: lineEnd - position), line: lineNumber,
                    text: text(position, Swift.min(lineEnd, position + 200)))
            }
            if first {
                guard text(position, lineEnd).trimmingCharacters(in: " ") == "#EXTM3U" else {
                    throw HLSParseError(.missingHeader, line: lineNumber, text: text(position, lineEnd))
                }
                first = false
            } else {
                try handleLine(position, lineEnd)
            }
            position = next
        }
        if first { throw HLSParseError(.missingHeader, line: 1, text: "") }
        return try finish()
    }

    /// Whether every byte is below 0x80, checked eight bytes at a time.
    ///
    /// - Complexity: O(*n*).
    static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        var offset = 0
        var highBits: UInt64 = 0
        while offset + 32 <= bytes.count {
            highBits |= raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            highBits |= raw.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)
            highBits |= raw.loadUnaligned(fromByteOffset: offset + 16, as: UInt64.self)
            highBits |= raw.loadUnaligned(fromByteOffset: offset + 24, as: UInt64.self)
            if highBits & 0x8080_8080_8080_8080 != 0 { return false }
            offset += 32
        }
        while offset < bytes.count {
            if bytes[offset] >= 0x80 { return false }
            offset += 1
        }
        return true
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
        let value = line.dropFirst(name.utf8.count + 2)
        if multivariantTags.contains(name) { sawMultivariantTag = true }
        if mediaTags.contains(name) { sawMediaTag = true }
        if sawMultivariantTag && sawMediaTag { throw HLSParseError(.mixedPlaylistKinds, line: lineNumber, text: line) }
        if let variant = pendingVariant {
            throw HLSParseError(.variantWithoutURI, line: variant.line, text: variant.text)
        }
        switch name {
        case "EXT-X-VERSION":
            version = try integer(value, tag: name, line: line)
        case "EXT-X-INDEPENDENT-SEGMENTS":
            independentSegments = true
        case "EXT-X-START":
            start = try attributes(value, tag: name, line: line)
        case "EXT-X-DEFINE":
            try define(try attributes(value, tag: name, line: line, substitute: false), line: line)
        case "EXT-X-STREAM-INF":
            let list = try attributes(value, tag: name, line: line)
            try require(["BANDWIDTH"], in: list, tag: name, line: line)
            try requireInteger("BANDWIDTH", in: list, tag: name, line: line)
            pendingVariant = (list, lineNumber, line)
        case "EXT-X-I-FRAME-STREAM-INF":
            let list = try attributes(value, tag: name, line: line)
            try require(["BANDWIDTH", "URI"], in: list, tag: name, line: line)
            try requireInteger("BANDWIDTH", in: list, tag: name, line: line)
            try countVariantLevelTag("I-frame variants", line: line)
            iFrameVariants.append(HLSIFrameVariant(attributes: list))
        case "EXT-X-MEDIA":
            try rendition(try attributes(value, tag: name, line: line), line: line)
        case "EXT-X-SESSION-DATA":
            let list = try attributes(value, tag: name, line: line)
            try require(["DATA-ID"], in: list, tag: name, line: line)
            try countVariantLevelTag("session data", line: line)
            sessionData.append(list)
        case "EXT-X-SESSION-KEY":
            let list = try attributes(value, tag: name, line: line)
            try require(["METHOD"], in: list, tag: name, line: line)
            try countVariantLevelTag("session keys", line: line)
            sessionKeys.append(list)
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
        case "EXT-X-DISCONTINUITY":
            pending.isDiscontinuity = true
        case "EXT-X-GAP":
            pending.isGap = true
        case "EXT-X-PROGRAM-DATE-TIME":
            guard !value.isEmpty else {
                throw HLSParseError(.invalidTagValue(tag: name, value: ""), line: lineNumber, text: line)
            }
            pending.programDateTime = String(value)
        case "EXT-X-BYTERANGE":
            pending.byteRange = try byteRange(value, tag: name, line: line)
        case "EXT-X-KEY":
            try key(try attributes(value, tag: name, line: line), line: line)
        case "EXT-X-MAP":
            let list = try attributes(value, tag: name, line: line)
            try require(["URI"], in: list, tag: name, line: line)
            var range: HLSByteRange?
            if let text = list.quotedString("BYTERANGE") {
                let parsed = try byteRange(Substring(text), tag: name, line: line)
                range = HLSByteRange(length: parsed.length, offset: parsed.offset ?? 0)
            }
            map = HLSMap(uri: list.quotedString("URI") ?? "", byteRange: range)
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

    /// `#EXTINF:<duration>,[<title>]`, read from the bytes: the hot path of media playlists.
    mutating func parseDuration(_ start: Int, _ end: Int, lineStart: Int) throws(HLSParseError) {
        if sawMultivariantTag { throw HLSParseError(.mixedPlaylistKinds, line: lineNumber, text: text(lineStart, end)) }
        if let variant = pendingVariant {
            throw HLSParseError(.variantWithoutURI, line: variant.line, text: variant.text)
        }
        var commaIndex = start
        while commaIndex < end, bytes[commaIndex] != comma { commaIndex += 1 }
        guard let duration = Self.decimal(UnsafeBufferPointer(rebasing: bytes[start..<commaIndex])), duration.isFinite
        else {
            throw HLSParseError(
                .invalidTagValue(tag: "EXTINF", value: text(start, commaIndex)), line: lineNumber,
                text: text(lineStart, end))
        }
        if commaIndex == end {
            warn(HLSWarning(.durationWithoutComma, line: lineNumber))
            pending.title = nil
        } else {
            pending.title = commaIndex + 1 < end ? Self.text(commaIndex + 1, end, in: bytes) : nil
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
        // Only a URI with a "{" can hold a variable reference.
        let hasBrace =
            bytes.baseAddress.map { memchr($0 + start, Int32(UInt8(ascii: "{")), end - start) != nil } ?? false
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
            uriStart: uriStart, uriLength: uriLength, keySet: keySetIndex, map: mapIndex, extras: -1,
            duration: duration, rangeLength: 0, rangeOffset: 0, hasRange: false,
            isDiscontinuity: pending.isDiscontinuity)
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
        if keysChanged {
            keysChanged = false
            if keys.isEmpty {
                keySetIndex = 0
            } else {
                keySets.append(keys)
                keySetIndex = Int32(keySets.count - 1)
            }
            record.keySet = keySetIndex
        }
        if mapChanged {
            mapChanged = false
            if let map {
                maps.append(map)
                mapIndex = Int32(maps.count - 1)
            } else {
                mapIndex = -1
            }
            record.map = mapIndex
        }
        if pending.title != nil || pending.programDateTime != nil || pending.isGap || !pending.precedingTags.isEmpty {
            segmentExtras.append(
                CompactSegments.Extras(
                    title: pending.title, programDateTime: pending.programDateTime, isGap: pending.isGap,
                    precedingTags: pending.precedingTags))
            record.extras = Int32(segmentExtras.count - 1)
        }
        segmentLines.append(pending.durationLine)
        records.append(record)
        pending.reset()
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

    mutating func attributes(_ value: Substring, tag: String, line: String, substitute: Bool = true)
        throws(HLSParseError)
        -> HLSAttributeList
    {
        var list: HLSAttributeList
        do {
            list = try HLSAttributeList.parse(value)
        } catch {
            throw HLSParseError(.malformedAttributeList(reason: error.reason), line: lineNumber, text: line)
        }
        guard list.attributes.count <= options.limits.maximumAttributeCount else {
            throw HLSParseError(
                .limitExceeded(limit: "attributes", value: list.attributes.count), line: lineNumber, text: line)
        }
        if substitute, !variables.isEmpty || list.attributes.contains(where: { $0.value.contains("{$") }) {
            for index in list.attributes.indices
            where list.attributes[index].isQuoted || list.attributes[index].value.hasPrefix("0x") {
                list.attributes[index].value = try self.substitute(list.attributes[index].value, line: line)
            }
        }
        if let known = knownAttributes[tag] {
            for attribute in list where !known.contains(attribute.name) {
                warn(HLSWarning(.unknownAttribute(tag: tag, attribute: attribute.name), line: lineNumber))
            }
        }
        return list
    }

    func require(_ names: [String], in list: HLSAttributeList, tag: String, line: String) throws(HLSParseError) {
        for name in names where !list.contains(name) {
            throw HLSParseError(.missingAttribute(tag: tag, attribute: name), line: lineNumber, text: line)
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
        for name in ["DEFAULT", "AUTOSELECT", "FORCED"] where list.contains(name) && list.boolean(name) == nil {
            throw HLSParseError(
                .invalidAttribute(tag: tag, attribute: name, value: list[name]?.value ?? ""), line: lineNumber,
                text: line)
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
        if list.contains("IV"), list.hexadecimalSequence("IV") == nil {
            throw HLSParseError(
                .invalidAttribute(tag: tag, attribute: "IV", value: list["IV"]?.value ?? ""), line: lineNumber,
                text: line)
        }
        let new = HLSKey(attributes: list)
        // A key replaces the key of the same KEYFORMAT (and a NONE key).
        keys.removeAll { !$0.encrypts || $0.keyFormat == new.keyFormat }
        keys.append(new)
    }

    // MARK: Variables

    mutating func define(_ list: HLSAttributeList, line: String) throws(HLSParseError) {
        let tag = "EXT-X-DEFINE"
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

    /// Replaces every `{$name}` in `text`; an undefined name fails (§4.3: MUST).
    func substitute(_ text: String, line: String) throws(HLSParseError) -> String {
        guard text.contains("{$") else { return text }
        var result = ""
        var rest = Substring(text)
        while let open = rest.range(of: "{$") {
            result += rest[..<open.lowerBound]
            guard let close = rest[open.upperBound...].firstIndex(of: "}") else {
                result += rest[open.lowerBound...]
                return result
            }
            let name = String(rest[open.upperBound..<close])
            guard let value = variables[name] else {
                throw HLSParseError(.undefinedVariable(name: name), line: lineNumber, text: line)
            }
            result += value
            rest = rest[rest.index(after: close)...]
        }
        return result + rest
    }

    // MARK: Finishing

    mutating func finish() throws(HLSParseError) -> HLSParseResult {
        if let variant = pendingVariant {
            throw HLSParseError(.variantWithoutURI, line: variant.line, text: variant.text)
        }
        if sawMultivariantTag {
            let playlist = HLSMultivariantPlaylist(
                version: version, hasIndependentSegments: independentSegments, start: start, definitions: definitions,
                renditions: renditions, variants: variants, iFrameVariants: iFrameVariants, sessionData: sessionData,
                sessionKeys: sessionKeys, unknownTags: pending.precedingTags + unknownTags)
            return HLSParseResult(playlist: .multivariant(playlist), warnings: finalWarnings())
        }
        guard let targetDuration else {
            throw HLSParseError(.missingTargetDuration, line: 0, text: "no #EXT-X-TARGETDURATION")
        }
        if pending.duration != nil {
            warn(HLSWarning(.danglingDuration, line: pending.durationLine))
        }
        // §4.3.3.1: each duration, rounded to the nearest integer, is at most the target.
        for (index, record) in records.enumerated() where record.duration.rounded() > Double(targetDuration) {
            warn(
                HLSWarning(
                    .segmentLongerThanTarget(duration: record.duration, target: targetDuration),
                    line: segmentLines[index]))
        }
        if let declared = version, declared < 4, records.contains(where: \.hasRange) {
            warn(
                HLSWarning(.versionTooLow(feature: "EXT-X-BYTERANGE", required: 4, declared: declared), line: 0))
        }
        let playlist = HLSMediaPlaylist(
            version: version, targetDuration: targetDuration, mediaSequence: mediaSequence,
            discontinuitySequence: discontinuitySequence, playlistType: playlistType, hasEndList: endList,
            isIFramesOnly: iFramesOnly, hasIndependentSegments: independentSegments, start: start,
            definitions: definitions,
            segments: HLSSegmentList(
                compact: CompactSegments(
                    bytes: source, records: records, uris: substitutedURIs, keySets: keySets, maps: maps,
                    extras: segmentExtras)),
            trailingTags: pending.precedingTags)
        return HLSParseResult(playlist: .media(playlist), warnings: finalWarnings())
    }
}
