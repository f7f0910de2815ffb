public import Foundation

/// Writes samples into one MPEG-4 file (ISO/IEC 14496-12, -14, -15) that `AVPlayer`, ExoPlayer and
/// ffmpeg open and seek in: `ftyp`, one `mdat` that the samples go into as they come, and a `moov`
/// with full sample tables written at the end.
///
/// The layout is the one `ffmpeg -c copy` writes: no fragments, the index after the media data.
/// It is written in a single pass, never rewritten (moving the `moov` to the front would copy the
/// whole file, doubling the disk it needs), and a local player reads the index wherever it is.
///
/// Memory holds one write buffer and a small record (40 bytes) per sample, which ``finish()`` reads back,
/// several times over, to write `stts`, `ctts`, `stss`, `stsc`, `stsz` and `co64` table by table
/// (the `moov` half is in `MP4Writer+Movie.swift`, one function per box). Within the package,
/// a writer can hand its records out at each checkpoint instead: the `Downloads` module keeps
/// them in a journal on disk, holds nothing per sample in memory, and resumes a file after a
/// crash.
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
        public internal(set) var sampleCount = 0
        /// The decode time of its last sample.
        public internal(set) var lastDecodeTime: Int64?
        /// How long its last sample lasts, in its timescale.
        public internal(set) var lastDuration: Int64 = 0
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
    package struct State: Sendable, Hashable, Codable {
        /// The file's brand.
        package var brand: Brand
        /// The bytes of media data (the `mdat` payload) written and flushed.
        package var dataLength: UInt64
        /// The tracks.
        package var tracks: [Track]
        /// The sample record coder's state after the records handed out so far.
        package var coder: SampleRecordCoder
    }

    /// The bytes before the media data: `ftyp` (28 bytes here) and a 16-byte `mdat` header.
    package static let headerLength: UInt64 = 44

    let output: any MP4Output
    var state: State
    private var buffer: [UInt8] = []
    var bufferStart: UInt64
    /// The records since the last checkpoint.
    private var records: [SampleRecord] = []
    /// The records handed out at checkpoints, when the writer keeps them for ``finish()``.
    private var keptRecords: [SampleRecord]?
    private var lastTrack: Int?

    /// The write buffer's size: it goes to the file before a sample would take it past this (a
    /// sample as large goes to the file on its own).
    static let bufferLimit = 1 << 20

    /// Starts a file in `output`: writes its `ftyp` and the `mdat` header.
    ///
    /// - Throws: ``ContainerError/Kind/writeFailed(reason:code:)``.
    public init(output: any MP4Output, brand: Brand) throws(ContainerError) {
        try self.init(output: output, brand: brand, keepingRecords: true)
    }

    /// Starts a file in `output`; a writer that does not keep its records hands them out at
    /// each ``checkpoint()``, and is finished with ``finish(replaying:)``.
    ///
    /// - Throws: ``ContainerError/Kind/writeFailed(reason:code:)``.
    package init(output: any MP4Output, brand: Brand, keepingRecords: Bool) throws(ContainerError) {
        self.output = output
        keptRecords = keepingRecords ? [] : nil
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
    package init(output: any MP4Output, resuming state: State) throws(ContainerError) {
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
        // The bytes go first, so that a write that fails leaves the writer's tracks and records
        // as they were. Flushed before a sample would take it past the limit, the buffer is one
        // allocation of the limit's size that never grows (appending past it would double it).
        if buffer.count + data.count > Self.bufferLimit { try flushBuffer() }
        if data.count >= Self.bufferLimit {
            let at = bufferStart
            let output = output
            try Self.attempt { try data.withUnsafeBytes { raw in try output.write(raw, at: at) } }
            bufferStart += UInt64(data.count)
        } else {
            if buffer.capacity < Self.bufferLimit { buffer.reserveCapacity(Self.bufferLimit) }
            buffer.append(contentsOf: data)
        }
        state.tracks[track] = entry
        lastTrack = track
        records.append(
            SampleRecord(
                track: track, description: descriptionIndex, size: UInt32(data.count), decodeTime: decodeTime,
                compositionOffset: offset, isSync: isSync, startsChunk: startsChunk))
    }

    /// A checkpoint: the state a resume continues from, and the samples written since the last
    /// one.
    package struct Checkpoint: Sendable {
        /// The state, its record coder advanced past `encodedRecords`.
        package var state: State
        /// The records of the samples since the last checkpoint, in order.
        package var records: [SampleRecord]
        /// The same records encoded with `SampleRecordCoder`, as a caller stores them.
        package var encodedRecords: [UInt8]
    }

    /// Writes the buffered media data to the output and returns a checkpoint. The next sample
    /// starts a chunk.
    ///
    /// The caller makes the data durable (``MP4Output/synchronize()``) before it keeps the
    /// checkpoint, so that a kept state never describes bytes that are not on disk.
    ///
    /// - Throws: ``ContainerError/Kind/writeFailed(reason:code:)``.
    package mutating func checkpoint() throws(ContainerError) -> Checkpoint {
        try flushBuffer()
        state.dataLength = bufferStart - Self.headerLength
        let taken = records
        records = []
        keptRecords?.append(contentsOf: taken)
        lastTrack = nil
        var encoded: [UInt8] = []
        state.coder.encode(taken, into: &encoded)
        return Checkpoint(state: state, records: taken, encodedRecords: encoded)
    }

    /// Forgets the write buffer's memory (a copy kept to go back to, which writes nothing).
    mutating func dropBuffer() {
        buffer = []
    }

    mutating func flushBuffer() throws(ContainerError) {
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

    /// Writes the `moov` after the media data, from the records the writer kept, then the `mdat`
    /// size, and flushes the file.
    ///
    /// - Throws: ``ContainerError/Kind/noSupportedMedia`` when no track has a sample, or
    ///   ``ContainerError/Kind/writeFailed(reason:code:)``.
    /// - Complexity: O(*n*) time in the samples (a pass for each sample table).
    public mutating func finish() throws(ContainerError) -> Summary {
        _ = try checkpoint()
        guard let kept = keptRecords else {
            throw ContainerError(
                .invalidCheckpoint(reason: "the records were handed out; finish(replaying:) needs them"))
        }
        return try finish { visit throws(ContainerError) in
            for record in kept { try visit(record) }
        }
    }

    /// Calls its argument with every record of the file, in order.
    package typealias Replay = (_ visit: (SampleRecord) throws(ContainerError) -> Void) throws(ContainerError) -> Void

    /// What the finished file holds.
    public struct Summary: Sendable, Hashable {
        /// The presentation's length in seconds.
        public var duration: Double
        /// The file's size in bytes.
        public var byteCount: UInt64
        /// Each track's sample count.
        public var sampleCounts: [Int]
    }
}
