public import Foundation

/// Writes a video track and an audio track into one MPEG-4 file (ISO/IEC 14496-12, -14, -15)
/// that `AVPlayer`, ExoPlayer and ffmpeg open and seek in, with sample tables, not fragments.
///
/// Samples are written to `mdat` as they are appended, interleaved as they come, each run of one
/// track's samples a chunk; memory holds only the sample tables. ``finish()`` writes the `moov`:
/// per track `stts` (decode durations), `ctts` (composition offsets, where B-frames reorder
/// pictures), `stss` (sync samples, video only), `stsc`, `stsz`, `co64`, and an edit list that
/// starts each track at its first presentation time, so audio and video stay in sync however
/// their streams began.
public struct MP4MovieWriter: ~Copyable {
    private let handle: FileHandle
    private var video: Track
    private var audio: Track
    private var videoFormat: VideoFormat?
    private var audioFormat: AACFormat?
    private var pending: [UInt8] = []
    private var mdatStart: UInt64 = 0
    private var lastTrack: Kind?
    /// Media bytes appended to `mdat` so far.
    private var dataBytes: UInt64 = 0

    /// Which track a sample belongs to.
    enum Kind { case video, audio }

    /// One track's sample tables, built as samples arrive.
    struct Track {
        var timescale: UInt32
        var sizes: [UInt32] = []
        var decodeTimes: [Int64] = []
        var compositionOffsets: [Int32] = []
        var syncSamples: [UInt32] = []
        /// Each chunk's file offset and sample count.
        var chunks: [(offset: UInt64, count: UInt32)] = []
        /// The first sample's presentation time, in 90 kHz ticks.
        var firstPresentation: Int64?
    }

    /// Creates (or truncates) `destination` and writes the file's header.
    ///
    /// - Throws: ``ContainerError/Kind/writeFailed(reason:)``.
    public init(destination: URL) throws(ContainerError) {
        guard FileManager.default.createFile(atPath: destination.path, contents: nil) else {
            throw ContainerError(.writeFailed(reason: "cannot create \(destination.path)"))
        }
        do {
            handle = try FileHandle(forWritingTo: destination)
        } catch {
            throw ContainerError(.writeFailed(reason: error.localizedDescription))
        }
        video = Track(timescale: 90_000)
        audio = Track(timescale: 1)
        var header = BoxWriter()
        header.begin("ftyp")
        header.appendType("isom")
        header.append32(0x200)
        for brand in ["isom", "iso2", "avc1", "mp41"] { header.appendType(brand) }
        header.end()
        mdatStart = UInt64(header.bytes.count)
        header.append32(1)
        header.appendType("mdat")
        header.append64(0)
        pending = header.bytes
    }

    /// The number of video samples written.
    public var videoSampleCount: Int { video.sizes.count }
    /// The number of audio frames written.
    public var audioFrameCount: Int { audio.sizes.count }

    /// Appends a video sample decoded at `decodeTime` and presented at `presentationTime` (both in
    /// 90 kHz ticks, continuous: rebased past discontinuities by the caller).
    public mutating func appendVideo(
        _ sample: VideoSample, format: VideoFormat, decodeTime: Int64, presentationTime: Int64
    ) throws(ContainerError) {
        if videoFormat == nil { videoFormat = format }
        if video.firstPresentation == nil { video.firstPresentation = presentationTime }
        video.decodeTimes.append(decodeTime)
        video.compositionOffsets.append(Int32(clamping: presentationTime - decodeTime))
        if sample.isSync { video.syncSamples.append(UInt32(video.sizes.count + 1)) }
        sample.data.withUnsafeBytes { record($0, to: .video) }
        if pending.count >= 1 << 18 { try flush() }
    }

    /// Appends one AAC frame presented at `presentationTime` (90 kHz ticks) if it is the first.
    public mutating func appendAudio(
        format: AACFormat, payload: UnsafeRawBufferPointer, presentationTime: Int64?
    ) throws(ContainerError) {
        if let audioFormat, audioFormat != format {
            throw ContainerError(.audioFormatChanged(from: audioFormat.description, to: format.description))
        }
        if audioFormat == nil {
            audioFormat = format
            audio.timescale = UInt32(max(format.sampleRate, 1))
        }
        if audio.firstPresentation == nil, let presentationTime { audio.firstPresentation = presentationTime }
        record(payload, to: .audio)
        if pending.count >= 1 << 18 { try flush() }
    }

    /// Queues one sample's bytes for `mdat` and enters it in its track's tables.
    private mutating func record(_ bytes: UnsafeRawBufferPointer, to kind: Kind) {
        let size = bytes.count
        let offset = mdatStart + 16 + dataBytes
        if lastTrack != kind {
            switch kind {
            case .video: video.chunks.append((offset, 0))
            case .audio: audio.chunks.append((offset, 0))
            }
            lastTrack = kind
        }
        switch kind {
        case .video:
            video.sizes.append(UInt32(size))
            video.chunks[video.chunks.count - 1].count += 1
        case .audio:
            audio.sizes.append(UInt32(size))
            audio.chunks[audio.chunks.count - 1].count += 1
        }
        pending.append(contentsOf: bytes)
        dataBytes += UInt64(size)
    }

    private mutating func flush() throws(ContainerError) {
        guard !pending.isEmpty else { return }
        do {
            try pending.withUnsafeBytes { try handle.write(contentsOf: $0) }
        } catch {
            throw ContainerError(.writeFailed(reason: error.localizedDescription))
        }
        pending.removeAll(keepingCapacity: true)
    }

    /// Writes the `moov` and closes the file.
    ///
    /// - Returns: The duration in seconds.
    /// - Throws: ``ContainerError/Kind/noSupportedAudio`` when neither track has a sample, or
    ///   ``ContainerError/Kind/writeFailed(reason:)``.
    @discardableResult
    public consuming func finish() throws(ContainerError) -> Double {
        defer { try? handle.close() }
        guard !video.sizes.isEmpty || !audio.sizes.isEmpty else { throw ContainerError(.noSupportedAudio) }
        try flush()
        let start = [video.firstPresentation, audio.firstPresentation].compactMap { $0 }.min() ?? 0
        var tracks: [[UInt8]] = []
        var movieDuration: UInt64 = 0
        var nextID: UInt32 = 1
        if let videoFormat, !video.sizes.isEmpty {
            let built = Self.videoTrack(video, format: videoFormat, id: nextID, start: start)
            tracks.append(built.box)
            movieDuration = max(movieDuration, built.duration)
            nextID += 1
        }
        if let audioFormat, !audio.sizes.isEmpty {
            let built = Self.audioTrack(audio, format: audioFormat, id: nextID, start: start)
            tracks.append(built.box)
            movieDuration = max(movieDuration, built.duration)
            nextID += 1
        }
        var moov = BoxWriter()
        moov.begin("moov")
        moov.beginFull("mvhd")
        moov.append32(0)
        moov.append32(0)
        moov.append32(1_000)
        moov.append32(UInt32(clamping: movieDuration))
        moov.append32(0x0001_0000)
        moov.append16(0x0100)
        moov.appendZeros(10)
        moov.appendUnityMatrix()
        moov.appendZeros(24)
        moov.append32(nextID)
        moov.end()
        for track in tracks { moov.append(track) }
        moov.end()
        do {
            try handle.write(contentsOf: Data(moov.bytes))
            var size = BoxWriter()
            size.append64(16 + dataBytes)
            try handle.seek(toOffset: mdatStart + 8)
            try handle.write(contentsOf: Data(size.bytes))
            try handle.synchronize()
        } catch {
            throw ContainerError(.writeFailed(reason: error.localizedDescription))
        }
        return Double(movieDuration) / 1_000
    }

    // MARK: Tracks

    /// Each sample's decode duration: the gap to the next decode time, the last one repeating
    /// the one before it.
    static func durations(_ times: [Int64]) -> [UInt32] {
        guard times.count > 1 else { return times.isEmpty ? [] : [3_000] }
        var durations = zip(times, times.dropFirst()).map { UInt32(clamping: max($1 - $0, 1)) }
        durations.append(durations.last ?? 3_000)
        return durations
    }

    /// A run-length table of `(count, value)` pairs.
    static func runs<T: Equatable>(_ values: [T]) -> [(count: UInt32, value: T)] {
        var result: [(count: UInt32, value: T)] = []
        for value in values {
            if let last = result.last, last.value == value {
                result[result.count - 1].count += 1
            } else {
                result.append((1, value))
            }
        }
        return result
    }

    static func videoTrack(_ track: Track, format: VideoFormat, id: UInt32, start: Int64) -> (
        box: [UInt8], duration: UInt64
    ) {
        let durations = Self.durations(track.decodeTimes)
        let mediaDuration = durations.reduce(UInt64(0)) { $0 + UInt64($1) }
        var box = BoxWriter()
        box.begin("trak")
        let movieDuration = mediaDuration * 1_000 / 90_000
        let delay = UInt64(max((track.firstPresentation ?? start) - start, 0)) * 1_000 / 90_000
        header(&box, id: id, duration: movieDuration + delay, volume: 0, width: format.width, height: format.height)
        // The edit list starts the presentation at the first picture: past the composition
        // offset of the first sample (B-frames), after any delay before this track began.
        editList(&box, delay: delay, duration: movieDuration, mediaTime: Int64(track.compositionOffsets.first ?? 0))
        box.begin("mdia")
        mediaHeader(&box, timescale: 90_000, duration: mediaDuration)
        handler(&box, type: "vide", name: "VideoHandler")
        box.begin("minf")
        box.beginFull("vmhd", flags: 1)
        box.appendZeros(8)
        box.end()
        dataInformation(&box)
        box.begin("stbl")
        box.beginFull("stsd")
        box.append32(1)
        box.begin(format.codec == .h264 ? "avc1" : "hvc1")
        box.appendZeros(6)
        box.append16(1)
        box.appendZeros(16)
        box.append16(UInt16(clamping: format.width))
        box.append16(UInt16(clamping: format.height))
        box.append32(0x0048_0000)
        box.append32(0x0048_0000)
        box.append32(0)
        box.append16(1)  // frame count
        box.appendZeros(32)  // compressor name
        box.append16(0x0018)
        box.append16(0xFFFF)
        box.begin(format.codec == .h264 ? "avcC" : "hvcC")
        box.append(format.configuration)
        box.end()
        box.end()
        box.end()
        timeToSample(&box, durations)
        let offsets = track.compositionOffsets
        if offsets.contains(where: { $0 != 0 }) {
            box.beginFull("ctts", version: offsets.contains { $0 < 0 } ? 1 : 0)
            let runs = Self.runs(offsets)
            box.append32(UInt32(runs.count))
            for run in runs {
                box.append32(run.count)
                box.append32(UInt32(bitPattern: run.value))
            }
            box.end()
        }
        if track.syncSamples.count < track.sizes.count {
            box.beginFull("stss")
            box.append32(UInt32(track.syncSamples.count))
            for sample in track.syncSamples { box.append32(sample) }
            box.end()
        }
        sampleTables(&box, track)
        box.end()  // stbl
        box.end()  // minf
        box.end()  // mdia
        box.end()  // trak
        return (box.bytes, movieDuration + delay)
    }

    static func audioTrack(_ track: Track, format: AACFormat, id: UInt32, start: Int64) -> (
        box: [UInt8], duration: UInt64
    ) {
        let samples = UInt64(track.sizes.count) * 1_024
        let rate = UInt64(max(format.sampleRate, 1))
        let movieDuration = samples * 1_000 / rate
        let delay = UInt64(max((track.firstPresentation ?? start) - start, 0)) * 1_000 / 90_000
        let bitrate = UInt32(
            clamping: UInt64(track.sizes.reduce(0) { $0 + UInt64($1) }) * 8 * rate / max(samples, 1))
        var box = BoxWriter()
        box.begin("trak")
        header(&box, id: id, duration: movieDuration + delay, volume: 0x0100, width: 0, height: 0)
        editList(&box, delay: delay, duration: movieDuration, mediaTime: 0)
        box.begin("mdia")
        mediaHeader(&box, timescale: UInt32(rate), duration: samples)
        handler(&box, type: "soun", name: "SoundHandler")
        box.begin("minf")
        box.beginFull("smhd")
        box.append32(0)
        box.end()
        dataInformation(&box)
        box.begin("stbl")
        box.beginFull("stsd")
        box.append32(1)
        box.append(MP4AudioWriter.sampleEntry(format: format, bitrate: bitrate))
        box.end()
        timeToSample(&box, [UInt32](repeating: 1_024, count: track.sizes.count))
        sampleTables(&box, track)
        box.end()  // stbl
        box.end()  // minf
        box.end()  // mdia
        box.end()  // trak
        return (box.bytes, movieDuration + delay)
    }

    static func header(_ box: inout BoxWriter, id: UInt32, duration: UInt64, volume: UInt16, width: Int, height: Int) {
        box.beginFull("tkhd", flags: 0x3)
        box.append32(0)
        box.append32(0)
        box.append32(id)
        box.append32(0)
        box.append32(UInt32(clamping: duration))
        box.appendZeros(8)
        box.append16(0)
        box.append16(volume == 0 ? 0 : 1)
        box.append16(volume)
        box.append16(0)
        box.appendUnityMatrix()
        box.append32(UInt32(clamping: width) << 16)
        box.append32(UInt32(clamping: height) << 16)
        box.end()
    }

    /// An edit list (§8.6.6): an empty edit for `delay` (movie timescale), then the media from
    /// `mediaTime` (media timescale) for `duration`.
    static func editList(_ box: inout BoxWriter, delay: UInt64, duration: UInt64, mediaTime: Int64) {
        guard delay > 0 || mediaTime != 0 else { return }
        box.begin("edts")
        box.beginFull("elst")
        box.append32(delay > 0 ? 2 : 1)
        if delay > 0 {
            box.append32(UInt32(clamping: delay))
            box.append32(UInt32(bitPattern: -1))
            box.append32(0x0001_0000)
        }
        box.append32(UInt32(clamping: duration))
        box.append32(UInt32(clamping: mediaTime))
        box.append32(0x0001_0000)
        box.end()
        box.end()
    }

    static func mediaHeader(_ box: inout BoxWriter, timescale: UInt32, duration: UInt64) {
        box.beginFull("mdhd", version: 1)
        box.append64(0)
        box.append64(0)
        box.append32(timescale)
        box.append64(duration)
        box.append16(0x55C4)
        box.append16(0)
        box.end()
    }

    static func handler(_ box: inout BoxWriter, type: String, name: String) {
        box.beginFull("hdlr")
        box.append32(0)
        box.appendType(type)
        box.appendZeros(12)
        box.append(Array(name.utf8) + [0])
        box.end()
    }

    static func dataInformation(_ box: inout BoxWriter) {
        box.begin("dinf")
        box.beginFull("dref")
        box.append32(1)
        box.beginFull("url ", flags: 0x1)
        box.end()
        box.end()
        box.end()
    }

    static func timeToSample(_ box: inout BoxWriter, _ durations: [UInt32]) {
        let runs = Self.runs(durations)
        box.beginFull("stts")
        box.append32(UInt32(runs.count))
        for run in runs {
            box.append32(run.count)
            box.append32(run.value)
        }
        box.end()
    }

    /// `stsc`, `stsz` and `co64` for a track's chunks.
    static func sampleTables(_ box: inout BoxWriter, _ track: Track) {
        var entries: [(first: UInt32, count: UInt32)] = []
        for (index, chunk) in track.chunks.enumerated() where entries.last?.count != chunk.count {
            entries.append((UInt32(index + 1), chunk.count))
        }
        box.beginFull("stsc")
        box.append32(UInt32(entries.count))
        for entry in entries {
            box.append32(entry.first)
            box.append32(entry.count)
            box.append32(1)
        }
        box.end()
        box.beginFull("stsz")
        box.append32(0)
        box.append32(UInt32(track.sizes.count))
        for size in track.sizes { box.append32(size) }
        box.end()
        box.beginFull("co64")
        box.append32(UInt32(track.chunks.count))
        for chunk in track.chunks { box.append64(chunk.offset) }
        box.end()
    }
}
