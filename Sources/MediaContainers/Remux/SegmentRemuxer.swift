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
/// - **Checkpoints, within the package.** The `Downloads` module takes a checkpoint after each
///   step: everything a resume needs (the media data's length, the tracks, the timeline, each
///   rendition's reading state) and the records of the samples written since the last one, which
///   its journal keeps on disk. A remuxer resumed from one ends the file byte for byte as an
///   uninterrupted run would have written it.
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
        /// More of its bytes, after ``data``, in the pieces they arrived in: a segment read by
        /// ``SegmentRemuxer/append(taking:)`` lets each piece go once it is read, so a segment
        /// remuxed whole is not held twice (its pieces and a joined copy) while it is read.
        package var pieces: [Data] = []

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
    package struct State: Sendable, Hashable, Codable {
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

    var writer: MP4Writer
    var renditions: [Rendition]
    var renditionStates: [RenditionState]
    var timings: [Timing]
    var domainOffsets: [Int: Int64]
    var currentDomain: Int?
    let gaps: GapPolicy
    /// What the remux did beyond copying samples.
    public internal(set) var report: Report
    /// Memory the transport stream readers write samples into, kept from segment to segment per
    /// rendition and stream.
    var arenas: [Int: [StreamSlot: ArenaSet]] = [:]
    /// A segment being remuxed as its bytes arrive.
    var streaming: (segment: Segment, head: Data, reader: SegmentReading?)?
    /// A segment begun before its discontinuity number had a place on the timeline: its bytes,
    /// held until ``end()`` remuxes it whole.
    var held: (segment: Segment, data: Data)?

    /// Starts a file in `output` for the given renditions (the main one only, by default).
    ///
    /// - Parameters:
    ///   - output: Where the file is written.
    ///   - brand: The file's brand: a movie (`.mp4`) or sound alone (`.m4a`).
    ///   - renditions: The settings of each rendition's tracks, by the rendition index of the
    ///     segments.
    ///   - gaps: What becomes of a gap in the audio.
    /// - Throws: ``ContainerError/Kind/writeFailed(reason:code:)``.
    public init(
        output: any MP4Output, brand: MP4Writer.Brand, renditions: [Rendition] = [Rendition()],
        gaps: GapPolicy = .keepTimestamps
    ) throws(ContainerError) {
        try self.init(output: output, brand: brand, renditions: renditions, gaps: gaps, keepingRecords: true)
    }

    /// Starts a file; a remuxer that does not keep its sample records hands them out at each
    /// `checkpoint()`, and is finished with `finish(replaying:)`.
    ///
    /// - Throws: ``ContainerError/Kind/writeFailed(reason:code:)``.
    package init(
        output: any MP4Output, brand: MP4Writer.Brand, renditions: [Rendition], gaps: GapPolicy,
        keepingRecords: Bool
    ) throws(ContainerError) {
        writer = try MP4Writer(output: output, brand: brand, keepingRecords: keepingRecords)
        self.gaps = gaps
        self.renditions = renditions.isEmpty ? [Rendition()] : renditions
        renditionStates = self.renditions.map { _ in RenditionState() }
        timings = []
        domainOffsets = [:]
        report = Report()
    }

    /// Continues the file a checkpoint describes; ``finish(replaying:)`` then needs every
    /// record, those handed out before the checkpoint included.
    ///
    /// - Throws: ``ContainerError/Kind/invalidCheckpoint(reason:)`` or
    ///   ``ContainerError/Kind/writeFailed(reason:code:)``.
    package init(output: any MP4Output, resuming state: State) throws(ContainerError) {
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
        var segments = segments
        try append(taking: &segments)
    }

    /// Appends `segments` as ``append(_:)`` does, taking their bytes: each segment's pieces are
    /// let go as they are read, and `segments` is left without them. A caller that holds no
    /// other copy of the pieces frees each as soon as the reader has taken its samples.
    ///
    /// - Throws: ``ContainerError`` naming the segment.
    package mutating func append(taking segments: inout [Segment]) throws(ContainerError) {
        var read: [(segment: Segment, samples: [MediaSample])] = []
        for index in segments.indices {
            var segment = segments[index]
            // The array lets go of the bytes, so the copy being read holds them alone.
            segments[index].data = Data()
            segments[index].pieces = []
            do {
                // Read first, then kept: the tuple must not copy the segment while it still
                // holds its pieces, or they would all live until the step is written.
                let samples = try readSegment(&segment)
                read.append((segment, samples))
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
    package struct Checkpoint: Sendable {
        /// The state.
        package var state: State
        /// The records of the samples since the last checkpoint, in order.
        package var records: [SampleRecord]
        /// The same records encoded with `SampleRecordCoder`, as a caller stores them.
        package var encodedRecords: [UInt8]
        /// The bytes of media data written so far.
        package var dataLength: UInt64 { state.writer.dataLength }
    }

    /// Writes the buffered media data and returns a checkpoint.
    ///
    /// - Throws: ``ContainerError/Kind/writeFailed(reason:code:)``.
    package mutating func checkpoint() throws(ContainerError) -> Checkpoint {
        let written = try writer.checkpoint()
        return Checkpoint(
            state: State(
                writer: written.state, renditions: renditions, renditionStates: renditionStates, timings: timings,
                domainOffsets: domainOffsets, currentDomain: currentDomain, report: report, gaps: gaps),
            records: written.records, encodedRecords: written.encodedRecords)
    }

    /// Finishes the file with the records the remuxer kept.
    ///
    /// - Throws: ``ContainerError``; ``ContainerError/Kind/invalidCheckpoint(reason:)`` for a
    ///   remuxer that was resumed or that hands its records out (within the package).
    public mutating func finish() throws(ContainerError) -> MP4Writer.Summary {
        try writer.finish()
    }

    /// Finishes the file, reading every record back with `replaying` (see
    /// ``MP4Writer/finish(replaying:)``).
    ///
    /// - Throws: ``ContainerError``.
    package mutating func finish(replaying: MP4Writer.Replay) throws(ContainerError) -> MP4Writer.Summary {
        try writer.finish(replaying: replaying)
    }
}
