import Catalog
import Foundation
import HLS
import MediaContainers
import Progress
import SliderFlow
import TestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Peak memory while each parser reads a hostile input of 100 MB (8 MB with `--quick`).
///
/// Each row runs in a child process (this executable, re-launched with `--memory-probe NAME`),
/// so one row's peak cannot hide another's. The child builds the input, reads its peak resident
/// size (the baseline: the process plus the input it holds), runs the parser, and reads the peak
/// again; the row reports the difference: what parsing cost beyond holding the input.
///
/// Every row must stay within one fixed bound, ``bound`` (256 MiB), whatever the input's size:
/// the limits refuse a hostile input before its cost can grow with it. The last rows are the
/// largest inputs the limits accept, the most a parser may legitimately hold.
enum HostileInputMemory {
    /// The most a parser may add to the process, for any input.
    static let bound = 256 << 20

    /// One hostile input and the parser that reads it.
    struct Probe: Sendable {
        /// A short name, used on the child's command line.
        var name: String
        /// What the input is.
        var summary: String
        /// The input: `prefix`, then `unit` as often as fits, then `suffix`.
        var prefix: String
        var unit: String
        var suffix = ""
        /// A fixed number of units (the most a limit accepts) instead of filling the size.
        var repeats: Int?
        /// Whether the parser takes text: the input is then made a `String` before measuring.
        var takesText = false
        /// Builds a binary input of about the given size instead of repeating ``unit``.
        var binary: (@Sendable (Int) -> Data)?
        /// Reads the input (`text` is empty unless ``takesText``); returns what happened.
        var run: @Sendable (_ data: Data, _ text: String) -> String
    }

    static let probes: [Probe] = [
        Probe(name: "hls-line", summary: "HLS: one endless line", prefix: "#EXTM3U\n#EXT-X-X:", unit: "A") { data, _ in
            outcome { try HLSParser().parse(data) }
        },
        Probe(
            name: "hls-segments", summary: "HLS: segments past the limit",
            prefix: "#EXTM3U\n#EXT-X-TARGETDURATION:4\n", unit: "#EXTINF:4,\ns.ts\n"
        ) { data, _ in outcome { try HLSParser().parse(data) } },
        Probe(
            name: "hls-unknown", summary: "HLS: unknown tags", prefix: "#EXTM3U\n#EXT-X-TARGETDURATION:4\n",
            unit: "#EXT-X-U:1\n"
        ) { data, _ in
            outcome { try HLSParser().parse(data) }
        },
        Probe(
            name: "hls-session", summary: "HLS: session data, each with a warning",
            prefix: "#EXTM3U\n", unit: "#EXT-X-SESSION-DATA:DATA-ID=\"a\",VALUE=\"b\",X-Q=1\n"
        ) { data, _ in outcome { try HLSParser().parse(data) } },
        Probe(name: "csv-field", summary: "CSV: an unclosed quoted field", prefix: "a\n\"", unit: "x") { data, _ in
            outcome { try CSVReader().records(data) }
        },
        Probe(
            name: "csv-bad-rows", summary: "CSV: rows that fail, skipped",
            prefix: "title,instructor,level,song,videoUrl,thumbnailSlug\n", unit: "a\n"
        ) { data, _ in outcome { try ClassSpreadsheet.lessons(from: data, policy: .skip).lessons } },
        Probe(
            name: "csv-rows", summary: "CSV: tiny valid lessons",
            prefix: "title,instructor,level,song,videoUrl,thumbnailSlug\n", unit: "t,i,beginner,s,v,x\n"
        ) { data, _ in outcome { try ClassSpreadsheet.lessons(from: data, policy: .skip).lessons } },
        Probe(
            name: "csv-wide", summary: "CSV: 256-column rows of one-byte extras",
            prefix: "title,instructor,level,videoUrl," + (0..<252).map { "x\($0)" }.joined(separator: ",") + "\n",
            unit: "t,i,beginner,v," + String(repeating: "e,", count: 251) + "e\n"
        ) { data, _ in outcome { try ClassSpreadsheet.lessons(from: data, policy: .skip).lessons } },
        Probe(name: "json-deep", summary: "Catalog JSON: nesting", prefix: "", unit: "[") { data, _ in
            outcome { try VideosAPI.lessons(from: data, policy: .skip).lessons }
        },
        Probe(
            name: "json-videos", summary: "Catalog JSON: many videos", prefix: "{\"videos\":[{\"id\":0,\"name\":\"n\"}",
            unit: ",{\"id\":1,\"name\":\"n\"}", suffix: "]}"
        ) { data, _ in outcome { try VideosAPI.lessons(from: data, policy: .skip).lessons } },
        Probe(
            name: "progress", summary: "Progress state: intervals",
            prefix: "{\"completed\":false,\"format\":\"mediacore.watch-progress\",\"timeSpent\":{},\"version\":1,"
                + "\"watched\":[[0,1]",
            unit: ",[1,2]", suffix: "]}"
        ) { data, _ in outcome { try ProgressFormat.decode(data) } },
        Probe(
            name: "progress-devices", summary: "Progress state: devices",
            prefix: "{\"completed\":false,\"format\":\"mediacore.watch-progress\",\"version\":1,\"watched\":[],"
                + "\"timeSpent\":{\"d\":1",
            unit: ",\"d\":1", suffix: "}}"
        ) { data, _ in outcome { try ProgressFormat.decode(data) } },
        Probe(
            name: "xapi", summary: "xAPI played-segments", prefix: "0[.]1", unit: "[,]1[.]2", takesText: true
        ) { _, text in outcome { try PlayedSegments.parse(text) } },
        // The largest inputs the limits accept: what a parser may legitimately hold.
        Probe(
            name: "hls-max-segments", summary: "HLS: 1,000,000 segments (the limit)",
            prefix: "#EXTM3U\n#EXT-X-TARGETDURATION:4\n", unit: "#EXTINF:4,\ns.ts\n", repeats: 1_000_000
        ) { data, _ in outcome { try HLSParser().parse(data) } },
        Probe(
            name: "csv-max-rows", summary: "CSV: 100,000 lessons (the limit)",
            prefix: "title,instructor,level,song,videoUrl,thumbnailSlug\n", unit: "t,i,beginner,s,v,x\n",
            repeats: 100_000
        ) { data, _ in outcome { try ClassSpreadsheet.lessons(from: data, policy: .skip).lessons } },
        Probe(
            name: "json-max-videos", summary: "Catalog JSON: 100,000 videos (the limit)",
            prefix: "{\"videos\":[{\"id\":0,\"name\":\"n\"}", unit: ",{\"id\":1,\"name\":\"n\"}", suffix: "]}",
            repeats: 99_998
        ) { data, _ in outcome { try VideosAPI.lessons(from: data, policy: .skip).lessons } },
        Probe(
            name: "progress-max", summary: "Progress state: 1,000,000 intervals (the limit)",
            prefix: "{\"completed\":false,\"format\":\"mediacore.watch-progress\",\"timeSpent\":{},\"version\":1,"
                + "\"watched\":[[0,1]",
            unit: ",[1,2]", suffix: "]}", repeats: 999_999
        ) { data, _ in outcome { try ProgressFormat.decode(data) } },
        Probe(
            name: "ts-remux", summary: "Remux: AAC in MPEG-TS to .m4a", prefix: "", unit: "",
            binary: { size in Data(TransportStreamBuilder.audioStream(pesCount: size / 564, framesPerPES: 2)) },
            run: { data, _ in remuxOutcome(data) }),
        Probe(name: "slider", summary: "Slider body", prefix: "\"{\\\"ticks\\\":[", unit: "1,") { data, _ in
            outcome { try SliderWireFormat.decode(data) }
        },
    ]

    /// Runs `body` and says how it ended.
    static func outcome<Value>(_ body: () throws -> Value) -> String {
        do {
            let value = try body()
            if let collection = value as? any Collection { return "read, \(collection.count) items" }
            if let result = value as? HLSParseResult {
                let items: Int
                switch result.playlist {
                case .media(let media): items = media.segments.count + media.trailingTags.count
                case .multivariant(let master): items = master.sessionData.count + master.unknownTags.count
                }
                return "read, \(items) items, \(result.warnings.count) warnings"
            }
            return "read"
        } catch {
            let text = String(describing: error)
            return "refused: " + (text.count > 60 ? String(text.prefix(57)) + "…" : text)
        }
    }

    /// The input of `size` bytes for `probe`, built in place.
    static func input(for probe: Probe, size: Int) -> Data {
        if let binary = probe.binary { return binary(size) }
        let prefix = Array(probe.prefix.utf8)
        let unit = Array(probe.unit.utf8)
        let suffix = Array(probe.suffix.utf8)
        let repeats = probe.repeats ?? max(0, size - prefix.count - suffix.count) / max(unit.count, 1)
        let total = prefix.count + repeats * unit.count + suffix.count
        var data = Data(count: total)
        data.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
            var index = 0
            for byte in prefix {
                base[index] = byte
                index += 1
            }
            for _ in 0..<repeats {
                for byte in unit {
                    base[index] = byte
                    index += 1
                }
            }
            for byte in suffix {
                base[index] = byte
                index += 1
            }
        }
        return data
    }

    /// The process's resident size now, in bytes (Linux: `/proc/self/statm`; elsewhere the peak
    /// so far, which can only overstate what parsing adds).
    static func residentBytes() -> Int {
        #if os(Linux)
            if let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) {
                let fields = text.split(separator: " ")
                if fields.count > 1, let pages = Int(fields[1]) { return pages * Int(sysconf(Int32(_SC_PAGESIZE))) }
            }
        #endif
        return peakResidentBytes()
    }

    /// Restarts the peak count at the current size where the system allows it (Linux: writing 5
    /// to `/proc/self/clear_refs`); returns whether it did.
    static func resetPeak() -> Bool {
        #if os(Linux)
            guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
            defer { try? handle.close() }
            return (try? handle.write(contentsOf: Data("5".utf8))) != nil
        #else
            return false
        #endif
    }

    /// The process's resource usage (`getrusage(RUSAGE_SELF)`), or `nil` when it cannot be read.
    static func processUsage() -> rusage? {
        var usage = rusage()
        #if canImport(Glibc)
            let who = RUSAGE_SELF.rawValue
        #else
            let who = RUSAGE_SELF
        #endif
        return getrusage(who, &usage) == 0 ? usage : nil
    }

    /// The process's peak resident size, in bytes (Linux: `VmHWM`, which ``resetPeak()`` restarts).
    static func peakResidentBytes() -> Int {
        #if os(Linux)
            if let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
                let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
                let kilobytes = Int(line.dropFirst(6).filter(\.isNumber))
            {
                return kilobytes * 1024
            }
        #endif
        guard let usage = processUsage() else { return 0 }
        #if canImport(Darwin)
            return Int(usage.ru_maxrss)
        #else
            return Int(usage.ru_maxrss) * 1024
        #endif
    }

    /// In the child: builds the input, runs the parser, prints `baseline peak outcome`.
    /// Remuxes `data` as one segment to a temporary file. The peak beyond the input is the
    /// samples of the segment, a few buffers and the sample records.
    static func remuxOutcome(_ data: Data) -> String {
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent(
            "mediacore-remux-probe-\(ProcessInfo.processInfo.processIdentifier).m4a")
        defer { try? FileManager.default.removeItem(at: destination) }
        do {
            var remuxer = try SegmentRemuxer(output: try MP4FileOutput(url: destination), brand: .audio)
            try remuxer.append([SegmentRemuxer.Segment(data: data, discontinuity: 0, index: 0)])
            let frames = remuxer.tracks.reduce(0) { $0 + $1.sampleCount }
            _ = try remuxer.finish()
            return "remuxed \(frames) frames (records of about 6 bytes each, kept by the remuxer here)"
        } catch {
            return "refused: \(error)"
        }
    }

    static func runProbe(named name: String, size: Int) -> Int32 {
        guard let probe = probes.first(where: { $0.name == name }) else {
            FileHandle.standardError.write(Data("no memory probe named \(name)\n".utf8))
            return 2
        }
        var data = input(for: probe, size: size)
        var text = ""
        if probe.takesText {
            text = String(decoding: data, as: UTF8.self)
            data = Data()
        }
        let baseline = resetPeak() ? residentBytes() : peakResidentBytes()
        let result = probe.run(data, text)
        let peak = peakResidentBytes()
        print("\(baseline) \(peak) \(result)")
        return withExtendedLifetime((data, text)) { 0 }
    }

    /// In the parent: one child per probe, and the table.
    static func report(quick: Bool) {
        let size = quick ? 8 << 20 : 100 << 20
        let megabytes = size >> 20
        print("Hostile inputs of \(megabytes) MB: peak memory beyond holding the input (one process per row)")
        print(
            "Baseline: the child's resident size with the input built and nothing parsed; "
                + "extra: its peak while parsing, less the baseline; bound: \(mebibytes(bound)) for any input.")
        let header = ["input", "outcome", "baseline", "parse peak", "extra", "≤ 256 MiB"]
        var rows: [[String]] = []
        var exceeded: [String] = []
        for probe in probes {
            guard let line = child(probe.name, size: size) else {
                rows.append([probe.summary, "the child process failed", "", "", "", ""])
                exceeded.append(probe.name)
                continue
            }
            let fields = line.split(separator: " ", maxSplits: 2).map(String.init)
            guard fields.count == 3, let baseline = Int(fields[0]), let peak = Int(fields[1]) else {
                rows.append([probe.summary, "unreadable child output", "", "", "", ""])
                exceeded.append(probe.name)
                continue
            }
            let extra = max(0, peak - baseline)
            let within = extra <= bound
            if !within { exceeded.append(probe.name) }
            rows.append([
                probe.summary, fields[2], mebibytes(baseline), mebibytes(peak), mebibytes(extra),
                within ? "within" : "EXCEEDED",
            ])
        }
        let widths = header.indices.map { column in
            ([header[column]] + rows.map { $0[column] }).map(\.count).max() ?? 0
        }
        func render(_ row: [String]) -> String {
            row.indices.map { row[$0].padding(toLength: widths[$0], withPad: " ", startingAt: 0) }
                .joined(separator: " | ")
        }
        print(render(header))
        print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "-|-"))
        for row in rows { print(render(row)) }
        if !exceeded.isEmpty { print("Memory bound exceeded: \(exceeded.joined(separator: ", "))") }
    }

    static func mebibytes(_ bytes: Int) -> String {
        String(format: "%.1f MiB", Double(bytes) / Double(1 << 20))
    }

    /// Runs this executable as `--memory-probe NAME SIZE` and returns its last output line.
    static func child(_ name: String, size: Int) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        #if canImport(Darwin)
            process.executableURL = Bundle.main.executableURL
        #endif
        process.arguments = ["--memory-probe", name, String(size)]
        let pipe = Pipe()
        process.standardOutput = pipe
        do {
            try process.run()
        } catch {
            return nil
        }
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: output, as: UTF8.self).split(separator: "\n").last.map(String.init)
    }
}
