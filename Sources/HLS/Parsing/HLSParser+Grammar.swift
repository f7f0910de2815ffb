// The tag tables the parser checks a playlist against: which playlist kind owns each tag, the
// attributes each tag may carry, and the enumerated values among them (RFC 8216bis §4.4).

/// The playlist kind that owns a tag.
enum TagKind {
    case multivariant, media
}

/// The tags each playlist kind owns, for detecting a playlist that mixes both: one lookup per tag.
let tagKinds: [String: TagKind] = Dictionary(
    uniqueKeysWithValues: multivariantTags.map { ($0, TagKind.multivariant) } + mediaTags.map { ($0, .media) })

let multivariantTags: Set<String> = [
    "EXT-X-STREAM-INF", "EXT-X-I-FRAME-STREAM-INF", "EXT-X-MEDIA", "EXT-X-SESSION-DATA", "EXT-X-SESSION-KEY",
    "EXT-X-CONTENT-STEERING",
]
let mediaTags: Set<String> = [
    "EXTINF", "EXT-X-TARGETDURATION", "EXT-X-MEDIA-SEQUENCE", "EXT-X-DISCONTINUITY-SEQUENCE", "EXT-X-ENDLIST",
    "EXT-X-PLAYLIST-TYPE", "EXT-X-I-FRAMES-ONLY", "EXT-X-BYTERANGE", "EXT-X-KEY", "EXT-X-MAP",
    "EXT-X-PROGRAM-DATE-TIME",
    "EXT-X-DISCONTINUITY", "EXT-X-GAP", "EXT-X-SERVER-CONTROL", "EXT-X-PART-INF", "EXT-X-PART", "EXT-X-SKIP",
    "EXT-X-PRELOAD-HINT", "EXT-X-RENDITION-REPORT", "EXT-X-DATERANGE",
]

/// Known attributes per tag (RFC 8216bis); others are kept and reported as warnings.
let knownAttributes: [String: Set<String>] = [
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

let yesOrNo: Set<String> = ["YES", "NO"]

/// The values each enumerated-string attribute may take (RFC 8216bis §4.4). A value outside
/// these makes a client ignore the tag (§6.3.1). Attributes whose only value is `YES` accept
/// `NO` too, read as absent: servers write it and it cannot mean anything else.
let enumeratedValues: [String: [String: Set<String>]] = [
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
struct AttributeRules {
    var known: [String]?
    var enumerated: [(name: String, values: [String])]?
}

/// ``AttributeRules`` by tag, one lookup per tag.
let attributeRules: [String: AttributeRules] = {
    var rules: [String: AttributeRules] = [:]
    for (tag, names) in knownAttributes { rules[tag, default: AttributeRules()].known = names.sorted() }
    for (tag, attributes) in enumeratedValues {
        rules[tag, default: AttributeRules()].enumerated = attributes.map { ($0.key, $0.value.sorted()) }
    }
    return rules
}()
