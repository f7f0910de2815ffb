public import Foundation

/// The HLS lessons made with ffmpeg in `Tests/TestSupport/Lessons` (its README says how each was
/// made), and a reader of their playlists as far as the tests need: each rendition's segments in
/// order with their start times, discontinuity numbers and initialisation sections.
public enum Lessons {
    /// The lessons' folder.
    public static let loader = FixtureLoader(bundle: .module, subdirectory: "Lessons")

    /// The bytes of `path` inside the lessons' folder.
    public static func data(_ path: String) throws -> Data { try loader.data(path) }

    /// One segment of a lesson's rendition.
    public struct Segment: Sendable {
        /// Its path inside the lessons' folder.
        public var path: String
        /// Its start time in the playlist, in seconds.
        public var start: Double
        /// Its duration.
        public var duration: Double
        /// Its discontinuity sequence number.
        public var discontinuity: Int
        /// The path of the initialisation section in effect, if any.
        public var initialization: String?
        /// The rendition's index (0 for the variant, 1 for separate audio).
        public var rendition: Int
        /// Its bytes in the file at ``path`` when an `EXT-X-BYTERANGE` names them; `nil` for the
        /// whole file.
        public var byteRange: Range<Int>? = nil
        /// The initialisation section's bytes in its file, when its `EXT-X-MAP` has a `BYTERANGE`.
        public var initializationRange: Range<Int>? = nil

        /// The segment's bytes: its byte range of its file, or the whole file.
        public func data() throws -> Data { try Lessons.data(path, range: byteRange) }

        /// The initialisation section's bytes, if any.
        public func initializationData() throws -> Data? {
            try initialization.map { try Lessons.data($0, range: initializationRange) }
        }
    }

    /// A packed-audio segment (RFC 8216 §3.4) with its ID3 PRIV
    /// `com.apple.streaming.transportStreamTimestamp` moved by `ticks` (90 kHz).
    public static func packedAudio(_ segment: Data, shiftedBy ticks: Int64) throws -> Data {
        var bytes = [UInt8](segment)
        let owner = Array("com.apple.streaming.transportStreamTimestamp".utf8) + [0]
        guard bytes.count >= owner.count + 8,
            let start = (0...(bytes.count - owner.count - 8)).first(where: {
                Array(bytes[$0..<($0 + owner.count)]) == owner
            })
        else { throw FixtureError.missing("a transportStreamTimestamp PRIV frame") }
        let field = start + owner.count
        let stamp = bytes[field..<(field + 8)].reduce(Int64(0)) { $0 << 8 | Int64($1) } + ticks
        for index in 0..<8 { bytes[field + index] = UInt8((stamp >> (56 - 8 * Int64(index))) & 0xFF) }
        return Data(bytes)
    }

    /// The bytes of `path`, or those of `range` in it.
    static func data(_ path: String, range: Range<Int>?) throws -> Data {
        let whole = try data(path)
        guard let range else { return whole }
        guard range.lowerBound >= 0, range.upperBound <= whole.count else {
            throw FixtureError.missing("\(path): bytes \(range) of \(whole.count)")
        }
        return whole.subdata(in: range)
    }

    /// `length[@offset]` (RFC 8216 §4.3.2.2) as a range, an offset left out continuing `next`.
    static func byteRange(_ text: some StringProtocol, next: Int) -> Range<Int>? {
        let parts = text.split(separator: "@")
        guard let length = parts.first.flatMap({ Int($0) }) else { return nil }
        let offset = parts.count > 1 ? Int(parts[1]) ?? next : next
        return offset..<(offset + length)
    }

    /// The segments of the media playlist at `path`.
    public static func segments(_ path: String, rendition: Int = 0) throws -> [Segment] {
        let text = String(decoding: try data(path), as: UTF8.self)
        let folder = (path as NSString).deletingLastPathComponent
        var segments: [Segment] = []
        var discontinuity = 0
        var initialization: String?
        var start = 0.0
        var duration = 0.0
        var range: Range<Int>?
        var initializationRange: Range<Int>?
        var nextOffset: [String: Int] = [:]
        var pendingLength: Int?
        for line in text.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if line.hasPrefix("#EXT-X-DISCONTINUITY-SEQUENCE:") {
                discontinuity = Int(line.dropFirst("#EXT-X-DISCONTINUITY-SEQUENCE:".count)) ?? 0
            } else if line.hasPrefix("#EXT-X-DISCONTINUITY") {
                discontinuity += 1
            } else if line.hasPrefix("#EXT-X-MAP:"), let uri = attribute("URI", in: line) {
                initialization = folder.isEmpty ? uri : folder + "/" + uri
                initializationRange = attribute("BYTERANGE", in: line).flatMap { byteRange($0, next: 0) }
            } else if line.hasPrefix("#EXT-X-BYTERANGE:") {
                range = byteRange(line.dropFirst("#EXT-X-BYTERANGE:".count), next: 0)
                if let parsed = range, !line.contains("@") {
                    range = nil
                    pendingLength = parsed.count
                }
            } else if line.hasPrefix("#EXTINF:") {
                duration = Double(line.dropFirst(8).split(separator: ",").first ?? "") ?? 0
            } else if !line.isEmpty, !line.hasPrefix("#") {
                let path = folder.isEmpty ? line : folder + "/" + line
                if let length = pendingLength {
                    let offset = nextOffset[path] ?? 0
                    range = offset..<(offset + length)
                    pendingLength = nil
                }
                if let range { nextOffset[path] = range.upperBound }
                segments.append(
                    Segment(
                        path: path, start: start, duration: duration, discontinuity: discontinuity,
                        initialization: initialization, rendition: rendition, byteRange: range,
                        initializationRange: initializationRange))
                range = nil
                start += duration
            }
        }
        return segments
    }

    /// A quoted attribute's value in a tag line.
    static func attribute(_ name: String, in line: String) -> String? {
        guard let range = line.range(of: "\(name)=\"") else { return nil }
        let rest = line[range.upperBound...]
        return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
    }

    /// The media playlists of lesson `name`: its variant's (the first) and its first separate
    /// audio rendition's, or its one `index.m3u8`.
    public static func playlists(_ name: String) throws -> [String] {
        guard let master = try? data("\(name)/master.m3u8") else { return ["\(name)/index.m3u8"] }
        let lines = String(decoding: master, as: UTF8.self).split(separator: "\n").map(String.init)
        var result: [String] = []
        if let index = lines.firstIndex(where: { $0.hasPrefix("#EXT-X-STREAM-INF") }), index + 1 < lines.count {
            result.append("\(name)/\(lines[index + 1])")
        }
        if let audio = lines.first(where: { $0.hasPrefix("#EXT-X-MEDIA") && $0.contains("TYPE=AUDIO") }),
            let uri = attribute("URI", in: audio)
        {
            result.append("\(name)/\(uri)")
        }
        return result
    }

    /// The segments of lesson `name`, every rendition's, merged by start time, in groups that are
    /// remuxed together: the first segment of each rendition after a discontinuity (and at the
    /// start) in one group, every other segment alone.
    public static func steps(_ name: String) throws -> [[Segment]] {
        var all: [Segment] = []
        for (rendition, playlist) in try playlists(name).enumerated() {
            all += try segments(playlist, rendition: rendition)
        }
        all.sort { ($0.start, $0.rendition) < ($1.start, $1.rendition) }
        var steps: [[Segment]] = []
        var opened = Set<Int>()
        var taken = Set<Int>()
        for (index, segment) in all.enumerated() where !taken.contains(index) {
            taken.insert(index)
            var group = [segment]
            if !opened.contains(segment.discontinuity) {
                opened.insert(segment.discontinuity)
                for (other, candidate) in all.enumerated()
                where !taken.contains(other) && candidate.rendition != segment.rendition
                    && candidate.discontinuity == segment.discontinuity
                    && !group.contains(where: { $0.rendition == candidate.rendition })
                    && !all.prefix(other).contains(where: {
                        $0.rendition == candidate.rendition && $0.discontinuity == candidate.discontinuity
                    })
                {
                    group.append(candidate)
                    taken.insert(other)
                }
            }
            steps.append(group)
        }
        return steps
    }
}

extension Lessons {
    /// What ffprobe reported about one stream of a lesson's segment (`facts.json`).
    public struct StreamFacts: Sendable {
        /// `video` or `audio`.
        public var kind: String
        /// The codec's name.
        public var codec: String
        /// The packets (frames) of the stream in the segment.
        public var packets: Int
        /// The first presentation time, in 90 kHz ticks.
        public var startTime: Double
        /// The stream's duration in the segment, in seconds.
        public var duration: Double
    }

    /// The packets ffprobe counted per kind (`video`, `audio`) over every segment of the lesson's
    /// media playlists (decrypted first, for an encrypted lesson).
    public static func sourcePackets(_ name: String) throws -> [String: Int] {
        var packets: [String: Int] = [:]
        for playlist in try playlists(name) {
            for segment in try facts(playlist) {
                for stream in segment { packets[stream.kind, default: 0] += stream.packets }
            }
        }
        return packets
    }

    /// The streams ffprobe reported for each segment of `playlist` (a path inside the lessons'
    /// folder), in playlist order.
    public static func facts(_ playlist: String) throws -> [[StreamFacts]] {
        let lesson = String(playlist.prefix { $0 != "/" })
        let name = String(playlist.dropFirst(lesson.count + 1))
        let json = try JSONSerialization.jsonObject(with: try data("\(lesson)/facts.json"))
        guard let root = json as? [String: Any], let playlists = root["playlists"] as? [String: Any],
            let entry = playlists[name] as? [String: Any], let segments = entry["segments"] as? [[String: Any]]
        else { return [] }
        return segments.map { segment in
            ((segment["streams"] as? [[String: Any]]) ?? []).map { stream in
                StreamFacts(
                    kind: stream["codec_type"] as? String ?? "", codec: stream["codec_name"] as? String ?? "",
                    packets: stream["nb_read_packets"] as? Int ?? Int(stream["nb_read_packets"] as? String ?? "") ?? 0,
                    startTime: Double(stream["start_time"] as? String ?? "") ?? 0,
                    duration: Double(stream["duration"] as? String ?? "") ?? 0)
            }
        }
    }
}

extension Lessons {
    /// One coded frame of a lesson's source as ffmpeg's demuxer delivered it (`packets.json`, made
    /// by `tools/packets.py`, whose header says how each digest is made).
    public struct SourceFrame: Sendable, Hashable {
        /// The decode time, in the stream's time base.
        public var decodeTime: Int64
        /// The presentation time, in the stream's time base.
        public var presentationTime: Int64
        /// The duration, in the stream's time base.
        public var duration: Int64
        /// Whether ffmpeg flagged the frame as a key frame.
        public var isKey: Bool
        /// FNV-1a 64 of the payload in the shape an MP4 sample carries it.
        public var payload: String
        /// FNV-1a 64 of the parameter sets in effect (video), or `nil`.
        public var parameterSets: String?
    }

    /// One stream of one source segment.
    public struct SourceStream: Sendable {
        /// `video` or `audio`.
        public var kind: String
        /// ffmpeg's codec name.
        public var codec: String
        /// Seconds per tick of the stream's time base.
        public var tick: Double
        /// The frames in decode order.
        public var frames: [SourceFrame]

        /// Where the stream's presentation ends, in seconds on the segment's own clock.
        public var end: Double {
            Double(frames.map { $0.presentationTime + $0.duration }.max() ?? 0) * tick
        }
    }

    /// One source segment's streams and its discontinuity number in the playlist.
    public struct SourceSegment: Sendable {
        /// The segment's URI in the playlist.
        public var uri: String
        /// How many `EXT-X-DISCONTINUITY` tags come before it.
        public var discontinuity: Int
        /// Its audio and video streams.
        public var streams: [SourceStream]
        /// Where its clock starts on the lesson's timeline, in seconds: a packed-audio segment's
        /// ID3 timestamp (ffmpeg reads such a file from 0), else 0.
        public var clock: Double
    }

    /// The coded frames of every segment of `playlist` (a path inside the lessons' folder), in
    /// playlist order.
    public static func sourceSegments(_ playlist: String) throws -> [SourceSegment] {
        let lesson = String(playlist.prefix { $0 != "/" })
        let name = String(playlist.dropFirst(lesson.count + 1))
        let json = try JSONSerialization.jsonObject(with: try data("\(lesson)/packets.json"))
        guard let root = json as? [String: Any], let playlists = root["playlists"] as? [String: Any],
            let segments = playlists[name] as? [[String: Any]]
        else { throw FixtureError.missing("\(lesson)/packets.json: \(name)") }
        var discontinuity = 0
        return segments.map { segment in
            if segment["discontinuity_before"] as? Bool == true { discontinuity += 1 }
            let streams = ((segment["streams"] as? [[String: Any]]) ?? []).map { stream in
                let base = (stream["time_base"] as? String ?? "1/1").split(separator: "/").compactMap { Double($0) }
                let frames = ((stream["packets"] as? [[Any]]) ?? []).map { packet in
                    SourceFrame(
                        decodeTime: (packet[0] as? NSNumber)?.int64Value ?? 0,
                        presentationTime: (packet[1] as? NSNumber)?.int64Value ?? 0,
                        duration: (packet[2] as? NSNumber)?.int64Value ?? 0,
                        isKey: (packet[3] as? NSNumber)?.intValue == 1, payload: packet[4] as? String ?? "",
                        parameterSets: packet[5] as? String)
                }
                return SourceStream(
                    kind: stream["codec_type"] as? String ?? "", codec: stream["codec_name"] as? String ?? "",
                    tick: base.count == 2 && base[1] != 0 ? base[0] / base[1] : 1, frames: frames)
            }
            return SourceSegment(
                uri: segment["uri"] as? String ?? "", discontinuity: discontinuity, streams: streams,
                clock: ((segment["clock_90k"] as? NSNumber)?.doubleValue ?? 0) / 90_000)
        }
    }

    /// A fixture file the tests need is missing or incomplete.
    public enum FixtureError: Error {
        /// What is missing.
        case missing(String)
    }
}

/// Digests of an MP4 file's samples in the shape `tools/packets.py` digests a source's frames, so
/// that a remuxed file is compared frame by frame with its source without a decoder.
public enum SampleDigest {
    /// FNV-1a 64 of `bytes`, as 16 lowercase hex digits.
    ///
    /// - Complexity: O(*n*).
    public static func fnv1a<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// The NAL unit type of `unit` in `format` (`avc1`/`avc3` or `hvc1`/`hev1`).
    static func type(_ unit: ArraySlice<UInt8>, hevc: Bool) -> Int {
        guard let first = unit.first else { return -1 }
        return hevc ? Int((first >> 1) & 0x3F) : Int(first & 0x1F)
    }

    /// Whether `type` is a parameter set's NAL type.
    static func isParameterSet(_ type: Int, hevc: Bool) -> Bool {
        hevc ? (32...34).contains(type) : type == 7 || type == 8
    }

    /// `units`, each prefixed by its 4-byte big-endian length.
    static func prefixed(_ units: [ArraySlice<UInt8>]) -> [UInt8] {
        var out: [UInt8] = []
        for unit in units {
            let count = UInt32(unit.count)
            out += [UInt8(count >> 24), UInt8((count >> 16) & 0xFF), UInt8((count >> 8) & 0xFF), UInt8(count & 0xFF)]
            out += unit
        }
        return out
    }

    /// The NAL units of a length-prefixed sample.
    static func units(_ sample: [UInt8], lengthSize: Int) -> [ArraySlice<UInt8>] {
        var units: [ArraySlice<UInt8>] = []
        var offset = 0
        while offset + lengthSize <= sample.count {
            let length = sample[offset..<(offset + lengthSize)].reduce(0) { $0 << 8 | Int($1) }
            let end = min(offset + lengthSize + length, sample.count)
            units.append(sample[(offset + lengthSize)..<end])
            offset = end
        }
        return units
    }

    /// `count` units each preceded by a 16-bit length, read from `body` at `at` (which moves past
    /// them), as `avcC` and `hvcC` list parameter sets.
    static func units(count: Int, in body: [UInt8], at: inout Int) -> [ArraySlice<UInt8>] {
        var units: [ArraySlice<UInt8>] = []
        for _ in 0..<count where at + 2 <= body.count {
            let length = Int(body[at]) << 8 | Int(body[at + 1])
            units.append(body[(at + 2)..<min(at + 2 + length, body.count)])
            at += 2 + length
        }
        return units
    }

    /// The parameter sets of a video sample entry's `avcC` or `hvcC`, and its NAL length size.
    static func configuration(_ entry: [UInt8]) -> (units: [ArraySlice<UInt8>], lengthSize: Int, hevc: Bool)? {
        // A visual sample entry: 8-byte header, 78 bytes of fields, then its boxes.
        var offset = 86
        while offset + 8 <= entry.count {
            let size = entry[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
            let type = String(decoding: entry[(offset + 4)..<(offset + 8)], as: UTF8.self)
            guard size >= 8, offset + size <= entry.count else { return nil }
            let body = Array(entry[(offset + 8)..<(offset + size)])
            if type == "avcC", body.count >= 7 {
                // The SPS count's low 5 bits, the SPSs, the PPS count, the PPSs.
                var at = 6
                var units = Self.units(count: Int(body[5] & 0x1F), in: body, at: &at)
                if at < body.count {
                    let count = Int(body[at])
                    at += 1
                    units += Self.units(count: count, in: body, at: &at)
                }
                return (units, Int(body[4] & 3) + 1, false)
            }
            if type == "hvcC", body.count >= 23 {
                // Arrays of one NAL type each: type, a 16-bit count, the units.
                var units: [ArraySlice<UInt8>] = []
                var at = 23
                for _ in 0..<Int(body[22]) where at + 3 <= body.count {
                    let count = Int(body[at + 1]) << 8 | Int(body[at + 2])
                    at += 3
                    units += Self.units(count: count, in: body, at: &at)
                }
                return (units, Int(body[21] & 3) + 1, true)
            }
            offset += size
        }
        return nil
    }

    /// Each sample of `track` as a ``Lessons/SourceFrame`` with digests made as
    /// `tools/packets.py` makes the source's (times are in the track's timescale, without edits).
    public static func frames(of track: MP4Inspector.Track, in file: MP4Inspector) -> [Lessons.SourceFrame] {
        var parameterSets: [Int: ArraySlice<UInt8>] = [:]
        var lastEntry = -1
        return track.samples.map { sample in
            let bytes = file.data(of: sample)
            let entry = sample.description - 1
            var payload = bytes
            var digestOfParameterSets: String?
            if track.entries.indices.contains(entry), let configuration = configuration(track.entries[entry]) {
                let hevc = configuration.hevc
                if entry != lastEntry {
                    parameterSets = [:]
                    for unit in configuration.units { parameterSets[type(unit, hevc: hevc)] = unit }
                    lastEntry = entry
                }
                var kept: [ArraySlice<UInt8>] = []
                for unit in units(bytes, lengthSize: configuration.lengthSize) {
                    let kind = type(unit, hevc: hevc)
                    if isParameterSet(kind, hevc: hevc) {
                        parameterSets[kind] = unit
                    } else if kind != (hevc ? 35 : 9) {
                        kept.append(unit)
                    }
                }
                payload = prefixed(kept)
                digestOfParameterSets = fnv1a(prefixed(parameterSets.keys.sorted().compactMap { parameterSets[$0] }))
            }
            return Lessons.SourceFrame(
                decodeTime: sample.decodeTime, presentationTime: sample.decodeTime + sample.compositionOffset,
                duration: sample.duration, isKey: sample.isSync, payload: fnv1a(payload),
                parameterSets: digestOfParameterSets)
        }
    }
}
