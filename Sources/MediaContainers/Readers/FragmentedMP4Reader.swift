public import Foundation

/// The ``ByteStreamDecoder`` under ``FragmentedMP4Reader``: it reads one top-level box at a
/// time, once all of it is there (a `moof` gives the runs, the `mdat` after it their samples).
struct FragmentDecoder: ByteStreamDecoder, Sendable {
    /// A track of the initialisation section.
    struct Track: Sendable, Hashable, Codable {
        var id: UInt32
        var slot: StreamSlot?
        var timescale: Int
        var descriptions: [SampleDescription]
        var defaultDescription: UInt32 = 1
        var defaultDuration: UInt32 = 0
        var defaultSize: UInt32 = 0
        var defaultFlags: UInt32 = 0
        /// The first edit's media time: where presentation starts in the track's media time.
        var editShift: Int64 = 0
        /// The language of `mdhd`, when not `und`.
        var language: String?
    }

    private(set) var tracks: [Track]
    /// The next decode time of each track (by ID), continuing from fragment to fragment.
    private(set) var nextDecodeTimes: [UInt32: Int64] = [:]
    /// The stream offset of the bytes being decoded, for the offsets of errors and samples.
    private var consumed = 0
    private var pendingRuns: [Run] = []
    private var moofStart = 0
    /// The handlers of tracks left out (timed text, metadata) with their track IDs.
    private(set) var ignoredTracks: [String] = []
    /// Where the segment's bytes start in the resource they were cut from (an `EXT-X-BYTERANGE`
    /// offset; 0, the default, for a segment that is a file of its own): a `tfhd`
    /// `base_data_offset` counts from the resource's start (ISO/IEC 14496-12 §8.8.7).
    var resourceOffset = 0

    /// The largest top-level box accepted: 1 GiB.
    static let maximumBoxLength = 1 << 30
    /// The most samples one segment's runs may hold together: 2²⁰, over six hours of 48 kHz AAC
    /// frames. With no per-sample fields a `trun` is 16 bytes whatever its count, so neither a
    /// box's size nor a run's limit bounds what a segment of many runs or fragments asks for.
    static let maximumSamplesPerSegment = 1 << 20
    /// The samples of the segment's runs read so far.
    private var segmentSamples = 0

    /// Reads the initialisation section (`ftyp` and `moov`).
    ///
    /// - Throws: ``ContainerError``: a malformed or missing `moov`, fragments (`moof`) inside
    ///   the section, an encrypted track, or a picture or sound track in a format that cannot be
    ///   written.
    init(initialization: Data) throws(ContainerError) {
        var tracks: [Track] = []
        var ignored: [String] = []
        try withBytes(of: initialization) { (raw) throws(ContainerError) in
            let boxes = try Self.boxes(in: raw, from: 0, to: raw.count)
            guard let moov = boxes.first(where: { $0.type == "moov" }) else {
                throw ContainerError(.malformedBox(box: "moov", reason: "the initialisation section has none"))
            }
            // RFC 8216 §3.3: the section is an ftyp and a moov whose tracks hold no samples.
            // Fragments here belong to no segment, and reading past them would drop their
            // samples in silence.
            if let fragment = boxes.first(where: { $0.type == "moof" }) {
                throw ContainerError(
                    .malformedBox(box: "moof", reason: "media samples inside the initialisation section"),
                    offset: fragment.start)
            }
            let children = try Self.boxes(in: raw, from: moov.body, to: moov.end)
            var trex: [UInt32: (UInt32, UInt32, UInt32, UInt32)] = [:]
            if let mvex = children.first(where: { $0.type == "mvex" }) {
                for box in try Self.boxes(in: raw, from: mvex.body, to: mvex.end) where box.type == "trex" {
                    var cursor = ByteCursor(raw, from: box.body + 4, to: box.end)
                    guard let id = cursor.uint32(), let description = cursor.uint32(),
                        let duration = cursor.uint32(),
                        let size = cursor.uint32(), let flags = cursor.uint32()
                    else { throw ContainerError(.malformedBox(box: "trex", reason: "cut short")) }
                    trex[id] = (description, duration, size, flags)
                }
            }
            var movieTimescale: UInt32 = 1_000
            if let mvhd = children.first(where: { $0.type == "mvhd" }) {
                var cursor = ByteCursor(raw, from: mvhd.body, to: mvhd.end)
                if let version = cursor.uint8(), cursor.skip(3), cursor.skip(version == 1 ? 16 : 8),
                    let timescale = cursor.uint32(), timescale > 0
                {
                    movieTimescale = timescale
                }
            }
            var ranks: [MediaKind: Int] = [:]
            for trak in children where trak.type == "trak" {
                guard var track = try Self.track(in: raw, trak, movieTimescale: movieTimescale, ignored: &ignored)
                else { continue }
                if let defaults = trex[track.id] {
                    (track.defaultDescription, track.defaultDuration, track.defaultSize, track.defaultFlags) =
                        defaults
                }
                if let kind = track.descriptions.first?.kind {
                    track.slot = StreamSlot(kind, rank: ranks[kind, default: 0])
                    ranks[kind, default: 0] += 1
                }
                tracks.append(track)
            }
        }
        self.tracks = tracks
        ignoredTracks = ignored
    }

    /// Creates a reader that continues an earlier segment's decode times, for segments without
    /// a `tfdt`.
    init(initialization: Data, continuing times: [UInt32: Int64]) throws(ContainerError) {
        try self.init(initialization: initialization)
        nextDecodeTimes = times
    }

    /// The kinds and ranks of the tracks, in the initialisation section's order.
    var slots: [StreamSlot] { tracks.compactMap(\.slot) }

    mutating func decode(_ cursor: inout ByteCursor, _ emit: (MediaSample) throws(ContainerError) -> Void)
        throws(ContainerError)
    {
        consumed = cursor.base
        var samples: [MediaSample] = []
        cursor.position = try readBoxes(cursor.bytes, from: cursor.position, into: &samples)
        for sample in samples { try emit(sample) }
    }

    /// Decodes the last boxes (a last box of size 0 runs to the segment's end, which is now
    /// known).
    ///
    /// - Throws: ``ContainerError`` when the segment ends inside a box or before the data of
    ///   its runs.
    mutating func decodeLast(_ cursor: inout ByteCursor, _ emit: (MediaSample) throws(ContainerError) -> Void)
        throws(ContainerError)
    {
        consumed = cursor.base
        var samples: [MediaSample] = []
        cursor.position = try readBoxes(cursor.bytes, from: cursor.position, into: &samples, atEnd: true)
        for sample in samples { try emit(sample) }
        guard cursor.remaining == 0 else {
            throw ContainerError(
                .malformedBox(box: "segment", reason: "it ends \(cursor.remaining) bytes into a box"),
                offset: cursor.streamOffset)
        }
        guard pendingRuns.isEmpty else {
            throw ContainerError(
                .malformedBox(box: "mdat", reason: "a fragment's data is missing"), offset: cursor.streamOffset)
        }
    }

    /// The size of the box at the front of `cursor`, once its header is there.
    func unitLength(at cursor: ByteCursor) -> Int? {
        guard let box = try? Self.box(in: cursor.bytes, at: cursor.position, limit: Int.max, limitIsEnd: false)
        else { return nil }
        return box.end - cursor.position
    }

    // MARK: Boxes

    /// A box's type and extent.
    struct Box {
        var type: String
        var start: Int
        /// Where its contents start (after the size, type and any 64-bit size).
        var body: Int
        var end: Int
    }

    /// The boxes from `start` to `end`.
    static func boxes(in raw: UnsafeRawBufferPointer, from start: Int, to end: Int) throws(ContainerError) -> [Box] {
        var boxes: [Box] = []
        var at = start
        while at < end {
            guard let box = try box(in: raw, at: at, limit: end) else {
                throw ContainerError(.malformedBox(box: "?", reason: "a box runs past its parent"), offset: at)
            }
            boxes.append(box)
            at = box.end
        }
        return boxes
    }

    /// The box at `at`, or `nil` when its header or body runs past `limit`.
    ///
    /// A box of size 0 runs to the end of its container (§4.2): with `limitIsEnd` false (more
    /// bytes of the segment may come), its end is not known yet, so it is `nil` too.
    static func box(in raw: UnsafeRawBufferPointer, at: Int, limit: Int, limitIsEnd: Bool = true)
        throws(ContainerError) -> Box?
    {
        var cursor = ByteCursor(raw, from: at, to: limit)
        guard let size32 = cursor.uint32(), let type = cursor.fourCC() else { return nil }
        var size = UInt64(size32)
        if size32 == 1 {
            guard let large = cursor.uint64() else { return nil }
            size = large
        } else if size32 == 0 {
            guard limitIsEnd else { return nil }
            size = UInt64(limit - at)
        }
        if type == "uuid" { guard cursor.skip(16) else { return nil } }
        guard size >= UInt64(cursor.position - at) else {
            throw ContainerError(.malformedBox(box: type, reason: "a size of \(size) bytes"), offset: at)
        }
        guard size <= UInt64(maximumBoxLength) else {
            throw ContainerError(
                .tooLarge(what: "a '\(type)' box", bytes: Int(clamping: size), limit: maximumBoxLength), offset: at)
        }
        guard UInt64(limit - at) >= size else { return nil }
        return Box(type: type, start: at, body: cursor.position, end: at + Int(size))
    }

    /// A track of the initialisation section, or `nil` for one that is left out.
    private static func track(
        in raw: UnsafeRawBufferPointer, _ trak: Box, movieTimescale: UInt32, ignored: inout [String]
    ) throws(ContainerError) -> Track? {
        let children = try boxes(in: raw, from: trak.body, to: trak.end)
        guard let tkhd = children.first(where: { $0.type == "tkhd" }),
            let mdia = children.first(where: { $0.type == "mdia" })
        else { throw ContainerError(.malformedBox(box: "trak", reason: "no tkhd or mdia")) }
        var cursor = ByteCursor(raw, from: tkhd.body, to: tkhd.end)
        guard let version = cursor.uint8(), cursor.skip(3), cursor.skip(version == 1 ? 16 : 8), let id = cursor.uint32()
        else { throw ContainerError(.malformedBox(box: "tkhd", reason: "cut short")) }
        let media = try boxes(in: raw, from: mdia.body, to: mdia.end)
        guard let mdhd = media.first(where: { $0.type == "mdhd" }),
            let hdlr = media.first(where: { $0.type == "hdlr" }),
            let minf = media.first(where: { $0.type == "minf" })
        else { throw ContainerError(.malformedBox(box: "mdia", reason: "no mdhd, hdlr or minf")) }
        var header = ByteCursor(raw, from: mdhd.body, to: mdhd.end)
        guard let mdhdVersion = header.uint8(), header.skip(3), header.skip(mdhdVersion == 1 ? 16 : 8),
            let timescale = header.uint32(), timescale > 0, header.skip(mdhdVersion == 1 ? 8 : 4),
            let packedLanguage = header.uint16()
        else { throw ContainerError(.malformedBox(box: "mdhd", reason: "cut short or a zero timescale")) }
        var handlerCursor = ByteCursor(raw, from: hdlr.body + 8, to: hdlr.end)
        guard let handler = handlerCursor.fourCC() else {
            throw ContainerError(.malformedBox(box: "hdlr", reason: "cut short"))
        }
        let kind: MediaKind
        switch handler {
        case "vide": kind = .video
        case "soun": kind = .audio
        default:
            ignored.append("track \(id) (\(handler))")
            return nil
        }
        guard let stbl = try boxes(in: raw, from: minf.body, to: minf.end).first(where: { $0.type == "stbl" }),
            let stsd = try boxes(in: raw, from: stbl.body, to: stbl.end).first(where: { $0.type == "stsd" })
        else { throw ContainerError(.malformedBox(box: "minf", reason: "no stbl or stsd")) }
        var descriptions: [SampleDescription] = []
        for entry in try boxes(in: raw, from: stsd.body + 8, to: stsd.end) {
            descriptions.append(try description(of: entry, in: raw, kind: kind, timescale: Int(timescale)))
        }
        guard !descriptions.isEmpty else { throw ContainerError(.malformedBox(box: "stsd", reason: "no sample entry")) }
        var track = Track(id: id, timescale: Int(timescale), descriptions: descriptions)
        track.language = language(packedLanguage)
        if let edts = children.first(where: { $0.type == "edts" }),
            let elst = try boxes(in: raw, from: edts.body, to: edts.end).first(where: { $0.type == "elst" })
        {
            let edit = try firstEdit(of: elst, in: raw)
            // Presentation starts at the first edit's media time, after the empty edits before it.
            track.editShift = edit.mediaTime - rescale(edit.delay, from: Int(movieTimescale), to: Int(timescale))
        }
        return track
    }

    /// The media time of the first edit that is not empty (§8.6.6), and the total duration of
    /// the empty edits before it in the movie's timescale; zeros without one.
    private static func firstEdit(of elst: Box, in raw: UnsafeRawBufferPointer) throws(ContainerError) -> (
        mediaTime: Int64, delay: Int64
    ) {
        var cursor = ByteCursor(raw, from: elst.body, to: elst.end)
        guard let version = cursor.uint8(), cursor.skip(3), let count = cursor.uint32() else {
            throw ContainerError(.malformedBox(box: "elst", reason: "cut short"))
        }
        var delay: Int64 = 0
        for _ in 0..<min(count, 1_024) {
            let duration: Int64
            let time: Int64
            if version == 1 {
                guard let length = cursor.uint64(), let value = cursor.uint64() else { break }
                duration = Int64(clamping: length)
                time = Int64(bitPattern: value)
            } else {
                guard let length = cursor.uint32(), let value = cursor.uint32() else { break }
                duration = Int64(length)
                time = Int64(Int32(bitPattern: value))
            }
            guard cursor.skip(4) else { break }
            // Times beyond any real lesson (and sums that would overflow) void the edit list.
            guard time <= Int64.max / 4, duration <= Int64.max / 4 else { return (0, 0) }
            if time >= 0 { return (time, delay) }
            delay += duration
            guard delay <= Int64.max / 4 else { return (0, 0) }
        }
        return (0, 0)
    }

    /// An ISO 639-2/T code from `mdhd`'s packed form, or `nil` for `und` or an invalid one.
    static func language(_ packed: UInt16) -> String? {
        let letters = [(packed >> 10) & 0x1F, (packed >> 5) & 0x1F, packed & 0x1F]
        guard letters.allSatisfy({ (1...26).contains($0) }) else { return nil }
        let code = String(decoding: letters.map { UInt8($0) + 0x60 }, as: UTF8.self)
        return code == "und" ? nil : code
    }

    /// The description of one sample entry.
    private static func description(of entry: Box, in raw: UnsafeRawBufferPointer, kind: MediaKind, timescale: Int)
        throws(ContainerError) -> SampleDescription
    {
        let bytes = Data(UnsafeRawBufferPointer(rebasing: raw[entry.start..<entry.end]))
        switch entry.type {
        case "encv", "enca", "enct", "encs":
            throw ContainerError(.encrypted(method: "a protected '\(entry.type)' sample entry"))
        case "avc1", "avc3", "hvc1", "hev1":
            guard kind == .video else { throw ContainerError(.unsupportedFormat(entry.type)) }
            var cursor = ByteCursor(raw, from: entry.body + 24, to: entry.end)
            let width = Int(cursor.uint16() ?? 0)
            let height = Int(cursor.uint16() ?? 0)
            return SampleDescription(
                kind: .video, codec: entry.type.hasPrefix("avc") ? .h264 : .hevc, sampleEntry: bytes,
                timescale: timescale, width: width, height: height)
        case "mp4a", "ac-3", "ec-3":
            guard kind == .audio else { throw ContainerError(.unsupportedFormat(entry.type)) }
            var cursor = ByteCursor(raw, from: entry.body + 16, to: entry.end)
            let channels = Int(cursor.uint16() ?? 0)
            _ = cursor.skip(6)
            let rate = Int((cursor.uint32() ?? 0) >> 16)
            var codec: MediaCodec = entry.type == "ac-3" ? .ac3 : entry.type == "ec-3" ? .eac3 : .aac
            var frame = entry.type == "mp4a" ? 1_024 : 1_536
            if entry.type == "mp4a" {
                let objectType = try objectTypeIndication(in: raw, entry: entry)
                switch objectType {
                case 0x40, 0x66, 0x67, 0x68: codec = .aac
                case 0x69, 0x6B:
                    codec = .mp3
                    frame = objectType == 0x6B ? 1_152 : 576
                default:
                    throw ContainerError(.unsupportedFormat("mp4a with object type 0x\(String(objectType, radix: 16))"))
                }
            }
            return SampleDescription(
                kind: .audio, codec: codec, sampleEntry: bytes, timescale: timescale,
                sampleRate: rate > 0 ? rate : timescale, channelCount: channels,
                frameDuration: rate == timescale || rate == 0 ? frame : nil)
        default:
            throw ContainerError(.unsupportedFormat(entry.type))
        }
    }

    /// The objectTypeIndication of an `mp4a` entry's `esds` (ISO/IEC 14496-1 §7.2.6.6), 0x40
    /// when it has none.
    private static func objectTypeIndication(in raw: UnsafeRawBufferPointer, entry: Box) throws(ContainerError) -> UInt8
    {
        guard let esds = try boxes(in: raw, from: entry.body + 28, to: entry.end).first(where: { $0.type == "esds" })
        else { return 0x40 }
        var cursor = ByteCursor(raw, from: esds.body + 4, to: esds.end)
        func descriptor() -> (tag: UInt8, length: Int)? {
            guard let tag = cursor.uint8() else { return nil }
            var length = 0
            for _ in 0..<4 {
                guard let byte = cursor.uint8() else { return nil }
                length = length << 7 | Int(byte & 0x7F)
                if byte & 0x80 == 0 { break }
            }
            return (tag, length)
        }
        guard let es = descriptor(), es.tag == 0x03, let esID = cursor.uint16(), let flags = cursor.uint8() else {
            return 0x40
        }
        _ = esID
        if flags & 0x80 != 0 { _ = cursor.skip(2) }
        if flags & 0x40 != 0, let length = cursor.uint8() { _ = cursor.skip(Int(length)) }
        if flags & 0x20 != 0 { _ = cursor.skip(2) }
        guard let config = descriptor(), config.tag == 0x04, let objectType = cursor.uint8() else { return 0x40 }
        return objectType
    }

    // MARK: Fragments

    /// One track run, resolved to absolute offsets in the segment.
    struct Run {
        var track: Int
        var description: Int
        var decodeTime: Int64
        /// Each sample: its offset from the segment's start, size, duration, composition offset and sync flag.
        var samples: [(offset: Int, size: Int, duration: Int64, offsetToPresentation: Int64, isSync: Bool)]
        /// The samples' sizes together.
        var bytes = 0
    }

    /// Reads the complete top-level boxes at the start of `raw` and returns the bytes they took.
    private mutating func readBoxes(
        _ raw: UnsafeRawBufferPointer, from start: Int, into samples: inout [MediaSample], atEnd: Bool = false
    ) throws(ContainerError) -> Int {
        var at = start
        while raw.count - at >= 8 {
            guard let box = try Self.box(in: raw, at: at, limit: raw.count, limitIsEnd: atEnd) else { break }
            switch box.type {
            case "moof":
                guard pendingRuns.isEmpty else {
                    throw ContainerError(
                        .malformedBox(box: "moof", reason: "a fragment without its mdat"), offset: consumed + at)
                }
                pendingRuns = try readFragment(raw, box, base: at)
            case "mdat":
                // The samples of one fragment together fit in its mdat: runs that point at the
                // same bytes again and again (8,000 runs over one mebibyte asked for gigabytes) are
                // refused before a byte is copied.
                let claimed = pendingRuns.reduce(0) { $0 + $1.bytes }
                guard claimed <= box.end - box.body else {
                    throw ContainerError(
                        .malformedBox(
                            box: "trun",
                            reason:
                                "samples of \(claimed) bytes in all, more than the \(box.end - box.body) of their mdat"),
                        offset: consumed + at)
                }
                for run in pendingRuns { try emit(run, from: raw, mdat: box, base: at, into: &samples) }
                pendingRuns = []
            case "moov":
                throw ContainerError(
                    .malformedBox(box: "moov", reason: "an initialisation section inside a media segment"),
                    offset: consumed + at)
            default:
                break  // styp, sidx, prft, emsg, free…
            }
            at = box.end
        }
        return at
    }

    /// The runs of a `moof` whose offsets count from `base` in the buffer.
    private mutating func readFragment(_ raw: UnsafeRawBufferPointer, _ moof: Box, base: Int) throws(ContainerError)
        -> [Run]
    {
        var runs: [Run] = []
        var previousDataEnd = moof.start
        for traf in try Self.boxes(in: raw, from: moof.body, to: moof.end) where traf.type == "traf" {
            let children = try Self.boxes(in: raw, from: traf.body, to: traf.end)
            if children.contains(where: { ["senc", "saiz", "saio"].contains($0.type) }) {
                throw ContainerError(.encrypted(method: "sample encryption (senc)"), offset: consumed + traf.start)
            }
            guard let tfhd = children.first(where: { $0.type == "tfhd" }) else {
                throw ContainerError(.malformedBox(box: "traf", reason: "no tfhd"), offset: consumed + traf.start)
            }
            var cursor = ByteCursor(raw, from: tfhd.body, to: tfhd.end)
            guard cursor.skip(1), let flags = cursor.uint24(), let id = cursor.uint32() else {
                throw ContainerError(.malformedBox(box: "tfhd", reason: "cut short"), offset: consumed + tfhd.start)
            }
            guard let index = tracks.firstIndex(where: { $0.id == id }) else { continue }
            let track = tracks[index]
            var dataBase = flags & 0x20000 != 0 ? moof.start : previousDataEnd
            if flags & 0x1 != 0, let offset = cursor.uint64() {
                // Counted from the resource's start; the buffer starts `consumed` bytes into the
                // segment, which starts `resourceOffset` bytes into the resource.
                // Both are bounded to 2⁴⁰ (a terabyte) first, so that neither this difference
                // nor the run offsets and sample sizes added to it later can overflow; a sample
                // outside its mdat is refused when the mdat is read.
                let limit = 1 << 40
                guard offset <= UInt64(limit), (0...limit).contains(resourceOffset) else {
                    throw ContainerError(
                        .malformedBox(
                            box: "tfhd",
                            reason: "a base data offset of \(offset) in a segment \(resourceOffset) bytes into its file"
                        ),
                        offset: consumed + tfhd.start)
                }
                dataBase = Int(offset) - resourceOffset - consumed
            }
            let description = flags & 0x2 != 0 ? cursor.uint32() ?? track.defaultDescription : track.defaultDescription
            let defaultDuration = flags & 0x8 != 0 ? cursor.uint32() ?? track.defaultDuration : track.defaultDuration
            let defaultSize = flags & 0x10 != 0 ? cursor.uint32() ?? track.defaultSize : track.defaultSize
            let defaultFlags = flags & 0x20 != 0 ? cursor.uint32() ?? track.defaultFlags : track.defaultFlags
            guard description >= 1, Int(description) <= track.descriptions.count else {
                throw ContainerError(
                    .malformedBox(
                        box: "tfhd", reason: "sample description \(description) of \(track.descriptions.count)"),
                    offset: consumed + tfhd.start)
            }
            var decodeTime = nextDecodeTimes[id] ?? 0
            if let tfdt = children.first(where: { $0.type == "tfdt" }) {
                var times = ByteCursor(raw, from: tfdt.body, to: tfdt.end)
                guard let version = times.uint8(), times.skip(3),
                    let value = version == 1 ? times.uint64() : times.uint32().map(UInt64.init)
                else {
                    throw ContainerError(.malformedBox(box: "tfdt", reason: "cut short"), offset: consumed + tfdt.start)
                }
                guard value <= UInt64(Int64.max / 4) else {
                    throw ContainerError(
                        .timestampOutOfRange(reason: "a decode time of \(value)"), offset: consumed + tfdt.start)
                }
                decodeTime = Int64(value)
            }
            var dataEnd = dataBase
            for trun in children where trun.type == "trun" {
                var run = ByteCursor(raw, from: trun.body, to: trun.end)
                guard let version = run.uint8(), let runFlags = run.uint24(), let count = run.uint32() else {
                    throw ContainerError(.malformedBox(box: "trun", reason: "cut short"), offset: consumed + trun.start)
                }
                var position = dataEnd
                if runFlags & 0x1 != 0 {
                    guard let offset = run.uint32() else {
                        throw ContainerError(
                            .malformedBox(box: "trun", reason: "cut short"), offset: consumed + trun.start)
                    }
                    position = dataBase + Int(Int32(bitPattern: offset))
                }
                var firstFlags: UInt32?
                if runFlags & 0x4 != 0 { firstFlags = run.uint32() }
                let perSample =
                    (runFlags & 0x100 != 0 ? 4 : 0) + (runFlags & 0x200 != 0 ? 4 : 0) + (runFlags & 0x400 != 0 ? 4 : 0)
                    + (runFlags & 0x800 != 0 ? 4 : 0)
                // More than a million samples in a segment's runs together is refused before
                // anything is reserved or looped over.
                guard Int(count) <= Self.maximumSamplesPerSegment - segmentSamples else {
                    throw ContainerError(
                        .malformedBox(
                            box: "trun",
                            reason:
                                "\(count) samples after \(segmentSamples) in one segment, over \(Self.maximumSamplesPerSegment)"
                        ),
                        offset: consumed + trun.start)
                }
                segmentSamples += Int(count)
                guard UInt64(count) * UInt64(perSample) <= UInt64(run.remaining) else {
                    throw ContainerError(
                        .malformedBox(box: "trun", reason: "\(count) samples do not fit in the box"),
                        offset: consumed + trun.start)
                }
                var resolved = Run(track: index, description: Int(description) - 1, decodeTime: decodeTime, samples: [])
                resolved.samples.reserveCapacity(Int(count))
                for sampleIndex in 0..<Int(count) {
                    let duration = runFlags & 0x100 != 0 ? run.uint32() ?? 0 : defaultDuration
                    let size = runFlags & 0x200 != 0 ? run.uint32() ?? 0 : defaultSize
                    var sampleFlags = runFlags & 0x400 != 0 ? run.uint32() ?? 0 : defaultFlags
                    if sampleIndex == 0, let firstFlags { sampleFlags = firstFlags }
                    var composition: Int64 = 0
                    if runFlags & 0x800 != 0 {
                        let value = run.uint32() ?? 0
                        composition = version == 0 ? Int64(value) : Int64(Int32(bitPattern: value))
                    }
                    // §8.8.3.1: sample_is_non_sync_sample is bit 16 of the flags, and a sample
                    // that depends on others (sample_depends_on 1) cannot start decoding either.
                    let isSync = sampleFlags & 0x0001_0000 == 0 && (sampleFlags >> 24) & 0x03 != 1
                    // Kept from the segment's start: the buffer may have moved on before the
                    // mdat arrives.
                    resolved.samples.append((consumed + position, Int(size), Int64(duration), composition, isSync))
                    resolved.bytes += Int(size)
                    position += Int(size)
                    decodeTime += Int64(duration)
                }
                dataEnd = position
                runs.append(resolved)
            }
            previousDataEnd = dataEnd
            nextDecodeTimes[id] = decodeTime
        }
        return runs
    }

    /// Hands a run's samples, read from the `mdat` that follows their `moof`, to `samples`.
    private func emit(
        _ run: Run, from raw: UnsafeRawBufferPointer, mdat: Box, base: Int, into samples: inout [MediaSample]
    ) throws(ContainerError) {
        let track = tracks[run.track]
        guard let slot = track.slot else { return }
        let description = track.descriptions[run.description]
        var time = run.decodeTime
        for sample in run.samples {
            // The sample's offset counts from the segment's start; the buffer, from `consumed`.
            let offset = sample.offset - consumed
            guard offset >= mdat.body, sample.size >= 0, offset + sample.size <= mdat.end else {
                throw ContainerError(
                    .malformedBox(box: "trun", reason: "a sample at \(sample.offset) outside its mdat"),
                    offset: consumed + mdat.start)
            }
            let data = Data(UnsafeRawBufferPointer(rebasing: raw[offset..<(offset + sample.size)]))
            let (decode, overflow) = time.subtractingReportingOverflow(track.editShift)
            guard !overflow, abs(decode) <= Int64.max / 4 else {
                throw ContainerError(
                    .timestampOutOfRange(reason: "a decode time of \(time) less an edit of \(track.editShift)"),
                    offset: consumed + mdat.start)
            }
            samples.append(
                MediaSample(
                    stream: slot, description: description, data: data, decodeTime: decode,
                    presentationTime: decode + sample.offsetToPresentation, duration: sample.duration,
                    isSync: description.kind == .audio || sample.isSync))
            time += sample.duration
        }
    }
}

/// Reads fragmented MP4 segments (ISO/IEC 14496-12 §8.8; the CMAF and HLS `EXT-X-MAP` shape)
/// into timed MP4 samples, given the initialisation section their tracks are described in.
///
/// The initialisation section's `moov` gives each track's timescale, handler, sample entries,
/// `trex` defaults and edit list; each segment's `moof` boxes (`tfhd`, `tfdt`, `trun`) place its
/// samples in the `mdat` that follows. The flags of `trun` and `tfhd` that place and time
/// samples are read (data offset, first-sample flags, per-sample duration, size, flags and
/// composition offset; base data offset, default-base-is-moof, sample description index and the
/// defaults), as are several track fragments and runs per fragment. A `base_data_offset` counts
/// from the start of the resource the segment was cut from (``resourceOffset`` says where the
/// segment starts in it). One flag is not read: `duration-is-empty` (a fragment with no samples
/// adds no time here). A track's first edit shifts its times, so a video
/// track's composition delay (B-frames) and an audio track's priming stay as the source presents
/// them.
///
/// Sample entries are kept as the initialisation section writes them. A track whose entry is
/// encrypted (`encv`, `enca`) or whose fragments carry sample encryption is a typed error, as is
/// a picture or sound track in a format MP4 remuxing does not take; timed text and metadata
/// tracks are left out and listed in ``ignoredTracks``.
///
/// - Complexity: O(*n*) in the bytes read; memory holds the current top-level box.
public struct FragmentedMP4Reader: Sendable {
    /// The box decoder, fed through the one byte stream driver.
    private(set) var driver: ByteStreamDriver<FragmentDecoder>

    /// Reads the initialisation section (`ftyp` and `moov`).
    ///
    /// - Throws: ``ContainerError``: a malformed or missing `moov`, fragments (`moof`) inside
    ///   the section, an encrypted track, or a picture or sound track in a format that cannot be
    ///   written.
    public init(initialization: Data) throws(ContainerError) {
        driver = ByteStreamDriver(try FragmentDecoder(initialization: initialization))
    }

    /// Creates a reader that continues an earlier segment's decode times, for segments without
    /// a `tfdt`.
    init(initialization: Data, continuing times: [UInt32: Int64]) throws(ContainerError) {
        driver = ByteStreamDriver(try FragmentDecoder(initialization: initialization, continuing: times))
    }

    /// The handlers of tracks left out (timed text, metadata) with their track IDs.
    public var ignoredTracks: [String] { driver.decoder.ignoredTracks }

    /// Where the segment's bytes start in the resource they were cut from (an `EXT-X-BYTERANGE`
    /// offset; 0, the default, for a segment that is a file of its own): a `tfhd`
    /// `base_data_offset` counts from the resource's start (ISO/IEC 14496-12 §8.8.7).
    public var resourceOffset: Int {
        get { driver.decoder.resourceOffset }
        set { driver.decoder.resourceOffset = newValue }
    }

    /// The kinds and ranks of the tracks, in the initialisation section's order.
    public var slots: [StreamSlot] { driver.decoder.slots }

    /// The tracks of the initialisation section.
    var tracks: [FragmentDecoder.Track] { driver.decoder.tracks }

    /// The next decode time of each track (by ID), continuing from fragment to fragment.
    var nextDecodeTimes: [UInt32: Int64] { driver.decoder.nextDecodeTimes }

    /// Reads the segment's next bytes and returns the samples they completed.
    ///
    /// - Throws: ``ContainerError`` for a malformed box or run, or sample encryption.
    public mutating func read(_ data: Data) throws(ContainerError) -> [MediaSample] {
        var samples: [MediaSample] = []
        try driver.feed(data) { sample throws(ContainerError) in samples.append(sample) }
        return samples
    }

    /// Ends the segment.
    ///
    /// - Throws: ``ContainerError`` when it ends inside a box or before the data of its runs.
    public mutating func finish() throws(ContainerError) -> [MediaSample] {
        var samples: [MediaSample] = []
        try driver.finish { sample throws(ContainerError) in samples.append(sample) }
        return samples
    }
}
