import Downloads
import Foundation
import HTTPSupport
import MediaContainers
import OfflineLessons
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A lesson of the ffmpeg-made fixtures (`Tests/TestSupport/Lessons`) served in memory: every
/// playlist, key, initialisation section and segment at its path under ``base``.
struct ServedLesson: Sendable {
    let name: String
    let base: URL
    /// Every file of the lesson by its path relative to the lesson's folder.
    let files: [String: Data]

    init(_ name: String) throws {
        self.name = name
        base = try #require(URL(string: "https://lessons.example/\(name)/"))
        let folder = Lessons.loader.folder.appendingPathComponent(name)
        var files: [String: Data] = [:]
        let enumerator = try #require(FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil))
        for case let file as URL in enumerator where !file.hasDirectoryPath {
            let relative = String(file.standardizedFileURL.path.dropFirst(folder.standardizedFileURL.path.count + 1))
            guard relative != "facts.json", relative != "packets.json" else { continue }
            files[relative] = try Data(contentsOf: file)
        }
        self.files = files
        initializationKeys = Self.initializationKeys(in: files)
    }

    /// The request keys (see ``key(of:)``) of every `EXT-X-MAP` of the lesson's playlists: a
    /// path, with its byte range when the section is part of a larger file (RFC 8216 §4.3.2.5).
    let initializationKeys: Set<String>

    private static func initializationKeys(in files: [String: Data]) -> Set<String> {
        var keys: Set<String> = []
        for (path, data) in files where path.hasSuffix(".m3u8") {
            let folder = (path as NSString).deletingLastPathComponent
            for line in String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
            where line.hasPrefix("#EXT-X-MAP:") {
                func quoted(_ name: String) -> String? {
                    guard let start = line.range(of: "\(name)=\"") else { return nil }
                    return line[start.upperBound...].split(separator: "\"", maxSplits: 1).first.map(String.init)
                }
                guard let uri = quoted("URI") else { continue }
                let relative = folder.isEmpty ? uri : "\(folder)/\(uri)"
                if let range = quoted("BYTERANGE"), let at = range.firstIndex(of: "@"),
                    let length = Int(range[..<at]), let offset = Int(range[range.index(after: at)...])
                {
                    keys.insert("\(relative) bytes=\(offset)-\(offset + length - 1)")
                } else {
                    keys.insert(relative)
                }
            }
        }
        return keys
    }

    /// The URL a download starts from: the multivariant playlist, or the only media playlist.
    var entry: URL {
        base.appendingPathComponent(files["master.m3u8"] != nil ? "master.m3u8" : "index.m3u8")
    }

    /// The path of a request relative to ``base``, with its byte range when it has one.
    func key(of request: URLRequest) -> String? {
        let prefix = base.path.hasSuffix("/") ? base.path : base.path + "/"
        guard let path = request.url?.path, path.hasPrefix(prefix) else { return nil }
        let relative = String(path.dropFirst(prefix.count))
        guard !relative.hasSuffix(".m3u8") else { return nil }
        return request.value(forHTTPHeaderField: "Range").map { "\(relative) \($0)" } ?? relative
    }

    /// The renditions a download of the lesson fetches: a video and an audio one when it has a
    /// multivariant playlist (every such fixture has separate audio), else one.
    var renditions: Int { files["master.m3u8"] != nil ? 2 : 1 }

    /// Whether a request key names what a resume fetches again: an initialisation section (an
    /// `EXT-X-MAP`), whose track boxes the reader of the segments after it needs, an AES-128
    /// key, which is never written to disk, or a WebVTT segment (subtitles are fetched after the
    /// media and checkpointed together, once all are in).
    func isFetchedAgain(_ key: String) -> Bool {
        initializationKeys.contains(key) || key.contains("init") || key.hasSuffix(".key") || key.hasSuffix(".vtt")
    }

    /// The media segments a resume must not fetch again after an interruption while segment
    /// `index` of `order` was in flight: with two transfers, a segment is asked for only once
    /// every step two places before it is checkpointed, and a step holds one segment of each
    /// rendition.
    func kept(before index: Int, in order: [String]) -> Set<String> {
        Set(order.prefix(max(0, index - 2 * renditions)).filter { !isFetchedAgain($0) })
    }

    /// The most segment requests a download interrupted once may make: every segment, the
    /// segments of the two steps in flight again, and every initialisation section again.
    func mostRequests(_ order: [String]) -> Int {
        order.count + 2 * renditions + order.filter(isFetchedAgain).count
    }

    /// Serves every file on `transport`. The request keyed `held` (see ``key(of:)``: a path, with
    /// its byte range for a segment cut from a larger file), if any, is answered the first time
    /// only after an hour on the transport's clock (never, unless the test moves it): a transfer
    /// in flight when the test pauses. The request keyed `failing` is answered `failure` first.
    func serve(
        on transport: InMemoryHTTPTransport<ManualClock>, holding held: String? = nil, failing: String? = nil,
        with failure: InMemoryHTTPTransport<ManualClock>.Reply? = nil
    ) {
        for (path, data) in files {
            let url = base.appendingPathComponent(path)
            if path.hasSuffix(".m3u8") {
                let playlist = InMemoryHTTPTransport<ManualClock>.Reply.response(
                    status: 200, headers: ["Content-Type": "application/vnd.apple.mpegurl"], body: data)
                if path == failing, let failure {
                    transport.stub(url, replies: [failure, playlist])
                } else {
                    transport.stub(url, reply: playlist)
                }
            } else {
                let served = InMemoryHTTPTransport<ManualClock>.Reply.resource(data)
                let once: (key: String, reply: InMemoryHTTPTransport<ManualClock>.Reply)? =
                    if let held, Self.path(of: held) == path {
                        (held, .resource(data, latency: .seconds(3_600)))
                    } else if let failing, let failure, Self.path(of: failing) == path {
                        (failing, failure)
                    } else {
                        nil
                    }
                guard let once else {
                    transport.stub(url, reply: served)
                    continue
                }
                // Several segments may be byte ranges of this file: only the keyed one is held
                // or failed, and only the first time it is asked for.
                let taken = LockedState(false)
                transport.stub(
                    url,
                    reply: .handler { request in
                        guard key(of: request) == once.key else { return served }
                        return taken.withLock { taken in
                            defer { taken = true }
                            return taken ? served : once.reply
                        }
                    })
            }
        }
    }

    /// The path part of a request key: the key without its byte range.
    private static func path(of key: String) -> String {
        key.split(separator: " ", maxSplits: 1).first.map(String.init) ?? key
    }
}

/// Lessons paused at every segment through every entry point, interrupted by a kill or a full
/// disk at every file operation, and failed by the server at every segment: each ends with the
/// bytes of an uninterrupted download, and a resume fetches only what was missing.
@Suite("Lessons paused, killed and failed at every segment")
struct LessonResumeTests {
    /// How a test starts a lesson's download.
    enum EntryPoint: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case downloadLesson, downloadHLSVideo, downloadHLSAudio, offlineLibrary, lessonDownloadModel
        var testDescription: String { rawValue }
    }

    /// A download that ended in a state a test did not expect.
    struct Unexpected: Error {
        var state: String
    }

    /// A started download: how to pause it and how to wait for its file.
    struct Started: Sendable {
        var pause: @Sendable () async -> Void
        /// The finished file, or the error the download ended with (``DownloadError/Kind/paused``
        /// after a pause).
        var file: @Sendable () async throws -> URL
    }

    /// One place where a lesson is downloaded, and its downloads, as an app keeps them across
    /// a pause: the same library and model resume what they paused.
    @MainActor
    final class Site {
        let entry: EntryPoint
        let folder: URL
        let downloader: MediaDownloader<ManualClock>
        let library: OfflineLibrary
        let lesson: ServedLesson
        /// The model a lesson screen shows, following the library as the screen's task would.
        private var model: LessonDownloadModel?
        private var following: Task<Void, Never>?

        isolated deinit { following?.cancel() }

        init(
            _ entry: EntryPoint, lesson: ServedLesson, transport: InMemoryHTTPTransport<ManualClock>, clock: ManualClock
        )
            throws
        {
            self.entry = entry
            self.lesson = lesson
            folder = temporaryFolder("lesson-\(entry.rawValue)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let downloader = MediaDownloader(
                engine: DownloadEngine(concurrency: 2, retry: .none, clock: clock, transport: transport))
            self.downloader = downloader
            library = OfflineLibrary(directory: folder) { remote, destination in
                downloader.downloadLesson(from: remote, to: destination)
            }
        }

        var destination: URL {
            folder.appendingPathComponent(entry == .downloadHLSAudio ? "lesson.m4a" : "lesson.mp4")
        }

        func start() async throws -> Started {
            switch entry {
            case .downloadLesson, .downloadHLSVideo, .downloadHLSAudio:
                let job =
                    switch entry {
                    case .downloadHLSVideo: downloader.downloadHLSVideo(from: lesson.entry, to: destination)
                    case .downloadHLSAudio: downloader.downloadHLSAudio(from: lesson.entry, to: destination)
                    default: downloader.downloadLesson(from: lesson.entry, to: destination.deletingPathExtension())
                    }
                return Started(pause: { job.pause() }, file: { try await job.result().file })
            case .offlineLibrary:
                try await library.download("lesson", from: lesson.entry)
                return Started(pause: { await self.library.pause("lesson") }, file: { try await self.libraryFile() })
            case .lessonDownloadModel:
                let model =
                    self.model ?? LessonDownloadModel(library: library, lessonID: "lesson", remote: lesson.entry)
                if self.model == nil {
                    self.model = model
                    following = Task { await model.observe() }
                }
                await model.download()
                return Started(
                    pause: { await model.pause() },
                    file: { @MainActor in
                        let file = try await self.libraryFile()
                        let shown = await waitUntilObserved {
                            if case .downloaded = model.phase { true } else { false }
                        }
                        guard shown else { throw Unexpected(state: "the model shows \(model.phase)") }
                        return file
                    })
            }
        }

        /// The library's file once its download has ended, or the error its state stands for.
        nonisolated func libraryFile() async throws -> URL {
            await library.waitForDownload("lesson")
            switch await library.state(of: "lesson") {
            case .downloaded: return try #require(await library.localFile(of: "lesson"))
            case .paused: throw DownloadError(.paused)
            case let other: throw Unexpected(state: "the library shows \(other)")
            }
        }
    }

    static let cases: [(EntryPoint, String)] = [
        (.downloadLesson, "disc-encoders"), (.downloadLesson, "cmaf"), (.downloadHLSVideo, "multi-audio"),
        (.downloadHLSVideo, "cmaf-disc"), (.downloadHLSAudio, "packed-aac"), (.downloadHLSAudio, "packed-heaac"),
        (.offlineLibrary, "disc-same"), (.lessonDownloadModel, "cmaf"), (.downloadLesson, "aes-fmp4-init"),
        (.downloadLesson, "webvtt"), (.downloadLesson, "ts-map"), (.downloadLesson, "cmaf-renditions-disc"),
        (.downloadLesson, "ts-renditions-disc"), (.downloadLesson, "packed-beside-video"),
        (.downloadLesson, "disc-rates"), (.downloadLesson, "fmp4-base-offset"),
    ]

    /// An uninterrupted download: its bytes, and the segments it asked for in order.
    @MainActor
    func reference(_ entry: EntryPoint, _ lesson: ServedLesson) async throws -> (bytes: Data, segments: [String]) {
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        lesson.serve(on: transport)
        let site = try Site(entry, lesson: lesson, transport: transport, clock: clock)
        let file = try await site.start().file()
        let segments = transport.requests.compactMap(lesson.key(of:))
        #expect(Set(segments).count == segments.count, "an uninterrupted download fetched a segment twice")
        return (try Data(contentsOf: file), segments)
    }

    @Test(
        "paused with each segment in flight, through every entry point: the resume fetches only what was missing and ends byte-identical",
        arguments: cases)
    @MainActor
    func pauseAtEverySegment(entry: EntryPoint, name: String) async throws {
        let lesson = try ServedLesson(name)
        let (expected, order) = try await reference(entry, lesson)
        #expect(order.count >= 2)
        for (index, held) in order.enumerated() {
            let clock = ManualClock()
            let transport = InMemoryHTTPTransport(clock: clock)
            lesson.serve(on: transport, holding: held)
            let site = try Site(entry, lesson: lesson, transport: transport, clock: clock)
            let first = try await site.start()
            // The held segment's transfer has started: pause while it is in flight.
            await clock.waitForSleepers(count: 1)
            await first.pause()
            do {
                _ = try await first.file()
                Issue.record("\(name) paused at segment \(index) finished anyway")
            } catch let error as DownloadError {
                #expect(error.kind == .paused, "\(name) paused at segment \(index): \(error)")
            }
            #expect(!FileManager.default.fileExists(atPath: site.destination.path))
            let before = transport.requests.count
            let file = try await site.start().file()
            #expect(try Data(contentsOf: file) == expected, "\(name) paused at segment \(index)")
            // Nothing hidden is left but the library's record of the downloaded lesson.
            #expect(
                files(in: site.folder).filter {
                    $0.hasPrefix(".") && $0 != ".offline-library.json" && !$0.hasSuffix(".mp4.item")
                }.isEmpty)
            // Segments checkpointed before the held one was asked for (it is asked for once
            // every segment two or more places before it has been remuxed) are not fetched again.
            let resumed = transport.requests[before...].compactMap(lesson.key(of:))
            #expect(
                lesson.kept(before: index, in: order).isDisjoint(with: resumed),
                "\(name) paused at segment \(index) fetched \(resumed)")
            let all = transport.requests.compactMap(lesson.key(of:))
            #expect(all.count <= lesson.mostRequests(order), "\(name) paused at segment \(index): \(all)")
        }
    }

    @Test(
        "a server error at each segment, retried: the bytes of an uninterrupted download, and one request more",
        arguments: [
            "disc-encoders", "cmaf", "packed-aac", "aes-rotation", "webvtt", "ts-map", "cmaf-renditions-disc",
            "disc-rates", "fmp4-base-offset",
        ])
    @MainActor
    func serverFaultAtEverySegment(name: String) async throws {
        let lesson = try ServedLesson(name)
        let (expected, order) = try await reference(.downloadLesson, lesson)
        for (index, failing) in order.enumerated() {
            let clock = ManualClock()
            let transport = InMemoryHTTPTransport(clock: clock)
            lesson.serve(
                on: transport, failing: failing,
                with: .response(status: 503, headers: ["Retry-After": "0"], body: Data("busy".utf8)))
            let folder = temporaryFolder("lesson-fault")
            let downloader = MediaDownloader(
                engine: DownloadEngine(
                    concurrency: 2, retry: RetryPolicy(maximumAttempts: 2, initialDelay: .zero, jitter: 0),
                    clock: clock, transport: transport))
            let result = try await downloader.downloadLesson(from: lesson.entry, to: folder.appendingPathComponent("l"))
                .result()
            #expect(try Data(contentsOf: result.file) == expected, "\(name): 503 at segment \(index)")
            let all = transport.requests.compactMap(lesson.key(of:))
            #expect(all.count == order.count + 1, "\(name): 503 at segment \(index): \(all)")
            #expect(files(in: folder) == [result.file.lastPathComponent])
        }
    }

    @Test(
        "a lasting server error at each segment: a typed error and no file; the next download fetches only what was missing",
        arguments: ["disc-encoders", "cmaf"])
    @MainActor
    func lastingFaultAtEverySegment(name: String) async throws {
        let lesson = try ServedLesson(name)
        let (expected, order) = try await reference(.downloadLesson, lesson)
        for (index, failing) in order.enumerated() {
            let clock = ManualClock()
            let transport = InMemoryHTTPTransport(clock: clock)
            lesson.serve(on: transport, failing: failing, with: .response(status: 404))
            let folder = temporaryFolder("lesson-lasting")
            let downloader = MediaDownloader(
                engine: DownloadEngine(concurrency: 2, retry: .none, clock: clock, transport: transport))
            let destination = folder.appendingPathComponent("lesson")
            do {
                _ = try await downloader.downloadLesson(from: lesson.entry, to: destination).result()
                Issue.record("\(name): a 404 at segment \(index) succeeded")
            } catch {
                #expect(error.kind == .httpStatus(404), "\(name): 404 at segment \(index): \(error)")
            }
            #expect(files(in: folder).filter { !$0.hasPrefix(".") }.isEmpty)
            let before = transport.requests.count
            let result = try await downloader.downloadLesson(from: lesson.entry, to: destination).result()
            #expect(try Data(contentsOf: result.file) == expected, "\(name): 404 at segment \(index)")
            let resumed = transport.requests[before...].compactMap(lesson.key(of:))
            #expect(lesson.kept(before: index, in: order).isDisjoint(with: resumed), "\(name): 404 at \(index)")
            #expect(files(in: folder) == [result.file.lastPathComponent])
        }
    }

    @Test(
        "RFC 9110 §15.6.4: a 503 with Retry-After to each playlist (and so to the probe) is retried through the one policy",
        arguments: [
            "cmaf/master.m3u8", "cmaf/video/index.m3u8", "cmaf/audio_en/index.m3u8", "disc-encoders/index.m3u8",
        ])
    @MainActor
    func playlistFaults(path: String) async throws {
        let parts = path.split(separator: "/", maxSplits: 1).map(String.init)
        let lesson = try ServedLesson(parts[0])
        let (expected, _) = try await reference(.downloadLesson, lesson)
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        lesson.serve(
            on: transport, failing: parts[1],
            with: .response(status: 503, headers: ["Retry-After": "0"], body: Data("busy".utf8)))
        let folder = temporaryFolder("lesson-playlist-fault")
        let downloader = MediaDownloader(
            engine: DownloadEngine(
                concurrency: 2, retry: RetryPolicy(maximumAttempts: 2, initialDelay: .zero, jitter: 0), clock: clock,
                transport: transport))
        let result = try await downloader.downloadLesson(from: lesson.entry, to: folder.appendingPathComponent("l"))
            .result()
        #expect(try Data(contentsOf: result.file) == expected)
        let asked = transport.requests.filter { $0.url?.path.hasSuffix(parts[1]) == true }.count
        #expect(asked == 2)
    }

    @Test(
        "progress: expected bytes estimated before the first segment, a fraction that never goes back across a pause, 1 at the end",
        arguments: ["disc-encoders", "cmaf"])
    @MainActor
    func progressAcrossPause(name: String) async throws {
        let lesson = try ServedLesson(name)
        let (_, order) = try await reference(.downloadLesson, lesson)
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        lesson.serve(on: transport, holding: order[order.count / 2])
        let folder = temporaryFolder("lesson-progress")
        let downloader = MediaDownloader(
            engine: DownloadEngine(concurrency: 2, retry: .none, clock: clock, transport: transport))
        let destination = folder.appendingPathComponent("lesson")
        let first = downloader.downloadLesson(from: lesson.entry, to: destination)
        let firstReports = Task { await Self.collect(first.progress) }
        await clock.waitForSleepers(count: 1)
        first.pause()
        await #expect(throws: DownloadError(.paused)) { try await first.result() }
        let resumed = downloader.downloadLesson(from: lesson.entry, to: destination)
        let resumedReports = Task { await Self.collect(resumed.progress) }
        let result = try await resumed.result()
        let reports = await firstReports.value + resumedReports.value
        let fractions = reports.map(\.fraction)
        #expect(zip(fractions, fractions.dropFirst()).allSatisfy { $0 <= $1 }, "\(fractions)")
        #expect(fractions.last == 1)
        #expect(fractions.dropLast().allSatisfy { $0 < 1 })
        // With BANDWIDTH (a multivariant playlist), the total is estimated before the first
        // segment's bytes; without, from the first segment done on.
        if lesson.files["master.m3u8"] != nil {
            let early = try #require(reports.first { $0.bytesReceived > 0 })
            #expect(early.bytesExpected != nil)
        } else {
            #expect(reports.filter { $0.partsCompleted > 0 }.allSatisfy { $0.bytesExpected != nil })
        }
        #expect(reports.last?.bytesExpected == reports.last?.bytesReceived)
        #expect(result.byteCount == UInt64(try Data(contentsOf: result.file).count))
    }

    /// Every report of `progress` until it ends.
    nonisolated static func collect(_ progress: AsyncStream<DownloadProgress>) async -> [DownloadProgress] {
        var reports: [DownloadProgress] = []
        for await report in progress { reports.append(report) }
        return reports
    }

    @Test(
        "too little free space is a typed error: before the first byte with BANDWIDTH, after the first segment without; nothing is left behind",
        arguments: [("cmaf", true), ("disc-encoders", false)])
    @MainActor
    func storageCheck(name: String, beforeFirstSegment: Bool) async throws {
        let lesson = try ServedLesson(name)
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        lesson.serve(on: transport)
        let folder = temporaryFolder("lesson-storage")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let downloader = MediaDownloader(
            engine: DownloadEngine(
                concurrency: 1, retry: .none, clock: clock, fileSystem: TestFileSystem(freeSpace: 1_000),
                transport: transport))
        do {
            _ = try await downloader.downloadLesson(from: lesson.entry, to: folder.appendingPathComponent("l")).result()
            Issue.record("downloaded into 1,000 free bytes")
        } catch {
            guard case .insufficientStorage(let needed, let available) = error.kind else {
                Issue.record("\(error)")
                return
            }
            #expect(available == 1_000)
            #expect(needed > 1_000)
        }
        let segments = transport.requests.compactMap(lesson.key(of:)).filter { !lesson.isFetchedAgain($0) }
        #expect(segments.count <= (beforeFirstSegment ? 0 : 2), "\(segments)")
        #expect(files(in: folder).isEmpty)
    }

    @Test("downloadFile paused with each range in flight: the resume asks only for what was missing, byte-identical")
    func fileAtEveryPart() async throws {
        let resource = resourceBytes(40_000, seed: 7)
        let url = URL(literal: "https://cdn.example/lesson.mp4")
        for held in 0..<4 {
            let clock = ManualClock()
            let transport = InMemoryHTTPTransport(clock: clock)
            let heldRange = "bytes=\(held * 10_000)-\(held * 10_000 + 9_999)"
            let released = LockedState(false)
            transport.stub(
                url,
                reply: .handler { request in
                    let isHeld = request.value(forHTTPHeaderField: "Range") == heldRange
                    let wait = isHeld && !released.withLock { $0 }
                    return .resource(resource, headers: ["ETag": "\"v1\""], latency: wait ? .seconds(3_600) : .zero)
                })
            let folder = temporaryFolder("file-pause")
            let destination = folder.appendingPathComponent("lesson.mp4")
            let downloader = MediaDownloader(
                engine: DownloadEngine(concurrency: 2, retry: .none, clock: clock, transport: transport))
            let first = downloader.downloadFile(from: url, to: destination, chunkSize: 10_000)
            await clock.waitForSleepers(count: 1)
            // With two transfers, the range two places before the held one may still be on its
            // way when the held one is asked for (the one between them finished first): the
            // pause comes once it is written, as the checks below assume.
            for await progress in first.progress where progress.partsCompleted >= max(0, held - 1) { break }
            first.pause()
            await #expect(throws: DownloadError(.paused)) { try await first.result() }
            released.withLock { $0 = true }
            let before = transport.requests.count
            _ = try await downloader.downloadFile(from: url, to: destination, chunkSize: 10_000).result()
            #expect(try Data(contentsOf: destination) == resource, "paused with range \(held) in flight")
            let ranges = transport.requests[before...].compactMap { $0.value(forHTTPHeaderField: "Range") }
            // Ranges finished two places before the held one are never asked for again.
            for done in 0..<max(0, held - 1) {
                #expect(!ranges.contains("bytes=\(done * 10_000)-\(done * 10_000 + 9_999)"), "held \(held): \(ranges)")
            }
            #expect(ranges.contains(heldRange))
        }
    }

    @Test(
        "absurd sizes in a playlist (19-digit byte ranges, EXTINF of 10¹⁷ s with and without BANDWIDTH) are a typed error, never a trap",
        arguments: [
            (
                "#EXTM3U\n#EXT-X-VERSION:4\n#EXT-X-TARGETDURATION:2\n#EXTINF:1,\n#EXT-X-BYTERANGE:9999999999999999999@0\nseg.ts\n#EXTINF:1,\n#EXT-X-BYTERANGE:9999999999999999999@0\nseg.ts\n#EXT-X-ENDLIST\n",
                false
            ),
            (
                "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:100000000000000000,\nseg.ts\n#EXTINF:100000000000000000,\nseg.ts\n#EXT-X-ENDLIST\n",
                true
            ),
            (
                "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:100000000000000000,\nseg.ts\n#EXTINF:1e308,\nseg.ts\n#EXT-X-ENDLIST\n",
                false
            ),
        ])
    @MainActor
    func absurdSizes(media: String, withBandwidth: Bool) async throws {
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        let base = URL(literal: "https://lessons.example/absurd/")
        let segment = try Lessons.data("disc-same/a0.ts")
        transport.stub(base.appendingPathComponent("seg.ts"), reply: .resource(segment))
        transport.stub(base.appendingPathComponent("media.m3u8"), reply: .response(status: 200, body: Data(media.utf8)))
        let master = "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=800000\nmedia.m3u8\n"
        transport.stub(
            base.appendingPathComponent("master.m3u8"), reply: .response(status: 200, body: Data(master.utf8)))
        let folder = temporaryFolder("lesson-absurd")
        let downloader = MediaDownloader(
            engine: DownloadEngine(concurrency: 1, retry: .none, clock: clock, transport: transport))
        let entry = base.appendingPathComponent(withBandwidth ? "master.m3u8" : "media.m3u8")
        do {
            let result = try await downloader.downloadLesson(from: entry, to: folder.appendingPathComponent("l"))
                .result()
            Issue.record("downloaded \(result.byteCount) bytes of an absurd lesson")
        } catch {
            // A typed error of the engine: too large for the disk, or a playlist refused.
            #expect(!error.description.isEmpty)
        }
        #expect(files(in: folder).filter { !$0.hasPrefix(".") }.isEmpty)
    }

    // MARK: Kills and a full disk

    struct Killed: Error {}

    /// The file operations of an uninterrupted one-transfer download of `lesson` into `folder`.
    func operations(_ lesson: ServedLesson) async throws -> (
        count: Int, writes: Int, expected: Data, lastCheckpoint: Int
    ) {
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        lesson.serve(on: transport)
        let folder = temporaryFolder("lesson-operations")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let log = LockedState<[(operation: FileOperation, file: String)]>([])
        let recording = TestFileSystem(plan: { operation, file in
            log.withLock { $0.append((operation, file.lastPathComponent)) }
        })
        let result = try await oneTransfer(transport, clock, recording).downloadLesson(
            from: lesson.entry, to: folder.appendingPathComponent("lesson")
        ).result()
        let operations = log.withLock { $0 }
        let writes = operations.filter { [.create, .write, .flush, .rename].contains($0.operation) }.count
        // The journal's last flush: every segment is checkpointed after it.
        let lastCheckpoint =
            (operations.lastIndex { $0.operation == .flush && $0.file.hasSuffix(".journal") } ?? operations.count) + 1
        return (operations.count, writes, try Data(contentsOf: result.file), lastCheckpoint)
    }

    /// A transport serving `lesson` on a new clock, and an empty folder to download it into.
    func fresh(_ lesson: ServedLesson, _ label: String) throws -> (
        clock: ManualClock, transport: InMemoryHTTPTransport<ManualClock>, folder: URL, destination: URL
    ) {
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        lesson.serve(on: transport)
        let folder = temporaryFolder(label)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return (clock, transport, folder, folder.appendingPathComponent("lesson"))
    }

    /// A file system whose operations throw `error` from the `n`-th on, counting only the kinds
    /// in `counted` (every kind when `nil`): a kill, or a disk that fills.
    func failOperations(
        from n: Int, counting counted: Set<FileOperation>? = nil, with error: any Error & Sendable
    ) -> TestFileSystem {
        let count = LockedState(0)
        return TestFileSystem(plan: { operation, _ in
            guard counted?.contains(operation) ?? true else { return }
            let number = count.withLock {
                $0 += 1
                return $0
            }
            if number >= n { throw error }
        })
    }

    func oneTransfer(
        _ transport: InMemoryHTTPTransport<ManualClock>, _ clock: ManualClock,
        _ fileSystem: any DownloadFileSystem = LocalFileSystem()
    ) -> MediaDownloader<ManualClock> {
        MediaDownloader(
            engine: DownloadEngine(
                concurrency: 1, retry: .none, clock: clock, fileSystem: fileSystem, transport: transport))
    }

    @Test(
        "killed before the N-th file operation of a lesson's remux, for every N: no file or the exact one, and the next run ends exact",
        arguments: [
            "disc-encoders", "cmaf", "aes-rotation", "webvtt", "ts-map", "cmaf-renditions-disc", "disc-rates",
            "fmp4-base-offset",
        ])
    func killedAtEveryOperation(name: String) async throws {
        let lesson = try ServedLesson(name)
        let (total, _, expected, lastCheckpoint) = try await operations(lesson)
        #expect(total >= 10)
        for n in 1...total {
            let (clock, transport, folder, destination) = try fresh(lesson, "lesson-kill")
            let killed = failOperations(from: n, with: Killed())
            _ = try? await oneTransfer(transport, clock, killed).downloadLesson(from: lesson.entry, to: destination)
                .result()
            let final = folder.appendingPathComponent("lesson.mp4")
            if FileManager.default.fileExists(atPath: final.path) {
                #expect(try Data(contentsOf: final) == expected, "\(name): killed at operation \(n)")
            }
            let before = transport.requests.count
            let result = try await oneTransfer(transport, clock).downloadLesson(from: lesson.entry, to: destination)
                .result()
            #expect(try Data(contentsOf: result.file) == expected, "\(name): after a kill at operation \(n)")
            #expect(files(in: folder) == ["lesson.mp4"], "\(name): after a kill at operation \(n)")
            // Killed once every segment was checkpointed (while the index was written, say), the
            // next run fetches no segment again.
            if n > lastCheckpoint {
                let again = transport.requests[before...].compactMap(lesson.key(of:)).filter {
                    !lesson.isFetchedAgain($0)
                }
                #expect(again.isEmpty, "\(name): killed at operation \(n) of \(total), fetched \(again) again")
            }
        }
    }

    @Test(
        "the disk full from the N-th write of a lesson's remux on, for every N: a typed file error, no file; with space back, the exact file",
        arguments: ["disc-encoders"])
    func diskFullAtEveryWrite(name: String) async throws {
        let lesson = try ServedLesson(name)
        let (_, writes, expected, _) = try await operations(lesson)
        for n in 1...writes {
            let (clock, transport, folder, destination) = try fresh(lesson, "lesson-full")
            let full = failOperations(
                from: n, counting: [.create, .write, .flush, .rename], with: CocoaError(.fileWriteOutOfSpace))
            do {
                _ = try await oneTransfer(transport, clock, full).downloadLesson(from: lesson.entry, to: destination)
                    .result()
                Issue.record("\(name): succeeded with the disk full from write \(n)")
            } catch {
                guard case .file = error.kind else {
                    Issue.record("\(name): write \(n): \(error)")
                    continue
                }
            }
            #expect(files(in: folder).filter { !$0.hasPrefix(".") }.isEmpty, "\(name): disk full from write \(n)")
            let result = try await oneTransfer(transport, clock).downloadLesson(from: lesson.entry, to: destination)
                .result()
            #expect(try Data(contentsOf: result.file) == expected, "\(name): after the disk filled at write \(n)")
            #expect(files(in: folder) == ["lesson.mp4"], "\(name): after the disk filled at write \(n)")
        }
    }
}

/// A downloader's audio gap policy, through a download and a resume.
@Suite("Audio gaps in a downloaded lesson")
struct AudioGapDownloadTests {
    @Test(
        "RFC 8216 §6.3.3: a downloader's audio gap policy decides a lesson's drift at its end, as the remuxer's tests state it",
        arguments: ["disc-encoders", "cmaf-disc", "ts-renditions-disc", "cmaf-renditions-disc", "disc-rates"],
        [SegmentRemuxer.GapPolicy.keepTimestamps, .fillWithSilence])
    func policyDecidesDrift(name: String, gaps: SegmentRemuxer.GapPolicy) async throws {
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        let lesson = try ServedLesson(name)
        lesson.serve(on: transport)
        let downloader = MediaDownloader(
            engine: DownloadEngine(concurrency: 2, clock: clock, transport: transport), audioGaps: gaps)
        let folder = temporaryFolder("gaps-\(name)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try await downloader.downloadLesson(from: lesson.entry, to: folder.appendingPathComponent("l"))
            .result()
        let file = try MP4Inspector(url: result.file)
        let stated = try #require(LessonComparison.drifts.first { $0.name == name })
        let expected = try #require(gaps == .keepTimestamps ? stated.keepingTimestamps : stated.fillingWithSilence)
        let drift = try LessonComparison.drift(file, as: name)
        #expect(abs(drift.seconds * 1_000_000 - Double(expected)) < 1, "\(name) \(gaps): \(drift.seconds) s")
        // Silence adds frames to the source's; kept timestamps add none.
        let written = file.tracks("soun").first?.samples.count ?? 0
        let source = try LessonComparison.sourceFrames(name, kind: "audio").count
        #expect(gaps == .keepTimestamps ? written == source : written > source, "\(name): \(written) of \(source)")
    }

    @Test(
        "a lesson paused while kept timestamps were its policy, resumed by a downloader that fills gaps with silence: it starts again, and ends as a fresh download with silence"
    )
    @MainActor
    func resumeWithOtherPolicyStartsAgain() async throws {
        let lesson = try ServedLesson("disc-encoders")
        func downloader(
            _ transport: InMemoryHTTPTransport<ManualClock>, _ clock: ManualClock, _ gaps: SegmentRemuxer.GapPolicy
        ) -> MediaDownloader<ManualClock> {
            MediaDownloader(engine: DownloadEngine(concurrency: 2, clock: clock, transport: transport), audioGaps: gaps)
        }
        let folder = temporaryFolder("gaps-resume")
        defer { try? FileManager.default.removeItem(at: folder) }
        // The reference: a fresh download filling gaps.
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        lesson.serve(on: transport)
        let reference = try await downloader(transport, clock, .fillWithSilence)
            .downloadLesson(from: lesson.entry, to: folder.appendingPathComponent("reference")).result()
        // Paused with the last segment in flight, everything before it checkpointed.
        let heldClock = ManualClock()
        let held = InMemoryHTTPTransport(clock: heldClock)
        lesson.serve(on: held, holding: "b1.ts")
        let destination = folder.appendingPathComponent("lesson")
        let first = downloader(held, heldClock, .keepTimestamps).downloadLesson(from: lesson.entry, to: destination)
        await heldClock.waitForSleepers(count: 1)
        first.pause()
        await #expect(throws: DownloadError.self) { _ = try await first.result() }
        let before = held.requests.count
        let resumed = try await downloader(held, heldClock, .fillWithSilence)
            .downloadLesson(from: lesson.entry, to: destination).result()
        #expect(try Data(contentsOf: resumed.file) == Data(contentsOf: reference.file))
        // Started again: a0.ts was fetched a second time.
        #expect(held.requests[before...].contains { $0.url?.lastPathComponent == "a0.ts" })
    }
}
