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

/// Serves every file of the fixture lesson `name` under `/name/` and returns its entry URL (the
/// multivariant playlist when it has one).
func serveLesson(_ name: String, on server: LoopbackHTTPServer) throws -> URL {
    let folder = Lessons.loader.folder.appendingPathComponent(name)
    let walker = try #require(FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil))
    var paths: [String] = []
    for case let file as URL in walker where !file.hasDirectoryPath {
        let relative = String(file.standardizedFileURL.path.dropFirst(folder.standardizedFileURL.path.count + 1))
        server.route("/\(name)/\(relative)", .file(try Data(contentsOf: file)))
        paths.append(relative)
    }
    return server.url("/\(name)/" + (paths.contains("master.m3u8") ? "master.m3u8" : "index.m3u8"))
}

/// `count` bytes that read as an MP4 file (an `ftyp` box first), the rest pseudo-random.
func mp4Bytes(_ count: Int, seed: UInt64) -> Data {
    let head = Data([0, 0, 0, 16]) + Data("ftypisom".utf8) + Data([0, 0, 2, 0])
    return head + resourceBytes(count - head.count, seed: seed)
}

/// An engine over a fresh URLSession that does not retry, each transfer within `loopbackDeadline`.
func loopbackEngine(
    retry: RetryPolicy = .none, fileSystem: any DownloadFileSystem = LocalFileSystem()
) -> DownloadEngine<ContinuousClock> {
    DownloadEngine(
        concurrency: 2, retry: retry, idleTimeout: loopbackDeadline, clock: ContinuousClock(), fileSystem: fileSystem,
        transport: URLSessionTransport(session: URLSession(configuration: .ephemeral)))
}

/// The failure paths a learner meets, provoked for real: a tmpfs that fills while writing, a
/// read-only volume, the statuses of an expired or forbidden URL, a connection closed mid-body,
/// over a real URLSession against a server on 127.0.0.1. Each ends with the category a screen
/// switches on, and a listing of the folder.
@Suite("When downloads fail: each category from its typed cause")
struct FailurePathTests {
    let server: LoopbackHTTPServer

    init() throws {
        server = try LoopbackHTTPServer()
    }

    /// What a job threw.
    func failure(of job: DownloadJob) async -> DownloadError? {
        do {
            _ = try await job.result()
            return nil
        } catch {
            return error
        }
    }

    @Test(
        "the tmpfs tests run where CI requires them (MEDIACORE_REQUIRE_VOLUMES=1): they are never skipped silently there"
    )
    func volumesWhereRequired() {
        if ProcessInfo.processInfo.environment["MEDIACORE_REQUIRE_VOLUMES"] == "1" {
            #expect(
                SmallVolume.isAvailable,
                "this run cannot mount a tmpfs, so the disk-full and read-only tests were skipped")
        }
    }

    @Test(
        "a disk that fills while a file is written is storage full (ENOSPC), not other",
        .enabled(if: SmallVolume.isAvailable, "needs a tmpfs (root on Linux)"))
    func diskFillsWritingAFile() async throws {
        defer { server.stop() }
        let volume = try SmallVolume(bytes: 128 << 10)
        defer { volume.unmount() }
        // The up-front check passes (the size is known and the figure says there is room), so
        // the disk fills while the ranges are written.
        let plenty = TestFileSystem(freeSpace: 1 << 30)
        server.route("/big.mp4", .file(resourceBytes(600_000, seed: 5), etag: "\"v1\""))
        let destination = volume.folder.appendingPathComponent("lesson.mp4")
        let job = MediaDownloader(engine: loopbackEngine(fileSystem: plenty)).downloadFile(
            from: server.url("/big.mp4"), to: destination, chunkSize: 64 << 10)
        let error = try #require(await failure(of: job))
        #expect(error.category == .storageFull, "\(error)")
        guard case .file(_, _, let code) = error.kind else {
            Issue.record("\(error)")
            return
        }
        #expect(code == ENOSPC)
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        // What stays is what a resume uses, once space is freed.
        let left = files(in: volume.folder)
        #expect(left.allSatisfy { name in [".partial", ".journal", ".validators"].contains { name.hasSuffix($0) } })
    }

    @Test(
        "a disk that fills while a lesson is remuxed is storage full, its kind kept through the remuxer",
        .enabled(if: SmallVolume.isAvailable, "needs a tmpfs (root on Linux)"))
    func diskFillsRemuxingALesson() async throws {
        defer { server.stop() }
        let volume = try SmallVolume(bytes: 32 << 10)
        defer { volume.unmount() }
        let entry = try serveLesson("cmaf", on: server)
        let destination = volume.folder.appendingPathComponent("lesson.mp4")
        let job = MediaDownloader(engine: loopbackEngine()).downloadLesson(from: entry, to: destination)
        let error = try #require(await failure(of: job))
        #expect(error.category == .storageFull, "\(error)")
        #expect(!error.description.contains("error 1."), "\(error)")  // not a wrapped NSError's words
        #expect(files(in: volume.folder).allSatisfy { $0.hasPrefix(".lesson.mp4.") }, "\(files(in: volume.folder))")
    }

    @Test(
        "a read-only folder is not writable (EROFS), for a file and for a lesson",
        .enabled(if: SmallVolume.isAvailable, "needs a tmpfs (root on Linux)"))
    func readOnlyFolder() async throws {
        defer { server.stop() }
        let volume = try SmallVolume(bytes: 1 << 20, readOnly: true)
        defer { volume.unmount() }
        server.route("/a.mp4", .file(resourceBytes(20_000, seed: 6)))
        let entry = try serveLesson("packed-aac", on: server)
        let downloader = MediaDownloader(engine: loopbackEngine())
        for job in [
            downloader.downloadFile(from: server.url("/a.mp4"), to: volume.folder.appendingPathComponent("a.mp4")),
            downloader.downloadLesson(from: entry, to: volume.folder.appendingPathComponent("b.m4a")),
        ] {
            let error = try #require(await failure(of: job))
            #expect(error.category == .notWritable, "\(error)")
            guard case .file(_, _, let code) = error.kind else {
                Issue.record("\(error)")
                continue
            }
            #expect(code == EROFS)
        }
        #expect(files(in: volume.folder).isEmpty)
    }

    @Test(
        "an expired or forbidden lesson URL is access denied or not found at the first request, never not media",
        arguments: [
            (401, DownloadError.Category.accessDenied), (403, .accessDenied), (404, .notFound), (410, .notFound),
        ])
    func statusOfTheFirstRequest(status: Int, category: DownloadError.Category) async throws {
        defer { server.stop() }
        // An error page with a body, as CDNs send for an expired signed URL.
        server.route(
            "/signed/lesson.m3u8",
            .response(status: status, headers: ["Content-Type": "text/html"], body: Data("<html>Expired</html>".utf8)))
        let folder = temporaryFolder("first-status")
        let job = MediaDownloader(engine: loopbackEngine()).downloadLesson(
            from: server.url("/signed/lesson.m3u8"), to: folder.appendingPathComponent("lesson.mp4"))
        let error = try #require(await failure(of: job))
        #expect(error.kind == .httpStatus(status))
        #expect(error.category == category)
        #expect(files(in: folder).isEmpty)
    }

    @Test("a connection closed in the middle of a body is offline, as a lost connection is")
    func connectionClosedMidBody() async throws {
        defer { server.stop() }
        server.route("/lesson.mp4", .file(resourceBytes(300_000, seed: 7)))
        server.script("/lesson.mp4", [nil, .closeAfter(bytes: 1_000)])
        let job = MediaDownloader(engine: loopbackEngine()).downloadFile(
            from: server.url("/lesson.mp4"), to: temporaryFolder("closed").appendingPathComponent("lesson.mp4"),
            chunkSize: 300_000)
        let error = try #require(await failure(of: job))
        #expect(error.category == .offline, "\(error) \(error.kind)")
    }

    @Test("a captive portal's page answered with 200 is not media, and nothing is saved")
    func captivePortal() async throws {
        defer { server.stop() }
        server.route(
            "/lesson.m3u8",
            .response(
                status: 200, headers: ["Content-Type": "text/html"],
                body: Data("<!DOCTYPE html><html><body>Sign in to the Wi-Fi</body></html>".utf8)))
        let folder = temporaryFolder("portal")
        let job = MediaDownloader(engine: loopbackEngine()).downloadLesson(
            from: server.url("/lesson.m3u8"), to: folder.appendingPathComponent("lesson.mp4"))
        let error = try #require(await failure(of: job))
        #expect(error.category == .notMedia)
        #expect(files(in: folder).isEmpty)
    }
}

/// The offline library and its screen model when a change cannot be saved, and when a file goes
/// behind the library's back.
@Suite("The offline library never stuck, never lying")
struct LibraryTruthTests {
    let server: LoopbackHTTPServer

    init() throws {
        server = try LoopbackHTTPServer()
    }

    func library(in folder: URL) -> OfflineLibrary {
        let downloader = MediaDownloader(engine: loopbackEngine())
        return OfflineLibrary(directory: folder) { remote, destination in
            downloader.downloadLesson(from: remote, to: destination)
        }
    }

    @Test(
        "a read-only library folder: the tap fails as not writable, the item stays as it was, the failure stays shown, and a second tap starts again",
        .enabled(if: SmallVolume.isAvailable, "needs a tmpfs (root on Linux)"))
    @MainActor
    func readOnlyLibrary() async throws {
        defer { server.stop() }
        server.route("/lesson.mp4", .file(mp4Bytes(50_000, seed: 8)))
        let volume = try SmallVolume(bytes: 1 << 20)
        defer { volume.unmount() }
        try volume.remount(readOnly: true)
        let library = library(in: volume.folder)
        let model = LessonDownloadModel(library: library, lessonID: "7", remote: server.url("/lesson.mp4"))
        await model.download()
        guard case .failed(let failure) = model.phase else {
            Issue.record("\(model.phase)")
            return
        }
        #expect(failure.category == .notWritable)
        #expect(await library.state(of: "7") == .notDownloaded)
        await model.waitUntilSettled()
        #expect(model.phase == .failed(failure))  // not the stale "not downloaded"
        #expect(server.requests.isEmpty)
        try volume.remount(readOnly: false)
        await model.download()
        await model.waitUntilSettled()
        guard case .downloaded(let file, 50_000) = model.phase else {
            Issue.record("\(model.phase)")
            return
        }
        #expect(try Data(contentsOf: file) == mp4Bytes(50_000, seed: 8))
    }

    @Test("the model of a lesson whose file was removed behind the library's back shows it not downloaded")
    @MainActor
    func modelAfterRemoval() async throws {
        defer { server.stop() }
        server.route("/lesson.mp4", .file(mp4Bytes(30_000, seed: 16)))
        let library = library(in: temporaryFolder("model-truth"))
        let model = LessonDownloadModel(library: library, lessonID: "4", remote: server.url("/lesson.mp4"))
        await model.download()
        await model.waitUntilSettled()
        guard case .downloaded(let file, _) = model.phase else {
            Issue.record("\(model.phase)")
            return
        }
        try FileManager.default.removeItem(at: file)
        await model.waitUntilSettled()
        #expect(model.phase == .notDownloaded)
    }

    @Test(
        "a state file that is there but cannot be read now is not an empty library: nothing is saved over it, and it is read on the next use"
    )
    func unreadableStateFile() async throws {
        defer { server.stop() }
        server.route("/lesson.mp4", .file(mp4Bytes(30_000, seed: 17)))
        let folder = temporaryFolder("library-unreadable")
        let first = library(in: folder)
        try await first.download("1", from: server.url("/lesson.mp4"))
        await first.waitForDownload("1")
        let stateFile = folder.appendingPathComponent("offline-library.json")
        let saved = try Data(contentsOf: stateFile)
        // A state file that cannot be read for now (as a protected file before first unlock):
        // here a folder in its place, which reading fails with EISDIR.
        try FileManager.default.moveItem(at: stateFile, to: folder.appendingPathComponent("saved.json"))
        try FileManager.default.createDirectory(at: stateFile, withIntermediateDirectories: false)
        let relaunched = library(in: folder)
        await #expect(throws: OfflineLibrary.LibraryError.self) { try await relaunched.load() }
        await #expect(throws: OfflineLibrary.LibraryError.self) {
            try await relaunched.download("2", from: self.server.url("/lesson.mp4"))
        }
        #expect(!files(in: folder).contains { $0.hasPrefix("offline-library.json.damaged") })
        // Readable again: the next use reads it, and the download is there.
        try FileManager.default.removeItem(at: stateFile)
        try saved.write(to: stateFile)
        #expect(await relaunched.localFile(of: "1") != nil)
    }

    @Test("a state file of a newer version is kept for it: downloads refuse to save over it")
    func newerVersion() async throws {
        defer { server.stop() }
        let folder = temporaryFolder("library-newer")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let stateFile = folder.appendingPathComponent("offline-library.json")
        let newer = Data(#"{"version":2,"items":{},"more":"from the future"}"#.utf8)
        try newer.write(to: stateFile)
        let library = library(in: folder)
        await #expect(throws: OfflineLibrary.LibraryError(.newerVersion(2), path: stateFile.path)) {
            try await library.download("1", from: self.server.url("/lesson.mp4"))
        }
        #expect(try Data(contentsOf: stateFile) == newer)
        server.stop()
    }

    @Test(
        "downloads completed before records were kept get one at the next launch, and are found after a damaged state file"
    )
    func recordsForEarlierDownloads() async throws {
        defer { server.stop() }
        server.route("/lesson.mp4", .file(mp4Bytes(30_000, seed: 18)))
        let folder = temporaryFolder("library-records")
        let first = library(in: folder)
        try await first.download("1", from: server.url("/lesson.mp4"))
        await first.waitForDownload("1")
        // As an earlier version left it: no record beside the file.
        for name in files(in: folder) where name.hasSuffix(".item") {
            try FileManager.default.removeItem(at: folder.appendingPathComponent(name))
        }
        try await library(in: folder).load()
        #expect(files(in: folder).contains { $0.hasSuffix(".item") })
        try Data("damaged".utf8).write(to: folder.appendingPathComponent("offline-library.json"))
        let notices = try await library(in: folder).load()
        guard case .stateFileRecovered(_, _, let recovered, let unclaimed)? = notices.first else {
            Issue.record("\(notices)")
            return
        }
        #expect(recovered == ["1"] && unclaimed.isEmpty)
    }

    @Test(
        "a download that completed while its state could not be saved is downloaded at the next launch, not fetched again"
    )
    func completedButUnsaved() async throws {
        defer { server.stop() }
        server.route("/lesson.mp4", .file(mp4Bytes(30_000, seed: 19)))
        let folder = temporaryFolder("library-unsaved")
        let first = library(in: folder)
        try await first.download("1", from: server.url("/lesson.mp4"))
        await first.waitForDownload("1")
        // The state file as the save before completion left it: downloading.
        let stateFile = folder.appendingPathComponent("offline-library.json")
        let text = try String(contentsOf: stateFile, encoding: .utf8)
        let downloading = try #require(
            text.range(of: #"\{"downloaded":\{[^}]*\}\}"#, options: .regularExpression).map {
                text.replacingCharacters(in: $0, with: #"{"downloading":{"fraction":0.9}}"#)
            })
        try Data(downloading.utf8).write(to: stateFile)
        let before = server.requests.count
        let relaunched = library(in: folder)
        guard case .downloaded(_, 30_000) = await relaunched.state(of: "1") else {
            Issue.record("\(await relaunched.state(of: "1"))")
            return
        }
        #expect(server.requests.count == before)
    }

    @Test("a downloaded file removed behind the library's back is noticed on the next access, and announced")
    func fileRemovedBehindItsBack() async throws {
        defer { server.stop() }
        server.route("/lesson.mp4", .file(mp4Bytes(30_000, seed: 9)))
        let folder = temporaryFolder("library-truth")
        let library = library(in: folder)
        try await library.download("3", from: server.url("/lesson.mp4"))
        await library.waitForDownload("3")
        let file = try #require(await library.localFile(of: "3"))
        #expect(await library.totalBytes == 30_000)
        let updates = library.updates
        try FileManager.default.removeItem(at: file)
        #expect(await library.localFile(of: "3") == nil)
        #expect(await library.state(of: "3") == .notDownloaded)
        #expect(await library.totalBytes == 0)
        var seen: [OfflineLibrary.ItemState] = []
        for await update in updates where update.id == "3" {
            seen.append(update.state)
            if update.state == .notDownloaded { break }
        }
        #expect(seen.last == .notDownloaded)
        // Its record went with it: nothing is left behind.
        #expect(files(in: folder).filter { !$0.hasPrefix("offline-library") }.isEmpty)
        // And downloading again works.
        try await library.download("3", from: server.url("/lesson.mp4"))
        await library.waitForDownload("3")
        #expect(await library.localFile(of: "3") != nil)
    }
}

/// A single file paused mid-part resumes from the bytes it has, not from the part's start.
@Suite("Pausing a single-file lesson keeps its bytes")
struct FilePauseTests {
    let server: LoopbackHTTPServer
    let file = mp4Bytes(3_000_000, seed: 11)

    init() throws {
        server = try LoopbackHTTPServer()
    }

    /// The staging file that appears in `folder`, once it does (``waitUntil(changesIn:satisfy:)``:
    /// at each change of the folder, never by polling the pool).
    func waitForPartialFile(in folder: URL) async -> URL? {
        let partial: @Sendable () -> String? = { files(in: folder).first { $0.hasSuffix(".partial") } }
        guard await waitUntil(changesIn: folder, satisfy: { partial() != nil }), let name = partial() else {
            return nil
        }
        return folder.appendingPathComponent(name)
    }

    /// Whether `url` comes to hold at least `bytes` bytes (the transfer wrote them): read again
    /// at each change of its folder.
    func waitForFile(_ url: URL, toHold bytes: Int) async -> Bool {
        await waitUntil(changesIn: url.deletingLastPathComponent()) {
            ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? Int ?? 0) >= bytes
        }
    }

    @Test(
        "paused at 15% of a 3 MB file in one 4 MiB part: the resume asks for the rest with If-Range, and its fraction starts where the pause left it"
    )
    func pausedMidPart() async throws {
        defer { server.stop() }
        server.route("/lesson.mp4", .file(file, etag: "\"v1\""))
        // The probe answers; the part's transfer sends 460,000 bytes (15.3%) and stalls.
        server.script("/lesson.mp4", [nil, .stallAfter(bytes: 460_000)])
        let folder = temporaryFolder("file-pause")
        let destination = folder.appendingPathComponent("lesson.mp4")
        let downloader = MediaDownloader(engine: loopbackEngine())
        let first = downloader.downloadFile(from: server.url("/lesson.mp4"), to: destination)
        try #require(await waitForFile(folder.appendingPathComponent(".lesson.mp4.partial"), toHold: 460_000))
        first.pause()
        await #expect(throws: DownloadError(.paused)) { try await first.result() }
        let journal = try String(contentsOf: folder.appendingPathComponent(".lesson.mp4.journal"), encoding: .utf8)
        #expect(journal.contains("\np 0 460000 "), "\(journal)")

        let second = downloader.downloadFile(from: server.url("/lesson.mp4"), to: destination)
        let fractions = Task { await second.progress.reduce(into: [Double]()) { $0.append($1.fraction) } }
        _ = try await second.result()
        #expect(try Data(contentsOf: destination) == file)
        let seen = await fractions.value
        #expect(try #require(seen.first) >= 460_000.0 / 3_000_000.0, "\(seen)")
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0 <= $1 })
        let resumed = try #require(server.requests.last)
        #expect(resumed.headers["range"] == "bytes=460000-2999999")
        #expect(resumed.headers["if-range"] == "\"v1\"")
        #expect(files(in: folder) == ["lesson.mp4"])
    }

    @Test(
        "without a validator (no ETag, no Last-Modified), a stopped part keeps nothing: the rest could be another version's"
    )
    func noValidatorNoPrefix() async throws {
        defer { server.stop() }
        server.route("/lesson.mp4", .file(file))
        server.script("/lesson.mp4", [nil, .stallAfter(bytes: 460_000)])
        let folder = temporaryFolder("file-pause-unvalidated")
        let destination = folder.appendingPathComponent("lesson.mp4")
        let downloader = MediaDownloader(engine: loopbackEngine())
        let first = downloader.downloadFile(from: server.url("/lesson.mp4"), to: destination)
        try #require(await waitForFile(folder.appendingPathComponent(".lesson.mp4.partial"), toHold: 460_000))
        first.pause()
        _ = try? await first.result()
        let journal = try String(contentsOf: folder.appendingPathComponent(".lesson.mp4.journal"), encoding: .utf8)
        #expect(!journal.contains("\np "))
        let changed = mp4Bytes(3_000_000, seed: 20)
        server.route("/lesson.mp4", .file(changed))
        _ = try await downloader.downloadFile(from: server.url("/lesson.mp4"), to: destination).result()
        #expect(try Data(contentsOf: destination) == changed)
        #expect(server.requests.last?.headers["range"] == "bytes=0-2999999")
    }

    @Test(
        "changed between the pause and the resume (another ETag), the kept bytes are dropped and the file starts over")
    func changedWhilePaused() async throws {
        defer { server.stop() }
        server.route("/lesson.mp4", .file(file, etag: "\"v1\""))
        server.script("/lesson.mp4", [nil, .stallAfter(bytes: 460_000)])
        let folder = temporaryFolder("file-pause-changed")
        let destination = folder.appendingPathComponent("lesson.mp4")
        let downloader = MediaDownloader(engine: loopbackEngine())
        let first = downloader.downloadFile(from: server.url("/lesson.mp4"), to: destination)
        try #require(await waitForFile(folder.appendingPathComponent(".lesson.mp4.partial"), toHold: 460_000))
        first.pause()
        _ = try? await first.result()
        let changed = mp4Bytes(3_000_000, seed: 12)
        server.route("/lesson.mp4", .file(changed, etag: "\"v2\""))
        _ = try await downloader.downloadFile(from: server.url("/lesson.mp4"), to: destination).result()
        #expect(try Data(contentsOf: destination) == changed)
    }

    @Test("through the library and its model: paused at 15%, the resumed download's phase never shows less")
    @MainActor
    func pausedThroughTheModel() async throws {
        defer { server.stop() }
        server.route("/lesson.mp4", .file(file, etag: "\"v1\""))
        server.script("/lesson.mp4", [nil, .stallAfter(bytes: 460_000)])
        let folder = temporaryFolder("model-pause")
        let downloader = MediaDownloader(engine: loopbackEngine())
        let library = OfflineLibrary(directory: folder) { remote, destination in
            downloader.downloadLesson(from: remote, to: destination)
        }
        let model = LessonDownloadModel(library: library, lessonID: "9", remote: server.url("/lesson.mp4"))
        await model.download()
        let partial = try #require(await waitForPartialFile(in: folder))
        try #require(await waitForFile(partial, toHold: 460_000))
        await model.pause()
        await model.waitUntilSettled()
        #expect(model.phase == .paused)
        // The stop's last report says what was kept.
        #expect(await library.progress(of: "9") == nil)
        let journalName = try #require(files(in: folder).first { $0.hasSuffix(".journal") })
        let journal = try String(contentsOf: folder.appendingPathComponent(journalName), encoding: .utf8)
        #expect(journal.contains("\np 0 460000 "), "\(journal)")
        let reports = library.progressUpdates
        let states = library.updates
        let pausedAt = 460_000.0 / 3_000_000.0
        let watching = Task {
            var seen: [Double] = []
            for await update in states where update.id == "9" {
                if case .downloading(let fraction) = update.state { seen.append(fraction) }
                if case .downloaded = update.state { break }
            }
            return seen
        }
        await model.download()
        if case .downloading(let fraction, _, _) = model.phase { #expect(fraction >= pausedAt * 0.999) }
        var firstFraction: Double?
        for await report in reports where report.id == "9" {
            firstFraction = report.progress.fraction
            break
        }
        #expect(try #require(firstFraction) >= 460_000.0 / 3_000_000.0)
        await model.waitUntilSettled()
        // Every state the library announced after the resume started at the paused fraction.
        let announced = await watching.value
        #expect(announced.dropFirst().allSatisfy { $0 >= pausedAt * 0.999 }, "\(announced)")
        guard case .downloaded(let local, 3_000_000) = model.phase else {
            Issue.record("\(model.phase)")
            return
        }
        #expect(try Data(contentsOf: local) == file)
        #expect(server.requests.last?.headers["range"] == "bytes=460000-2999999")
    }
}

/// After every failure or stop, through every entry point, the folder holds only what a resume
/// will use; giving the download up leaves nothing.
@Suite("Nothing left behind")
struct LeftBehindTests {
    /// How an app starts and gives up a download.
    enum Entry: String, CaseIterable, CustomTestStringConvertible {
        case fileJob, lessonJob, library, model
        var testDescription: String { rawValue }
    }

    /// A fault at a part, and whether the failure it causes is one a resume can use.
    static let faults: [(LoopbackHTTPServer.Fault, keeps: Bool)] = [
        (.status(503), true), (.status(403), true), (.closeAfter(bytes: 500), true), (.status(404), true),
    ]

    /// The hidden files a resume uses.
    static func isStaging(_ name: String) -> Bool {
        name.hasPrefix(".") && [".partial", ".journal", ".validators"].contains { name.hasSuffix($0) }
    }

    @Test(
        "a fault at a part through each entry point: the folder keeps only a resume's files, and giving up removes them",
        arguments: Entry.allCases, 0..<4)
    @MainActor
    func listedAfterEveryFault(entry: Entry, faultIndex: Int) async throws {
        let (fault, keeps) = Self.faults[faultIndex]
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        let folder = temporaryFolder("left-behind")
        let downloader = MediaDownloader(engine: loopbackEngine())
        let remote: URL
        if entry == .fileJob {
            server.route("/lesson.mp4", .file(mp4Bytes(200_000, seed: 13), etag: "\"v1\""))
            server.script("/lesson.mp4", [nil, nil, fault])  // the probe, the first range, then the fault
            remote = server.url("/lesson.mp4")
        } else {
            remote = try serveLesson("cmaf", on: server)
            server.script("/cmaf/video/seg1.m4s", [fault])
        }
        let destination = folder.appendingPathComponent("lesson.mp4")
        let library = OfflineLibrary(directory: folder) { remote, destination in
            downloader.downloadLesson(from: remote, to: destination)
        }
        let model = LessonDownloadModel(library: library, lessonID: "1", remote: remote)
        var job: DownloadJob?
        switch entry {
        case .fileJob:
            job = downloader.downloadFile(from: remote, to: destination, chunkSize: 64 << 10)
        case .lessonJob:
            job = downloader.downloadLesson(from: remote, to: destination)
        case .library:
            try await library.download("1", from: remote)
            await library.waitForDownload("1")
        case .model:
            await model.download()
            await model.waitUntilSettled()
        }
        if let job { _ = try? await job.result() }
        let left = files(in: folder).filter { !$0.hasPrefix("offline-library") }
        #expect(!left.contains { !$0.hasPrefix(".") }, "\(entry) \(fault): a visible file \(left)")
        #expect(left.allSatisfy(Self.isStaging), "\(entry) \(fault): \(left)")
        #expect(left.isEmpty != keeps, "\(entry) \(fault): \(left)")
        switch entry {
        case .fileJob, .lessonJob: await job?.discard()
        case .library: try await library.discard("1")
        case .model: await model.delete()
        }
        #expect(files(in: folder).filter { !$0.hasPrefix("offline-library") }.isEmpty, "\(entry) \(fault)")
    }

    @Test("a cancel while a part is in flight, through each entry point, leaves nothing", arguments: Entry.allCases)
    @MainActor
    func cancelledLeavesNothing(entry: Entry) async throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        let folder = temporaryFolder("cancel-left")
        let downloader = MediaDownloader(engine: loopbackEngine())
        let remote: URL
        let held: String
        if entry == .fileJob {
            server.route("/lesson.mp4", .file(mp4Bytes(200_000, seed: 15), etag: "\"v1\""))
            server.script("/lesson.mp4", [nil, nil, .stallAfter(bytes: 100)])
            remote = server.url("/lesson.mp4")
            held = "/lesson.mp4"
        } else {
            remote = try serveLesson("cmaf", on: server)
            server.script("/cmaf/video/seg1.m4s", [.stallAfter(bytes: 100)])
            held = "/cmaf/video/seg1.m4s"
        }
        let library = OfflineLibrary(directory: folder) { remote, destination in
            downloader.downloadLesson(from: remote, to: destination)
        }
        let model = LessonDownloadModel(library: library, lessonID: "1", remote: remote)
        var job: DownloadJob?
        switch entry {
        case .fileJob:
            job = downloader.downloadFile(
                from: remote, to: folder.appendingPathComponent("lesson.mp4"), chunkSize: 64 << 10)
        case .lessonJob: job = downloader.downloadLesson(from: remote, to: folder.appendingPathComponent("lesson.mp4"))
        case .library: try await library.download("1", from: remote)
        case .model: await model.download()
        }
        // Wait until the held part is being answered, then cancel.
        await server.waitForRequests(count: entry == .fileJob ? 3 : 1, path: held)
        switch entry {
        case .fileJob, .lessonJob:
            job?.cancel()
            _ = try? await job?.result()
        case .library:
            await library.cancel("1")
            await library.waitForDownload("1")
        case .model: await model.cancel()
        }
        #expect(files(in: folder).filter { !$0.hasPrefix("offline-library") }.isEmpty, "\(entry)")
    }

    @Test("discard() of a job interrupted by a crash (a new job for the same file) removes what the old one kept")
    func discardAfterACrash() async throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        server.route("/lesson.mp4", .file(mp4Bytes(200_000, seed: 14), etag: "\"v1\""))
        server.script("/lesson.mp4", [nil, nil, .status(503)])
        let folder = temporaryFolder("discard-crash")
        let destination = folder.appendingPathComponent("lesson.mp4")
        let downloader = MediaDownloader(engine: loopbackEngine())
        _ = try? await downloader.downloadFile(from: server.url("/lesson.mp4"), to: destination, chunkSize: 64 << 10)
            .result()
        #expect(!files(in: folder).isEmpty)
        // A relaunched app that gives the download up without resuming it.
        server.route("/lesson.mp4", .response(status: 404))
        let again = downloader.downloadFile(from: server.url("/lesson.mp4"), to: destination)
        await again.discard()
        #expect(files(in: folder).isEmpty)
    }
}
