import Foundation

// The end of the parse: the checks that need the whole playlist, and the playlist built.

extension ParserState {
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
