/// Why a playlist could not be parsed: what was wrong, with the line number and the line.
public struct HLSParseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong.
    public enum Kind: Hashable, Sendable {
        /// The first line is not `#EXTM3U` (RFC 8216 §4.3.1.1: clients MUST reject).
        case missingHeader
        /// The data starts with a UTF-8 byte order mark and the options do not allow it.
        case byteOrderMark
        /// The data is not UTF-8 text.
        case notUTF8
        /// An attribute list does not follow the RFC grammar (§4.2).
        case malformedAttributeList(reason: String)
        /// A required attribute is missing.
        case missingAttribute(tag: String, attribute: String)
        /// An attribute's value has the wrong type or an unknown enumerated value.
        case invalidAttribute(tag: String, attribute: String, value: String)
        /// A tag's value is malformed (for example `#EXT-X-TARGETDURATION:9,5`).
        case invalidTagValue(tag: String, value: String)
        /// A byte range cannot be resolved: no offset and no previous range of the same resource.
        case impossibleByteRange(reason: String)
        /// A media segment URI with no `#EXTINF` before it.
        case uriWithoutDuration
        /// `#EXT-X-STREAM-INF` not followed by a URI line.
        case variantWithoutURI
        /// The playlist mixes multivariant and media playlist tags.
        case mixedPlaylistKinds
        /// A media playlist without the required `#EXT-X-TARGETDURATION`.
        case missingTargetDuration
        /// A variable reference `{$name}` to an undefined variable.
        case undefinedVariable(name: String)
        /// `#EXT-X-DEFINE:QUERYPARAM` names a parameter the playlist URL does not have.
        case missingQueryParameter(name: String)
        /// A variable is defined twice.
        case duplicateVariable(name: String)
        /// The playlist exceeds one of the parser's limits.
        case limitExceeded(limit: String, value: Int)
        /// A tag that may appear once appears again (`EXT-X-VERSION`: RFC 8216 §4.3.1.2, clients
        /// MUST fail; `EXT-X-SKIP`: RFC 8216bis §4.4.5.2).
        case duplicateTag(tag: String)
        /// An attribute list names one attribute twice (RFC 8216 §4.2: clients SHOULD refuse).
        case duplicateAttribute(tag: String, attribute: String)
        /// A tag stands where it cannot apply (an `EXT-X-SKIP` after a segment).
        case misplacedTag(tag: String, reason: String)
    }

    /// What was wrong.
    public var kind: Kind
    /// The 1-based line number (0 when the problem is the whole playlist).
    public var line: Int
    /// The offending line, as written (truncated to 200 characters).
    public var text: String

    /// Creates an error.
    public init(_ kind: Kind, line: Int, text: String) {
        self.kind = kind
        self.line = line
        self.text = String(text.prefix(200))
    }

    /// A sentence with the line number, the problem and the line.
    public var description: String {
        let place = line > 0 ? "line \(line)" : "playlist"
        return "\(place): \(kind) — \(text)"
    }
}

/// A violation that does not stop parsing; collected on the result.
public struct HLSWarning: Hashable, Sendable, CustomStringConvertible {
    /// What was odd.
    public enum Kind: Hashable, Sendable {
        /// The data starts with a byte order mark (allowed by the options, stripped).
        case byteOrderMark
        /// A segment's rounded duration exceeds the target duration (§4.3.3.1).
        case segmentLongerThanTarget(duration: Double, target: Int)
        /// An attribute this parser does not know; it is kept.
        case unknownAttribute(tag: String, attribute: String)
        /// `#EXTINF` without the comma the RFC requires.
        case durationWithoutComma
        /// `#EXTINF` at the end of the playlist with no URI after it: not a segment.
        case danglingDuration
        /// `#EXT-X-DEFINE:IMPORT` without a parent multivariant playlist to import from.
        case importWithoutParent(name: String)
        /// A feature used below the compatibility version that introduced it (RFC 8216 §7,
        /// RFC 8216bis §8); `declared` is 1 when the playlist has no `EXT-X-VERSION`.
        case versionTooLow(feature: String, required: Int, declared: Int)
        /// A known enumerated attribute with a value this parser does not know: the whole tag is
        /// ignored (RFC 8216 §6.3.1), and with an `EXT-X-STREAM-INF` its URI line too.
        case unrecognizedValue(tag: String, attribute: String, value: String)
        /// `EXT-X-VERSION` above the highest version this parser knows, 12 (RFC 8216 §6.3.4:
        /// a client MUST NOT play a version it does not support). The playlist is still parsed,
        /// so an app can decide.
        case versionNotSupported(declared: Int, highestSupported: Int)
        /// An initialisation section under an `AES-128` key without an `IV` (RFC 8216 §4.3.2.5
        /// requires one).
        case mapKeyWithoutIV(uri: String)
        /// `DEFAULT=YES` with an `AUTOSELECT` that is not `YES` (RFC 8216 §4.3.4.1).
        case defaultWithoutAutoselect(name: String)
        /// An `EXT-X-STREAM-INF` whose URI is its `URI` attribute rather than the next line, read
        /// because ``HLSParser/Options/allowsVariantURIAttribute`` is on.
        case variantURIAttribute
        /// An `EXT-X-DATERANGE` that breaks a rule of RFC 8216bis §4.4.5.1, ignored (clients
        /// SHOULD ignore such tags); `id` is empty when the tag has none.
        case dateRangeIgnored(id: String, reason: String)
        /// Date ranges without any `EXT-X-PROGRAM-DATE-TIME` to place them (RFC 8216bis §4.4.5.1).
        case dateRangesWithoutProgramDateTime
        /// Partial segments without `EXT-X-PART-INF` (RFC 8216bis §4.4.3.7 requires it).
        case partsWithoutPartInformation
        /// A partial segment longer than `PART-TARGET` (RFC 8216bis §4.4.4.9).
        case partLongerThanTarget(duration: Double, target: Double)
        /// More warnings than ``HLSParserLimits/maximumWarningCount``: this many were dropped.
        case moreWarnings(count: Int)
    }

    /// What was odd.
    public var kind: Kind
    /// The 1-based line number (0 for the whole playlist).
    public var line: Int

    /// Creates a warning.
    public init(_ kind: Kind, line: Int) {
        self.kind = kind
        self.line = line
    }

    /// A sentence with the line number and the problem.
    public var description: String { "line \(line): \(kind)" }
}
