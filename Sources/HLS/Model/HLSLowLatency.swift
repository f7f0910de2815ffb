/// What the server of a live playlist can do (`#EXT-X-SERVER-CONTROL`, RFC 8216bis §4.4.3.8).
///
/// The values are read from the tag's attributes, which are kept as written so that the
/// playlist writes back unchanged.
public struct HLSServerControl: Hashable, Sendable {
    /// The tag's attributes.
    public var attributes: HLSAttributeList

    /// Creates server control from its attributes.
    public init(attributes: HLSAttributeList) {
        self.attributes = attributes
    }

    /// `CAN-SKIP-UNTIL`: the skip boundary in seconds, when the server produces delta updates.
    public var skipBoundary: Double? { attributes.decimalFloat("CAN-SKIP-UNTIL") }
    /// `CAN-SKIP-DATERANGES=YES`: delta updates can skip date ranges too.
    public var canSkipDateRanges: Bool { attributes.boolean("CAN-SKIP-DATERANGES") ?? false }
    /// `HOLD-BACK`: how far from the end to start playing, in seconds, if given (the RFC's
    /// default is three target durations).
    public var holdBack: Double? { attributes.decimalFloat("HOLD-BACK") }
    /// `PART-HOLD-BACK`: the hold back in low-latency mode, in seconds.
    public var partHoldBack: Double? { attributes.decimalFloat("PART-HOLD-BACK") }
    /// `CAN-BLOCK-RELOAD=YES`: the server holds a playlist request until the asked-for segment
    /// or part exists.
    public var canBlockReload: Bool { attributes.boolean("CAN-BLOCK-RELOAD") ?? false }
}

/// A partial segment (`#EXT-X-PART`, RFC 8216bis §4.4.4.9): a short piece of a parent segment
/// published before the segment is complete.
public struct HLSPartialSegment: Hashable, Sendable {
    /// The part's URI, as written (after variable substitution).
    public var uri: String
    /// Its duration in seconds.
    public var duration: Double
    /// Its byte range, resolved (an omitted offset follows the previous part's range).
    public var byteRange: HLSByteRange?
    /// `INDEPENDENT=YES`: the part starts with an independent frame.
    public var isIndependent: Bool
    /// `GAP=YES`: the part is not available.
    public var isGap: Bool

    /// Creates a partial segment.
    public init(
        uri: String, duration: Double, byteRange: HLSByteRange? = nil, isIndependent: Bool = false,
        isGap: Bool = false
    ) {
        self.uri = uri
        self.duration = duration
        self.byteRange = byteRange
        self.isIndependent = isIndependent
        self.isGap = isGap
    }
}

/// A resource the server announces before it exists (`#EXT-X-PRELOAD-HINT`, RFC 8216bis
/// §4.4.5.3), so that a client can request it early.
public struct HLSPreloadHint: Hashable, Sendable {
    /// What kind of resource is hinted.
    public enum HintType: String, Hashable, Sendable, CaseIterable {
        /// A partial segment.
        case part = "PART"
        /// A media initialisation section.
        case map = "MAP"
    }

    /// The kind of resource.
    public var type: HintType
    /// Its URI, as written.
    public var uri: String
    /// `BYTERANGE-START`: the first byte (0 when absent).
    public var byteRangeStart: UInt64
    /// `BYTERANGE-LENGTH`: the length, or `nil` when the hint runs to the end of the resource.
    public var byteRangeLength: UInt64?

    /// Creates a hint.
    public init(type: HintType, uri: String, byteRangeStart: UInt64 = 0, byteRangeLength: UInt64? = nil) {
        self.type = type
        self.uri = uri
        self.byteRangeStart = byteRangeStart
        self.byteRangeLength = byteRangeLength
    }
}

/// How up to date another rendition is (`#EXT-X-RENDITION-REPORT`, RFC 8216bis §4.4.5.4).
///
/// A server may leave out `LAST-MSN` or `LAST-PART` when it equals the carrying playlist's own.
public struct HLSRenditionReport: Hashable, Sendable {
    /// The rendition's media playlist URI, relative to the carrying playlist.
    public var uri: String
    /// `LAST-MSN`: the media sequence number of its last segment or part, if given.
    public var lastMediaSequenceNumber: UInt64?
    /// `LAST-PART`: the index of its last part within that segment, if given.
    public var lastPartIndex: UInt64?

    /// Creates a report.
    public init(uri: String, lastMediaSequenceNumber: UInt64? = nil, lastPartIndex: UInt64? = nil) {
        self.uri = uri
        self.lastMediaSequenceNumber = lastMediaSequenceNumber
        self.lastPartIndex = lastPartIndex
    }
}

/// The segments left out of a playlist delta update (`#EXT-X-SKIP`, RFC 8216bis §4.4.5.2).
///
/// The skipped segments are the first ones: their media sequence numbers start at the
/// playlist's ``HLSMediaPlaylist/mediaSequence``, and the first listed segment comes after them.
/// ``HLSMediaPlaylist/applyingDeltaUpdate(to:)`` restores them from the previous playlist.
public struct HLSSkip: Hashable, Sendable {
    /// `SKIPPED-SEGMENTS`: how many segments were left out.
    public var skippedSegmentCount: UInt64
    /// `RECENTLY-REMOVED-DATERANGES`: the IDs of date ranges removed since, or `nil` when the
    /// update did not skip date ranges.
    public var recentlyRemovedDateRanges: [String]?

    /// Creates a skip.
    public init(skippedSegmentCount: UInt64, recentlyRemovedDateRanges: [String]? = nil) {
        self.skippedSegmentCount = skippedSegmentCount
        self.recentlyRemovedDateRanges = recentlyRemovedDateRanges
    }
}

/// The segment a live server is still producing: the partial segments and tags that follow
/// the last complete segment.
public struct HLSSegmentInProgress: Hashable, Sendable {
    /// Its partial segments so far, in order.
    public var parts: [HLSPartialSegment]
    /// `#EXT-X-PROGRAM-DATE-TIME` given for it, as written.
    public var programDateTime: String?
    /// Whether a discontinuity precedes it.
    public var isDiscontinuity: Bool
    /// The keys in effect for it.
    public var keys: [HLSKey]
    /// The initialisation section in effect for it.
    public var map: HLSMap?

    /// Creates a segment in progress.
    public init(
        parts: [HLSPartialSegment] = [], programDateTime: String? = nil, isDiscontinuity: Bool = false,
        keys: [HLSKey] = [], map: HLSMap? = nil
    ) {
        self.parts = parts
        self.programDateTime = programDateTime
        self.isDiscontinuity = isDiscontinuity
        self.keys = keys
        self.map = map
    }
}

/// Where a content-steering server lives (`#EXT-X-CONTENT-STEERING`, RFC 8216bis §4.4.6.6).
public struct HLSContentSteering: Hashable, Sendable {
    /// The tag's attributes.
    public var attributes: HLSAttributeList

    /// Creates content steering from its attributes.
    public init(attributes: HLSAttributeList) {
        self.attributes = attributes
    }

    /// `SERVER-URI`: the steering manifest's URI.
    public var serverURI: String { attributes.quotedString("SERVER-URI") ?? "" }
    /// `PATHWAY-ID`: the pathway to start with, if given.
    public var pathwayID: String? { attributes.quotedString("PATHWAY-ID") }
}

/// Why a delta update could not be applied to the previous playlist.
public enum HLSDeltaUpdateError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The playlist has no `#EXT-X-SKIP`: it is a full playlist, not a delta update.
    case notADeltaUpdate
    /// The previous playlist does not hold every skipped segment.
    case skippedSegmentsUnavailable(
        firstSkipped: UInt64, skippedCount: UInt64, previousFirst: UInt64, previousCount: Int)

    /// A sentence naming the problem.
    public var description: String {
        switch self {
        case .notADeltaUpdate:
            "the playlist has no EXT-X-SKIP tag: it is not a delta update"
        case .skippedSegmentsUnavailable(let first, let count, let previousFirst, let previousCount):
            "segments \(first) to \(first &+ count &- 1) were skipped, but the previous playlist holds "
                + "\(previousCount) segments from \(previousFirst)"
        }
    }
}

extension HLSMediaPlaylist {
    /// The media sequence number of the first segment listed: ``mediaSequence`` plus any
    /// segments a delta update skipped (RFC 8216bis §4.4.5.2), or `nil` if that passes 2⁶⁴.
    public var firstListedMediaSequenceNumber: UInt64? {
        let (sum, overflow) = mediaSequence.addingReportingOverflow(skip?.skippedSegmentCount ?? 0)
        return overflow ? nil : sum
    }

    /// The full playlist this delta update stands for, given the playlist it updates
    /// (RFC 8216bis §6.2.5.1): the skipped segments are taken from `previous`, and date ranges
    /// are the update's own, after, when the update skipped date ranges, those of `previous`
    /// that it does not list as recently removed (tags of one ID combine, see
    /// ``HLSMediaPlaylist/combinedDateRanges``).
    ///
    /// Every other value (headers, keys and maps of listed segments, parts, hints, reports) is
    /// the update's.
    ///
    /// - Throws: ``HLSDeltaUpdateError`` when `self` is not a delta update or `previous` lacks a
    ///   skipped segment.
    /// - Complexity: O(*n* + *d*) for *n* segments and *d* date ranges.
    public func applyingDeltaUpdate(to previous: HLSMediaPlaylist) throws(HLSDeltaUpdateError) -> HLSMediaPlaylist {
        guard let skip else { throw .notADeltaUpdate }
        let unavailable = HLSDeltaUpdateError.skippedSegmentsUnavailable(
            firstSkipped: mediaSequence, skippedCount: skip.skippedSegmentCount, previousFirst: previous.mediaSequence,
            previousCount: previous.segments.count)
        guard mediaSequence >= previous.mediaSequence else { throw unavailable }
        let offset = mediaSequence - previous.mediaSequence
        let (end, overflow) = offset.addingReportingOverflow(skip.skippedSegmentCount)
        guard !overflow, end <= UInt64(previous.segments.count) else { throw unavailable }
        var full = self
        full.skip = nil
        full.segments = HLSSegmentList(
            Array(previous.segments[Int(offset)..<Int(end)]) + Array(segments))
        if let removed = skip.recentlyRemovedDateRanges {
            let gone = Set(removed)
            full.dateRanges = previous.dateRanges.filter { !gone.contains($0.id) } + dateRanges
        }
        return full
    }
}
