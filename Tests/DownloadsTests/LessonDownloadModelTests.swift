import Downloads
import Foundation
import OfflineLessons
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@MainActor
@Suite("LessonDownloadModel")
struct LessonDownloadModelTests {
    let clock = ManualClock()
    let transport: InMemoryHTTPTransport<ManualClock>
    let mediaURL = URL(literal: "https://media.example/lessons/salsa.mp4")
    let file = resourceBytes(10_000, seed: 31)

    init() {
        transport = InMemoryHTTPTransport(clock: clock)
        transport.stub(mediaURL, reply: .resource(file))
    }

    func library(_ folder: URL = temporaryFolder("lesson-model")) -> OfflineLibrary {
        let downloader = MediaDownloader(engine: DownloadEngine(concurrency: 1, clock: clock, transport: transport))
        return OfflineLibrary(directory: folder) { remote, destination in
            downloader.downloadFile(from: remote, to: destination, chunkSize: 2_000)
        }
    }

    @Test("the doc comment's example runs as it shows: downloading with bytes, then downloaded with the file")
    func docExample() async throws {
        let library = library()
        let lesson = (id: "salsa-1", title: "Salsa")
        // example: begin lesson-download-model
        let model = LessonDownloadModel(library: library, lessonID: lesson.id, remote: mediaURL)
        let following = Task { await model.observe() }  // a view's `.task { await model.observe() }`
        await model.download()  // starts it: .downloading(fraction:bytesReceived:bytesExpected:), then .downloaded
        // example: end lesson-download-model
        #expect(await waitUntilObserved { if case .downloaded = model.phase { true } else { false } })
        following.cancel()
        guard case .downloaded(let local, let byteCount) = model.phase else {
            Issue.record("\(model.phase)")
            return
        }
        #expect(byteCount == 10_000)
        #expect(try Data(contentsOf: local) == file)
    }

    /// Starts lesson "1" downloading while it is followed, and returns once the download waits
    /// at its third part: the probe and two parts answer at once, the third waits a second on
    /// the clock. The caller cancels `following`.
    func downloadHeldAtThirdPart() async -> (
        library: OfflineLibrary, model: LessonDownloadModel, following: Task<Void, Never>
    ) {
        let now = InMemoryHTTPTransport<ManualClock>.Reply.resource(file)
        transport.stub(mediaURL, replies: [now, now, now, .resource(file, latency: .seconds(1)), now])
        let library = library()
        let model = LessonDownloadModel(library: library, lessonID: "1", remote: mediaURL)
        let following = Task { await model.observe() }
        let start = clock.now
        await model.download()
        await clock.waitForSleeper(until: start.advanced(by: .seconds(1)))
        return (library, model, following)
    }

    @Test("while downloading, the phase carries the bytes received and expected")
    func bytesWhileDownloading() async throws {
        let (library, model, following) = await downloadHeldAtThirdPart()
        defer { following.cancel() }
        #expect(
            await waitUntilObserved {
                model.phase == .downloading(fraction: 0.4, bytesReceived: 4_000, bytesExpected: 10_000)
            },
            "\(model.phase)")
        clock.advance(by: .seconds(1))
        await library.waitForDownload("1")
        #expect(
            await waitUntilObserved { if case .downloaded(_, 10_000) = model.phase { true } else { false } },
            "\(model.phase)")
    }

    @Test("pause keeps what was downloaded, download resumes; a failure offers retry; delete forgets")
    func pauseRetryDelete() async throws {
        let (library, model, following) = await downloadHeldAtThirdPart()
        defer { following.cancel() }
        await model.pause()
        await library.waitForDownload("1")
        #expect(await waitUntilObserved { model.phase == .paused }, "\(model.phase)")

        transport.stub(mediaURL, reply: .response(status: 404))
        await model.download()
        await library.waitForDownload("1")
        #expect(await waitUntilObserved { if case .failed = model.phase { true } else { false } }, "\(model.phase)")

        transport.stub(mediaURL, reply: .resource(file))
        await model.retry()
        await library.waitForDownload("1")
        #expect(
            await waitUntilObserved { if case .downloaded(_, 10_000) = model.phase { true } else { false } },
            "\(model.phase)")
        // The resume asked only for the bytes the pause had not kept.
        let ranges = transport.requests.compactMap { $0.value(forHTTPHeaderField: "Range") }
        #expect(ranges.filter { $0 == "bytes=0-1999" }.count == 1)

        await model.delete()
        #expect(model.phase == .notDownloaded)
        #expect(await library.state(of: "1") == .notDownloaded)
    }

    @Test(
        "a Download asked for while a pause or a cancel is still stopping the download starts it again once stopped: the last request wins",
        arguments: [true, false])
    func downloadWhileStopping(pausing: Bool) async throws {
        let (library, model, following) = await downloadHeldAtThirdPart()
        defer { following.cancel() }
        // The job is asked to stop; it has usually not stopped when the next request comes
        // (the old library lost that request in every run), and if it has, the request starts
        // a download as any other: either way the last request wins.
        if pausing { await library.pause("1") } else { await library.cancel("1") }
        try await library.download("1", from: mediaURL)
        await library.waitForDownload("1")
        let local = try #require(await library.localFile(of: "1"))
        #expect(try Data(contentsOf: local) == file)
        #expect(
            await waitUntilObserved { if case .downloaded(_, 10_000) = model.phase { true } else { false } },
            "\(model.phase)")
        // A pause kept the first two parts, so they were not asked for again; a cancel did not.
        let firstPart = transport.requests.compactMap { $0.value(forHTTPHeaderField: "Range") }.filter {
            $0 == "bytes=0-1999"
        }
        #expect(firstPart.count == (pausing ? 1 : 2))
    }

    @Test(
        "a cancel after a pause wins, while the pause is still stopping the download or once it has: cancelled, nothing kept",
        arguments: [false, true])
    func cancelAfterPause(pauseDone: Bool) async throws {
        let folder = temporaryFolder("lesson-model-pause-cancel")
        let now = InMemoryHTTPTransport<ManualClock>.Reply.resource(file)
        transport.stub(mediaURL, replies: [now, now, now, .resource(file, latency: .seconds(1)), now])
        let library = library(folder)
        let start = clock.now
        try await library.download("1", from: mediaURL)
        await clock.waitForSleeper(until: start.advanced(by: .seconds(1)))
        await library.pause("1")
        if pauseDone {
            await library.waitForDownload("1")
            #expect(await library.state(of: "1") == .paused)
        }
        await library.cancel("1")
        await library.waitForDownload("1")
        #expect(await library.state(of: "1") == .cancelled)
        #expect(files(in: folder) == ["offline-library.json"])
    }

    @Test("two models of one lesson (a list row and a detail screen) both follow the download")
    func twoScreens() async throws {
        let library = library()
        let row = LessonDownloadModel(library: library, lessonID: "1", remote: mediaURL)
        let detail = LessonDownloadModel(library: library, lessonID: "1", remote: mediaURL)
        let followingRow = Task { await row.observe() }
        let followingDetail = Task { await detail.observe() }
        defer {
            followingRow.cancel()
            followingDetail.cancel()
        }
        await detail.download()
        await library.waitForDownload("1")
        #expect(await waitUntilObserved { if case .downloaded = row.phase { true } else { false } }, "\(row.phase)")
        #expect(await waitUntilObserved { row.phase == detail.phase }, "\(detail.phase)")
    }

    @Test("cancel discards what was downloaded: not downloaded, no partial file, and the next download starts over")
    func cancel() async throws {
        let folder = temporaryFolder("lesson-model-cancel")
        let now = InMemoryHTTPTransport<ManualClock>.Reply.resource(file)
        transport.stub(mediaURL, replies: [now, now, now, .resource(file, latency: .seconds(1)), now])
        let model = LessonDownloadModel(library: library(folder), lessonID: "1", remote: mediaURL)
        let start = clock.now
        await model.download()
        await clock.waitForSleeper(until: start.advanced(by: .seconds(1)))
        await model.cancel()
        #expect(model.phase == .notDownloaded)
        #expect(files(in: folder) == ["offline-library.json"])
    }

    @Test("a failure's phase carries its category and typed error; waitUntilSettled needs no polling")
    func failureCategory() async throws {
        transport.stub(mediaURL, reply: .response(status: 404))
        let model = LessonDownloadModel(library: library(), lessonID: "1", remote: mediaURL)
        await model.download()
        await model.waitUntilSettled()
        guard case .failed(let failure) = model.phase else {
            Issue.record("\(model.phase)")
            return
        }
        #expect(failure.category == .notFound)
        #expect(failure.error?.kind == .httpStatus(404))
    }
}
