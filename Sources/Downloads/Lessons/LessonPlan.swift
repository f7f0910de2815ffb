import Foundation
import HLS
import MediaContainers

/// A lesson download planned from its playlists: the parts to fetch, in the order they are
/// remuxed, grouped into steps that each end at a checkpoint.
///
/// The segments of every rendition (the variant's, a separate audio rendition's) are merged by
/// their discontinuity sequence number, then their start time in the playlists, so the file's
/// media data interleaves them and one pass fetches everything: nothing is fetched twice, and a
/// pause anywhere resumes at the step it stopped in. A step is one segment, with the initialisation section before it when its
/// `EXT-X-MAP` changes, except where a discontinuity starts: there the first segment of every
/// rendition after it forms one step, so the new part's timeline is placed from all of them.
struct LessonPlan: Sendable {
    /// One part to fetch.
    struct Part: Sendable, Hashable {
        /// What the part is.
        enum Role: Sendable, Hashable {
            /// An initialisation section (`EXT-X-MAP`).
            case initialization
            /// A media segment: its index in its playlist.
            case segment(index: Int)
        }

        var url: URL
        var byteRange: ByteRange?
        /// The index of its rendition in ``LessonPlan/renditions``.
        var rendition: Int
        var role: Role
        /// Its discontinuity sequence number (RFC 8216 §6.2.2).
        var discontinuity: Int
        /// Its media sequence number (RFC 8216 §6.3.5: the implicit IV of AES-128).
        var mediaSequence: UInt64
        /// The keys in effect for it.
        var keys: [HLSKey]
        /// How it is decrypted, when a key that encrypts is in effect.
        var decryption: PartDecryption? = nil
        /// Its duration in seconds (0 for an initialisation section).
        var duration: Double
        /// For a segment, the index in ``LessonPlan/parts`` of the initialisation section in
        /// effect for it.
        var initialization: Int?

        var downloadPart: DownloadPart { DownloadPart(url: url, byteRange: byteRange) }
        /// Where its bytes start in the resource its URL names: its byte range's offset, else 0.
        var resourceOffset: UInt64 { byteRange?.offset ?? 0 }
    }

    /// A subtitle rendition of the lesson.
    struct Subtitle: Sendable, Hashable {
        /// Its `LANGUAGE` (BCP 47), if it has one.
        var language: String?
        /// Its `NAME`, unique in its group (RFC 8216 §4.3.4.1.1).
        var name: String
        /// Whether it is `DEFAULT=YES`.
        var isDefault: Bool
        /// Whether it is `FORCED=YES`.
        var isForced: Bool
        var playlistURL: URL

        /// Its language, else its name: how results and file names call it.
        var label: String { language ?? name }
    }

    var parts: [Part]
    /// The steps, each a run of consecutive parts remuxed together.
    var steps: [Range<Int>]
    /// Whether each step streams: one clear segment whose discontinuity number an earlier step
    /// already placed, so it is remuxed as its bytes arrive.
    var streamable: [Bool]
    /// The renditions' settings for their tracks.
    var renditions: [SegmentRemuxer.Rendition]
    /// The file's brand: a movie, or sound alone.
    var brand: MP4Writer.Brand
    /// The lesson's duration in seconds.
    var duration: Double
    /// The source's size: exact when every part has a byte range, otherwise estimated from the
    /// variant's bandwidth; `nil` when the playlists say nothing of it.
    var expectedBytes: UInt64?
    /// Whether ``expectedBytes`` is exact.
    var isExact: Bool
    /// The subtitle renditions.
    var subtitles: [Subtitle]
    /// The variant chosen, for a multivariant playlist.
    var variant: HLSVariant?

    /// The steps and parts a lesson of `renditions` makes, each rendition a list of its parts in
    /// playlist order (with their start times).
    init(
        renditions entries: [[(part: Part, start: Double)]], settings: [SegmentRemuxer.Rendition],
        brand: MP4Writer.Brand, bandwidth: UInt64?, subtitles: [Subtitle] = [], variant: HLSVariant? = nil
    ) {
        renditions = settings
        self.brand = brand
        self.subtitles = subtitles
        self.variant = variant
        // Merge the renditions' segments by start time (the rendition's order breaks ties).
        var queue: [(part: Part, start: Double, rendition: Int, position: Int)] = []
        for (rendition, list) in entries.enumerated() {
            for (position, entry) in list.enumerated() where entry.part.role != .initialization {
                queue.append((entry.part, entry.start, rendition, position))
            }
        }
        // Every segment of one discontinuity number before the next number's: a rendition whose
        // segment durations add up a little short must not open the next part while another
        // rendition is still in the one before (RFC 8216 §6.2.2 gives matching segments of all
        // renditions the same number).
        queue.sort {
            ($0.part.discontinuity, $0.start, $0.rendition, $0.position)
                < ($1.part.discontinuity, $1.start, $1.rendition, $1.position)
        }
        // Pull the first segment of each rendition after a discontinuity (and at the very start)
        // into the step of the first one.
        var groups: [[Int]] = []
        var taken = Set<Int>()
        var opened = Set<Int>()
        for (index, entry) in queue.enumerated() where !taken.contains(index) {
            var group = [index]
            taken.insert(index)
            if !opened.contains(entry.part.discontinuity), opened.allSatisfy({ $0 < entry.part.discontinuity }) {
                opened.insert(entry.part.discontinuity)
                var seen: Set<Int> = [entry.rendition]
                for (other, candidate) in queue.enumerated()
                where !taken.contains(other) && !seen.contains(candidate.rendition)
                    && candidate.part.discontinuity == entry.part.discontinuity
                {
                    // Only the rendition's first segment of that number joins.
                    let earlier = queue.prefix(other).contains {
                        $0.rendition == candidate.rendition && $0.part.discontinuity == entry.part.discontinuity
                    }
                    guard !earlier else { continue }
                    group.append(other)
                    taken.insert(other)
                    seen.insert(candidate.rendition)
                }
            }
            groups.append(group)
        }
        // Lay the steps out, each segment after its initialisation section when that changes.
        var parts: [Part] = []
        var steps: [Range<Int>] = []
        var currentMap: [Int: Part] = [:]
        var mapIndex: [Int: Int] = [:]
        var total = 0.0
        for group in groups {
            let start = parts.count
            for member in group {
                var segment = queue[member].part
                let rendition = queue[member].rendition
                // The initialisation section in effect: the last one before the segment.
                if let map = entries[rendition].last(where: {
                    $0.part.role == .initialization && $0.start <= queue[member].start
                })?.part {
                    if currentMap[rendition] != map {
                        currentMap[rendition] = map
                        mapIndex[rendition] = parts.count
                        parts.append(map)
                    }
                }
                segment.initialization = mapIndex[rendition]
                if rendition == 0 || entries.count == 1 { total += segment.duration }
                parts.append(segment)
            }
            steps.append(start..<parts.count)
        }
        self.parts = parts
        self.steps = steps
        var placed = Set<Int>()
        streamable = steps.map { step in
            let segments = parts[step].filter { $0.role != .initialization }
            defer { for segment in segments { placed.insert(segment.discontinuity) } }
            guard segments.count == 1, let segment = segments.first else { return false }
            return placed.contains(segment.discontinuity)
                && !parts[step].contains { $0.decryption != nil }
        }
        duration = total
        let ranged = parts.allSatisfy { $0.byteRange != nil }
        if ranged {
            expectedBytes = parts.reduce(UInt64(0)) { total, part in
                let (sum, overflow) = total.addingReportingOverflow(part.byteRange?.length ?? 0)
                return overflow ? UInt64.max : sum
            }
            isExact = true
        } else {
            expectedBytes = bandwidth.map { saturatingBytes(Double($0) * total / 8) }
            isExact = false
        }
    }

    /// A hash naming this download in its journal: every part's URL, range, rendition and role,
    /// the steps, and the renditions' settings.
    var fingerprint: String {
        var hash = FNV1a64()
        for part in parts {
            hash.add(part.url.absoluteString.utf8)
            hash.add(
                "|\(part.byteRange?.description ?? "-")|\(part.rendition)|\(part.role)|\(part.discontinuity);".utf8)
        }
        for step in steps { hash.add("\(step.lowerBound)-\(step.upperBound),".utf8) }
        for rendition in renditions {
            hash.add(
                "\(rendition.language ?? "")|\(rendition.name ?? "")|\(rendition.isDefault)|\(rendition.kinds.sorted { $0.rawValue < $1.rawValue })"
                    .utf8)
        }
        hash.add("\(brand)".utf8)
        return String(hash.value, radix: 16)
    }

    /// The index of step `step`'s first part; the part count for a step past the last.
    func firstPart(ofStep step: Int) -> Int {
        step < steps.count ? steps[step].lowerBound : parts.count
    }

    /// The parts of a media playlist with their start times: its initialisation sections where
    /// they change, then each segment that is not a gap.
    ///
    /// - Throws: ``DownloadError`` for a live playlist or a URI that cannot be resolved.
    static func entries(
        of media: HLSMediaPlaylist, at url: URL, rendition: Int, resolve: (String, URL) throws -> URL
    ) throws -> [(part: Part, start: Double)] {
        guard media.hasEndList else { throw DownloadError(.liveStream, url: url) }
        var entries: [(part: Part, start: Double)] = []
        var time = 0.0
        var discontinuity = Int(clamping: media.discontinuitySequence)
        var lastMap: HLSMap?
        for (index, segment) in media.segments.enumerated() {
            if segment.isDiscontinuity { discontinuity += 1 }
            let sequence = media.mediaSequence &+ UInt64(index)
            if let map = segment.map, map != lastMap {
                lastMap = map
                entries.append(
                    (
                        Part(
                            url: try resolve(map.uri, url), byteRange: map.byteRange.map(ByteRange.init),
                            rendition: rendition,
                            role: .initialization, discontinuity: discontinuity, mediaSequence: sequence,
                            keys: map.keys,
                            decryption: try PartDecryption.choose(
                                from: map.keys, mediaSequence: sequence, playlist: url, resolve: resolve),
                            duration: 0, initialization: nil), time
                    ))
            }
            defer { time += segment.duration }
            guard !segment.isGap else { continue }
            entries.append(
                (
                    Part(
                        url: try resolve(segment.uri, url), byteRange: segment.byteRange.map(ByteRange.init),
                        rendition: rendition, role: .segment(index: index), discontinuity: discontinuity,
                        mediaSequence: sequence, keys: segment.keys,
                        decryption: try PartDecryption.choose(
                            from: segment.keys, mediaSequence: sequence, playlist: url, resolve: resolve),
                        duration: segment.duration, initialization: nil),
                    time
                ))
        }
        return entries
    }
}

/// A byte count from a floating-point estimate: 0 for a negative or undefined one, and
/// `UInt64.max` for one too large to count (a playlist's durations can be absurd).
///
/// - Complexity: O(1).
package func saturatingBytes(_ value: Double) -> UInt64 {
    guard value.isFinite, value > 0 else { return value == .infinity ? UInt64.max : 0 }
    return value >= 18_446_744_073_709_549_568 ? UInt64.max : UInt64(value)
}
