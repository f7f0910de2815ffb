public import Foundation

/// Writes samples into one MPEG-4 file (ISO/IEC 14496-12, -14, -15) that `AVPlayer`, ExoPlayer and
/// ffmpeg open and seek in: `ftyp`, one `mdat` that the samples go into as they come, and a `moov`
/// with full sample tables written at the end.
///
/// The layout is the one `ffmpeg -c copy` writes: no fragments, the index after the media data.
/// It is written in a single pass, never rewritten (moving the `moov` to the front would copy the
/// whole file, doubling the disk it needs), and a local player reads the index wherever it is.
///
/// Memory holds one write buffer, not the sample tables: each sample's ``SampleRecord`` goes to
/// the caller at every ``checkpoint()``, and ``finish(replaying:)`` reads the records back,
/// several times over, to write `stts`, `ctts`, `stss`, `stsc`, `stsz` and `co64` table by table.
/// A caller that keeps the records in a journal on disk (the `Downloads` module does) holds
/// nothing per sample in memory at all, whatever the length of the lesson.
///
/// A track's samples keep the sample description they came with: when a description changes (an
/// encoder change brought new parameter sets or a new picture size), the track's `stsd` gains an
/// entry and the chunks after the change point to it.
public struct MP4Writer: Sendable {
    /// The file's major brand.
    public enum Brand: String, Sendable, Hashable, Codable {
        /// `isom`, for a movie (`.mp4`).
        case movie
        /// `M4A `, for sound alone (`.m4a`).
        case audio
    }

    /// A track's settings and the running facts a resume needs.
    public struct Track: Sendable, Hashable, Codable {
        /// What the track carries.
        public var kind: MediaKind
        /// Its timescale: units per second of its times.
        public var timescale: Int
        /// Its sample descriptions, in `stsd` order.
        public var descriptions: [SampleDescription] = []
        /// Its language as an ISO 639-2/T code (`eng`, `spa`), or `nil` for undetermined.
        public var language: String?
        /// Its language as the full BCP 47 tag (`pt-BR`, `zh-Hant`), written in an `elng` box
        /// (ISO/IEC 14496-12 §8.4.6) beside `mdhd`'s code, or `nil` for none.
        public var extendedLanguage: String?
        /// Its name (`hdlr`'s name field, and `udta`/`name`).
        public var name: String?
        /// Whether players present it by default (`tkhd` flags).
        public var isEnabled = true
        /// Its alternate group (`tkhd`): tracks of one group are alternatives, one played at a time.
        public var alternateGroup = 0
        /// Whether it is marked forced (subtitles that are always shown).
        public var isForced = false
        /// The samples written.
        public var sampleCount = 0
        /// The decode time of its last sample.
        public var lastDecodeTime: Int64?
        /// How long its last sample lasts, in its timescale.
        public var lastDuration: Int64 = 0
        /// The description index of its last sample, from 1.
        var currentDescription = 0

        /// Creates a track.
        public init(kind: MediaKind, timescale: Int, language: String? = nil, name: String? = nil) {
            self.kind = kind
            self.timescale = max(1, timescale)
            self.language = language
            self.name = name
        }
    }

    /// What a resume needs to continue a file exactly where a checkpoint left it.
    public struct State: Sendable, Hashable, Codable {
        /// The file's brand.
        public var brand: Brand
        /// The bytes of media data (the `mdat` payload) written and flushed.
        public var dataLength: UInt64
        /// The tracks.
        public var tracks: [Track]
        /// The sample record coder's state after the records handed out so far.
        public var coder: SampleRecordCoder
    }

    /// The bytes before the media data: `ftyp` (28 bytes here) and a 16-byte `mdat` header.
    public static let headerLength: UInt64 = 44

    private let output: any MP4Output
    private(set) var state: State
    private var buffer: [UInt8] = []
    private var bufferStart: UInt64
    private var records: [SampleRecord] = []
    private var lastTrack: Int?

    /// The size at which the write buffer goes to the file.
    static let bufferLimit = 1 << 20

    /// Starts a file in `output`: writes its `ftyp` and the `mdat` header.
    ///
    /// - Throws: ``ContainerError/Kind/writeFailed(reason:code:)``.
    public init(output: any MP4Output, brand: Brand) throws(ContainerError) {
        self.output = output
        state = State(brand: brand, dataLength: 0, tracks: [], coder: SampleRecordCoder())
        bufferStart = Self.headerLength
        var header = BoxWriter()
        header.begin("ftyp")
        switch brand {
        case .movie:
            header.appendType("isom")
            header.append32(0x200)
            for compatible in ["isom", "iso2", "mp41"] { header.appendType(compatible) }
        case .audio:
            header.appendType("M4A ")
            header.append32(0x200)
            for compatible in ["M4A ", "isom", "mp41"] { header.appendType(compatible) }
        }
        header.end()
        // A 64-bit `mdat` (size 1, then the real size), patched when the file is finished.
        header.append32(1)
        header.appendType("mdat")
        header.append64(0)
        try Self.attempt { try header.bytes.withUnsafeBytes { try output.write($0, at: 0) } }
        try Self.attempt { try output.truncate(to: Self.headerLength) }
    }

    /// Continues the file a checkpoint describes: cuts `output` back to the checkpoint's media
    /// data, dropping whatever was written after it.
    ///
    /// - Throws: ``ContainerError/Kind/invalidCheckpoint(reason:)`` when the file is shorter than
    ///   the checkpoint says, or ``ContainerError/Kind/writeFailed(reason:code:)``.
    public init(output: any MP4Output, resuming state: State) throws(ContainerError) {
        self.output = output
        self.state = state
        bufferStart = Self.headerLength + state.dataLength
        try Self.attempt { try output.truncate(to: Self.headerLength + state.dataLength) }
    }

    /// The tracks.
    public var tracks: [Track] { state.tracks }

    /// The bytes of media data written so far (flushed or buffered).
    public var dataLength: UInt64 { bufferStart - Self.headerLength + UInt64(buffer.count) }

    /// Adds a track and returns its index.
    public mutating func addTrack(_ track: Track) -> Int {
        state.tracks.append(track)
        return state.tracks.count - 1
    }

    /// Changes a track's settings (language, name, enabled, group), keeping its samples.
    public mutating func updateTrack(_ index: Int, _ change: (inout Track) -> Void) {
        guard state.tracks.indices.contains(index) else { return }
        change(&state.tracks[index])
    }

    /// The most sample descriptions (`stsd` entries) one track may have: 256, far more than the
    /// encodes a lesson joins.
    static let maximumDescriptions = 256

    /// Appends one sample to track `track`, decoded at `decodeTime` and presented at
    /// `presentationTime` (both in the track's timescale, the decode times of a track increasing).
    ///
    /// - Parameters:
    ///   - data: The sample's bytes, as the sample entry's format stores them.
    ///   - track: The index of the track, from ``addTrack(_:)``.
    ///   - description: The format the sample is in; a new one gives the track a new `stsd` entry.
    ///   - decodeTime: When the sample is decoded.
    ///   - presentationTime: When the sample is shown or heard.
    ///   - isSync: Whether decoding can start at the sample (it goes into `stss`).
    ///   - duration: How long it lasts, when the source says; otherwise the gap to the next
    ///     sample's decode time, and for the last sample the gap before it.
    /// - Throws: ``ContainerError/Kind/timestampOutOfRange(reason:)`` for a decode time that does
    ///   not increase or a composition offset beyond 32 bits,
    ///   ``ContainerError/Kind/unsupportedFormat(_:)`` for a track's 257th sample description, or
    ///   ``ContainerError/Kind/writeFailed(reason:code:)``.
    public mutating func append(
        _ data: Data, to track: Int, description: SampleDescription, decodeTime: Int64, presentationTime: Int64,
        isSync: Bool, duration: Int64? = nil
    ) throws(ContainerError) {
        guard state.tracks.indices.contains(track) else {
            throw ContainerError(.timestampOutOfRange(reason: "no track \(track)"))
        }
        guard data.count <= Int(UInt32.max) else {
            throw ContainerError(.tooLarge(what: "a sample", bytes: data.count, limit: Int(UInt32.max)))
        }
        var entry = state.tracks[track]
        if let last = entry.lastDecodeTime {
            guard decodeTime > last else {
                throw ContainerError(
                    .timestampOutOfRange(reason: "track \(track): decode time \(decodeTime) after \(last)"))
            }
            if duration == nil || entry.lastDuration <= 0 { entry.lastDuration = decodeTime - last }
        }
        guard let offset = Int32(exactly: presentationTime - decodeTime) else {
            throw ContainerError(
                .timestampOutOfRange(reason: "a composition offset of \(presentationTime - decodeTime) ticks"))
        }
        var descriptionIndex = entry.descriptions.lastIndex(of: description).map { $0 + 1 } ?? 0
        if descriptionIndex == 0 {
            // Each change of format adds an entry that every checkpoint keeps and every sample's
            // lookup may pass: a stream changing at nearly every picture is refused.
            guard entry.descriptions.count < Self.maximumDescriptions else {
                throw ContainerError(
                    .unsupportedFormat(
                        "track \(track) changes its format more than \(Self.maximumDescriptions) times (one stsd entry each)"
                    ))
            }
            entry.descriptions.append(description)
            descriptionIndex = entry.descriptions.count
        }
        let startsChunk = lastTrack != track || entry.currentDescription != descriptionIndex
        entry.currentDescription = descriptionIndex
        entry.lastDecodeTime = decodeTime
        if let duration { entry.lastDuration = duration }
        entry.sampleCount += 1
        state.tracks[track] = entry
        lastTrack = track
        records.append(
            SampleRecord(
                track: track, description: descriptionIndex, size: UInt32(data.count), decodeTime: decodeTime,
                compositionOffset: offset, isSync: isSync, startsChunk: startsChunk))
        if data.count >= Self.bufferLimit {
            try flushBuffer()
            let at = bufferStart
            let output = output
            try Self.attempt { try data.withUnsafeBytes { raw in try output.write(raw, at: at) } }
            bufferStart += UInt64(data.count)
        } else {
            buffer.append(contentsOf: data)
            if buffer.count >= Self.bufferLimit { try flushBuffer() }
        }
    }

    /// A checkpoint: the state a resume continues from, and the samples written since the last
    /// one.
    public struct Checkpoint: Sendable {
        /// The state, its record coder advanced past ``encodedRecords``.
        public var state: State
        /// The records of the samples since the last checkpoint, in order.
        public var records: [SampleRecord]
        /// The same records encoded with ``SampleRecordCoder``, as a caller stores them.
        public var encodedRecords: [UInt8]
    }

    /// Writes the buffered media data to the output and returns a checkpoint. The next sample
    /// starts a chunk.
    ///
    /// The caller makes the data durable (``MP4Output/synchronize()``) before it keeps the
    /// checkpoint, so that a kept state never describes bytes that are not on disk.
    ///
    /// - Throws: ``ContainerError/Kind/writeFailed(reason:code:)``.
    public mutating func checkpoint() throws(ContainerError) -> Checkpoint {
        try flushBuffer()
        state.dataLength = bufferStart - Self.headerLength
        let taken = records
        records = []
        lastTrack = nil
        var encoded: [UInt8] = []
        state.coder.encode(taken, into: &encoded)
        return Checkpoint(state: state, records: taken, encodedRecords: encoded)
    }

    /// Forgets the write buffer's memory (a copy kept to go back to, which writes nothing).
    mutating func dropBuffer() {
        buffer = []
    }

    private mutating func flushBuffer() throws(ContainerError) {
        guard !buffer.isEmpty else { return }
        let at = bufferStart
        let output = output
        try Self.attempt { try buffer.withUnsafeBytes { raw in try output.write(raw, at: at) } }
        bufferStart += UInt64(buffer.count)
        buffer.removeAll(keepingCapacity: true)
    }

    static func attempt(_ body: () throws -> Void) throws(ContainerError) {
        do {
            try body()
        } catch let error as ContainerError {
            throw error
        } catch {
            throw ContainerError(.writeFailed(reason: error.localizedDescription, code: FileErrorCode.of(error)))
        }
    }

    // MARK: Finishing

    /// Calls its argument with every record of the file, in order.
    public typealias Replay = (_ visit: (SampleRecord) throws(ContainerError) -> Void) throws(ContainerError) -> Void

    /// What the finished file holds.
    public struct Summary: Sendable, Hashable {
        /// The presentation's length in seconds.
        public var duration: Double
        /// The file's size in bytes.
        public var byteCount: UInt64
        /// Each track's sample count.
        public var sampleCounts: [Int]
    }

    /// Writes the `moov` after the media data, reading every record back with `replaying`, then
    /// the `mdat` size, and flushes the file.
    ///
    /// - Parameter replaying: Hands every record of the file to its argument, in order, each time
    ///   it is called (the records since the last checkpoint included).
    /// - Throws: ``ContainerError/Kind/noSupportedAudio`` when no track has a sample,
    ///   ``ContainerError/Kind/invalidCheckpoint(reason:)`` when the records do not match the
    ///   tracks, or ``ContainerError/Kind/writeFailed(reason:code:)``.
    /// - Complexity: O(*n*) time in the records (a few passes), O(1) memory per record.
    public mutating func finish(replaying: Replay) throws(ContainerError) -> Summary {
        try flushBuffer()
        let dataLength = bufferStart - Self.headerLength
        state.dataLength = dataLength
        let tracks = state.tracks
        guard tracks.contains(where: { $0.sampleCount > 0 }) else { throw ContainerError(.noSupportedAudio) }
        let stats = try Self.statistics(tracks: tracks, replaying: replaying)
        let movieTimescale =
            tracks.first { $0.kind == .video && $0.sampleCount > 0 }?.timescale
            ?? tracks.first { $0.sampleCount > 0 }?.timescale ?? 1_000
        let movieStart =
            stats.compactMap { $0.count > 0 ? Double($0.minimumPresentation) / Double($0.timescale) : nil }
            .min() ?? 0
        var emitter = BoxEmitter(output: output, start: Self.headerLength + dataLength)
        emitter.begin("moov")
        let layouts = tracks.indices.map { index in
            Self.layout(of: stats[index], movieTimescale: movieTimescale, movieStart: movieStart)
        }
        let movieDuration = layouts.map { $0.start + $0.duration }.max() ?? 0
        let large = movieDuration > UInt64(UInt32.max)
        emitter.beginFull("mvhd", version: large ? 1 : 0)
        emitter.appendTimes(large: large)
        emitter.append32(UInt32(movieTimescale))
        if large { emitter.append64(movieDuration) } else { emitter.append32(UInt32(movieDuration)) }
        emitter.append32(0x0001_0000)  // rate 1.0
        emitter.append16(0x0100)  // volume 1.0
        emitter.appendZeros(10)
        emitter.appendUnityMatrix()
        emitter.appendZeros(24)
        emitter.append32(UInt32(tracks.filter { $0.sampleCount > 0 }.count + 1))
        try emitter.end()
        var trackID: UInt32 = 1
        // Subtitle tracks take the picture's size: their text box is the whole picture.
        let picture = tracks.lazy.filter { $0.sampleCount > 0 }.compactMap {
            $0.descriptions.first { $0.kind == .video }
        }
        .first
        for (index, track) in tracks.enumerated() where track.sampleCount > 0 {
            try Self.writeTrack(
                track, index: index, id: trackID, stats: stats[index], layout: layouts[index],
                movieTimescale: movieTimescale, pictureSize: (picture?.width ?? 0, picture?.height ?? 0),
                replaying: replaying, into: &emitter)
            trackID += 1
        }
        try emitter.end()  // moov
        try emitter.flush()
        var size = BoxWriter()
        size.append64(16 + dataLength)
        let fileLength = emitter.position
        try Self.attempt {
            try size.bytes.withUnsafeBytes { try output.write($0, at: Self.headerLength - 8) }
            try output.truncate(to: fileLength)
            try output.synchronize()
        }
        return Summary(
            duration: Double(movieDuration) / Double(movieTimescale), byteCount: fileLength,
            sampleCounts: tracks.map(\.sampleCount))
    }

    /// One track's facts, gathered in a pass over the records.
    struct Statistics {
        var timescale: Int
        var count = 0
        var firstDecode: Int64 = 0
        var lastDecode: Int64 = 0
        var minimumPresentation: Int64 = .max
        var presentationEnd: Int64 = .min
        var hasCompositionOffsets = false
        var hasNegativeOffsets = false
        var syncCount = 0
        var chunkCount = 0
        var previous: SampleRecord?
    }

    static func statistics(tracks: [Track], replaying: Replay) throws(ContainerError) -> [Statistics] {
        var stats = tracks.map { Statistics(timescale: $0.timescale) }
        func close(_ record: SampleRecord, duration: Int64, in entry: inout Statistics) {
            let presentation = record.decodeTime + Int64(record.compositionOffset)
            entry.minimumPresentation = min(entry.minimumPresentation, presentation)
            entry.presentationEnd = max(entry.presentationEnd, presentation + duration)
        }
        try replaying { record throws(ContainerError) in
            guard stats.indices.contains(record.track),
                record.description <= tracks[record.track].descriptions.count
            else { throw ContainerError(.invalidCheckpoint(reason: "a record of an unknown track or description")) }
            var entry = stats[record.track]
            if let previous = entry.previous {
                guard record.decodeTime > previous.decodeTime else {
                    throw ContainerError(.invalidCheckpoint(reason: "decode times do not increase"))
                }
                close(previous, duration: record.decodeTime - previous.decodeTime, in: &entry)
            } else {
                entry.firstDecode = record.decodeTime
            }
            entry.count += 1
            entry.lastDecode = record.decodeTime
            if record.compositionOffset != 0 { entry.hasCompositionOffsets = true }
            if record.compositionOffset < 0 { entry.hasNegativeOffsets = true }
            if record.isSync { entry.syncCount += 1 }
            if record.startsChunk || entry.previous == nil { entry.chunkCount += 1 }
            entry.previous = record
            stats[record.track] = entry
        }
        for index in stats.indices {
            if let last = stats[index].previous {
                close(last, duration: max(tracks[index].lastDuration, 1), in: &stats[index])
            }
            guard stats[index].count == tracks[index].sampleCount else {
                throw ContainerError(
                    .invalidCheckpoint(
                        reason:
                            "track \(index) has \(stats[index].count) records for \(tracks[index].sampleCount) samples")
                )
            }
        }
        return stats
    }

    /// Where a track sits on the movie's timeline, in the movie's timescale: its start (an empty
    /// edit before it), its presented duration, and the media time presentation starts at.
    struct Layout {
        var start: UInt64
        var duration: UInt64
        var mediaTime: Int64
    }

    static func layout(of stats: Statistics, movieTimescale: Int, movieStart: Double) -> Layout {
        guard stats.count > 0 else { return Layout(start: 0, duration: 0, mediaTime: 0) }
        let scale = Double(movieTimescale) / Double(stats.timescale)
        let first = Double(stats.minimumPresentation) / Double(stats.timescale)
        let start = UInt64(max(0, ((first - movieStart) * Double(movieTimescale)).rounded()))
        let duration = UInt64(max(0, (Double(stats.presentationEnd - stats.minimumPresentation) * scale).rounded()))
        return Layout(start: start, duration: duration, mediaTime: stats.minimumPresentation - stats.firstDecode)
    }

    // MARK: Track boxes

    private static func writeTrack(
        _ track: Track, index: Int, id: UInt32, stats: Statistics, layout: Layout, movieTimescale: Int,
        pictureSize: (width: Int, height: Int), replaying: Replay, into box: inout BoxEmitter
    ) throws(ContainerError) {
        box.begin("trak")
        let trackDuration = layout.start + layout.duration
        let large = trackDuration > UInt64(UInt32.max)
        // Flags: enabled (1) when presented by default, in movie (2), in preview (4).
        box.beginFull("tkhd", version: large ? 1 : 0, flags: (track.isEnabled ? 0x1 : 0) | 0x2 | 0x4)
        box.appendTimes(large: large)
        box.append32(id)
        box.append32(0)
        if large { box.append64(trackDuration) } else { box.append32(UInt32(trackDuration)) }
        box.appendZeros(8)
        box.append16(0)  // layer
        box.append16(UInt16(clamping: track.alternateGroup))
        box.append16(track.kind == .audio ? 0x0100 : 0)  // volume
        box.append16(0)
        box.appendUnityMatrix()
        let picture = track.descriptions.first { $0.kind == .video }
        let size = track.kind == .text ? pictureSize : (picture?.width ?? 0, picture?.height ?? 0)
        box.append32(UInt32(clamping: size.0) << 16)
        box.append32(UInt32(clamping: size.1) << 16)
        try box.end()
        if layout.start > 0 || layout.mediaTime != 0 {
            let wide =
                layout.start > UInt64(UInt32.max) || layout.duration > UInt64(UInt32.max)
                || layout.mediaTime > Int64(Int32.max) || layout.mediaTime < 0
            box.begin("edts")
            box.beginFull("elst", version: wide ? 1 : 0)
            box.append32(layout.start > 0 ? 2 : 1)
            if layout.start > 0 {
                // An empty edit: nothing is presented before the track starts.
                if wide { box.append64(layout.start) } else { box.append32(UInt32(layout.start)) }
                if wide { box.append64(UInt64.max) } else { box.append32(UInt32.max) }
                box.append32(0x0001_0000)
            }
            if wide { box.append64(layout.duration) } else { box.append32(UInt32(layout.duration)) }
            if wide {
                box.append64(UInt64(bitPattern: max(layout.mediaTime, 0)))
            } else {
                box.append32(UInt32(max(layout.mediaTime, 0)))
            }
            box.append32(0x0001_0000)
            try box.end()
            try box.end()
        }
        box.begin("mdia")
        let mediaDuration = UInt64(max(0, stats.lastDecode + max(track.lastDuration, 1) - stats.firstDecode))
        box.beginFull("mdhd", version: 1)
        box.append64(0)
        box.append64(0)
        box.append32(UInt32(clamping: track.timescale))
        box.append64(mediaDuration)
        box.append16(Self.packedLanguage(track.language))
        box.append16(0)
        try box.end()
        if let tag = track.extendedLanguage, !tag.isEmpty {
            box.beginFull("elng")
            box.append(Array(tag.utf8.prefix(64)) + [0])
            try box.end()
        }
        let handler: (type: String, name: String) =
            switch track.kind {
            case .video: ("vide", "VideoHandler")
            case .audio: ("soun", "SoundHandler")
            // QuickTime's subtitle handler, which AVFoundation and ffmpeg read `tx3g` tracks under.
            case .text: ("sbtl", "SubtitleHandler")
            }
        box.beginFull("hdlr")
        box.append32(0)
        box.appendType(handler.type)
        box.appendZeros(12)
        box.append(Array((track.name ?? handler.name).utf8.prefix(250)) + [0])
        try box.end()
        box.begin("minf")
        switch track.kind {
        case .video:
            box.beginFull("vmhd", flags: 1)
            box.appendZeros(8)
            try box.end()
        case .audio:
            box.beginFull("smhd")
            box.append32(0)
            try box.end()
        case .text:
            box.beginFull("nmhd")
            try box.end()
        }
        box.begin("dinf")
        box.beginFull("dref")
        box.append32(1)
        box.beginFull("url ", flags: 0x1)  // the data is in this file
        try box.end()
        try box.end()
        try box.end()
        box.begin("stbl")
        box.beginFull("stsd")
        box.append32(UInt32(track.descriptions.count))
        for description in track.descriptions { box.append(description.sampleEntry) }
        try box.end()
        try writeTables(track, index: index, stats: stats, replaying: replaying, into: &box)
        try box.end()  // stbl
        try box.end()  // minf
        try box.end()  // mdia
        if track.name != nil || track.isForced {
            box.begin("udta")
            if let name = track.name {
                box.begin("name")
                box.append(Array(name.utf8.prefix(250)))
                try box.end()
            }
            if track.isForced {
                // ISO/IEC 14496-12 §8.10.4: the track's role, in the DASH role scheme.
                box.beginFull("kind")
                box.append(Array("urn:mpeg:dash:role:2011".utf8) + [0])
                box.append(Array("forced-subtitle".utf8) + [0])
                try box.end()
            }
            try box.end()
        }
        try box.end()  // trak
    }

    /// `stts`, `ctts`, `stss`, `stsc`, `stsz` and `co64`, each from its own pass over the records.
    private static func writeTables(
        _ track: Track, index: Int, stats: Statistics, replaying: Replay, into box: inout BoxEmitter
    ) throws(ContainerError) {
        // stts: runs of equal durations.
        box.beginFull("stts")
        var count = box.placeholder32()
        var runs: UInt32 = 0
        var run: (count: UInt32, value: UInt32)?
        func flushRun(_ box: inout BoxEmitter) {
            guard let current = run else { return }
            box.append32(current.count)
            box.append32(current.value)
            runs += 1
        }
        func add(_ value: UInt32, _ box: inout BoxEmitter) {
            if let current = run, current.value == value, current.count < UInt32.max {
                run?.count += 1
            } else {
                flushRun(&box)
                run = (1, value)
            }
        }
        var previous: SampleRecord?
        try replaying { record throws(ContainerError) in
            guard record.track == index else { return }
            if let last = previous { add(UInt32(clamping: record.decodeTime - last.decodeTime), &box) }
            previous = record
            try box.flushIfNeeded()
        }
        if previous != nil { add(UInt32(clamping: max(track.lastDuration, 1)), &box) }
        flushRun(&box)
        try box.patch32(count, runs)
        try box.end()

        if stats.hasCompositionOffsets {
            box.beginFull("ctts", version: stats.hasNegativeOffsets ? 1 : 0)
            count = box.placeholder32()
            runs = 0
            run = nil
            try replaying { record throws(ContainerError) in
                guard record.track == index else { return }
                add(UInt32(bitPattern: record.compositionOffset), &box)
                try box.flushIfNeeded()
            }
            flushRun(&box)
            try box.patch32(count, runs)
            try box.end()
        }

        if track.kind == .video, stats.syncCount < stats.count {
            box.beginFull("stss")
            box.append32(UInt32(stats.syncCount))
            var number: UInt32 = 0
            try replaying { record throws(ContainerError) in
                guard record.track == index else { return }
                number += 1
                if record.isSync { box.append32(number) }
                try box.flushIfNeeded()
            }
            try box.end()
        }

        // stsc: runs of chunks with the same sample count and description.
        box.beginFull("stsc")
        count = box.placeholder32()
        var entries: UInt32 = 0
        var chunk: (index: UInt32, samples: UInt32, description: UInt32)?
        var last: (samples: UInt32, description: UInt32)?
        func closeChunk(_ box: inout BoxEmitter) {
            guard let current = chunk else { return }
            if last.map({ $0.samples != current.samples || $0.description != current.description }) ?? true {
                box.append32(current.index)
                box.append32(current.samples)
                box.append32(current.description)
                entries += 1
                last = (current.samples, current.description)
            }
        }
        var chunkIndex: UInt32 = 0
        try replaying { record throws(ContainerError) in
            guard record.track == index else { return }
            if record.startsChunk || chunk == nil {
                closeChunk(&box)
                chunkIndex += 1
                chunk = (chunkIndex, 0, UInt32(record.description))
            }
            chunk?.samples += 1
            try box.flushIfNeeded()
        }
        closeChunk(&box)
        try box.patch32(count, entries)
        try box.end()

        box.beginFull("stsz")
        box.append32(0)  // sizes vary
        box.append32(UInt32(stats.count))
        try replaying { record throws(ContainerError) in
            guard record.track == index else { return }
            box.append32(record.size)
            try box.flushIfNeeded()
        }
        try box.end()

        box.beginFull("co64")
        box.append32(UInt32(stats.chunkCount))
        var offset = Self.headerLength
        var started = false
        try replaying { record throws(ContainerError) in
            if record.track == index, record.startsChunk || !started {
                box.append64(offset)
                started = true
            }
            offset += UInt64(record.size)
            try box.flushIfNeeded()
        }
        try box.end()
    }

    /// An ISO 639-2/T code packed into 15 bits as `mdhd` holds it (§8.4.2.3); `und` for none or a
    /// code that is not three lowercase letters.
    static func packedLanguage(_ code: String?) -> UInt16 {
        let letters = Array((code ?? "und").utf8)
        guard letters.count == 3, letters.allSatisfy({ (0x61...0x7A).contains($0) }) else { return 0x55C4 }
        return letters.reduce(0) { $0 << 5 | UInt16($1 - 0x60) }
    }
}

/// Writes boxes straight to an output at increasing offsets, in buffered pieces, patching each
/// box's size (and counts written as placeholders) when it closes, in the buffer or in the file.
struct BoxEmitter: BigEndianAppending {
    private let output: any MP4Output
    private var buffer: [UInt8] = []
    private var bufferStart: UInt64
    private var open: [UInt64] = []

    init(output: any MP4Output, start: UInt64) {
        self.output = output
        bufferStart = start
        buffer.reserveCapacity(1 << 16)
    }

    /// The absolute offset of the next byte.
    var position: UInt64 { bufferStart + UInt64(buffer.count) }

    mutating func begin(_ type: String) {
        open.append(position)
        append32(0)
        appendType(type)
    }

    mutating func beginFull(_ type: String, version: UInt8 = 0, flags: UInt32 = 0) {
        begin(type)
        append32(UInt32(version) << 24 | (flags & 0xFF_FFFF))
    }

    mutating func end() throws(ContainerError) {
        guard let start = open.popLast() else { return }
        try patch32(start, UInt32(truncatingIfNeeded: position - start))
    }

    /// Reserves four bytes for a count and returns their offset.
    mutating func placeholder32() -> UInt64 {
        let at = position
        append32(0)
        return at
    }

    /// Writes `value` at the absolute offset `at`, in the buffer or, when already written, in the
    /// output.
    mutating func patch32(_ at: UInt64, _ value: UInt32) throws(ContainerError) {
        let bytes = [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
        if at >= bufferStart {
            let index = Int(at - bufferStart)
            buffer.replaceSubrange(index..<(index + 4), with: bytes)
        } else {
            let output = output
            try MP4Writer.attempt { try bytes.withUnsafeBytes { try output.write($0, at: at) } }
        }
    }

    mutating func flushIfNeeded() throws(ContainerError) {
        if buffer.count >= 1 << 20 { try flush() }
    }

    mutating func flush() throws(ContainerError) {
        guard !buffer.isEmpty else { return }
        let at = bufferStart
        let output = output
        try MP4Writer.attempt { try buffer.withUnsafeBytes { raw in try output.write(raw, at: at) } }
        bufferStart += UInt64(buffer.count)
        buffer.removeAll(keepingCapacity: true)
    }

    mutating func append8(_ value: UInt8) { buffer.append(value) }

    mutating func append(_ bytes: some Sequence<UInt8>) { buffer.append(contentsOf: bytes) }

    /// Creation and modification times: zero, in 32 or 64 bits.
    mutating func appendTimes(large: Bool) {
        appendZeros(large ? 16 : 8)
    }

}
