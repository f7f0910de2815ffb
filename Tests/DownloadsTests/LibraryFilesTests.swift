import Downloads
import Foundation
import HTTPSupport
import OfflineLessons
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The offline library keeps its items without being told to load, and leaves no file behind
/// an item it deletes or discards, whatever state its download was in.
@Suite("Offline library files")
struct LibraryFilesTests {
    let clock = ManualClock()
    let transport: InMemoryHTTPTransport<ManualClock>

    init() {
        transport = InMemoryHTTPTransport(clock: clock)
    }

    func library(in folder: URL) -> OfflineLibrary {
        let downloader = MediaDownloader(
            engine: DownloadEngine(concurrency: 2, retry: .none, clock: clock, transport: transport))
        return OfflineLibrary(directory: folder) { remote, destination in
            downloader.downloadLesson(from: remote, to: destination, subtitles: [.embedded, .sidecarFiles])
        }
    }

    /// How a download is left before the library is asked to remove it.
    enum Ending: String, CaseIterable, Sendable {
        case failed, paused, cancelled, downloaded
    }

    /// Starts the `webvtt` lesson's download and ends it as `ending` says.
    func start(_ ending: Ending, in folder: URL) async throws -> OfflineLibrary {
        let lesson = try ServedLesson("webvtt")
        switch ending {
        case .failed: lesson.serve(on: transport, failing: "video/seg1.ts", with: .response(status: 404))
        case .paused, .cancelled: lesson.serve(on: transport, holding: "video/seg1.ts")
        case .downloaded: lesson.serve(on: transport)
        }
        let library = library(in: folder)
        try await library.download("lesson", from: lesson.entry)
        switch ending {
        case .paused:
            await clock.waitForSleepers(count: 1)
            await library.pause("lesson")
        case .cancelled:
            await clock.waitForSleepers(count: 1)
            await library.cancel("lesson")
        case .failed, .downloaded: break
        }
        await library.waitForDownload("lesson")
        return library
    }

    @Test("delete leaves only the state file, whatever the download's state", arguments: Ending.allCases)
    func delete(ending: Ending) async throws {
        let folder = temporaryFolder("library-delete")
        let library = try await start(ending, in: folder)
        let state = await library.state(of: "lesson")
        #expect(state.caseName == ending.rawValue, "\(state)")
        if ending == .failed || ending == .paused {
            // The partial file and its journal are kept for a resume.
            #expect(files(in: folder).contains { $0.hasSuffix(".partial") })
        }
        try await library.delete("lesson")
        #expect(files(in: folder) == ["offline-library.json"])
        #expect(await library.state(of: "lesson") == .notDownloaded)
    }

    @Test(
        "discard removes what an unfinished download left and keeps a finished one",
        arguments: Ending.allCases)
    func discard(ending: Ending) async throws {
        let folder = temporaryFolder("library-discard")
        let library = try await start(ending, in: folder)
        try await library.discard("lesson")
        if ending == .downloaded {
            #expect(files(in: folder).filter { !$0.hasPrefix(".") }.count == 4)  // mp4, 2 × vtt, state
            guard case .downloaded = await library.state(of: "lesson") else {
                Issue.record("\(await library.state(of: "lesson"))")
                return
            }
        } else {
            #expect(files(in: folder) == ["offline-library.json"])
            #expect(await library.state(of: "lesson") == .notDownloaded)
        }
    }

    @Test("a relaunched library that is never told to load keeps the downloads it had")
    func keepsWithoutLoad() async throws {
        let folder = temporaryFolder("library-lazy")
        let first = try await start(.downloaded, in: folder)
        let file = try #require(await first.localFile(of: "lesson"))
        let relaunched = library(in: folder)
        try await relaunched.download("other", from: URL(literal: "https://lessons.example/missing.mp4"))
        await relaunched.waitForDownload("other")
        #expect(await relaunched.localFile(of: "lesson") == file)
        let again = library(in: folder)
        #expect(await again.states.keys.sorted() == ["lesson", "other"])
    }

    @Test("a damaged state file is moved aside, kept as it was, and downloads start again with a notice")
    func damagedStateFile() async throws {
        let folder = temporaryFolder("library-damaged")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let stateFile = folder.appendingPathComponent("offline-library.json")
        let damaged = Data("{\"version\":1,\"items\":{".utf8)
        try damaged.write(to: stateFile)
        let library = library(in: folder)
        try await library.download("x", from: URL(literal: "https://lessons.example/a.mp4"))
        await library.waitForDownload("x")
        let aside = folder.appendingPathComponent("offline-library.json.damaged-1")
        #expect(try Data(contentsOf: aside) == damaged)
        #expect(
            await library.notices == [
                .stateFileRecovered(
                    reason: try #require(await library.notices.first.map(Self.reason)), movedTo: aside, recovered: [],
                    unclaimed: [])
            ])
        #expect(FileManager.default.fileExists(atPath: stateFile.path))
    }

    /// The reason of a recovery notice.
    static func reason(_ notice: OfflineLibrary.Notice) -> String {
        switch notice {
        case .stateFileRecovered(let reason, _, _, _): reason
        }
    }

    @Test("OfflineLibrary.waitForDownload's doc comment: a test waits for the download without sleeping")
    func waitExample() async throws {
        let lesson = try ServedLesson("webvtt")
        lesson.serve(on: transport)
        let library = library(in: temporaryFolder("library-wait"))
        let lessonURL = lesson.entry
        // example: begin wait-for-download
        try await library.download("950", from: lessonURL)
        await library.waitForDownload("950")
        #expect(await library.localFile(of: "950") != nil)
        // example: end wait-for-download
    }

    @Test("the README's test of an app's download button: the model settles without sleeping")
    @MainActor
    func readmeExample() async throws {
        let lesson = try ServedLesson("webvtt")
        lesson.serve(on: transport)
        let library = library(in: temporaryFolder("library-readme"))
        let lessonURL = lesson.entry
        // example: begin Downloads
        let model = LessonDownloadModel(library: library, lessonID: "950", remote: lessonURL)
        await model.download()
        await model.waitUntilSettled()  // no polling, no sleeping
        #expect(await library.localFile(of: "950") != nil)
        // example: end Downloads
        guard case .downloaded = model.phase else {
            Issue.record("\(model.phase)")
            return
        }
    }
}

extension OfflineLibrary.ItemState {
    /// The case's name, for comparing with ``LibraryFilesTests/Ending`` and naming states in figures.
    var caseName: String {
        switch self {
        case .notDownloaded: "notDownloaded"
        case .downloading: "downloading"
        case .downloaded: "downloaded"
        case .failed: "failed"
        case .cancelled: "cancelled"
        case .paused: "paused"
        }
    }
}

/// At launch the library keeps the hidden files of downloads that can resume and removes the
/// others: an interruption's leftovers of a lesson that is downloaded, removed or never known.
@Suite("Launch reconcile")
struct LaunchReconcileTests {
    @Test("orphaned partial files are removed at load; a paused download's are kept and it resumes")
    func orphans() async throws {
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        let lesson = try ServedLesson("webvtt")
        lesson.serve(on: transport, holding: "video/seg1.ts")
        let folder = temporaryFolder("library-orphans")
        let downloader = MediaDownloader(
            engine: DownloadEngine(concurrency: 2, retry: .none, clock: clock, transport: transport))
        let library = OfflineLibrary(directory: folder, downloader: downloader, preferredLanguages: [])
        try await library.download("paused", from: lesson.entry)
        await clock.waitForSleepers(count: 1)
        await library.pause("paused")
        await library.waitForDownload("paused")
        let kept = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix(".") }
        #expect(kept.contains { $0.hasSuffix(".partial") })
        // Leftovers of downloads that cannot resume: no item names them.
        for name in [".gone.mp4.partial", ".gone.mp4.journal", ".other.m4a.lock", ".x.validators"] {
            try Data("left".utf8).write(to: folder.appendingPathComponent(name))
        }
        let relaunched = OfflineLibrary(directory: folder, downloader: downloader, preferredLanguages: [])
        _ = try await relaunched.load()
        let after = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix(".") }
        #expect(Set(after) == Set(kept))
        #expect(await relaunched.state(of: "paused") == .paused)
    }

    @Test(
        "a save a kill interrupted leaves a temporary file: the library's own are removed at load, a download's once older than the library by a margin"
    )
    func interruptedSave() async throws {
        let folder = temporaryFolder("library-atomic")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let torn = Data("{\"version\":1,\"ite".utf8)
        for name in [".offline-library.json.saving", ".lesson-1.mp4.item.saving", ".dat.nosync1a2b.Xy9Qz1"] {
            try torn.write(to: folder.appendingPathComponent(name))
        }
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -60)],
            ofItemAtPath: folder.appendingPathComponent(".dat.nosync1a2b.Xy9Qz1").path)
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        let lesson = URL(literal: "https://lessons.example/lesson.mp4")
        transport.stub(lesson, reply: .resource(mp4Bytes(2_000, seed: 4)))
        let downloader = MediaDownloader(engine: DownloadEngine(clock: clock, transport: transport))
        let library = OfflineLibrary(directory: folder, downloader: downloader, preferredLanguages: [])
        // A download's atomic save under way in this process while the library loads.
        try Data("{}".utf8).write(to: folder.appendingPathComponent(".dat.nosync3c4d.Ab7Kp2"))
        _ = try await library.load()
        #expect(files(in: folder) == [".dat.nosync3c4d.Ab7Kp2"])
        // The library's saves leave no temporary file behind.
        try await library.download("1", from: lesson)
        await library.waitForDownload("1")
        guard case .downloaded = await library.state(of: "1") else {
            Issue.record("\(await library.state(of: "1"))")
            return
        }
        #expect(!files(in: folder).contains { $0.hasSuffix(".saving") }, "\(files(in: folder))")
    }
}

extension LibraryFilesTests {
    /// The kill between the download's file appearing (one rename, when it is complete) and the
    /// library writing its record and state: the state file still says downloading, and no
    /// record names the file.
    @Test(
        "killed as a lesson ends, after its file is in place and before its record and state are saved: the relaunch finds it downloaded and fetches nothing",
        arguments: ["webvtt", "cmaf", "packed-aac"])
    func killedAsTheLessonEnds(name: String) async throws {
        let folder = temporaryFolder("library-killed-at-end")
        let lesson = try ServedLesson(name)
        lesson.serve(on: transport)
        let first = library(in: folder)
        try await first.download("lesson", from: lesson.entry)
        await first.waitForDownload("lesson")
        guard case .downloaded(let fileName, let byteCount) = await first.state(of: "lesson") else {
            Issue.record("\(await first.state(of: "lesson"))")
            return
        }
        // What the kill leaves: the record not written, the state file's entry still downloading.
        try FileManager.default.removeItem(at: folder.appendingPathComponent(".\(fileName).item"))
        let stateFile = folder.appendingPathComponent("offline-library.json")
        let saved = try String(contentsOf: stateFile, encoding: .utf8)
        let downloading = saved.replacingOccurrences(
            of: #"{"downloaded":{"byteCount":\#(byteCount),"fileName":"\#(fileName)"}}"#,
            with: #"{"downloading":{"fraction":0.92}}"#)
        try #require(downloading != saved, "\(saved)")
        try Data(downloading.utf8).write(to: stateFile)

        let before = transport.requests.count
        let relaunched = library(in: folder)
        #expect(await relaunched.state(of: "lesson") == .downloaded(fileName: fileName, byteCount: byteCount))
        try await relaunched.download("lesson", from: lesson.entry)
        await relaunched.waitForDownload("lesson")
        #expect(transport.requests.count == before, "fetched again: \(transport.requests[before...].map(\.url))")
        // Its record is written now, so a damaged state file later still finds it.
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent(".\(fileName).item").path))
    }
}
