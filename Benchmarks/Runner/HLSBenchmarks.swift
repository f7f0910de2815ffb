import BenchmarkHarness
import Foundation
import HLS

/// The HLS parser's cases: synthetic VOD playlists and a large playlist built from a real one.
enum HLSBenchmarks {
    static func cases(quick: Bool) -> [Benchmark] {
        let count = quick ? 5_000 : 100_000
        return [
            parsing(
                name: "\(count.formatted)-segment VOD (keys, discontinuities)",
                text: synthetic(count: count, byteRanges: false), segments: count),
            parsing(
                name: "\(count.formatted)-segment VOD with byte ranges",
                text: synthetic(count: count, byteRanges: true), segments: count),
            parsing(
                name: "\(count.formatted)-segment real audio playlist (arkiva, tiled)", text: tiledArkiva(count: count),
                segments: count),
            parsing(
                name: "\(count.formatted)-segment VOD (keys, discontinuities)",
                text: synthetic(count: count, byteRanges: false), segments: count, readingEverySegment: true),
        ]
    }

    /// A VOD media playlist with a key every 1,000 segments and a discontinuity every 5,000.
    static func synthetic(count: Int, byteRanges: Bool) -> String {
        var text =
            "#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:6\n#EXT-X-MEDIA-SEQUENCE:0\n#EXT-X-PLAYLIST-TYPE:VOD\n"
        var offset = 0
        for index in 0..<count {
            if index % 1_000 == 0 {
                text +=
                    "#EXT-X-KEY:METHOD=AES-128,URI=\"https://keys.example/k\(index / 1_000).bin\",IV=0x\(String(index, radix: 16))\n"
            }
            if index > 0, index % 5_000 == 0 { text += "#EXT-X-DISCONTINUITY\n" }
            text += "#EXTINF:5.\(index % 1_000),\n"
            if byteRanges {
                let length = 180_000 + index % 7_919
                text += "#EXT-X-BYTERANGE:\(length)@\(offset)\nmedia/video_1080p.ts\n"
                offset += length
            } else {
                text += "media/1080p/segment_\(index).ts\n"
            }
        }
        return text + "#EXT-X-ENDLIST\n"
    }

    /// The audio brief's real 256K playlist, its 23 segments repeated to `count` with contiguous ranges.
    static func tiledArkiva(count: Int) -> String {
        let durations = [
            10.031022, 10.054245, 10.077455, 10.007799999999996, 10.054245000000002, 10.03102200000001, 10.077455,
            10.007799999999996, 10.054245000000002, 10.03102200000001, 10.077455, 10.007799999999996,
        ]
        let lengths = [
            363_780, 367_164, 365_096, 360_960, 363_780, 367_164, 365_096, 360_960, 363_780, 367_164, 365_096, 360_960,
        ]
        var text =
            "#EXTM3U\n#EXT-X-VERSION:4\n#EXT-X-MEDIA-SEQUENCE:0\n#EXT-X-ALLOW-CACHE:YES\n#EXT-X-TARGETDURATION:11\n"
        var offset = 0
        for index in 0..<count {
            let slot = index % durations.count
            text += "#EXTINF:\(durations[slot]),\n#EXT-X-BYTERANGE:\(lengths[slot])@\(offset)\nhls_a256K.ts\n"
            offset += lengths[slot]
        }
        return text + "#EXT-X-ENDLIST\n"
    }

    /// Parsing a playlist; with `readingEverySegment`, also building every segment and its URI
    /// string, which is what a client that reads the whole list pays (against the Foundation
    /// baseline only: the floor and the Python figure are about parsing).
    static func parsing(name: String, text: String, segments: Int, readingEverySegment: Bool = false) -> Benchmark {
        let data = Data(text.utf8)
        let megabytes = Double(data.count) / 1_000_000
        let foundation = Benchmark.Baseline(name: "Foundation String per line", target: .atLeast(10)) {
            { blackHole(FoundationBaseline.parse(data)) }
        }
        return Benchmark(
            group: "HLS",
            name:
                "\(name), \(String(format: "%.1f", megabytes)) MB\(readingEverySegment ? ", every segment read" : "")",
            items: segments,
            setup: {
                {
                    guard case .media(let media)? = try? HLSParser().parse(data).playlist else { return blackHole(0) }
                    guard readingEverySegment else { return blackHole(media.segments.count) }
                    var bytes = 0
                    for segment in media.segments { bytes &+= segment.uri.utf8.count &+ segment.keys.count }
                    blackHole(bytes)
                }
            },
            baselines: readingEverySegment
                ? [foundation]
                : [
                    foundation,
                    .init(name: "line splitting only (floor)", target: .within(5)) {
                        { blackHole(LineSplitting.count(data)) }
                    },
                    // Python's m3u8 parses about 57,000 segments/s on this machine (the issue's figure;
                    // the package is not installed here, so it cannot be timed); the goal is 100×.
                    .recorded(
                        name: "Python m3u8 (recorded)", itemsPerSecond: 57_000, target: .itemsPerSecond(5_700_000)),
                ]
        )
    }
}

/// The straightforward way: a String, split into lines, each line examined with Foundation.
enum FoundationBaseline {
    struct Segment {
        var uri: String
        var duration: Double
        var range: String?
        var key: String?
    }

    static func parse(_ data: Data) -> Int {
        guard let text = String(data: data, encoding: .utf8) else { return 0 }
        var segments: [Segment] = []
        var duration: Double?
        var range: String?
        var key: String?
        for rawLine in text.components(separatedBy: "\n") {
            let line = rawLine.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty { continue }
            if line.hasPrefix("#EXTINF:") {
                let value = line.dropFirst(8).components(separatedBy: ",")
                duration = Double(value[0])
            } else if line.hasPrefix("#EXT-X-BYTERANGE:") {
                range = String(line.dropFirst(17))
            } else if line.hasPrefix("#EXT-X-KEY:") {
                key = String(line.dropFirst(11))
            } else if !line.hasPrefix("#"), let segmentDuration = duration {
                segments.append(Segment(uri: line, duration: segmentDuration, range: range, key: key))
                duration = nil
                range = nil
            }
        }
        return segments.count
    }
}

/// The floor: finding the line breaks and nothing else.
enum LineSplitting {
    static func count(_ data: Data) -> Int {
        data.withUnsafeBytes { raw in
            var lines = 0
            for byte in raw where byte == UInt8(ascii: "\n") { lines += 1 }
            return lines
        }
    }
}
