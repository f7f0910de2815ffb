import DecimalFormatting
import Foundation

// Media segments: the `EXTINF` duration read from the bytes, and the URI line that ends each
// segment (or variant), with the lean path for plain URIs.

extension ParserState {
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
            while commaIndex < end, bytes[commaIndex] != UInt8(ascii: ",") { commaIndex += 1 }
            guard let long = PlainDecimalReading.value(UnsafeBufferPointer(rebasing: bytes[start..<commaIndex])),
                long.isFinite
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

    /// A duration of at most 15 digits that ends at a comma or at `end`, read in one pass, with
    /// `stop` set to the comma (or `end`); `nil` for anything else, which
    /// `PlainDecimalReading.value(_:)` reads.
    ///
    /// - Complexity: O(*n*) in the digits.
    @inline(__always)
    static func shortDecimal(
        from start: Int, to end: Int, stoppingAt stop: inout Int, in bytes: UnsafeBufferPointer<UInt8>
    ) -> Double? {
        let scan = PlainDecimalReading.scan(from: start, to: end, in: bytes)
        guard scan.stop == end || bytes[scan.stop] == UInt8(ascii: ","), scan.digitCount > 0, scan.digitCount <= 15
        else {
            return nil
        }
        stop = scan.stop
        return scan.value
    }

    /// A URI line: the segment it ends, or the variant that its `EXT-X-STREAM-INF` announced.
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
}
