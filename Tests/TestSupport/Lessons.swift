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
        for line in text.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if line.hasPrefix("#EXT-X-DISCONTINUITY-SEQUENCE:") {
                discontinuity = Int(line.dropFirst("#EXT-X-DISCONTINUITY-SEQUENCE:".count)) ?? 0
            } else if line.hasPrefix("#EXT-X-DISCONTINUITY") {
                discontinuity += 1
            } else if line.hasPrefix("#EXT-X-MAP:"), let uri = attribute("URI", in: line) {
                initialization = folder.isEmpty ? uri : folder + "/" + uri
            } else if line.hasPrefix("#EXTINF:") {
                duration = Double(line.dropFirst(8).split(separator: ",").first ?? "") ?? 0
            } else if !line.isEmpty, !line.hasPrefix("#") {
                segments.append(
                    Segment(
                        path: folder.isEmpty ? line : folder + "/" + line, start: start, duration: duration,
                        discontinuity: discontinuity, initialization: initialization, rendition: rendition))
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
