public import Foundation

/// Remuxes the segments of an HLS lesson (one or more renditions: the main one, separate audio)
/// into one MP4 file, in a single pass: each segment is read when its turn comes and its samples
/// go straight into the file's media data.
///
/// <!-- example: segment-remuxer -->
/// ```swift
/// let output = try MP4FileOutput(url: partialFile)
/// var remuxer = try SegmentRemuxer(output: output, brand: .movie)
/// for (index, segment) in segments.enumerated() {
///     try remuxer.append([SegmentRemuxer.Segment(data: segment, discontinuity: 0, index: index)])
/// }
/// let summary = try remuxer.finish()
/// ```
///
/// - **Formats.** A segment may be an MPEG-2 transport stream, packed audio, or fragmented MP4
///   (with the initialisation section in force); ``SegmentFormat`` tells them apart by their
///   bytes, and anything else (an HTML page from a captive portal) is
///   ``ContainerError/Kind/notMedia(found:)``.
/// - **One timeline.** The playlist's discontinuity sequence number of each segment, not a guess,
///   decides where timestamps restart. Within one number, every rendition shares the source's
///   clock, so audio and video keep the offsets the source gives them. After a discontinuity
///   every track resumes from the same point, the presentation end of what came before, with the
///   earliest sample of the new part there and the others at their offsets from it.
/// - **Audio where the source puts it.** Each audio frame is placed by the source's timestamps. A
///   difference under half a frame from where the track already is keeps the track continuous; a
///   gap of half a frame or more is filled with silent frames (``GapPolicy/fillWithSilence``: AAC
///   LC, MPEG audio, AC-3 and E-AC-3) or left as a longer last frame (always with
///   ``GapPolicy/keepTimestamps``, the default, and for audio with no silent frame), and an
///   overlap is trimmed by whole frames.
///   ``report`` counts each.
/// - **Checkpoints.** ``checkpoint()`` returns everything a resume needs (the media data's
///   length, the tracks, the timeline, each rendition's reading state) and the records of the
///   samples written since the last one; ``init(output:resuming:)`` continues from it, and the
///   file ends byte for byte as an uninterrupted run would have written it.
public struct SegmentRemuxer: Sendable {
    /// One rendition's settings for its tracks.
    public struct Rendition: Sendable, Hashable, Codable {
        /// Its language as a BCP 47 tag (`en`, `pt-BR`), written into its tracks as ISO 639-2/T.
        public var language: String?
        /// Its name, written as its tracks' names.
        public var name: String?
        /// Whether its tracks are presented by default.
        public var isDefault: Bool
        /// The kinds of media kept from it: both, or sound alone for an audio download of a
        /// rendition whose segments carry pictures too.
        public var kinds: Set<MediaKind>

        /// Creates rendition settings.
        public init(
            language: String? = nil, name: String? = nil, isDefault: Bool = true,
            kinds: Set<MediaKind> = [.video, .audio]
        ) {
            self.language = language
            self.name = name
            self.isDefault = isDefault
            self.kinds = kinds
        }
    }

    /// One segment to remux.
    public struct Segment: Sendable {
        /// Its bytes (decrypted).
        public var data: Data
        /// The index of its rendition in the remuxer's renditions (0 for the main one).
        public var rendition: Int
        /// Its discontinuity sequence number (RFC 8216 §6.2.2): `EXT-X-DISCONTINUITY-SEQUENCE`
        /// plus the discontinuity tags before it.
        public var discontinuity: Int
        /// The initialisation section in force for a fragmented MP4 segment; `nil` keeps the
        /// rendition's previous one.
        public var initialization: Data?
        /// Where its bytes start in the resource its URI names: the offset of its
        /// `EXT-X-BYTERANGE` (RFC 8216 §4.3.2.2), 0 for a whole file. A fragmented MP4
        /// `base_data_offset` counts from the resource's start.
        public var resourceOffset: UInt64
        /// Its index, for errors.
        public var index: Int

        /// Creates a segment.
        public init(
            data: Data, rendition: Int = 0, discontinuity: Int, initialization: Data? = nil, resourceOffset: UInt64 = 0,
            index: Int
        ) {
            self.data = data
            self.rendition = rendition
            self.discontinuity = discontinuity
            self.initialization = initialization
            self.resourceOffset = resourceOffset
            self.index = index
        }
    }

    /// What the remux does where a track's audio leaves a gap of a frame or more (after a
    /// discontinuity where the part before had less sound than picture, or where the source
    /// dropped frames).
    public enum GapPolicy: String, Sendable, Hashable, Codable {
        /// The gap stays as the source has it: the frame before it lasts until the next frame's
        /// time, so every frame keeps the source's timestamp and the decoded sound is the
        /// source's, sample for sample. A player that follows sample times presents the gap as
        /// silence; one that plays audio samples back to back would play what follows the gap
        /// early by its length, and wants ``fillWithSilence``.
        case keepTimestamps
        /// The gap is filled with silent frames (AAC LC, MPEG audio layers I to III, AC-3, and
        /// E-AC-3 of one independent substream of six blocks; other audio, such as HE-AAC
        /// signalled explicitly, keeps its timestamps, as does a gap of more than ten minutes),
        /// for a player that plays audio samples back to back regardless of their timestamps.
        case fillWithSilence
    }

    /// What the remux did beyond copying samples.
    public struct Report: Sendable, Hashable, Codable {
        /// Silent audio frames inserted where the source left a gap (with
        /// ``GapPolicy/fillWithSilence``).
        public var silentFramesInserted = 0
        /// Gaps of a frame or more kept in audio timestamps (with ``GapPolicy/keepTimestamps``, or
        /// with ``GapPolicy/fillWithSilence`` for audio with no silent frame).
        public var gapsKept = 0
        /// Audio frames left out where the source overlapped what came before.
        public var framesTrimmed = 0
        /// Video samples left out because they came before the first decodable sync sample.
        public var undecodableSamples = 0
        /// Streams and tracks left out because they are not picture or sound (timed metadata…).
        public var ignoredStreams: [String] = []
    }

    /// Where a track's samples come from: a rendition and a stream's place in its segments.
    struct TrackKey: Sendable, Hashable, Codable {
        var rendition: Int
        var slot: StreamSlot
    }

    /// A track's timing on the output timeline, in its timescale.
    struct Timing: Sendable, Hashable, Codable {
        var key: TrackKey
        var lastDecode: Int64?
        var end: Int64?
        /// Where the next audio frame is due, in flicks: exact, so frames whose length is not a
        /// whole number of the track's ticks (a 48 kHz part in a 44.1 kHz track) do not drift.
        var nextAudioFlicks: Int64?
        var frameDelta: Int64
    }

    /// How a rendition's next segment is read.
    enum Reading: Sendable, Hashable, Codable {
        case transportStream(TransportStreamReader.Context)
        case packedAudio(TransportStreamReader.AudioClock?)
        case fragmented(initialization: Data, times: [UInt32: Int64])
    }

    /// A rendition's reading state and the discontinuity number of its last segment.
    struct RenditionState: Sendable, Hashable, Codable {
        var reading: Reading?
        var discontinuity: Int?
    }

    /// What a resume needs.
    public struct State: Sendable, Hashable, Codable {
        var writer: MP4Writer.State
        var renditions: [Rendition]
        var renditionStates: [RenditionState]
        var timings: [Timing]
        /// Each discontinuity number's offset from source time to output time, in flicks.
        var domainOffsets: [Int: Int64]
        var currentDomain: Int?
        var report: Report
        var gaps: GapPolicy
    }

    /// Units per second of the timeline offsets: 705,600,000, which every common rate divides
    /// (90 kHz, 48 and 44.1 kHz, 1 kHz, 24, 25, 30 frames a second).
    static let flicks = 705_600_000

    /// The longest audio gap filled with silent frames, in flicks: ten minutes. A longer one is
    /// a clock that jumped rather than missing sound, and writing it out would fill the disk
    /// with silence; it is kept in the timestamps instead.
    static let maximumSilence = Int64(flicks) * 600

    private var writer: MP4Writer
    private var renditions: [Rendition]
    private var renditionStates: [RenditionState]
    private var timings: [Timing]
    private var domainOffsets: [Int: Int64]
    private var currentDomain: Int?
    private let gaps: GapPolicy
    /// What the remux did beyond copying samples.
    public private(set) var report: Report
    private var keptRecords: [SampleRecord]?
    /// Memory the transport stream readers write samples into, kept from segment to segment per
    /// rendition and stream.
    private var arenas: [Int: [StreamSlot: ArenaSet]] = [:]

    /// Starts a file in `output` for the given renditions (the main one only, by default).
    ///
    /// - Parameters:
    ///   - output: Where the file is written.
    ///   - brand: The file's brand: a movie (`.mp4`) or sound alone (`.m4a`).
    ///   - renditions: The settings of each rendition's tracks, by the rendition index of the
    ///     segments.
    ///   - gaps: What becomes of a gap in the audio.
    ///   - keepingRecords: Whether the remuxer keeps its sample records itself, for
    ///     ``finish()``; a caller that stores them at each ``checkpoint()`` passes `false`.
    /// - Throws: ``ContainerError/Kind/writeFailed(reason:code:)``.
    public init(
        output: any MP4Output, brand: MP4Writer.Brand, renditions: [Rendition] = [Rendition()],
        gaps: GapPolicy = .keepTimestamps, keepingRecords: Bool = true
    ) throws(ContainerError) {
        writer = try MP4Writer(output: output, brand: brand)
        self.gaps = gaps
        self.renditions = renditions.isEmpty ? [Rendition()] : renditions
        renditionStates = self.renditions.map { _ in RenditionState() }
        timings = []
        domainOffsets = [:]
        report = Report()
        keptRecords = keepingRecords ? [] : nil
    }

    /// Continues the file a checkpoint describes; ``finish(replaying:)`` then needs every
    /// record, those handed out before the checkpoint included.
    ///
    /// - Throws: ``ContainerError/Kind/invalidCheckpoint(reason:)`` or
    ///   ``ContainerError/Kind/writeFailed(reason:code:)``.
    public init(output: any MP4Output, resuming state: State) throws(ContainerError) {
        guard state.renditionStates.count == state.renditions.count,
            state.timings.count == state.writer.tracks.count
        else { throw ContainerError(.invalidCheckpoint(reason: "its tracks and renditions do not match")) }
        writer = try MP4Writer(output: output, resuming: state.writer)
        renditions = state.renditions
        renditionStates = state.renditionStates
        timings = state.timings
        domainOffsets = state.domainOffsets
        currentDomain = state.currentDomain
        report = state.report
        gaps = state.gaps
        keptRecords = nil
    }

    /// The tracks written so far.
    public var tracks: [MP4Writer.Track] { writer.tracks }

    /// The bytes of media data written so far.
    public var dataLength: UInt64 { writer.dataLength }

    /// Remuxes segments that belong together: one segment, or the first segments of each
    /// rendition after a discontinuity (so that the new part's earliest sample, whichever
    /// rendition has it, decides where it starts).
    ///
    /// - Throws: ``ContainerError`` naming the segment: bytes that are not media, a malformed
    ///   segment, a stream that cannot be written, or a failed write.
    public mutating func append(_ segments: [Segment]) throws(ContainerError) {
        var read: [(segment: Segment, samples: [MediaSample])] = []
        for segment in segments {
            do {
                read.append((segment, try readSegment(segment)))
            } catch {
                var located = error
                located.segment = located.segment ?? segment.index
                throw located
            }
        }
        // New discontinuity numbers are placed once, from all of this step's segments of that number.
        for (position, entry) in read.enumerated() {
            let number = entry.segment.discontinuity
            guard domainOffsets[number] == nil, currentDomain.map({ number > $0 }) ?? true else { continue }
            let opening = read[position...].filter { $0.segment.discontinuity == number }
            openDomain(number, with: opening)
        }
        for entry in read {
            do {
                try write(entry.samples, of: entry.segment)
            } catch {
                var located = error
                located.segment = located.segment ?? entry.segment.index
                throw located
            }
        }
    }

    /// A checkpoint: the state a resume continues from, and the samples written since the last
    /// one.
    public struct Checkpoint: Sendable {
        /// The state.
        public var state: State
        /// The records of the samples since the last checkpoint, in order.
        public var records: [SampleRecord]
        /// The same records encoded with ``SampleRecordCoder``, as a caller stores them.
        public var encodedRecords: [UInt8]
        /// The bytes of media data written so far.
        public var dataLength: UInt64 { state.writer.dataLength }
    }

    /// Writes the buffered media data and returns a checkpoint.
    ///
    /// - Throws: ``ContainerError/Kind/writeFailed(reason:code:)``.
    public mutating func checkpoint() throws(ContainerError) -> Checkpoint {
        let written = try writer.checkpoint()
        keptRecords?.append(contentsOf: written.records)
        return Checkpoint(
            state: State(
                writer: written.state, renditions: renditions, renditionStates: renditionStates, timings: timings,
                domainOffsets: domainOffsets, currentDomain: currentDomain, report: report, gaps: gaps),
            records: written.records, encodedRecords: written.encodedRecords)
    }

    /// Finishes the file with the records the remuxer kept.
    ///
    /// - Throws: ``ContainerError``; ``ContainerError/Kind/invalidCheckpoint(reason:)`` for a
    ///   remuxer that was resumed or made without keeping records.
    public mutating func finish() throws(ContainerError) -> MP4Writer.Summary {
        _ = try checkpoint()
        guard let records = keptRecords else {
            throw ContainerError(
                .invalidCheckpoint(reason: "the records were handed out; finish(replaying:) needs them"))
        }
        return try writer.finish { visit throws(ContainerError) in
            for record in records { try visit(record) }
        }
    }

    /// Finishes the file, reading every record back with `replaying` (see
    /// ``MP4Writer/finish(replaying:)``).
    ///
    /// - Throws: ``ContainerError``.
    public mutating func finish(replaying: MP4Writer.Replay) throws(ContainerError) -> MP4Writer.Summary {
        try writer.finish(replaying: replaying)
    }

    // MARK: Subtitles

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
    private var mediaEnd: Int64? {
        timings.indices.compactMap { index -> Int64? in
            guard writer.tracks[index].kind != .text, let end = timings[index].end else { return nil }
            return rescale(end, from: writer.tracks[index].timescale, to: Int(SubtitleCue.ticksPerSecond))
        }.max()
    }

    /// Adds a subtitle track of `cues` (3GPP timed text, `tx3g`), placed with ``placed(_:)``, after
    /// the media written so far; call it once the media is all written, before ``checkpoint()``
    /// and the finish.
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

    // MARK: Reading

    /// A segment's reader, whichever its format.
    enum SegmentReading: Sendable {
        case transportStream(TransportStreamReader)
        case packedAudio(PackedAudioReader)
        case fragmented(FragmentedMP4Reader, initialization: Data)

        mutating func read(_ data: Data) throws(ContainerError) -> [MediaSample] {
            switch self {
            case .transportStream(var reader):
                defer { self = .transportStream(reader) }
                return try reader.read(data)
            case .packedAudio(var reader):
                defer { self = .packedAudio(reader) }
                return try reader.read(data)
            case .fragmented(var reader, let initialization):
                defer { self = .fragmented(reader, initialization: initialization) }
                return try reader.read(data)
            }
        }

        mutating func finish() throws(ContainerError) -> [MediaSample] {
            switch self {
            case .transportStream(var reader):
                defer { self = .transportStream(reader) }
                return try reader.finish()
            case .packedAudio(var reader):
                defer { self = .packedAudio(reader) }
                return try reader.finish()
            case .fragmented(var reader, let initialization):
                defer { self = .fragmented(reader, initialization: initialization) }
                return try reader.finish()
            }
        }
    }

    /// A reader for `segment`, whose first bytes are `prefix`, continuing its rendition's state
    /// when the segment continues its timeline.
    private mutating func makeReader(for segment: Segment, prefix: Data) throws(ContainerError) -> SegmentReading {
        guard renditions.indices.contains(segment.rendition) else {
            throw ContainerError(.invalidCheckpoint(reason: "no rendition \(segment.rendition)"))
        }
        let state = renditionStates[segment.rendition]
        // The same discontinuity number continues the rendition's timeline; another starts afresh.
        let continues = state.discontinuity == segment.discontinuity
        switch try SegmentFormat.detect(prefix.prefix(512)) {
        case .transportStream:
            var context: TransportStreamReader.Context?
            if case .transportStream(let previous) = state.reading {
                context = previous
                if !continues {
                    // Parameter sets carry over (a segment may rely on them); times do not.
                    context?.demuxer.lastTimes = [:]
                    context?.audioClocks = [:]
                    context?.started = []
                }
            }
            // RFC 8216 §3.2: an EXT-X-MAP of transport-stream segments holds their PAT and PMT,
            // which the segments need not repeat; its tables are read first, and its continuity
            // counters do not continue into the segment (a file of its own).
            if let initialization = segment.initialization, !initialization.isEmpty {
                var tables = context.map { TransportStreamReader(continuing: $0) } ?? TransportStreamReader()
                let samples = try tables.read(initialization)
                guard samples.isEmpty else {
                    throw ContainerError(
                        .unsupportedFormat("a transport-stream initialisation section that carries media"),
                        segment: segment.index)
                }
                context = tables.context
            }
            let arenas = arenas.removeValue(forKey: segment.rendition) ?? [:]
            return .transportStream(
                context.map { TransportStreamReader(continuing: $0, arenas: arenas) } ?? TransportStreamReader())
        case .packedAudio:
            var clock: TransportStreamReader.AudioClock?
            if continues, case .packedAudio(let previous) = state.reading { clock = previous }
            return .packedAudio(PackedAudioReader(continuing: clock))
        case .isoBaseMedia:
            var initialization = segment.initialization
            var times: [UInt32: Int64] = [:]
            if case .fragmented(let previous, let previousTimes) = state.reading {
                if initialization == nil || initialization == previous {
                    initialization = previous
                    if continues { times = previousTimes }
                }
            }
            guard let initialization else { throw ContainerError(.missingInitialization) }
            var reader = try FragmentedMP4Reader(initialization: initialization, continuing: times)
            reader.resourceOffset = Int(clamping: segment.resourceOffset)
            return .fragmented(reader, initialization: initialization)
        }
    }

    /// Keeps what `reader`, done with `segment`, leaves to the rendition's next segment.
    private mutating func close(_ reader: inout SegmentReading, of segment: Segment) {
        var state = renditionStates[segment.rendition]
        state.discontinuity = segment.discontinuity
        switch reader {
        case .transportStream(var transport):
            arenas[segment.rendition] = transport.takeArenas()
            report.undecodableSamples += transport.undecodableSamples
            note(transport.ignoredStreams.map { "\($0.streamType) on PID \($0.pid)" })
            state.reading = .transportStream(transport.context)
            reader = .transportStream(transport)
        case .packedAudio(let packed):
            state.reading = .packedAudio(packed.clock)
        case .fragmented(let fragmented, let initialization):
            note(fragmented.ignoredTracks)
            state.reading = .fragmented(initialization: initialization, times: fragmented.nextDecodeTimes)
        }
        renditionStates[segment.rendition] = state
    }

    private mutating func readSegment(_ segment: Segment) throws(ContainerError) -> [MediaSample] {
        var reader = try makeReader(for: segment, prefix: segment.data)
        var samples = try reader.read(segment.data)
        samples += try reader.finish()
        close(&reader, of: segment)
        return samples
    }

    // MARK: Streaming

    /// A segment being remuxed as its bytes arrive.
    private var streaming: (segment: Segment, head: Data, reader: SegmentReading?)?
    /// A segment begun before its discontinuity number had a place on the timeline: its bytes,
    /// held until ``end()`` remuxes it whole.
    private var held: (segment: Segment, data: Data)?

    /// A copy to go back to if the segment about to stream must start over: the same state, without
    /// the memory this remuxer reuses from segment to segment (so the copy holds none of it and
    /// this one keeps reusing it).
    public func snapshot() -> SegmentRemuxer {
        var copy = self
        copy.arenas = [:]
        copy.writer.dropBuffer()
        return copy
    }

    /// Whether a segment of discontinuity number `number` can be remuxed as its bytes arrive
    /// (``begin(_:)``): its number's place on the timeline is known, so nothing waits for the
    /// segment's end to place it.
    public func canStream(discontinuity number: Int) -> Bool {
        domainOffsets[number] != nil || currentDomain.map { number <= $0 } ?? false
    }

    /// Starts remuxing a segment whose bytes arrive in pieces: feed them with ``feed(_:)`` and
    /// end with ``end()``. The segment's `data` may hold its first bytes.
    ///
    /// A segment whose discontinuity number has no place on the timeline yet
    /// (``canStream(discontinuity:)`` is false: it opens the number, or every segment of the
    /// number before it held no sample, as an fMP4 segment of only a `styp` does) is held whole
    /// and remuxed by ``end()``, as ``append(_:)`` would.
    ///
    /// - Throws: ``ContainerError`` for the segment's first bytes.
    public mutating func begin(_ segment: Segment) throws(ContainerError) {
        guard canStream(discontinuity: segment.discontinuity) else {
            held = (segment, segment.data)
            return
        }
        var header = segment
        header.data = Data()
        streaming = (header, Data(), nil)
        if !segment.data.isEmpty { try feed(segment.data) }
    }

    /// Feeds the next bytes of the segment begun with ``begin(_:)``; the samples they complete go
    /// into the file.
    ///
    /// - Throws: ``ContainerError`` naming the segment.
    public mutating func feed(_ bytes: Data) throws(ContainerError) {
        if held != nil {
            held?.data.append(bytes)
            return
        }
        // Moved out while it reads, so the reader's memory stays uniquely held and is reused.
        guard var current = streaming else { return }
        streaming = nil
        do {
            var data = bytes
            if current.reader == nil {
                current.head.append(bytes)
                // The format is told from the first 512 bytes (fewer at the segment's end).
                guard current.head.count >= 512 else {
                    streaming = current
                    return
                }
                current.reader = try makeReader(for: current.segment, prefix: current.head)
                data = current.head
                current.head = Data()
            }
            guard var reader = current.reader else {
                streaming = current
                return
            }
            current.reader = nil
            let samples = try reader.read(data)
            current.reader = reader
            streaming = current
            try write(samples, of: current.segment)
        } catch {
            var located = error
            located.segment = located.segment ?? current.segment.index
            throw located
        }
    }

    /// Ends the segment begun with ``begin(_:)``.
    ///
    /// - Throws: ``ContainerError`` naming the segment: it ended inside a packet or frame, or
    ///   it was not media.
    public mutating func end() throws(ContainerError) {
        if var whole = held {
            held = nil
            whole.segment.data = whole.data
            try append([whole.segment])
            return
        }
        guard var current = streaming else { return }
        streaming = nil
        do {
            if current.reader == nil {
                var reader = try makeReader(for: current.segment, prefix: current.head)
                let samples = try reader.read(current.head)
                current.reader = reader
                try write(samples, of: current.segment)
            }
            guard var reader = current.reader else { return }
            current.reader = nil
            let samples = try reader.finish()
            close(&reader, of: current.segment)
            try write(samples, of: current.segment)
        } catch {
            var located = error
            located.segment = located.segment ?? current.segment.index
            throw located
        }
    }

    private mutating func note(_ ignored: [String]) {
        for entry in ignored where !report.ignoredStreams.contains(entry) { report.ignoredStreams.append(entry) }
    }

    // MARK: The timeline

    /// Places discontinuity number `number` on the output timeline: its earliest sample, among the
    /// segments `opening` it, starts where the presentation so far ends.
    private mutating func openDomain(_ number: Int, with opening: [(segment: Segment, samples: [MediaSample])]) {
        let flicks = Self.flicks
        var origin: Int64?
        var firstDecodes: [TrackKey: Int64] = [:]
        for entry in opening {
            let kinds = renditions[entry.segment.rendition].kinds
            for sample in entry.samples where kinds.contains(sample.stream.kind) {
                let time = rescale(sample.presentationTime, from: sample.description.timescale, to: flicks)
                origin = min(origin ?? time, time)
                let key = TrackKey(rendition: entry.segment.rendition, slot: sample.stream)
                let decode = rescale(sample.decodeTime, from: sample.description.timescale, to: flicks)
                firstDecodes[key] = min(firstDecodes[key] ?? decode, decode)
            }
        }
        guard let origin else { return }
        var resume: Int64 = 0
        for (index, timing) in timings.enumerated() {
            let timescale = writer.tracks[index].timescale
            if let end = timing.end { resume = max(resume, rescale(end, from: timescale, to: flicks)) }
            // A track's decode times must keep increasing across the boundary.
            if let last = timing.lastDecode, let first = firstDecodes[timing.key] {
                let lastFlicks = rescale(last, from: timescale, to: flicks)
                let tick = Int64(flicks / timescale)
                resume = max(resume, lastFlicks + tick - (first - origin))
            }
        }
        domainOffsets[number] = resume - origin
        currentDomain = max(currentDomain ?? number, number)
    }

    private mutating func write(_ samples: [MediaSample], of segment: Segment) throws(ContainerError) {
        guard !samples.isEmpty else { return }
        if domainOffsets[segment.discontinuity] == nil {
            // A segment of an older number than any placed (a lagging rendition) continues the
            // nearest placed one before it.
            let earlier = domainOffsets.keys.filter { $0 < segment.discontinuity }.max()
            domainOffsets[segment.discontinuity] = earlier.flatMap { domainOffsets[$0] } ?? 0
        }
        let offset = domainOffsets[segment.discontinuity] ?? 0
        let kinds = renditions[segment.rendition].kinds
        for sample in samples where kinds.contains(sample.stream.kind) {
            let key = TrackKey(rendition: segment.rendition, slot: sample.stream)
            let track = trackIndex(for: key, sample: sample)
            try write(sample, to: track, offsetFlicks: offset)
        }
    }

    private mutating func trackIndex(for key: TrackKey, sample: MediaSample) -> Int {
        if let index = timings.firstIndex(where: { $0.key == key }) { return index }
        let rendition = renditions[key.rendition]
        var track = MP4Writer.Track(
            kind: sample.stream.kind, timescale: sample.description.timescale,
            language: Languages.isoCode(rendition.language), name: rendition.name)
        if track.language != nil { track.extendedLanguage = rendition.language }
        if sample.stream.kind == .audio {
            track.alternateGroup = 1
            let audioTracks = writer.tracks.enumerated().filter { $0.element.kind == .audio }
            // One audio track is presented by default: the default rendition's first, else (no
            // rendition with sound is the default) the first.
            let anotherEnabled = audioTracks.contains { $0.element.isEnabled }
            let defaultHasSound = renditions.contains { $0.isDefault && $0.kinds.contains(.audio) }
            track.isEnabled = !anotherEnabled && (rendition.isDefault || !defaultHasSound)
            if !anotherEnabled, !track.isEnabled, audioTracks.isEmpty, !defaultHasSound { track.isEnabled = true }
        }
        let index = writer.addTrack(track)
        let delta = rescale(3_600, from: 90_000, to: sample.description.timescale)
        timings.append(Timing(key: key, frameDelta: max(delta, 1)))
        return index
    }

    private mutating func write(_ sample: MediaSample, to track: Int, offsetFlicks: Int64) throws(ContainerError) {
        if sample.stream.kind == .audio {
            try writeAudio(sample, to: track, offsetFlicks: offsetFlicks)
        } else {
            try writeVideo(sample, to: track, offsetFlicks: offsetFlicks)
        }
    }

    /// Writes an audio frame where the source's time puts it: continuing the track within half a
    /// frame, trimmed when it overlaps by more, after a kept or filled gap when it comes later.
    /// Frames are placed on exact times in flicks, and each one's ticks are the difference of its
    /// rounded ends: a frame of 940.8 ticks lasts 941 or 940, and the track keeps the source's time
    /// however long it runs.
    private mutating func writeAudio(_ sample: MediaSample, to track: Int, offsetFlicks: Int64) throws(ContainerError) {
        let timescale = writer.tracks[track].timescale
        let source = sample.description.timescale
        let flicks = Self.flicks
        // Times past a sixteenth of Int64's range (about 26 years of flicks) are refused, so that
        // the sums and differences below cannot overflow.
        let bound = Int64.max / 16
        let frame = min(
            max(
                rescale(sample.duration ?? Int64(sample.description.frameDuration ?? 1_024), from: source, to: flicks),
                1),
            bound)
        let (placed, overflow) = rescale(sample.presentationTime, from: source, to: flicks)
            .addingReportingOverflow(offsetFlicks)
        guard !overflow, placed.magnitude <= UInt64(bound) else {
            throw ContainerError(
                .timestampOutOfRange(
                    reason: "an audio time of \(sample.presentationTime) in 1/\(source) s on the lesson's timeline"))
        }
        var timing = timings[track]
        var start = placed
        if let expected = timing.nextAudioFlicks {
            let difference = start - expected
            // More than a second back is not an overlap to trim but a clock restarted where the
            // playlist declares no discontinuity.
            guard difference >= -Int64(flicks) else {
                throw ContainerError(.timestampsStepBack(seconds: Double(-difference) / Double(flicks)))
            }
            // Within half a frame either way, the track stays continuous. Half a frame exactly is
            // continuous too: a gap of k + ½ frames is filled with k + 1 silent frames, which moves
            // what follows by half a frame, and the next frame must not then read as an overlap.
            if abs(difference) * 2 <= frame {
                start = expected
            } else if difference < 0 {
                // Overlaps what came before by half a frame or more: trimmed.
                report.framesTrimmed += 1
                return
            } else if gaps == .keepTimestamps {
                // The gap stays: the frame before lasts until this one.
                report.gapsKept += 1
            } else if case let gapFrames = (difference + frame / 2) / frame, gapFrames <= Self.maximumSilence / frame,
                let silence = SilentAudio.frame(for: sample.description, before: sample.data)
            {
                for index in 0..<gapFrames {
                    let time = expected + index * frame
                    let first = rescale(time, from: flicks, to: timescale)
                    try writer.append(
                        silence, to: track, description: sample.description, decodeTime: first,
                        presentationTime: first, isSync: true,
                        duration: max(rescale(time + frame, from: flicks, to: timescale) - first, 1))
                }
                report.silentFramesInserted += Int(gapFrames)
                start = expected + gapFrames * frame
            } else {
                // No silent frame for this codec, or a gap of more than ten minutes (a clock that
                // jumped, not missing sound): the gap stays, as with keepTimestamps.
                report.gapsKept += 1
            }
        }
        let present = rescale(start, from: flicks, to: timescale)
        let end = max(rescale(start + frame, from: flicks, to: timescale), present + 1)
        timing.nextAudioFlicks = start + frame
        timing.end = max(timing.end ?? end, end)
        try writer.append(
            sample.data, to: track, description: sample.description, decodeTime: present, presentationTime: present,
            isSync: true, duration: end - present)
        timing.lastDecode = present
        timings[track] = timing
    }

    /// Writes a video sample at its source times moved by the part's offset, keeping decode
    /// times increasing.
    private mutating func writeVideo(_ sample: MediaSample, to track: Int, offsetFlicks: Int64) throws(ContainerError) {
        let timescale = writer.tracks[track].timescale
        let source = sample.description.timescale
        let offset = rescale(offsetFlicks, from: Self.flicks, to: timescale)
        var decode = rescale(sample.decodeTime, from: source, to: timescale) + offset
        var present = rescale(sample.presentationTime, from: source, to: timescale) + offset
        let duration = sample.duration.map { rescale($0, from: source, to: timescale) }
        var timing = timings[track]
        if let last = timing.lastDecode {
            guard last - decode <= Int64(timescale) else {
                throw ContainerError(.timestampsStepBack(seconds: Double(last - decode) / Double(timescale)))
            }
            if decode <= last {
                // A source whose decode times stall or step back: the sample keeps its place in
                // decode order, one tick later.
                present += last + 1 - decode
                decode = last + 1
            } else {
                timing.frameDelta = decode - last
            }
        }
        let length = duration ?? timing.frameDelta
        timing.end = max(timing.end ?? present + length, present + length)
        try writer.append(
            sample.data, to: track, description: sample.description, decodeTime: decode, presentationTime: present,
            isSync: sample.isSync, duration: duration)
        timing.lastDecode = decode
        timings[track] = timing
    }
}
