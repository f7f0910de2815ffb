import DecimalFormatting
import Foundation

/// Writes playlists back to text, so that parsing the text gives the same playlist.
///
/// Byte ranges are written with explicit offsets, keys and maps where they change, unknown tags
/// where they stood, and durations in their shortest exact decimal form.
public enum HLSWriter {
    /// The playlist as text, lines ending in LF.
    ///
    /// - Complexity: O(*n*) in the playlist's size.
    public static func write(_ playlist: HLSPlaylist) -> String {
        switch playlist {
        case .multivariant(let multivariant): write(multivariant)
        case .media(let media): write(media)
        }
    }

    static func write(_ playlist: HLSMultivariantPlaylist) -> String {
        var lines = ["#EXTM3U"]
        if let version = playlist.version { lines.append("#EXT-X-VERSION:\(version)") }
        if playlist.hasIndependentSegments { lines.append("#EXT-X-INDEPENDENT-SEGMENTS") }
        if let start = playlist.start { lines.append("#EXT-X-START:\(start.formatted)") }
        lines += definitions(playlist.definitions)
        lines += playlist.unknownTags.map { "#" + $0 }
        lines += playlist.renditions.map { "#EXT-X-MEDIA:\($0.attributes.formatted)" }
        for variant in playlist.variants {
            lines.append("#EXT-X-STREAM-INF:\(variant.attributes.formatted)")
            lines.append(variant.uri)
        }
        lines += playlist.iFrameVariants.map { "#EXT-X-I-FRAME-STREAM-INF:\($0.attributes.formatted)" }
        lines += playlist.sessionData.map { "#EXT-X-SESSION-DATA:\($0.formatted)" }
        lines += playlist.sessionKeys.map { "#EXT-X-SESSION-KEY:\($0.formatted)" }
        return lines.joined(separator: "\n") + "\n"
    }

    static func write(_ playlist: HLSMediaPlaylist) -> String {
        var text = "#EXTM3U\n"
        text.reserveCapacity(64 + playlist.segments.count * 64)
        if let version = playlist.version { text += "#EXT-X-VERSION:\(version)\n" }
        text += "#EXT-X-TARGETDURATION:\(playlist.targetDuration)\n"
        text += "#EXT-X-MEDIA-SEQUENCE:\(playlist.mediaSequence)\n"
        if playlist.discontinuitySequence != 0 {
            text += "#EXT-X-DISCONTINUITY-SEQUENCE:\(playlist.discontinuitySequence)\n"
        }
        if let type = playlist.playlistType { text += "#EXT-X-PLAYLIST-TYPE:\(type.rawValue)\n" }
        if playlist.isIFramesOnly { text += "#EXT-X-I-FRAMES-ONLY\n" }
        if playlist.hasIndependentSegments { text += "#EXT-X-INDEPENDENT-SEGMENTS\n" }
        if let start = playlist.start { text += "#EXT-X-START:\(start.formatted)\n" }
        for line in definitions(playlist.definitions) { text += line + "\n" }
        var keys: [HLSKey] = []
        var map: HLSMap?
        for segment in playlist.segments {
            for tag in segment.precedingTags { text += "#\(tag)\n" }
            if segment.keys != keys {
                // A key only replaces the key of its own KEYFORMAT, so dropping a format takes a
                // METHOD=NONE first (which ends them all) before the new set is written.
                let formats = Set(segment.keys.lazy.filter(\.encrypts).map(\.keyFormat))
                let dropsFormat = keys.contains { $0.encrypts && !formats.contains($0.keyFormat) }
                if dropsFormat && segment.keys.contains(where: \.encrypts) { text += "#EXT-X-KEY:METHOD=NONE\n" }
                for key in segment.keys { text += "#EXT-X-KEY:\(key.attributes.formatted)\n" }
                keys = segment.keys
            }
            if segment.map != map, let newMap = segment.map {
                var attributes = HLSAttributeList([.init(name: "URI", value: newMap.uri, isQuoted: true)])
                if let range = newMap.byteRange {
                    attributes.set("BYTERANGE", to: "\(range.length)@\(range.offset)", quoted: true)
                }
                text += "#EXT-X-MAP:\(attributes.formatted)\n"
                map = newMap
            }
            if segment.isDiscontinuity { text += "#EXT-X-DISCONTINUITY\n" }
            if let date = segment.programDateTime { text += "#EXT-X-PROGRAM-DATE-TIME:\(date)\n" }
            if segment.isGap { text += "#EXT-X-GAP\n" }
            text += "#EXTINF:\(decimal(segment.duration)),\(segment.title ?? "")\n"
            if let range = segment.byteRange { text += "#EXT-X-BYTERANGE:\(range.length)@\(range.offset)\n" }
            text += segment.uri + "\n"
        }
        for tag in playlist.trailingTags { text += "#\(tag)\n" }
        if playlist.hasEndList { text += "#EXT-X-ENDLIST\n" }
        return text
    }

    static func definitions(_ definitions: [HLSDefinition]) -> [String] {
        definitions.map { definition in
            switch definition.source {
            case .value(let value): "#EXT-X-DEFINE:NAME=\"\(definition.name)\",VALUE=\"\(value)\""
            case .imported: "#EXT-X-DEFINE:IMPORT=\"\(definition.name)\""
            case .queryParameter: "#EXT-X-DEFINE:QUERYPARAM=\"\(definition.name)\""
            }
        }
    }

    /// A non-negative duration as a plain decimal (the RFC has no exponent form), shortest
    /// form that reads back to the same `Double`.
    static func decimal(_ value: Double) -> String { plainDecimal(value) }
}
