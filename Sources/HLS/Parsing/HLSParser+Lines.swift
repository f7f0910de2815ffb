import Foundation

// The parser's state, and the line search that feeds it: every line is found, copied and
// checked for ASCII in one pass, then handed to the tag, URI or comment handling.

struct PendingSegment {
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

struct ParserState {
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
        if end > start, bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
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
        let lineFeeds = SIMD16<UInt8>(repeating: UInt8(ascii: "\n"))
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
            if bytes[offset] == UInt8(ascii: "\n") { break }
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
        while lineStart < lineEnd, bytes[lineStart] == UInt8(ascii: " ") || bytes[lineStart] == UInt8(ascii: "\t") {
            lineStart += 1
        }
        // A CR left before trailing blanks ("a.ts\r \n") is line-ending debris, not part of the URI.
        while lineEnd > lineStart,
            bytes[lineEnd - 1] == UInt8(ascii: " ") || bytes[lineEnd - 1] == UInt8(ascii: "\t")
                || bytes[lineEnd - 1] == UInt8(ascii: "\r")
        {
            lineEnd -= 1
        }
        guard lineEnd > lineStart else { return }
        if bytes[lineStart] == UInt8(ascii: "#") {
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
            while nameEnd < lineEnd, bytes[nameEnd] != UInt8(ascii: ":") { nameEnd += 1 }
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

}
