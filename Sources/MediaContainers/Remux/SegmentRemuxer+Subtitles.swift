import Foundation

// Subtitles: cues placed on the output's timeline and written as tracks of their own.

extension SegmentRemuxer {
    /// `cues` placed on the output's timeline, as ``appendSubtitles(_:rendition:isForced:)``
    /// writes them (for a sidecar file that must match the file's timeline).
    ///
    /// Each cue moves with the media of its discontinuity number (a number the media does not
    /// have continues the nearest placed one before it, else the first placed); its 33-bit
    /// timestamp is taken in the wrap (2³³ ticks, 26.5 hours) nearest the source time that the
    /// output's start maps to for that number; it is cut to the media's presentation (from 0 to the latest track
    /// end) and left out if nothing of it remains; and cues with the same times and text (a cue
    /// repeated in each segment it spans, RFC 8216 §3.5) are kept once. The result is sorted by
    /// start, then end.
    ///
    /// - Complexity: O(*n* log *n*) in the cues.
    public func placed(_ cues: [SubtitleCue]) -> [SubtitleCue] {
        let ticks = Int(SubtitleCue.ticksPerSecond)
        let period: Int64 = 1 << 33
        let mediaEnd = mediaEnd
        var seen = Set<SubtitleCue>()
        var result: [SubtitleCue] = []
        for cue in cues {
            let number = cue.discontinuity
            let offsetFlicks =
                domainOffsets[number]
                ?? domainOffsets.keys.filter { $0 < number }.max().flatMap { domainOffsets[$0] }
                ?? domainOffsets.keys.min().flatMap { domainOffsets[$0] } ?? 0
            let offset = rescale(offsetFlicks, from: Self.flicks, to: ticks)
            // The source time shown at the output's 0 is -offset: the cue's time is taken as
            // the one of its value + k·2³³ within half a wrap of it.
            var start = cue.start
            let reference = -offset
            let distance = reference - start + period / 2
            let wraps = distance / period - (distance % period < 0 ? 1 : 0)
            start += wraps * period
            var placed = cue
            placed.start = max(0, start + offset)
            placed.end = cue.end + wraps * period + offset
            if let mediaEnd { placed.end = min(placed.end, mediaEnd) }
            guard placed.end > placed.start else { continue }
            if seen.insert(SubtitleCue(start: placed.start, end: placed.end, text: placed.text)).inserted {
                result.append(placed)
            }
        }
        // Stable: cues of equal times keep their order.
        return result.sorted { ($0.start, $0.end) < ($1.start, $1.end) }
    }

    /// Where the picture and sound written so far end, in 90 kHz ticks of the output; `nil`
    /// before any.
    var mediaEnd: Int64? {
        timings.indices.compactMap { index -> Int64? in
            guard writer.tracks[index].kind != .text, let end = timings[index].end else { return nil }
            return rescale(end, from: writer.tracks[index].timescale, to: Int(SubtitleCue.ticksPerSecond))
        }.max()
    }

    /// Adds a subtitle track of `cues` (3GPP timed text, `tx3g`), placed with ``placed(_:)``, after
    /// the media written so far; call it once the media is all written, before ``finish()``
    /// (and, within the package, before the checkpoint that keeps it).
    ///
    /// The track's samples cover its time without gaps or overlaps, as timed text requires: the
    /// cues showing together are one sample (their lines in order of start, each cue's markup
    /// read on its own), and an empty sample fills the time with none, up to the end of the
    /// media. Hostile input is bounded: at most 100,000 cues a track and 16 showing at once
    /// (later ones are left out), a sample's text at most 65,535 bytes. Subtitle tracks share alternate group 2; the track is enabled
    /// when `rendition.isDefault` and not `isForced`; a forced track is flagged so (the sample
    /// entry's display flags, and a `kind` box with the DASH role `forced-subtitle`).
    ///
    /// - Returns: The cues as placed; no track is added when none remains.
    /// - Throws: ``ContainerError/Kind/writeFailed(reason:code:)``.
    /// - Complexity: O(*n* log *n* + *n* × *k*) for *n* cues, at most *k* showing at once.
    @discardableResult
    public mutating func appendSubtitles(
        _ cues: [SubtitleCue], rendition: Rendition, isForced: Bool
    ) throws(ContainerError) -> [SubtitleCue] {
        let placed = Array(placed(cues).prefix(TimedText.maximumCues))
        guard !placed.isEmpty else { return placed }
        // Each cue's markup is read on its own (an unclosed tag ends with its cue), its text cut
        // to what a sample can hold.
        let parsed = placed.map { TimedText.plainText(of: $0.text) }
        // Cut the timeline at every start and end; each piece shows the cues that cover it.
        var boundaries = Array(Set(placed.flatMap { [$0.start, $0.end] })).sorted()
        if let first = boundaries.first, first > 0 { boundaries.insert(0, at: 0) }
        // The track lasts as long as the media, with an empty sample after the last cue: a
        // player (ffmpeg among them) stretches a track's last sample to the track's end.
        if let last = boundaries.last, let end = mediaEnd, end > last { boundaries.append(end) }
        var track = MP4Writer.Track(
            kind: .text, timescale: TimedText.timescale, language: Languages.isoCode(rendition.language),
            name: rendition.name)
        if track.language != nil { track.extendedLanguage = rendition.language }
        track.alternateGroup = 2
        // One subtitle track is shown by default, whatever the playlist's DEFAULT attributes say.
        track.isEnabled =
            rendition.isDefault && !isForced && !writer.tracks.contains { $0.kind == .text && $0.isEnabled }
        track.isForced = isForced
        let index = writer.addTrack(track)
        let textTracks = writer.tracks.filter { $0.kind == .text }.count
        timings.append(
            Timing(key: TrackKey(rendition: -1, slot: StreamSlot(.text, rank: textTracks - 1)), frameDelta: 1))
        let description = TimedText.description(isForced: isForced)
        // Each piece is written when the next one differs, so memory holds one piece at a time.
        var pending: (start: Int64, end: Int64, showing: [Int])?
        func flush() throws(ContainerError) {
            guard let piece = pending else { return }
            try writer.append(
                TimedText.sample(piece.showing.map { parsed[$0] }), to: index, description: description,
                decodeTime: piece.start, presentationTime: piece.start, isSync: true, duration: piece.end - piece.start)
        }
        var next = 0
        var showing: [Int] = []
        for (position, start) in boundaries.dropLast().enumerated() {
            let end = boundaries[position + 1]
            showing.removeAll { placed[$0].end <= start }
            while next < placed.count, placed[next].start <= start {
                // At most a few cues show at once; one beyond them is left out.
                if placed[next].end > start, showing.count < TimedText.maximumShowing { showing.append(next) }
                next += 1
            }
            if let current = pending, current.showing == showing, current.end == start {
                pending?.end = end
            } else {
                try flush()
                pending = (start, end, showing)
            }
        }
        try flush()
        return placed
    }
}
