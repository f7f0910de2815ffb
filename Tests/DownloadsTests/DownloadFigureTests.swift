import Downloads
import Foundation
import HTTPSupport
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The article *Downloading for offline use* shows how a lesson's segments arrive on two
/// transfers and where they land in the one file, drawn from a run recorded against a loopback
/// server (`Fixtures/download-run.json`). The recording's times are what that run measured; its
/// file layout must stay what the code writes today, which a fresh download checks, so the
/// figure cannot drift from the writer.
@Suite("Figures of the Downloads catalog")
struct DownloadFigureTests {
    /// The lesson recorded: the `multi-audio` fixture with every audio rendition kept.
    static let lesson = "multi-audio"

    /// One request of the recorded run.
    struct Transfer: Codable, Hashable {
        /// Its path relative to the lesson's folder.
        var path: String
        /// When it was sent and when its last byte arrived, in seconds since the first request.
        var start: Double
        var end: Double
        /// The bytes of its body.
        var bytes: Int
    }

    /// Where a segment's samples lie in the file.
    struct Placement: Codable, Hashable {
        var path: String
        var offset: Int
        var length: Int
    }

    /// The file's layout: its size, its top-level boxes, each segment's bytes in the media data.
    struct Layout: Codable, Hashable {
        var size: Int
        var boxes: [Placement]
        var segments: [Placement]
    }

    /// A recorded run.
    struct Recording: Codable, Hashable {
        var transfers: [Transfer]
        var layout: Layout
    }

    static var recordingURL: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/download-run.json")
    }

    /// The layout of the file `file` downloaded from the lesson: each track's samples grouped by
    /// the segment ffmpeg's demuxer read them from (`packets.json`), in file order.
    static func layout(of file: MP4Inspector) throws -> Layout {
        let boxes = MP4BoxReader(bytes: file.bytes).boxes().map {
            Placement(path: $0.type, offset: $0.start, length: $0.size)
        }
        var segments: [Placement] = []
        let renditions: [(folder: String, track: MP4Inspector.Track?, kind: String)] = [
            ("video", file.tracks("vide").first, "video"),
            ("audio_en", file.tracks("soun").first { $0.language == "eng" }, "audio"),
            ("audio_es", file.tracks("soun").first { $0.language == "spa" }, "audio"),
        ]
        for rendition in renditions {
            let track = try #require(rendition.track, "no \(rendition.folder) track")
            var next = 0
            for segment in try Lessons.sourceSegments("\(lesson)/\(rendition.folder)/index.m3u8") {
                let count = segment.streams.filter { $0.kind == rendition.kind }.reduce(0) { $0 + $1.frames.count }
                let samples = track.samples[next..<min(next + count, track.samples.count)]
                next += count
                guard let first = samples.map(\.offset).min(),
                    let last = samples.map({ $0.offset + $0.size }).max()
                else { continue }
                segments.append(
                    Placement(path: "\(rendition.folder)/\(segment.uri)", offset: first, length: last - first))
            }
        }
        return Layout(size: file.bytes.count, boxes: boxes, segments: segments.sorted { $0.offset < $1.offset })
    }

    static func recording() throws -> Recording {
        try JSONDecoder().decode(Recording.self, from: Data(contentsOf: recordingURL))
    }

    /// A transport that notes when each request goes out and when its last byte arrives.
    final class RecordingTransport: HTTPTransport {
        let inner: URLSessionTransport
        let base: String
        let log = LockedState<(origin: ContinuousClock.Instant?, transfers: [Transfer])>((nil, []))

        init(inner: URLSessionTransport, base: String) {
            self.inner = inner
            self.base = base
        }

        func started() -> ContinuousClock.Instant {
            let now = ContinuousClock.now
            log.withLock { if $0.origin == nil { $0.origin = now } }
            return now
        }

        func note(_ request: URLRequest, from start: ContinuousClock.Instant, bytes: Int) {
            let end = ContinuousClock.now
            let path = String((request.url?.path ?? "").dropFirst(base.count))
            log.withLock { state in
                guard let origin = state.origin else { return }
                func seconds(_ instant: ContinuousClock.Instant) -> Double {
                    origin.duration(to: instant) / .seconds(1)
                }
                state.transfers.append(Transfer(path: path, start: seconds(start), end: seconds(end), bytes: bytes))
            }
        }

        func send(_ request: URLRequest) async throws -> (Data, URLResponse) {
            let start = started()
            let (data, response) = try await inner.send(request)
            note(request, from: start, bytes: data.count)
            return (data, response)
        }

        func stream(_ request: URLRequest) async throws -> (URLResponse, HTTPBodyChunks) {
            let start = started()
            let (response, chunks) = try await inner.stream(request)
            let (relay, continuation) = HTTPBodyChunks.makeStream()
            let task = Task {
                var bytes = 0
                do {
                    for try await chunk in chunks {
                        bytes += chunk.count
                        continuation.yield(chunk)
                    }
                    self.note(request, from: start, bytes: bytes)
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
            return (response, relay)
        }
    }

    @Test(
        "records a download of the lesson over loopback for the figure (run with MEDIACORE_RECORD_DOWNLOAD=1)",
        .enabled(if: ProcessInfo.processInfo.environment["MEDIACORE_RECORD_DOWNLOAD"] != nil))
    func record() async throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        let served = try ServedLesson(Self.lesson)
        for (path, bytes) in served.files { server.route("/\(Self.lesson)/\(path)", .file(bytes)) }
        let transport = RecordingTransport(
            inner: URLSessionTransport(session: URLSession(configuration: .ephemeral)), base: "/\(Self.lesson)/")
        let engine = DownloadEngine(concurrency: 2, clock: ContinuousClock(), transport: transport)
        let folder = temporaryFolder("figure-run")
        let result = try await MediaDownloader(engine: engine).downloadLesson(
            from: server.url("/\(Self.lesson)/master.m3u8"), to: folder.appendingPathComponent("lesson"),
            audioRenditions: .all
        ).result()
        let transfers = transport.log.withLock { $0.transfers }.sorted { $0.start < $1.start }
        let recording = Recording(transfers: transfers, layout: try Self.layout(of: MP4Inspector(url: result.file)))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(recording).write(to: Self.recordingURL)
    }

    @Test("the recorded run's file layout is the one a download writes today (else record it again)")
    func recordedLayoutIsCurrent() async throws {
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        let served = try ServedLesson(Self.lesson)
        served.serve(on: transport)
        let downloader = MediaDownloader(engine: DownloadEngine(concurrency: 2, clock: clock, transport: transport))
        let result = try await downloader.downloadLesson(
            from: served.entry, to: temporaryFolder("figure-layout").appendingPathComponent("lesson"),
            audioRenditions: .all
        ).result()
        let layout = try Self.layout(of: MP4Inspector(url: result.file))
        let recording = try Self.recording()
        #expect(layout == recording.layout)
        // The requests go out in the recorded order (their times are the recorded run's own),
        // and never more than two at once, as the figure's two lanes show.
        let prefix = served.base.path.hasSuffix("/") ? served.base.path : served.base.path + "/"
        let requested = transport.requests.compactMap { $0.url?.path }.filter { $0.hasPrefix(prefix) }
            .map { String($0.dropFirst(prefix.count)) }
        // Two requests started together reach the transport in either order (a scheduling race
        // between their tasks), so each request may sit one place from where it was recorded.
        let recorded = recording.transfers.map(\.path)
        #expect(requested.sorted() == recorded.sorted())
        #expect(
            requested.enumerated().allSatisfy { index, path in
                recorded.indices.contains { abs($0 - index) <= 1 && recorded[$0] == path }
            }, "\(requested) against \(recorded)")
        #expect(Set(Self.lanes(recording.transfers)) == [0, 1])
        // Every segment of every rendition is in the file once, and the media data holds them.
        let media = try #require(layout.boxes.first { $0.path == "mdat" })
        #expect(layout.segments.count == 6)
        #expect(
            layout.segments.allSatisfy {
                $0.offset >= media.offset && $0.offset + $0.length <= media.offset + media.length
            })
    }
}

extension DownloadFigureTests {
    /// A short name for a path: `v0`, `en1`, `es0`; playlists by their folder.
    static func shortName(_ path: String) -> String {
        let parts = path.split(separator: "/").map(String.init)
        let file = parts.last ?? path
        if file.hasSuffix(".m3u8") { return parts.count > 1 ? "\(parts[0]) playlist" : "master" }
        let number = file.filter(\.isNumber)
        switch parts.first {
        case "video": return "v\(number)"
        case "audio_en": return "en\(number)"
        case "audio_es": return "es\(number)"
        default: return file
        }
    }

    /// The ink of a path's rendition: video, audio, or a playlist.
    static func ink(_ path: String) -> SVGFigure.Ink {
        if path.hasSuffix(".m3u8") { return .surface }
        return path.hasPrefix("video/") ? .accent : .highlight
    }

    /// The lane of each transfer: the lowest one free when it starts (two at most for the
    /// segments, since the engine runs two transfers).
    static func lanes(_ transfers: [Transfer]) -> [Int] {
        var ends: [Double] = []
        return transfers.map { transfer in
            if let free = ends.firstIndex(where: { $0 <= transfer.start }) {
                ends[free] = transfer.end
                return free
            }
            ends.append(transfer.end)
            return ends.count - 1
        }
    }

    /// A round step for `count` ticks over `span`: 1, 2 or 5 times a power of ten.
    static func tickStep(_ span: Double, count: Double = 6) -> Double {
        let raw = span / count
        let power = pow(10, (log10(raw)).rounded(.down))
        return [1.0, 2, 5, 10].map { $0 * power }.first { $0 >= raw } ?? raw
    }

    static func figure(_ recording: Recording) -> SVGFigure {
        let left = 76.0
        let right = 404.0
        let transfers = recording.transfers
        let lanes = Self.lanes(transfers)
        let laneCount = (lanes.max() ?? 0) + 1
        let total = (transfers.map(\.end).max() ?? 1) * 1_000
        let timeScale = (right - left) / total
        // Each lane: room for the names of bars too narrow to hold them, then the bars.
        let laneTop = 34.0
        let laneHeight = 48.0
        let barOffset = 24.0
        let axisY = laneTop + Double(laneCount - 1) * laneHeight + barOffset + 24
        let fileY = axisY + 84
        let layout = recording.layout
        let byteScale = (right - left) / Double(max(layout.size, 1))
        let segments = layout.segments
        let order = segments.map { Self.longName($0.path) }
        // The file's top-level boxes in their order, the media data described by what it holds.
        let boxes = layout.boxes.map { box in
            switch box.path {
            case "mdat":
                "the media data holding each segment's samples in playlist order (" + order.joined(separator: ", ")
                    + ")"
            case "moov": "the moov index"
            default: box.path
            }
        }
        let description =
            "The multi-audio lesson downloaded over loopback, as recorded: the playlists, then "
            + "\(segments.count) segments requested at most \(laneCount) at a time, all in "
            + "\(SVGFigure.number(total)) ms. Below, the file they became, to scale: "
            + boxes.joined(separator: ", then ") + ". A line joins each request to where its samples landed."
        let height = fileY + 92
        var figure = SVGFigure(width: 420, height: height, description: description)
        figure.rect(x: 0, y: 0, width: 420, height: height, fill: .background, stroke: nil)
        figure.text("Requests in time (ms since the first)", x: 12, y: 22, size: 13, bold: true)
        for lane in 0..<laneCount {
            figure.text(
                "transfer \(lane + 1)", x: left - 8, y: laneTop + Double(lane) * laneHeight + barOffset + 15, size: 12,
                ink: .muted, anchor: "end")
        }
        // The time axis.
        figure.line(from: (left, axisY), to: (right, axisY))
        let step = Self.tickStep(total)
        var tick = 0.0
        var tickLabels: [(text: String, x: Double)] = []
        while tick <= total + step / 1_000 {
            let x = left + tick * timeScale
            figure.line(from: (x, axisY), to: (x, axisY + 4))
            tickLabels.append((SVGFigure.number(tick), x))
            tick += step
        }
        // The file, to scale.
        figure.text("lesson.mp4", x: left - 6, y: fileY + 15, size: 12, ink: .muted, anchor: "end")
        for box in layout.boxes {
            figure.rect(
                x: left + Double(box.offset) * byteScale, y: fileY, width: Double(box.length) * byteScale, height: 20,
                fill: .surface, stroke: .muted)
        }
        for (index, segment) in segments.enumerated() {
            let x = left + Double(segment.offset) * byteScale
            let width = Double(segment.length) * byteScale
            figure.rect(x: x, y: fileY, width: width, height: 20, fill: Self.ink(segment.path), stroke: .background)
            // Labels alternate below the bar so that narrow neighbours never overlap.
            figure.text(
                Self.shortName(segment.path), x: x + width / 2, y: fileY + 36 + Double(index % 2) * 15, size: 12,
                anchor: "middle")
        }
        if let index = layout.boxes.first(where: { $0.path == "moov" }) {
            figure.text(
                "moov", x: left + Double(index.offset + index.length / 2) * byteScale, y: fileY - 6, size: 12,
                ink: .muted, anchor: "middle")
        }
        figure.text("ftyp", x: left, y: fileY - 6, size: 12, ink: .muted, anchor: "start")
        // The requests: first the lines to where each one's samples landed, then the bars over
        // them, so that no line crosses another request's bar.
        func bar(_ transfer: Transfer, lane: Int) -> (x: Double, y: Double, width: Double) {
            (
                left + transfer.start * 1_000 * timeScale, laneTop + Double(lane) * laneHeight + barOffset,
                max((transfer.end - transfer.start) * 1_000 * timeScale, 2)
            )
        }
        for (transfer, lane) in zip(transfers, lanes) {
            let (x, y, width) = bar(transfer, lane: lane)
            if let segment = segments.first(where: { $0.path == transfer.path }) {
                let target = left + (Double(segment.offset) + Double(segment.length) / 2) * byteScale
                figure.line(from: (x + width / 2, y + 20), to: (target, fileY), ink: .muted, width: 0.75)
            }
        }
        // The names of bars too narrow to hold them, to go above their bars (the media playlists
        // under one name).
        var namesAbove: [(name: String, center: Double, width: Double, lane: Int)] = []
        var playlists: [Int: (start: Double, end: Double)] = [:]
        for (transfer, lane) in zip(transfers, lanes) {
            let (x, y, width) = bar(transfer, lane: lane)
            figure.rect(x: x, y: y, width: width, height: 20, fill: Self.ink(transfer.path), stroke: .muted)
            // The name inside the bar when it fits; a segment's above it otherwise.
            let name = transfer.path.hasSuffix(".m3u8") ? "m3u8" : Self.shortName(transfer.path)
            let nameWidth = SVGFigure.estimatedWidth(name, size: 12)
            if nameWidth + 4 <= width {
                figure.text(
                    name, x: x + width / 2, y: y + 14.5, size: 12,
                    ink: transfer.path.hasSuffix(".m3u8") ? .text : .background, anchor: "middle")
            } else if transfer.path.hasSuffix(".m3u8") {
                let span = playlists[lane] ?? (x, x + width)
                playlists[lane] = (min(span.start, x), max(span.end, x + width))
            } else {
                namesAbove.append((name, x + width / 2, nameWidth, lane))
            }
        }
        for (lane, span) in playlists {
            let name = "media playlists"
            namesAbove.append((name, (span.start + span.end) / 2, SVGFigure.estimatedWidth(name, size: 12), lane))
        }
        // The names above narrow bars, after the lines, each on the background; neighbours that
        // would touch move apart by the same amount each way.
        for lane in Set(namesAbove.map(\.lane)).sorted() {
            var names = namesAbove.filter { $0.lane == lane }.sorted { $0.center < $1.center }
            for index in names.indices.dropFirst() {
                let needed = (names[index - 1].width + names[index].width) / 2 + 6
                let gap = names[index].center - names[index - 1].center
                if gap < needed {
                    names[index - 1].center -= (needed - gap) / 2
                    names[index].center += (needed - gap) / 2
                }
            }
            let baseline = laneTop + Double(lane) * laneHeight + barOffset - 6
            for name in names {
                figure.rect(
                    x: name.center - name.width / 2 - 2, y: baseline - 12, width: name.width + 4, height: 15,
                    fill: .background, stroke: nil)
                figure.text(
                    name.name, x: min(name.center, right + 12 - name.width / 2), y: baseline, size: 12, anchor: "middle"
                )
            }
        }
        // The file's heading, on the background over the lines that pass it.
        let heading = "The file, bytes to scale"
        figure.rect(
            x: 10, y: fileY - 42, width: SVGFigure.estimatedWidth(heading, size: 13, bold: true) + 4, height: 18,
            fill: .background, stroke: nil)
        figure.text(heading, x: 12, y: fileY - 28, size: 13, bold: true)
        // The tick labels after the lines to the file, each on the background, so no line crosses one.
        for label in tickLabels {
            let width = SVGFigure.estimatedWidth(label.text, size: 12) + 4
            figure.rect(
                x: label.x - width / 2, y: axisY + 6, width: width, height: 14, fill: .background, stroke: nil)
            figure.text(label.text, x: label.x, y: axisY + 17, size: 12, ink: .muted, anchor: "middle")
        }
        // The legend.
        let legendY = fileY + 78
        for (offset, entry) in [
            ("video segment", SVGFigure.Ink.accent), ("audio segment", .highlight), ("playlist, box", .surface),
        ]
        .enumerated() {
            let x = 12 + Double(offset) * 132
            figure.rect(x: x, y: legendY - 10, width: 14, height: 12, fill: entry.1, stroke: .muted)
            figure.text(entry.0, x: x + 20, y: legendY, size: 12)
        }
        return figure
    }

    /// A segment's name in words: "video 0", "English 1".
    static func longName(_ path: String) -> String {
        let short = shortName(path)
        let number = short.filter(\.isNumber)
        if short.hasPrefix("v") { return "video \(number)" }
        if short.hasPrefix("en") { return "English \(number)" }
        if short.hasPrefix("es") { return "Spanish \(number)" }
        return short
    }

    @Test("the download figure is drawn from the recorded run, committed, and shown in the article")
    func downloadFigure() throws {
        let figure = Self.figure(try Self.recording())
        let problems = CommittedFigure.problems(
            figure, name: "download-run", module: "OfflineLessons",
            article: "Sources/OfflineLessons/OfflineLessons.docc/DownloadingForOfflineUse.md")
        #expect(problems.isEmpty, "\(problems)")
    }
}
