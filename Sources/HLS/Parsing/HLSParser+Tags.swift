import Foundation

// Each tag, checked and recorded: the switch over tag names, and the tags with rules of their own
// (parts, preload hints, skips, date ranges).

extension ParserState {
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
}
