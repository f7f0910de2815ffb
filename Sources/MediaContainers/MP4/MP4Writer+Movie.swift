import Foundation

// The `moov` half of the file: written once, after the media data, as a tree of boxes with one
// function per box (ISO/IEC 14496-12 §8), each sample table from its own pass over the records.
//
//     moov ─ mvhd
//          └ trak ─ tkhd
//                 ├ edts ─ elst                      (when the track starts late or mid-sample)
//                 ├ mdia ─ mdhd, elng, hdlr
//                 │      └ minf ─ vmhd | smhd | nmhd
//                 │             ├ dinf ─ dref ─ url
//                 │             └ stbl ─ stsd, stts, ctts, stss, stsc, stsz, co64
//                 └ udta ─ name, kind                (a named or forced track)

extension MP4Writer {
    /// The movie's facts that several boxes need, gathered before the first is written.
    struct Movie {
        var tracks: [Track]
        var statistics: [Statistics]
        var layouts: [Layout]
        var timescale: Int
        var duration: UInt64
        /// The size of the first video description, which subtitle tracks take as theirs.
        var pictureSize: (width: Int, height: Int)
    }

    /// Writes the `moov` after the media data, reading every record back with `replaying`, then
    /// the `mdat` size, and flushes the file.
    ///
    /// - Parameter replaying: Hands every record of the file to its argument, in order, each time
    ///   it is called (the records since the last checkpoint included).
    /// - Throws: ``ContainerError/Kind/noSupportedMedia`` when no track has a sample,
    ///   ``ContainerError/Kind/invalidCheckpoint(reason:)`` when the records do not match the
    ///   tracks, or ``ContainerError/Kind/writeFailed(reason:code:)``.
    /// - Complexity: O(*n*) time in the records (a pass for the statistics and one per sample
    ///   table), O(1) memory per record.
    package mutating func finish(replaying: Replay) throws(ContainerError) -> Summary {
        try flushBuffer()
        let dataLength = bufferStart - Self.headerLength
        state.dataLength = dataLength
        let tracks = state.tracks
        guard tracks.contains(where: { $0.sampleCount > 0 }) else { throw ContainerError(.noSupportedMedia) }
        let movie = try Self.movie(tracks: tracks, replaying: replaying)
        var emitter = BoxEmitter(output: output, start: Self.headerLength + dataLength)
        try Self.writeMovieBox(movie, replaying: replaying, into: &emitter)
        try emitter.flush()
        var size = BoxWriter()
        size.append64(16 + dataLength)
        let fileLength = emitter.position
        let output = output
        try Self.attempt {
            try size.bytes.withUnsafeBytes { try output.write($0, at: Self.headerLength - 8) }
            try output.truncate(to: fileLength)
            try output.synchronize()
        }
        return Summary(
            duration: Double(movie.duration) / Double(movie.timescale), byteCount: fileLength,
            sampleCounts: tracks.map(\.sampleCount))
    }

    /// The movie's facts: each track's statistics and place on the timeline, and the movie's
    /// timescale (the first video track's, else the first track's with samples).
    static func movie(tracks: [Track], replaying: Replay) throws(ContainerError) -> Movie {
        let statistics = try Self.statistics(tracks: tracks, replaying: replaying)
        let timescale =
            tracks.first { $0.kind == .video && $0.sampleCount > 0 }?.timescale
            ?? tracks.first { $0.sampleCount > 0 }?.timescale ?? 1_000
        let start =
            statistics.compactMap { $0.count > 0 ? Double($0.minimumPresentation) / Double($0.timescale) : nil }
            .min() ?? 0
        let layouts = tracks.indices.map { index in
            Self.layout(of: statistics[index], movieTimescale: timescale, movieStart: start)
        }
        let picture = tracks.lazy.filter { $0.sampleCount > 0 }.compactMap {
            $0.descriptions.first { $0.kind == .video }
        }
        .first
        return Movie(
            tracks: tracks, statistics: statistics, layouts: layouts, timescale: timescale,
            duration: layouts.map { $0.start + $0.duration }.max() ?? 0,
            pictureSize: (picture?.width ?? 0, picture?.height ?? 0))
    }

    // MARK: The timeline

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

    // MARK: The movie

    /// `moov` (§8.2.1): the movie header, then a `trak` for each track with samples.
    static func writeMovieBox(_ movie: Movie, replaying: Replay, into emitter: inout BoxEmitter)
        throws(ContainerError)
    {
        try emitter.box("moov") { moov throws(ContainerError) in
            try writeMovieHeader(movie, into: &moov)
            var trackID: UInt32 = 1
            for (index, track) in movie.tracks.enumerated() where track.sampleCount > 0 {
                let context = TrackContext(
                    track: track, index: index, id: trackID, statistics: movie.statistics[index],
                    layout: movie.layouts[index], pictureSize: movie.pictureSize)
                try writeTrackBox(context, replaying: replaying, into: &moov)
                trackID += 1
            }
        }
    }

    /// `mvhd` (§8.2.2): the timescale, the duration, and the next track ID.
    static func writeMovieHeader(_ movie: Movie, into box: inout BoxEmitter) throws(ContainerError) {
        let large = movie.duration > UInt64(UInt32.max)
        try box.fullBox("mvhd", version: large ? 1 : 0) { mvhd throws(ContainerError) in
            mvhd.appendTimes(large: large)
            mvhd.append32(UInt32(movie.timescale))
            if large { mvhd.append64(movie.duration) } else { mvhd.append32(UInt32(movie.duration)) }
            mvhd.append32(0x0001_0000)  // rate 1.0
            mvhd.append16(0x0100)  // volume 1.0
            mvhd.appendZeros(10)
            mvhd.appendUnityMatrix()
            mvhd.appendZeros(24)
            mvhd.append32(UInt32(movie.tracks.filter { $0.sampleCount > 0 }.count + 1))
        }
    }

    // MARK: A track

    /// What the boxes of one track need.
    struct TrackContext {
        var track: Track
        var index: Int
        var id: UInt32
        var statistics: Statistics
        var layout: Layout
        var pictureSize: (width: Int, height: Int)
    }

    /// `trak` (§8.3.1).
    static func writeTrackBox(_ context: TrackContext, replaying: Replay, into box: inout BoxEmitter)
        throws(ContainerError)
    {
        try box.box("trak") { trak throws(ContainerError) in
            try writeTrackHeader(context, into: &trak)
            if context.layout.start > 0 || context.layout.mediaTime != 0 { try writeEdits(context.layout, into: &trak) }
            try writeMediaBox(context, replaying: replaying, into: &trak)
            if context.track.name != nil || context.track.isForced { try writeUserData(context.track, into: &trak) }
        }
    }

    /// `tkhd` (§8.3.2): flags enabled (1) when presented by default, in movie (2) and in preview
    /// (4); the alternate group; the picture size (a subtitle track's is the picture's).
    static func writeTrackHeader(_ context: TrackContext, into box: inout BoxEmitter) throws(ContainerError) {
        let track = context.track
        let trackDuration = context.layout.start + context.layout.duration
        let large = trackDuration > UInt64(UInt32.max)
        try box.fullBox("tkhd", version: large ? 1 : 0, flags: (track.isEnabled ? 0x1 : 0) | 0x2 | 0x4) {
            tkhd throws(ContainerError) in
            tkhd.appendTimes(large: large)
            tkhd.append32(context.id)
            tkhd.append32(0)
            if large { tkhd.append64(trackDuration) } else { tkhd.append32(UInt32(trackDuration)) }
            tkhd.appendZeros(8)
            tkhd.append16(0)  // layer
            tkhd.append16(UInt16(clamping: track.alternateGroup))
            tkhd.append16(track.kind == .audio ? 0x0100 : 0)  // volume
            tkhd.append16(0)
            tkhd.appendUnityMatrix()
            let picture = track.descriptions.first { $0.kind == .video }
            let size = track.kind == .text ? context.pictureSize : (picture?.width ?? 0, picture?.height ?? 0)
            tkhd.append32(UInt32(clamping: size.0) << 16)
            tkhd.append32(UInt32(clamping: size.1) << 16)
        }
    }

    /// `edts` (§8.6.5): the track's edit list.
    static func writeEdits(_ layout: Layout, into box: inout BoxEmitter) throws(ContainerError) {
        try box.box("edts") { edts throws(ContainerError) in try writeEditList(layout, into: &edts) }
    }

    /// `elst` (§8.6.6): an empty edit while the track has not started, then the presented media
    /// from the media time its presentation starts at; version 1 when a field needs 64 bits.
    static func writeEditList(_ layout: Layout, into box: inout BoxEmitter) throws(ContainerError) {
        let wide =
            layout.start > UInt64(UInt32.max) || layout.duration > UInt64(UInt32.max)
            || layout.mediaTime > Int64(Int32.max) || layout.mediaTime < 0
        try box.fullBox("elst", version: wide ? 1 : 0) { elst throws(ContainerError) in
            func appendWord(_ value: UInt64) {
                if wide { elst.append64(value) } else { elst.append32(UInt32(truncatingIfNeeded: value)) }
            }
            elst.append32(layout.start > 0 ? 2 : 1)
            if layout.start > 0 {
                // An empty edit: nothing is presented before the track starts.
                appendWord(layout.start)
                appendWord(UInt64.max)
                elst.append32(0x0001_0000)
            }
            appendWord(layout.duration)
            appendWord(UInt64(max(layout.mediaTime, 0)))
            elst.append32(0x0001_0000)
        }
    }

    /// `udta` (§8.10.1): the track's name and, for a forced subtitle track, its role.
    static func writeUserData(_ track: Track, into box: inout BoxEmitter) throws(ContainerError) {
        try box.box("udta") { udta throws(ContainerError) in
            if let name = track.name { try writeName(name, into: &udta) }
            if track.isForced { try writeForcedKind(into: &udta) }
        }
    }

    /// `name`: the track's name, as QuickTime and ffmpeg read it from `udta`.
    static func writeName(_ name: String, into box: inout BoxEmitter) throws(ContainerError) {
        try box.box("name") { $0.append(Array(name.utf8.prefix(250))) }
    }

    /// `kind` (§8.10.4): the forced-subtitle role in the DASH role scheme.
    static func writeForcedKind(into box: inout BoxEmitter) throws(ContainerError) {
        try box.fullBox("kind") { kind throws(ContainerError) in
            kind.append(Array("urn:mpeg:dash:role:2011".utf8) + [0])
            kind.append(Array("forced-subtitle".utf8) + [0])
        }
    }

    // MARK: The media

    /// `mdia` (§8.4.1).
    static func writeMediaBox(_ context: TrackContext, replaying: Replay, into box: inout BoxEmitter)
        throws(ContainerError)
    {
        try box.box("mdia") { mdia throws(ContainerError) in
            try writeMediaHeader(context, into: &mdia)
            if let tag = context.track.extendedLanguage, !tag.isEmpty { try writeExtendedLanguage(tag, into: &mdia) }
            try writeHandler(context.track, into: &mdia)
            try writeMediaInformation(context, replaying: replaying, into: &mdia)
        }
    }

    /// `mdhd` (§8.4.2), always version 1: the media's timescale, duration and language.
    static func writeMediaHeader(_ context: TrackContext, into box: inout BoxEmitter) throws(ContainerError) {
        let track = context.track
        let statistics = context.statistics
        let duration = UInt64(
            max(0, statistics.lastDecode + max(track.lastDuration, 1) - statistics.firstDecode))
        try box.fullBox("mdhd", version: 1) { mdhd throws(ContainerError) in
            mdhd.append64(0)
            mdhd.append64(0)
            mdhd.append32(UInt32(clamping: track.timescale))
            mdhd.append64(duration)
            mdhd.append16(Self.packedLanguage(track.language))
            mdhd.append16(0)
        }
    }

    /// `elng` (§8.4.6): the track's full BCP 47 language tag, beside `mdhd`'s ISO 639-2 code.
    static func writeExtendedLanguage(_ tag: String, into box: inout BoxEmitter) throws(ContainerError) {
        try box.fullBox("elng") { $0.append(Array(tag.utf8.prefix(64)) + [0]) }
    }

    /// `hdlr` (§8.4.3): the handler type and the track's name. Text is QuickTime's subtitle
    /// handler, which AVFoundation and ffmpeg read `tx3g` tracks under.
    static func writeHandler(_ track: Track, into box: inout BoxEmitter) throws(ContainerError) {
        let handler: (type: String, name: String) =
            switch track.kind {
            case .video: ("vide", "VideoHandler")
            case .audio: ("soun", "SoundHandler")
            case .text: ("sbtl", "SubtitleHandler")
            }
        try box.fullBox("hdlr") { hdlr throws(ContainerError) in
            hdlr.append32(0)
            hdlr.appendType(handler.type)
            hdlr.appendZeros(12)
            hdlr.append(Array((track.name ?? handler.name).utf8.prefix(250)) + [0])
        }
    }

    /// `minf` (§8.4.4): the media header of the track's kind, the data reference and the
    /// sample table.
    static func writeMediaInformation(_ context: TrackContext, replaying: Replay, into box: inout BoxEmitter)
        throws(ContainerError)
    {
        try box.box("minf") { minf throws(ContainerError) in
            try writeMediaTypeHeader(context.track.kind, into: &minf)
            try writeDataInformation(into: &minf)
            try writeSampleTable(context, replaying: replaying, into: &minf)
        }
    }

    /// The media header of the track's kind: `vmhd` (§12.1.2), `smhd` (§12.2.2) or, for text,
    /// `nmhd` (§8.4.5.2).
    static func writeMediaTypeHeader(_ kind: MediaKind, into box: inout BoxEmitter) throws(ContainerError) {
        switch kind {
        case .video: try box.fullBox("vmhd", flags: 1) { $0.appendZeros(8) }
        case .audio: try box.fullBox("smhd") { $0.append32(0) }
        case .text: try box.fullBox("nmhd") { _ in }
        }
    }

    /// `dinf` (§8.7.1): the data reference.
    static func writeDataInformation(into box: inout BoxEmitter) throws(ContainerError) {
        try box.box("dinf") { dinf throws(ContainerError) in try writeDataReference(into: &dinf) }
    }

    /// `dref` (§8.7.2) with one `url ` entry flagged self-contained: the data is in this file.
    static func writeDataReference(into box: inout BoxEmitter) throws(ContainerError) {
        try box.fullBox("dref") { dref throws(ContainerError) in
            dref.append32(1)
            try dref.fullBox("url ", flags: 0x1) { _ in }
        }
    }

    // MARK: The sample table

    /// `stbl` (§8.5.1): the descriptions, then each table from its own pass over the records.
    static func writeSampleTable(_ context: TrackContext, replaying: Replay, into box: inout BoxEmitter)
        throws(ContainerError)
    {
        try box.box("stbl") { stbl throws(ContainerError) in
            try writeSampleDescriptions(context.track, into: &stbl)
            try writeDecodingTimes(context, replaying: replaying, into: &stbl)
            if context.statistics.hasCompositionOffsets {
                try writeCompositionOffsets(context, replaying: replaying, into: &stbl)
            }
            if context.track.kind == .video, context.statistics.syncCount < context.statistics.count {
                try writeSyncSamples(context, replaying: replaying, into: &stbl)
            }
            try writeSampleToChunk(context, replaying: replaying, into: &stbl)
            try writeSampleSizes(context, replaying: replaying, into: &stbl)
            try writeChunkOffsets(context, replaying: replaying, into: &stbl)
        }
    }

    /// `stsd` (§8.5.2): every description the track's samples came with, in order.
    static func writeSampleDescriptions(_ track: Track, into box: inout BoxEmitter) throws(ContainerError) {
        try box.fullBox("stsd") { stsd throws(ContainerError) in
            stsd.append32(UInt32(track.descriptions.count))
            for description in track.descriptions { stsd.append(description.sampleEntry) }
        }
    }

    /// `stts` (§8.6.1.2): runs of equal decode durations; the last sample lasts the track's
    /// last duration (at least 1).
    static func writeDecodingTimes(_ context: TrackContext, replaying: Replay, into box: inout BoxEmitter)
        throws(ContainerError)
    {
        try box.fullBox("stts") { stts throws(ContainerError) in
            let count = stts.placeholder32()
            var table = RunLengthTable<UInt32>(lead: .length)
            var previous: Int64?
            let index = context.index
            try replaying { record throws(ContainerError) in
                guard record.track == index else { return }
                if let previous { table.append(UInt32(clamping: record.decodeTime - previous), into: &stts) }
                previous = record.decodeTime
                try stts.flushIfNeeded()
            }
            if previous != nil { table.append(UInt32(clamping: max(context.track.lastDuration, 1)), into: &stts) }
            table.finish(into: &stts)
            try stts.patch32(count, table.runCount)
        }
    }

    /// `ctts` (§8.6.1.3): runs of equal composition offsets, version 1 when one is negative.
    static func writeCompositionOffsets(_ context: TrackContext, replaying: Replay, into box: inout BoxEmitter)
        throws(ContainerError)
    {
        try box.fullBox("ctts", version: context.statistics.hasNegativeOffsets ? 1 : 0) {
            ctts throws(ContainerError) in
            let count = ctts.placeholder32()
            var table = RunLengthTable<UInt32>(lead: .length)
            let index = context.index
            try replaying { record throws(ContainerError) in
                guard record.track == index else { return }
                table.append(UInt32(bitPattern: record.compositionOffset), into: &ctts)
                try ctts.flushIfNeeded()
            }
            table.finish(into: &ctts)
            try ctts.patch32(count, table.runCount)
        }
    }

    /// `stss` (§8.6.2): the numbers of the sync samples, written only when some are not.
    static func writeSyncSamples(_ context: TrackContext, replaying: Replay, into box: inout BoxEmitter)
        throws(ContainerError)
    {
        try box.fullBox("stss") { stss throws(ContainerError) in
            stss.append32(UInt32(context.statistics.syncCount))
            var number: UInt32 = 0
            let index = context.index
            try replaying { record throws(ContainerError) in
                guard record.track == index else { return }
                number += 1
                if record.isSync { stss.append32(number) }
                try stss.flushIfNeeded()
            }
        }
    }

    /// `stsc` (§8.7.4): runs of chunks with the same sample count and description, each entry
    /// naming the first chunk of its run.
    static func writeSampleToChunk(_ context: TrackContext, replaying: Replay, into box: inout BoxEmitter)
        throws(ContainerError)
    {
        try box.fullBox("stsc") { stsc throws(ContainerError) in
            let count = stsc.placeholder32()
            var table = RunLengthTable<ChunkShape>(lead: .firstNumber)
            var chunk: ChunkShape?
            let index = context.index
            try replaying { record throws(ContainerError) in
                guard record.track == index else { return }
                if record.startsChunk || chunk == nil {
                    if let closed = chunk { table.append(closed, into: &stsc) }
                    chunk = ChunkShape(samples: 0, description: UInt32(record.description))
                }
                chunk?.samples += 1
                try stsc.flushIfNeeded()
            }
            if let closed = chunk { table.append(closed, into: &stsc) }
            table.finish(into: &stsc)
            try stsc.patch32(count, table.runCount)
        }
    }

    /// `stsz` (§8.7.3.2): every sample's size (sizes vary, so no default).
    static func writeSampleSizes(_ context: TrackContext, replaying: Replay, into box: inout BoxEmitter)
        throws(ContainerError)
    {
        try box.fullBox("stsz") { stsz throws(ContainerError) in
            stsz.append32(0)
            stsz.append32(UInt32(context.statistics.count))
            let index = context.index
            try replaying { record throws(ContainerError) in
                guard record.track == index else { return }
                stsz.append32(record.size)
                try stsz.flushIfNeeded()
            }
        }
    }

    /// `co64` (§8.7.5): each chunk's offset in the file, from the sizes of every track's samples
    /// before it (the records are in file order).
    static func writeChunkOffsets(_ context: TrackContext, replaying: Replay, into box: inout BoxEmitter)
        throws(ContainerError)
    {
        try box.fullBox("co64") { co64 throws(ContainerError) in
            co64.append32(UInt32(context.statistics.chunkCount))
            var offset = Self.headerLength
            var started = false
            let index = context.index
            try replaying { record throws(ContainerError) in
                if record.track == index, record.startsChunk || !started {
                    co64.append64(offset)
                    started = true
                }
                offset += UInt64(record.size)
                try co64.flushIfNeeded()
            }
        }
    }

    /// An ISO 639-2/T code packed into 15 bits as `mdhd` holds it (§8.4.2.3); `und` for none or a
    /// code that is not three lowercase letters.
    static func packedLanguage(_ code: String?) -> UInt16 {
        let letters = Array((code ?? "und").utf8)
        guard letters.count == 3, letters.allSatisfy({ (0x61...0x7A).contains($0) }) else { return 0x55C4 }
        return letters.reduce(0) { $0 << 5 | UInt16($1 - 0x60) }
    }
}

/// A chunk's shape as `stsc` describes it: how many samples it holds and which description they
/// use (from 1).
struct ChunkShape: RunLengthValue {
    var samples: UInt32
    var description: UInt32

    func append(to box: inout BoxEmitter) {
        box.append32(samples)
        box.append32(description)
    }
}
