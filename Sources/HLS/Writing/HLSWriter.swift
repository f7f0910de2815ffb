import DecimalFormatting
import Foundation

/// Writes playlists back to text, so that parsing the text gives the same playlist.
///
/// Byte ranges are written with explicit offsets, keys and maps where they change (a map under
/// the keys it records), partial segments before their parent segment, unknown tags where they
/// stood, date ranges after the header, and durations in their shortest exact decimal form.
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
        if let steering = playlist.contentSteering {
            lines.append("#EXT-X-CONTENT-STEERING:\(steering.attributes.formatted)")
        }
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
        if let control = playlist.serverControl { text += "#EXT-X-SERVER-CONTROL:\(control.attributes.formatted)\n" }
        if let target = playlist.partTargetDuration { text += "#EXT-X-PART-INF:PART-TARGET=\(decimal(target))\n" }
        for line in definitions(playlist.definitions) { text += line + "\n" }
        if let skip = playlist.skip {
            text += "#EXT-X-SKIP:SKIPPED-SEGMENTS=\(skip.skippedSegmentCount)"
            if let removed = skip.recentlyRemovedDateRanges {
                text += ",RECENTLY-REMOVED-DATERANGES=\"\(removed.joined(separator: "\t"))\""
            }
            text += "\n"
        }
        // Date ranges are placed by their dates, not by where they stand.
        for range in playlist.dateRanges { text += "#EXT-X-DATERANGE:\(range.attributes.formatted)\n" }
        var keys: [HLSKey] = []
        var map: HLSMap?
        for segment in playlist.segments {
            for tag in segment.precedingTags { text += "#\(tag)\n" }
            writeState(keys: segment.keys, map: segment.map, currentKeys: &keys, currentMap: &map, into: &text)
            if segment.isDiscontinuity { text += "#EXT-X-DISCONTINUITY\n" }
            if let date = segment.programDateTime { text += "#EXT-X-PROGRAM-DATE-TIME:\(date)\n" }
            if segment.isGap { text += "#EXT-X-GAP\n" }
            for part in segment.parts { text += partLine(part) }
            text += "#EXTINF:\(decimal(segment.duration)),\(segment.title ?? "")\n"
            if let range = segment.byteRange { text += "#EXT-X-BYTERANGE:\(range.length)@\(range.offset)\n" }
            text += segment.uri + "\n"
        }
        if let next = playlist.segmentInProgress {
            writeState(keys: next.keys, map: next.map, currentKeys: &keys, currentMap: &map, into: &text)
            if next.isDiscontinuity { text += "#EXT-X-DISCONTINUITY\n" }
            if let date = next.programDateTime { text += "#EXT-X-PROGRAM-DATE-TIME:\(date)\n" }
            for part in next.parts { text += partLine(part) }
        }
        for tag in playlist.trailingTags { text += "#\(tag)\n" }
        for hint in playlist.preloadHints {
            text += "#EXT-X-PRELOAD-HINT:TYPE=\(hint.type.rawValue),URI=\"\(hint.uri)\""
            if hint.byteRangeStart != 0 { text += ",BYTERANGE-START=\(hint.byteRangeStart)" }
            if let length = hint.byteRangeLength { text += ",BYTERANGE-LENGTH=\(length)" }
            text += "\n"
        }
        for report in playlist.renditionReports {
            text += "#EXT-X-RENDITION-REPORT:URI=\"\(report.uri)\""
            if let last = report.lastMediaSequenceNumber { text += ",LAST-MSN=\(last)" }
            if let part = report.lastPartIndex { text += ",LAST-PART=\(part)" }
            text += "\n"
        }
        if playlist.hasEndList { text += "#EXT-X-ENDLIST\n" }
        return text
    }

    /// Writes the `EXT-X-KEY` and `EXT-X-MAP` tags that change the state from the current one
    /// to `keys` and `map`. A new map is written under the keys it records (which decrypt it),
    /// then the keys change to the segment's.
    static func writeState(
        keys: [HLSKey], map: HLSMap?, currentKeys: inout [HLSKey], currentMap: inout HLSMap?, into text: inout String
    ) {
        if map != currentMap, let newMap = map {
            writeKeys(newMap.keys, current: &currentKeys, into: &text)
            var attributes = HLSAttributeList([.init(name: "URI", value: newMap.uri, isQuoted: true)])
            if let range = newMap.byteRange {
                attributes.set("BYTERANGE", to: "\(range.length)@\(range.offset)", quoted: true)
            }
            text += "#EXT-X-MAP:\(attributes.formatted)\n"
            currentMap = newMap
        }
        writeKeys(keys, current: &currentKeys, into: &text)
    }

    /// Writes the `EXT-X-KEY` tags that change the keys in effect from `current` to `keys`.
    static func writeKeys(_ keys: [HLSKey], current: inout [HLSKey], into text: inout String) {
        guard keys != current else { return }
        // A key only replaces the key of its own KEYFORMAT, so dropping a format takes a
        // METHOD=NONE first (which ends them all) before the new set is written.
        let formats = Set(keys.lazy.filter(\.encrypts).map(\.keyFormat))
        let dropsFormat = current.contains { $0.encrypts && !formats.contains($0.keyFormat) }
        if dropsFormat && keys.contains(where: \.encrypts) { text += "#EXT-X-KEY:METHOD=NONE\n" }
        for key in keys { text += "#EXT-X-KEY:\(key.attributes.formatted)\n" }
        current = keys
    }

    /// One `#EXT-X-PART` line, its byte range with an explicit offset.
    static func partLine(_ part: HLSPartialSegment) -> String {
        var line = "#EXT-X-PART:DURATION=\(decimal(part.duration)),URI=\"\(part.uri)\""
        if part.isIndependent { line += ",INDEPENDENT=YES" }
        if let range = part.byteRange { line += ",BYTERANGE=\"\(range.length)@\(range.offset)\"" }
        if part.isGap { line += ",GAP=YES" }
        return line + "\n"
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
