/// A parsed HLS playlist: a multivariant ("master") playlist or a media playlist.
public enum HLSPlaylist: Hashable, Sendable {
    /// A playlist of variant streams and renditions.
    case multivariant(HLSMultivariantPlaylist)
    /// A playlist of media segments.
    case media(HLSMediaPlaylist)
}

/// A variable defined by `#EXT-X-DEFINE` (RFC 8216bis §4.4.2.3).
public struct HLSDefinition: Hashable, Sendable {
    /// Where the value comes from.
    public enum Source: Hashable, Sendable {
        /// `VALUE="…"`: written in the playlist.
        case value(String)
        /// `IMPORT="…"`: from the parent multivariant playlist.
        case imported
        /// `QUERYPARAM="…"`: from the playlist URL's query.
        case queryParameter
    }

    /// The variable's name.
    public var name: String
    /// Where its value comes from.
    public var source: Source

    /// Creates a definition.
    public init(name: String, source: Source) {
        self.name = name
        self.source = source
    }
}

/// A resolved byte range: `length` bytes starting at `offset`.
public struct HLSByteRange: Hashable, Sendable, CustomStringConvertible {
    /// The number of bytes.
    public var length: UInt64
    /// The first byte's offset in the resource.
    public var offset: UInt64

    /// Creates a byte range.
    public init(length: UInt64, offset: UInt64) {
        self.length = length
        self.offset = offset
    }

    /// The offset just past the range.
    public var end: UInt64 { offset &+ length }

    /// `length@offset`.
    public var description: String { "\(length)@\(offset)" }
}

/// A variant stream of a multivariant playlist (`#EXT-X-STREAM-INF` and its URI).
public struct HLSVariant: Hashable, Sendable {
    /// The tag's attributes, as written (after variable substitution).
    public var attributes: HLSAttributeList
    /// The variant's media playlist URI, as written (after variable substitution).
    public var uri: String

    /// Creates a variant.
    public init(attributes: HLSAttributeList, uri: String) {
        self.attributes = attributes
        self.uri = uri
    }

    /// The peak bit rate in bits per second (required).
    public var bandwidth: UInt64 { attributes.decimalInteger("BANDWIDTH") ?? 0 }
    /// The average bit rate, if given.
    public var averageBandwidth: UInt64? { attributes.decimalInteger("AVERAGE-BANDWIDTH") }
    /// The codecs, split at commas (which the quoted CODECS value may contain), trimmed.
    public var codecs: [String] { HLSVariant.codecList(attributes.quotedString("CODECS")) }
    /// The video resolution, if given.
    public var resolution: (width: Int, height: Int)? { attributes.resolution("RESOLUTION") }
    /// The frame rate, if given.
    public var frameRate: Double? { attributes.decimalFloat("FRAME-RATE") }
    /// The audio rendition group this variant plays with.
    public var audioGroup: String? { attributes.quotedString("AUDIO") }
    /// The video rendition group.
    public var videoGroup: String? { attributes.quotedString("VIDEO") }
    /// The subtitles rendition group.
    public var subtitlesGroup: String? { attributes.quotedString("SUBTITLES") }
    /// The closed-captions group, or `nil` for `NONE` or none given.
    public var closedCaptionsGroup: String? { attributes.quotedString("CLOSED-CAPTIONS") }

    /// Whether the variant carries audio only (every codec is an audio codec).
    public var isAudioOnly: Bool {
        let list = codecs
        return !list.isEmpty && list.allSatisfy(HLSCodec.isAudio)
    }

    static func codecList(_ value: String?) -> [String] {
        guard let value else { return [] }
        return value.split(separator: ",").map { $0.trimmingCharacters(in: " ") }.filter { !$0.isEmpty }
    }
}

/// An I-frame variant (`#EXT-X-I-FRAME-STREAM-INF`), whose URI is an attribute.
public struct HLSIFrameVariant: Hashable, Sendable {
    /// The tag's attributes.
    public var attributes: HLSAttributeList

    /// Creates an I-frame variant.
    public init(attributes: HLSAttributeList) {
        self.attributes = attributes
    }

    /// The I-frame playlist's URI.
    public var uri: String { attributes.quotedString("URI") ?? "" }
    /// The peak bit rate.
    public var bandwidth: UInt64 { attributes.decimalInteger("BANDWIDTH") ?? 0 }
}

/// An alternative rendition (`#EXT-X-MEDIA`): an audio track, a video angle, subtitles, captions.
public struct HLSRendition: Hashable, Sendable {
    /// The rendition's kind.
    public enum MediaType: String, Hashable, Sendable, CaseIterable {
        /// Audio.
        case audio = "AUDIO"
        /// Video.
        case video = "VIDEO"
        /// Subtitles (WebVTT).
        case subtitles = "SUBTITLES"
        /// Closed captions carried in the video.
        case closedCaptions = "CLOSED-CAPTIONS"
    }

    /// The tag's attributes, as written (after variable substitution).
    public var attributes: HLSAttributeList

    /// Creates a rendition.
    public init(attributes: HLSAttributeList) {
        self.attributes = attributes
    }

    /// The kind (validated when parsed).
    public var type: MediaType { attributes.enumeratedString("TYPE").flatMap(MediaType.init(rawValue:)) ?? .audio }
    /// The group it belongs to.
    public var groupID: String { attributes.quotedString("GROUP-ID") ?? "" }
    /// Its name (not necessarily unique across groups).
    public var name: String { attributes.quotedString("NAME") ?? "" }
    /// Its language tag, if given.
    public var language: String? { attributes.quotedString("LANGUAGE") }
    /// Whether it is the group's default.
    public var isDefault: Bool { attributes.boolean("DEFAULT") ?? false }
    /// Whether a player may choose it automatically.
    public var isAutoselect: Bool { attributes.boolean("AUTOSELECT") ?? false }
    /// The channel description (`"2"`, `"6"`, `"16/JOC"`), if given.
    public var channels: String? { attributes.quotedString("CHANNELS") }
    /// The number of channels: the leading integer of ``channels``.
    public var channelCount: Int? {
        guard let channels else { return nil }
        return Int(channels.prefix { $0.isNumber })
    }
    /// Its media playlist's URI; `nil` when the rendition is muxed into the variants.
    public var uri: String? { attributes.quotedString("URI") }
}

/// A multivariant playlist.
public struct HLSMultivariantPlaylist: Hashable, Sendable {
    /// `#EXT-X-VERSION`, if given.
    public var version: Int?
    /// Whether `#EXT-X-INDEPENDENT-SEGMENTS` is present.
    public var hasIndependentSegments: Bool
    /// `#EXT-X-START`'s attributes, if given.
    public var start: HLSAttributeList?
    /// The variables defined.
    public var definitions: [HLSDefinition]
    /// The renditions, in order.
    public var renditions: [HLSRendition]
    /// The variant streams, in order.
    public var variants: [HLSVariant]
    /// The I-frame variants, in order.
    public var iFrameVariants: [HLSIFrameVariant]
    /// `#EXT-X-SESSION-DATA` attribute lists.
    public var sessionData: [HLSAttributeList]
    /// `#EXT-X-SESSION-KEY` attribute lists.
    public var sessionKeys: [HLSAttributeList]
    /// `#EXT-X-CONTENT-STEERING`, if given.
    public var contentSteering: HLSContentSteering?
    /// Tags this parser does not know, verbatim (without the leading `#`), in order.
    public var unknownTags: [String]

    /// Creates a multivariant playlist.
    public init(
        version: Int? = nil, hasIndependentSegments: Bool = false, start: HLSAttributeList? = nil,
        definitions: [HLSDefinition] = [], renditions: [HLSRendition] = [], variants: [HLSVariant] = [],
        iFrameVariants: [HLSIFrameVariant] = [], sessionData: [HLSAttributeList] = [],
        sessionKeys: [HLSAttributeList] = [], contentSteering: HLSContentSteering? = nil,
        unknownTags: [String] = []
    ) {
        self.version = version
        self.hasIndependentSegments = hasIndependentSegments
        self.start = start
        self.definitions = definitions
        self.renditions = renditions
        self.variants = variants
        self.iFrameVariants = iFrameVariants
        self.sessionData = sessionData
        self.sessionKeys = sessionKeys
        self.contentSteering = contentSteering
        self.unknownTags = unknownTags
    }

    /// The audio renditions.
    public var audioRenditions: [HLSRendition] { renditions.filter { $0.type == .audio } }
}

/// An encryption key in effect (`#EXT-X-KEY`).
public struct HLSKey: Hashable, Sendable {
    /// The tag's attributes.
    public var attributes: HLSAttributeList

    /// Creates a key.
    public init(attributes: HLSAttributeList) {
        self.attributes = attributes
    }

    /// `NONE`, `AES-128`, `SAMPLE-AES`, `SAMPLE-AES-CTR`…
    public var method: String { attributes.enumeratedString("METHOD") ?? "NONE" }
    /// The key's URI (absent for `NONE`).
    public var uri: String? { attributes.quotedString("URI") }
    /// The initialisation vector, if given.
    public var initializationVector: [UInt8]? { attributes.hexadecimalSequence("IV") }
    /// The key format (`identity` when absent).
    public var keyFormat: String { attributes.quotedString("KEYFORMAT") ?? "identity" }
    /// Whether segments under this key are encrypted.
    public var encrypts: Bool { method != "NONE" }
}

/// A media initialisation section in effect (`#EXT-X-MAP`).
///
/// Its values live in one shared, immutable box (replaced when a value is set), so that every
/// segment under the section holds one reference rather than a copy.
public struct HLSMap: Hashable, Sendable {
    private final class Storage: Sendable {
        let uri: String
        let byteRange: HLSByteRange?
        let keys: [HLSKey]

        init(uri: String, byteRange: HLSByteRange?, keys: [HLSKey]) {
            self.uri = uri
            self.byteRange = byteRange
            self.keys = keys
        }
    }

    private var storage: Storage

    /// Creates a map.
    public init(uri: String, byteRange: HLSByteRange? = nil, keys: [HLSKey] = []) {
        storage = Storage(uri: uri, byteRange: byteRange, keys: keys)
    }

    /// The section's URI.
    public var uri: String {
        get { storage.uri }
        set { storage = Storage(uri: newValue, byteRange: byteRange, keys: keys) }
    }

    /// Its byte range, if given (an omitted offset is 0).
    public var byteRange: HLSByteRange? {
        get { storage.byteRange }
        set { storage = Storage(uri: uri, byteRange: newValue, keys: keys) }
    }

    /// The keys in effect where the `#EXT-X-MAP` tag stands: an encrypted section is decrypted
    /// with these, which can differ from the keys of the segments that follow (RFC 8216bis
    /// §4.4.4.5).
    public var keys: [HLSKey] {
        get { storage.keys }
        set { storage = Storage(uri: uri, byteRange: byteRange, keys: newValue) }
    }

    /// Whether two maps hold the same values (one shared box is equal at once).
    public static func == (lhs: HLSMap, rhs: HLSMap) -> Bool {
        lhs.storage === rhs.storage
            || (lhs.uri == rhs.uri && lhs.byteRange == rhs.byteRange && lhs.keys == rhs.keys)
    }

    /// Hashes the values that ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(uri)
        hasher.combine(byteRange)
        hasher.combine(keys)
    }

    /// Whether the section is encrypted.
    public var isEncrypted: Bool { keys.contains(where: \.encrypts) }
}

/// What a segment shares with its neighbours (keys and map), and its rarely present fields:
/// immutable, shared by every copy of a segment, and for a parsed playlist built once when
/// parsing (segments without rare fields under the same keys and map share one box).
final class HLSSegmentContext: Sendable {
    let keys: [HLSKey]
    let map: HLSMap?
    let programDateTime: String?
    let isGap: Bool
    let precedingTags: [String]
    let parts: [HLSPartialSegment]

    init(
        keys: [HLSKey], map: HLSMap?, programDateTime: String?, isGap: Bool, precedingTags: [String],
        parts: [HLSPartialSegment]
    ) {
        self.keys = keys
        self.map = map
        self.programDateTime = programDateTime
        self.isGap = isGap
        self.precedingTags = precedingTags
        self.parts = parts
    }

    /// The box for these values, or `nil` when every one is absent.
    static func make(
        keys: [HLSKey], map: HLSMap?, programDateTime: String?, isGap: Bool, precedingTags: [String],
        parts: [HLSPartialSegment]
    ) -> HLSSegmentContext? {
        guard
            !keys.isEmpty || map != nil || programDateTime != nil || isGap || !precedingTags.isEmpty
                || !parts.isEmpty
        else { return nil }
        return HLSSegmentContext(
            keys: keys, map: map, programDateTime: programDateTime, isGap: isGap, precedingTags: precedingTags,
            parts: parts)
    }
}

/// A media segment with everything that applies to it.
///
/// The keys, the map and the fields most segments lack (date-time, gap, unknown tags, parts)
/// live in one shared box, replaced when one is set: a segment holds one reference for them, and
/// in a parsed playlist every segment under the same keys and map shares that box. The title is
/// stored inline: encoders that write one write it on every segment, and a short one needs no
/// allocation.
public struct HLSSegment: Hashable, Sendable {
    /// The segment's URI, as written (after variable substitution).
    public var uri: String
    /// Its duration in seconds (`#EXTINF`).
    public var duration: Double
    /// The byte range, resolved (an omitted offset follows the previous segment's range).
    public var byteRange: HLSByteRange?
    /// Whether a discontinuity precedes the segment.
    public var isDiscontinuity: Bool
    /// The title after the comma of `#EXTINF`, if any.
    public var title: String?
    /// The keys, map and rare fields; set through the public properties, which replace the box.
    /// Internal rather than private so that the memberwise initializer exists in the module:
    /// a parsed playlist builds its segments with it, as one value, with no copy of the whole.
    var context: HLSSegmentContext?

    private mutating func update(
        keys: [HLSKey]? = nil, map: HLSMap?? = nil, programDateTime: String?? = nil, isGap: Bool? = nil,
        precedingTags: [String]? = nil, parts: [HLSPartialSegment]? = nil
    ) {
        context = HLSSegmentContext.make(
            keys: keys ?? self.keys, map: map ?? self.map, programDateTime: programDateTime ?? self.programDateTime,
            isGap: isGap ?? self.isGap, precedingTags: precedingTags ?? self.precedingTags, parts: parts ?? self.parts)
    }

    /// The keys in effect (several with different KEYFORMATs, or none).
    public var keys: [HLSKey] {
        get { context?.keys ?? [] }
        set { update(keys: newValue) }
    }

    /// The initialisation section in effect.
    public var map: HLSMap? {
        get { context?.map }
        set { update(map: .some(newValue)) }
    }

    /// `#EXT-X-PROGRAM-DATE-TIME`, as written (ISO 8601).
    public var programDateTime: String? {
        get { context?.programDateTime }
        set { update(programDateTime: .some(newValue)) }
    }

    /// Whether the segment is marked as a gap (`#EXT-X-GAP`).
    public var isGap: Bool {
        get { context?.isGap ?? false }
        set { update(isGap: newValue) }
    }

    /// Unknown tags that preceded the segment, verbatim, in order.
    public var precedingTags: [String] {
        get { context?.precedingTags ?? [] }
        set { update(precedingTags: newValue) }
    }

    /// The segment's partial segments (`#EXT-X-PART`), in order; empty for most segments.
    public var parts: [HLSPartialSegment] {
        get { context?.parts ?? [] }
        set { update(parts: newValue) }
    }

    /// Whether the segment is encrypted.
    public var isEncrypted: Bool { keys.contains(where: \.encrypts) }

    /// Whether two segments hold the same values (the box's identity does not matter).
    public static func == (lhs: HLSSegment, rhs: HLSSegment) -> Bool {
        guard
            lhs.uri == rhs.uri && lhs.duration == rhs.duration && lhs.byteRange == rhs.byteRange
                && lhs.isDiscontinuity == rhs.isDiscontinuity && lhs.title == rhs.title
        else { return false }
        if lhs.context === rhs.context { return true }
        return lhs.keys == rhs.keys && lhs.programDateTime == rhs.programDateTime && lhs.map == rhs.map
            && lhs.isGap == rhs.isGap && lhs.precedingTags == rhs.precedingTags && lhs.parts == rhs.parts
    }

    /// Hashes the same values that ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(uri)
        hasher.combine(duration)
        hasher.combine(byteRange)
        hasher.combine(isDiscontinuity)
        hasher.combine(keys)
        hasher.combine(title)
        hasher.combine(programDateTime)
        hasher.combine(map)
        hasher.combine(isGap)
        hasher.combine(precedingTags)
        hasher.combine(parts)
    }
}

// In an extension, so that the struct keeps the memberwise initializer a parsed list builds its
// segments with (in place, without copying the whole value).
extension HLSSegment {
    /// Creates a segment.
    public init(
        uri: String, duration: Double, title: String? = nil, byteRange: HLSByteRange? = nil,
        isDiscontinuity: Bool = false,
        programDateTime: String? = nil, keys: [HLSKey] = [], map: HLSMap? = nil, isGap: Bool = false,
        precedingTags: [String] = [], parts: [HLSPartialSegment] = []
    ) {
        self.uri = uri
        self.duration = duration
        self.byteRange = byteRange
        self.isDiscontinuity = isDiscontinuity
        self.title = title
        context = HLSSegmentContext.make(
            keys: keys, map: map, programDateTime: programDateTime, isGap: isGap, precedingTags: precedingTags,
            parts: parts)
    }
}

/// A media playlist.
public struct HLSMediaPlaylist: Hashable, Sendable {
    /// The kind declared by `#EXT-X-PLAYLIST-TYPE`.
    public enum PlaylistType: String, Hashable, Sendable {
        /// Segments are only appended.
        case event = "EVENT"
        /// The playlist never changes.
        case vod = "VOD"
    }

    /// `#EXT-X-VERSION`, if given.
    public var version: Int?
    /// `#EXT-X-TARGETDURATION` (required): the longest segment, rounded, in seconds.
    public var targetDuration: Int
    /// `#EXT-X-MEDIA-SEQUENCE` (0 when absent).
    public var mediaSequence: UInt64
    /// `#EXT-X-DISCONTINUITY-SEQUENCE` (0 when absent).
    public var discontinuitySequence: UInt64
    /// `#EXT-X-PLAYLIST-TYPE`, if given.
    public var playlistType: PlaylistType?
    /// Whether `#EXT-X-ENDLIST` is present.
    public var hasEndList: Bool
    /// Whether `#EXT-X-I-FRAMES-ONLY` is present.
    public var isIFramesOnly: Bool
    /// Whether `#EXT-X-INDEPENDENT-SEGMENTS` is present.
    public var hasIndependentSegments: Bool
    /// `#EXT-X-START`'s attributes, if given.
    public var start: HLSAttributeList?
    /// The variables defined.
    public var definitions: [HLSDefinition]
    /// `#EXT-X-SERVER-CONTROL`, if given.
    public var serverControl: HLSServerControl?
    /// `#EXT-X-PART-INF`'s `PART-TARGET`: the longest partial segment, in seconds, if given.
    public var partTargetDuration: Double?
    /// `#EXT-X-SKIP`: the segments a delta update left out, if it is one.
    public var skip: HLSSkip?
    /// The `#EXT-X-DATERANGE` tags, in order (see ``combinedDateRanges``).
    public var dateRanges: [HLSDateRange]
    /// The segments, in order (compact when parsed; see ``HLSSegmentList``).
    public var segments: HLSSegmentList
    /// The segment still being produced, when partial segments or tags follow the last segment.
    public var segmentInProgress: HLSSegmentInProgress?
    /// `#EXT-X-PRELOAD-HINT`s, in order.
    public var preloadHints: [HLSPreloadHint]
    /// `#EXT-X-RENDITION-REPORT`s, in order.
    public var renditionReports: [HLSRenditionReport]
    /// Unknown tags after the last segment, verbatim.
    public var trailingTags: [String]

    /// Creates a media playlist.
    public init(
        version: Int? = nil, targetDuration: Int, mediaSequence: UInt64 = 0, discontinuitySequence: UInt64 = 0,
        playlistType: PlaylistType? = nil, hasEndList: Bool = false, isIFramesOnly: Bool = false,
        hasIndependentSegments: Bool = false, start: HLSAttributeList? = nil, definitions: [HLSDefinition] = [],
        serverControl: HLSServerControl? = nil, partTargetDuration: Double? = nil, skip: HLSSkip? = nil,
        dateRanges: [HLSDateRange] = [], segments: [HLSSegment] = [], segmentInProgress: HLSSegmentInProgress? = nil,
        preloadHints: [HLSPreloadHint] = [], renditionReports: [HLSRenditionReport] = [], trailingTags: [String] = []
    ) {
        self.version = version
        self.targetDuration = targetDuration
        self.mediaSequence = mediaSequence
        self.discontinuitySequence = discontinuitySequence
        self.playlistType = playlistType
        self.hasEndList = hasEndList
        self.isIFramesOnly = isIFramesOnly
        self.hasIndependentSegments = hasIndependentSegments
        self.start = start
        self.definitions = definitions
        self.serverControl = serverControl
        self.partTargetDuration = partTargetDuration
        self.skip = skip
        self.dateRanges = dateRanges
        self.segments = HLSSegmentList(segments)
        self.segmentInProgress = segmentInProgress
        self.preloadHints = preloadHints
        self.renditionReports = renditionReports
        self.trailingTags = trailingTags
    }

    /// The total duration of the segments, in seconds.
    ///
    /// - Complexity: O(*n*), without building the segments.
    public var totalDuration: Double { segments.totalDuration }
}

/// Codec identifiers as they appear in `CODECS`.
public enum HLSCodec {
    /// Whether `codec` is an audio codec.
    public static func isAudio(_ codec: String) -> Bool {
        let lower = codec.lowercased()
        return lower.hasPrefix("mp4a") || lower.hasPrefix("ac-3") || lower.hasPrefix("ec-3") || lower.hasPrefix("ec+3")
            || lower.hasPrefix("ac-4")
            || lower.hasPrefix("opus") || lower.hasPrefix("flac") || lower.hasPrefix("alac") || lower.hasPrefix("mha1")
            || lower.hasPrefix("mhm1") || lower.hasPrefix("dtsc") || lower.hasPrefix("dtsx")
    }

    /// A quality tier for an audio codec: higher is better; -1 for an unknown or non-audio codec.
    ///
    /// HE-AAC v2 (`mp4a.40.29`) 1 < HE-AAC (`mp4a.40.5`) 2 < AAC-LC (`mp4a.40.2`) 3 < Opus 4 <
    /// Dolby Digital (`ac-3`) 6 < Dolby Digital Plus (`ec-3`, and `ec+3` with Atmos) 7 < AC-4 8 <
    /// lossless (ALAC, FLAC) 9.
    public static func audioTier(_ codec: String) -> Int {
        let lower = codec.lowercased()
        switch true {
        case lower == "mp4a.40.29": return 1
        case lower == "mp4a.40.5": return 2
        case lower == "mp4a.40.2", lower.hasPrefix("mp4a"): return 3
        case lower.hasPrefix("opus"): return 4
        case lower.hasPrefix("ac-3"): return 6
        case lower.hasPrefix("ec-3"), lower.hasPrefix("ec+3"): return 7
        case lower.hasPrefix("ac-4"): return 8
        case lower.hasPrefix("alac"), lower.hasPrefix("flac"): return 9
        default: return -1
        }
    }
}

extension StringProtocol {
    /// The text without leading and trailing `character`s.
    func trimmingCharacters(in character: Character) -> String {
        guard let first = firstIndex(where: { $0 != character }), let last = lastIndex(where: { $0 != character })
        else {
            return ""
        }
        return String(self[first...last])
    }
}
