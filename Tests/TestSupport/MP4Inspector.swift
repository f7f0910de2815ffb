public import Foundation

/// An MP4 file's tracks read back from their sample tables, so a test checks what a writer wrote
/// sample by sample (ISO/IEC 14496-12 §8.5–8.7): each sample's bytes, decode and presentation
/// times, sync flag and sample description, and each track's place on the movie timeline after
/// its edit list. Test-only: it trusts its input.
public struct MP4Inspector {
    /// One sample.
    public struct Sample: Hashable {
        /// Its offset in the file.
        public var offset: Int
        /// Its size.
        public var size: Int
        /// Its decode time in the track's timescale, from 0.
        public var decodeTime: Int64
        /// Its duration in the track's timescale.
        public var duration: Int64
        /// Its composition offset.
        public var compositionOffset: Int64
        /// Whether it is a sync sample.
        public var isSync: Bool
        /// Its sample description's index, from 1.
        public var description: Int
    }

    /// One track.
    public struct Track {
        /// The handler type: `vide`, `soun`, `text`.
        public var handler: String
        /// The handler's name field.
        public var name: String
        /// The media timescale.
        public var timescale: Int64
        /// The `mdhd` language code.
        public var language: String
        /// The `elng` box's BCP 47 tag, when the track has one.
        public var extendedLanguage: String? = nil
        /// `tkhd` flags.
        public var flags: UInt32
        /// `tkhd` alternate group.
        public var alternateGroup: Int
        /// The sample entries' four-character codes, in `stsd` order.
        public var formats: [String]
        /// The sample entries' bytes.
        public var entries: [[UInt8]]
        /// The samples in decode order.
        public var samples: [Sample]
        /// The edit list: (segment duration in the movie timescale, media time or -1).
        public var edits: [(duration: Int64, mediaTime: Int64)]
        /// The movie's timescale.
        public var movieTimescale: Int64

        /// Where the track's presentation starts on the movie timeline, in seconds (its empty
        /// edits).
        public var start: Double {
            Double(edits.prefix { $0.mediaTime < 0 }.reduce(0) { $0 + $1.duration }) / Double(movieTimescale)
        }

        /// The media time presentation starts at (the first non-empty edit's), in the track's
        /// timescale.
        public var mediaStart: Int64 { edits.first { $0.mediaTime >= 0 }?.mediaTime ?? 0 }

        /// Each sample's presentation time on the movie timeline, in seconds.
        public func presentationTimes() -> [Double] {
            samples.map { start + Double($0.decodeTime + $0.compositionOffset - mediaStart) / Double(timescale) }
        }

        /// Where the track's presentation ends on the movie timeline, in seconds.
        public var end: Double {
            let last = zip(samples, presentationTimes()).map { $1 + Double($0.duration) / Double(timescale) }.max()
            return last ?? start
        }
    }

    /// The file's bytes.
    public let bytes: [UInt8]
    /// The top-level box types in order.
    public let topLevel: [String]
    /// The tracks, in `moov` order.
    public let tracks: [Track]

    /// Reads the file at `url`.
    public init(url: URL) throws {
        try self.init(bytes: [UInt8](Data(contentsOf: url)))
    }

    /// Reads `bytes`.
    public init(bytes: [UInt8]) throws {
        self.bytes = bytes
        let reader = MP4BoxReader(bytes: bytes)
        let boxes = reader.boxes()
        topLevel = boxes.map(\.type)
        guard let moov = boxes.first(where: { $0.type == "moov" }) else { throw InspectionError.missing("moov") }
        let inner = reader.boxes(from: moov.start + 8, to: moov.start + moov.size)
        guard let mvhd = inner.first(where: { $0.type == "mvhd" }) else { throw InspectionError.missing("mvhd") }
        let movieTimescale = Int64(reader.uint32(mvhd.start + (bytes[mvhd.start + 8] == 1 ? 28 : 20)))
        tracks = try inner.filter { $0.type == "trak" }.map { trak in
            try Self.track(reader, trak: trak, movieTimescale: movieTimescale)
        }
    }

    /// The tracks of a handler type.
    public func tracks(_ handler: String) -> [Track] { tracks.filter { $0.handler == handler } }

    /// The bytes of `sample`.
    public func data(of sample: Sample) -> [UInt8] { Array(bytes[sample.offset..<(sample.offset + sample.size)]) }

    /// A test failure while reading a file.
    public enum InspectionError: Error {
        /// A box the file must have is missing.
        case missing(String)
    }

    private static func child(_ reader: MP4BoxReader, _ parent: (start: Int, size: Int), _ type: String, skip: Int = 8)
        -> (start: Int, size: Int)?
    {
        reader.boxes(from: parent.start + skip, to: parent.start + parent.size).first { $0.type == type }.map {
            ($0.start, $0.size)
        }
    }

    private static func track(
        _ reader: MP4BoxReader, trak: (type: String, start: Int, size: Int), movieTimescale: Int64
    )
        throws -> Track
    {
        let bytes = reader.bytes
        let box = (trak.start, trak.size)
        guard let tkhd = child(reader, box, "tkhd"), let mdia = child(reader, box, "mdia"),
            let mdhd = child(reader, mdia, "mdhd"), let hdlr = child(reader, mdia, "hdlr"),
            let minf = child(reader, mdia, "minf"), let stbl = child(reader, minf, "stbl"),
            let stsd = child(reader, stbl, "stsd"), let stts = child(reader, stbl, "stts"),
            let stsc = child(reader, stbl, "stsc"), let stsz = child(reader, stbl, "stsz")
        else { throw InspectionError.missing("a track box") }
        let tkhdVersion = bytes[tkhd.0 + 8]
        let flags = reader.uint32(tkhd.0 + 8) & 0xFF_FFFF
        let groupAt = tkhd.0 + 12 + (tkhdVersion == 1 ? 32 : 20) + 8 + 2
        let alternateGroup = Int(reader.uint32(groupAt - 2) & 0xFFFF)
        let mdhdVersion = bytes[mdhd.0 + 8]
        let timescale = Int64(reader.uint32(mdhd.0 + (mdhdVersion == 1 ? 28 : 20)))
        let packed = Int(reader.uint32(mdhd.0 + (mdhdVersion == 1 ? 40 : 28)) >> 16) & 0x7FFF
        let language = String(
            decoding: [(packed >> 10) & 0x1F, (packed >> 5) & 0x1F, packed & 0x1F].map { UInt8($0 + 0x60) },
            as: UTF8.self)
        let extendedLanguage = child(reader, mdia, "elng").map {
            String(decoding: bytes[($0.0 + 12)..<($0.0 + $0.1)].prefix { $0 != 0 }, as: UTF8.self)
        }
        let handler = reader.type(hdlr.0 + 12)
        let nameBytes = bytes[(hdlr.0 + 32)..<(hdlr.0 + hdlr.1)].prefix { $0 != 0 }
        var entries: [[UInt8]] = []
        for entry in reader.boxes(from: stsd.0 + 16, to: stsd.0 + stsd.1) {
            entries.append(Array(bytes[entry.start..<(entry.start + entry.size)]))
        }
        // stts
        var durations: [Int64] = []
        for index in 0..<Int(reader.uint32(stts.0 + 12)) {
            let count = Int(reader.uint32(stts.0 + 16 + index * 8))
            let delta = Int64(reader.uint32(stts.0 + 20 + index * 8))
            durations += Array(repeating: delta, count: count)
        }
        let count = Int(reader.uint32(stsz.0 + 16))
        let fixed = Int(reader.uint32(stsz.0 + 12))
        let sizes = (0..<count).map { fixed != 0 ? fixed : Int(reader.uint32(stsz.0 + 20 + $0 * 4)) }
        var offsetsToComposition = [Int64](repeating: 0, count: count)
        if let ctts = child(reader, stbl, "ctts") {
            let signed = bytes[ctts.0 + 8] == 1
            var sample = 0
            for index in 0..<Int(reader.uint32(ctts.0 + 12)) {
                let runs = Int(reader.uint32(ctts.0 + 16 + index * 8))
                let raw = reader.uint32(ctts.0 + 20 + index * 8)
                let value = signed ? Int64(Int32(bitPattern: raw)) : Int64(raw)
                for _ in 0..<runs where sample < count {
                    offsetsToComposition[sample] = value
                    sample += 1
                }
            }
        }
        var sync = [Bool](repeating: true, count: count)
        if let stss = child(reader, stbl, "stss") {
            sync = [Bool](repeating: false, count: count)
            for index in 0..<Int(reader.uint32(stss.0 + 12)) {
                let number = Int(reader.uint32(stss.0 + 16 + index * 4))
                if number >= 1, number <= count { sync[number - 1] = true }
            }
        }
        var chunkOffsets: [Int] = []
        if let co64 = child(reader, stbl, "co64") {
            chunkOffsets = (0..<Int(reader.uint32(co64.0 + 12))).map { Int(reader.uint64(co64.0 + 16 + $0 * 8)) }
        } else if let stco = child(reader, stbl, "stco") {
            chunkOffsets = (0..<Int(reader.uint32(stco.0 + 12))).map { Int(reader.uint32(stco.0 + 16 + $0 * 4)) }
        }
        // stsc: samples per chunk and description, run by first chunk.
        var runs: [(first: Int, samples: Int, description: Int)] = []
        for index in 0..<Int(reader.uint32(stsc.0 + 12)) {
            let at = stsc.0 + 16 + index * 12
            runs.append((Int(reader.uint32(at)), Int(reader.uint32(at + 4)), Int(reader.uint32(at + 8))))
        }
        var samples: [Sample] = []
        var sample = 0
        var time: Int64 = 0
        for (chunkIndex, chunkOffset) in chunkOffsets.enumerated() {
            let run = runs.last { $0.first <= chunkIndex + 1 } ?? (1, 0, 1)
            var offset = chunkOffset
            for _ in 0..<run.samples where sample < count {
                let duration = sample < durations.count ? durations[sample] : 0
                samples.append(
                    Sample(
                        offset: offset, size: sizes[sample], decodeTime: time, duration: duration,
                        compositionOffset: offsetsToComposition[sample], isSync: sync[sample],
                        description: run.description))
                offset += sizes[sample]
                time += duration
                sample += 1
            }
        }
        var edits: [(Int64, Int64)] = []
        if let edts = child(reader, box, "edts"), let elst = child(reader, edts, "elst") {
            let version = bytes[elst.0 + 8]
            var at = elst.0 + 16
            for _ in 0..<Int(reader.uint32(elst.0 + 12)) {
                if version == 1 {
                    edits.append((Int64(reader.uint64(at)), Int64(bitPattern: reader.uint64(at + 8))))
                    at += 20
                } else {
                    edits.append((Int64(reader.uint32(at)), Int64(Int32(bitPattern: reader.uint32(at + 4)))))
                    at += 12
                }
            }
        }
        return Track(
            handler: handler, name: String(decoding: nameBytes, as: UTF8.self), timescale: timescale,
            language: language, extendedLanguage: extendedLanguage,
            flags: flags, alternateGroup: alternateGroup,
            formats: entries.map { String(decoding: $0[4..<8], as: UTF8.self) },
            entries: entries, samples: samples, edits: edits, movieTimescale: movieTimescale)
    }
}
