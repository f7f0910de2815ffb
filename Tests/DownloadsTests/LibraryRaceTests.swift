import Downloads
import Foundation
import HTTPSupport
import Locking
import OfflineLessonsTesting
import TestSupport
import Testing

@testable import OfflineLessons

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A transport whose answer to one request waits until the test releases it, whatever the
/// caller does meanwhile (a server that does not notice a cancelled transfer): the download's
/// job cannot end before then, so what the learner does while it stops is tested in order.
final class HoldingTransport: HTTPTransport {
    let base: any HTTPTransport
    private let heldPath: String
    private let state = Locked(
        (
            isHeld: true, requests: 0, waiters: [CheckedContinuation<Void, Never>](),
            arrivals: [CheckedContinuation<Void, Never>]()
        ))

    init(_ base: any HTTPTransport, holding path: String) {
        self.base = base
        heldPath = path
    }

    func send(_ request: URLRequest) async throws -> (Data, URLResponse) {
        await holdIfNeeded(request)
        return try await base.send(request)
    }

    func stream(_ request: URLRequest) async throws -> (URLResponse, HTTPBodyChunks) {
        await holdIfNeeded(request)
        return try await base.stream(request)
    }

    /// Suspends until the held request has arrived.
    func waitForHeld() async {
        await withCheckedContinuation { (arrival: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                guard state.requests == 0 else { return true }
                state.arrivals.append(arrival)
                return false
            }
            if ready { arrival.resume() }
        }
    }

    /// Lets the held request (and every later one) through.
    func release() {
        let waiting = state.withLock { state in
            state.isHeld = false
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiting { waiter.resume() }
    }

    private func holdIfNeeded(_ request: URLRequest) async {
        guard request.url?.path.hasSuffix(heldPath) == true else { return }
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let (held, arrivals) = state.withLock { state in
                state.requests += 1
                defer { state.arrivals = [] }
                if state.isHeld { state.waiters.append(waiter) }
                return (state.isHeld, state.arrivals)
            }
            for arrival in arrivals { arrival.resume() }
            if !held { waiter.resume() }
        }
    }
}

/// What the learner does while the library stops a download: each call lands while the job,
/// held by its transport, cannot end yet, so the order is the test's, not the scheduler's.
@Suite("The learner's word while a download stops")
struct LibraryRaceTests {
    let clock = ManualClock()
    let inMemory: InMemoryHTTPTransport<ManualClock>
    let lesson: ServedLesson

    init() throws {
        inMemory = InMemoryHTTPTransport(clock: clock)
        lesson = try ServedLesson("cmaf")
        lesson.serve(on: inMemory)
    }

    /// A library over the held transport, with background transfers of a simulated daemon.
    func library(holding path: String, folder: URL) -> (OfflineLibrary, HoldingTransport, SimulatedBackgroundDaemon) {
        let holding = HoldingTransport(inMemory, holding: path)
        let downloader = MediaDownloader(
            engine: DownloadEngine(concurrency: 1, retry: .none, clock: clock, transport: holding))
        let daemon = SimulatedBackgroundDaemon(
            transport: inMemory, scratch: folder.deletingLastPathComponent().appendingPathComponent("daemon"))
        let session = daemon.launch(landing: folder.deletingLastPathComponent().appendingPathComponent("landing"))
        let transfers = BackgroundTransfers(session: session, folder: folder, retry: RetryPolicy(maximumAttempts: 3))
        let library = OfflineLibrary(
            directory: folder, fileOptions: OfflineFileOptions(), fileSystem: LocalFileSystem(),
            background: transfers
        ) { remote, destination in
            downloader.downloadLesson(from: remote, to: destination, preferredLanguages: [])
        }
        return (library, holding, daemon)
    }

    /// The state item `lesson` ends in once it is no longer downloading.
    func end(of library: OfflineLibrary) async -> OfflineLibrary.ItemState? {
        await withLivenessCheck {
            for await (id, state) in library.updates where id == "lesson" {
                if case .downloading = state { continue }
                return state
            }
            return OfflineLibrary.ItemState.notDownloaded
        } ?? nil
    }

    @Test(
        "the learner's pause while the job pauses to be handed over is the learner's: the lesson is paused, nothing is handed over"
    )
    func pauseWhileHandingOver() async throws {
        let folder = temporaryFolder("race-pause-handover").appendingPathComponent("library")
        let (library, holding, daemon) = library(holding: "video/seg1.m4s", folder: folder)
        try await library.download("lesson", from: lesson.entry)
        await holding.waitForHeld()
        let leaving = Task { await library.continueInBackground() }
        #expect(await withinPoolTurns { await library.itemsHandingOver.contains("lesson") })
        await library.pause("lesson")
        holding.release()
        #expect(await leaving.value.isEmpty)
        #expect(await library.state(of: "lesson") == .paused)
        #expect(daemon.running.isEmpty, "handed over anyway: \(daemon.running)")
    }

    @Test(
        "the app back while the job pauses to be handed over: the take-back is kept, the lesson ends downloaded in the foreground, and nothing runs in the system (found by review)"
    )
    func takeBackWhileHandingOver() async throws {
        let folder = temporaryFolder("race-takeback-handover").appendingPathComponent("library")
        let (library, holding, daemon) = library(holding: "video/seg1.m4s", folder: folder)
        try await library.download("lesson", from: lesson.entry)
        await holding.waitForHeld()
        let leaving = Task { await library.continueInBackground() }
        #expect(await withinPoolTurns { await library.itemsHandingOver.contains("lesson") })
        let coming = Task { await library.continueInForeground() }
        // The take-back lands while the run pauses for the hand-over, before the job can end.
        #expect(await withinPoolTurns { await library.diagnosis.contains("isTakenBack: true") })
        holding.release()
        #expect(await leaving.value.isEmpty)
        #expect(await coming.value == ["lesson"])
        guard case .downloaded? = await end(of: library) else {
            Issue.record("\(await library.state(of: "lesson"))")
            return
        }
        #expect(daemon.running.isEmpty, "left in the system: \(daemon.running)")
        #expect(await !library.isHandedOver("lesson"))
    }

    @Test(
        "a pause then a Download while the job pauses to be handed over: the last word wins, the lesson runs in the foreground, nothing is handed over, and no restart is left over (a later failure fails the lesson rather than starting it again)"
    )
    func pauseThenDownloadWhileHandingOver() async throws {
        let folder = temporaryFolder("race-download-handover").appendingPathComponent("library")
        let (library, holding, daemon) = library(holding: "video/seg1.m4s", folder: folder)
        try await library.download("lesson", from: lesson.entry)
        await holding.waitForHeld()
        let leaving = Task { await library.continueInBackground() }
        #expect(await withinPoolTurns { await library.itemsHandingOver.contains("lesson") })
        await library.pause("lesson")
        try await library.download("lesson", from: lesson.entry)
        // A segment after the held one fails for good: the run that the Download asked for
        // ends failed. A restart left over from the Download would start it once more.
        let failing = lesson.base.appendingPathComponent("audio_en/seg1.m4s")
        inMemory.stub(failing, reply: .response(status: 404, body: Data("gone".utf8)))
        holding.release()
        #expect(await leaving.value.isEmpty)
        guard case .failed? = await end(of: library) else {
            Issue.record("\(await library.state(of: "lesson"))")
            return
        }
        await library.waitForDownload("lesson")
        #expect(daemon.running.isEmpty, "handed over anyway: \(daemon.running)")
        #expect(inMemory.requests.filter { $0.url == failing }.count == 1, "started again after the failure")
        guard case .failed = await library.state(of: "lesson") else {
            Issue.record("started again: \(await library.state(of: "lesson"))")
            return
        }
    }

    @Test(
        "a Download tapped while a delete stops the download: the delete happens, then the download starts again and ends downloaded"
    )
    func downloadWhileDeleting() async throws {
        let folder = temporaryFolder("race-delete").appendingPathComponent("library")
        let (library, holding, _) = library(holding: "video/seg1.m4s", folder: folder)
        try await library.download("lesson", from: lesson.entry)
        await holding.waitForHeld()
        let deleting = Task { try await library.delete("lesson") }
        #expect(await withinPoolTurns { await library.itemsBeingRemoved.contains("lesson") })
        try await library.download("lesson", from: lesson.entry)
        holding.release()
        try await deleting.value
        guard case .downloaded? = await end(of: library) else {
            Issue.record("the Download was lost: \(await library.state(of: "lesson"))")
            return
        }
        #expect(try Data(contentsOf: try #require(await library.localFile(of: "lesson"))).count > 0)
    }
}

extension LibraryRaceTests {
    /// What the learner says while the download is still stopping, and what the next launch
    /// must show after a kill at that moment.
    enum Word: String, CaseIterable, CustomTestStringConvertible {
        case pause, cancel, delete
        var testDescription: String { rawValue }
    }

    @Test(
        "killed while the learner's pause, cancel or delete is still stopping the download: the next launch keeps that word (paused with its files, cancelled with none, forgotten with none)",
        arguments: Word.allCases)
    func killedWhileStopping(word: Word) async throws {
        let folder = temporaryFolder("race-kill-\(word)").appendingPathComponent("library")
        let (library, holding, _) = library(holding: "video/seg1.m4s", folder: folder)
        try await library.download("lesson", from: lesson.entry)
        await holding.waitForHeld()
        var deleting: Task<Void, any Error>?
        switch word {
        case .pause:
            await library.pause("lesson")
        case .cancel:
            await library.cancel("lesson")
        case .delete:
            deleting = Task { try await library.delete("lesson") }
            #expect(await withinPoolTurns { await library.itemsBeingRemoved.contains("lesson") })
        }
        // The kill: the next process reads the folder as this one left it.
        let (relaunched, _, _) = self.library(holding: "none", folder: folder)
        let state = await relaunched.state(of: "lesson")
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.contains(".partial") || $0.contains(".journal") }
        switch word {
        case .pause:
            #expect(state == .paused)
            #expect(!left.isEmpty, "a pause keeps what was written")
        case .cancel:
            #expect(state == .cancelled)
            #expect(left.isEmpty, "\(left)")
        case .delete:
            #expect(state == .notDownloaded)
            #expect(await relaunched.states["lesson"] == nil)
            #expect(left.isEmpty, "\(left)")
        }
        holding.release()
        try await deleting?.value
        await library.waitForDownload("lesson")
    }
}

/// A weak reference a test can read from any task.
final class WeakReference<Object: AnyObject>: @unchecked Sendable {
    private let lock = NSLock()
    private weak var object: Object?

    init(_ object: Object) { self.object = object }

    var isGone: Bool { lock.withLock { object == nil } }
}

extension LibraryRaceTests {
    @Test(
        "a library no longer used goes, though it follows the background session's reports and the network: the tasks it owns end with it"
    )
    func libraryGoes() async throws {
        let folder = temporaryFolder("library-goes").appendingPathComponent("library")
        var reference: WeakReference<OfflineLibrary>?
        do {
            let daemon = SimulatedBackgroundDaemon(
                transport: inMemory, scratch: folder.deletingLastPathComponent().appendingPathComponent("daemon"))
            let session = daemon.launch(landing: folder.deletingLastPathComponent().appendingPathComponent("landing"))
            let library = OfflineLibrary(
                directory: folder, fileOptions: OfflineFileOptions(), fileSystem: LocalFileSystem(),
                background: BackgroundTransfers(session: session, folder: folder),
                backgroundOptions: BackgroundTransferOptions(identifier: "app.background"),
                network: FixedNetworkPathMonitor(.unmetered)
            ) { [clock, inMemory] remote, destination in
                MediaDownloader(engine: DownloadEngine(concurrency: 1, retry: .none, clock: clock, transport: inMemory))
                    .downloadLesson(from: remote, to: destination, preferredLanguages: [])
            }
            _ = try await library.load()  // follows the session's reports and the network from now on
            // The network's first path is taken in: its task is between two paths now.
            #expect(await withinPoolTurns { await library.machine.networkPath == .unmetered })
            reference = WeakReference(library)
        }
        let weak = try #require(reference)
        #expect(await withinPoolTurns { weak.isGone }, "the library's own tasks keep it alive")
    }
}

extension LibraryRaceTests {
    @Test("a delete whose save fails throws that failure, and one that saves does not throw another item's")
    func deleteReportsItsOwnSave() async throws {
        let folder = temporaryFolder("library-delete-save")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for name in ["a.mp4", "b.mp4"] { try Data("file".utf8).write(to: folder.appendingPathComponent(name)) }
        let remote = lesson.entry
        let items = ["a", "b"].map { id in
            "\"\(id)\":{\"remoteURL\":\"\(remote.absoluteString)\",\"state\":{\"downloaded\":{\"fileName\":\"\(id).mp4\",\"byteCount\":4}}}"
        }
        try Data("{\"version\":1,\"items\":{\(items.joined(separator: ","))}}".utf8)
            .write(to: folder.appendingPathComponent("offline-library.json"))
        let refusing = Locked(false)
        let fileSystem = TestFileSystem(plan: { operation, file in
            if refusing.withLock({ $0 }), operation == .write, file.lastPathComponent == "offline-library.json" {
                throw CocoaError(.fileWriteOutOfSpace)
            }
        })
        let downloader = MediaDownloader(
            engine: DownloadEngine(concurrency: 1, retry: .none, clock: clock, transport: inMemory))
        let library = OfflineLibrary(directory: folder, fileOptions: OfflineFileOptions(), fileSystem: fileSystem) {
            downloader.downloadLesson(from: $0, to: $1, preferredLanguages: [])
        }
        _ = try await library.load()
        refusing.withLock { $0 = true }
        do {
            try await library.delete("a")
            Issue.record("the delete did not say its save failed")
        } catch {
            guard case .saveFailed = error.kind else {
                Issue.record("\(error)")
                return
            }
        }
        refusing.withLock { $0 = false }
        try await library.delete("b")
        #expect(await library.states["b"] == nil)
    }
}

extension LibraryRaceTests {
    @Test(
        "a cancel whose save fails says so (saveFailure), and the learner's word is saved with the next call, even one that changes nothing; saveFailure is nil then"
    )
    func cancelSaveFailureIsSavedAgain() async throws {
        let folder = temporaryFolder("library-cancel-save")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("file".utf8).write(to: folder.appendingPathComponent("b.mp4"))
        let remote = lesson.entry
        let stateFile = folder.appendingPathComponent("offline-library.json")
        let items = [
            "\"a\":{\"remoteURL\":\"\(remote.absoluteString)\",\"state\":{\"paused\":{}}}",
            "\"b\":{\"remoteURL\":\"\(remote.absoluteString)\",\"state\":{\"downloaded\":{\"fileName\":\"b.mp4\",\"byteCount\":4}}}",
        ]
        try Data("{\"version\":1,\"items\":{\(items.joined(separator: ","))}}".utf8).write(to: stateFile)
        let refusing = Locked(false)
        let fileSystem = TestFileSystem(plan: { operation, file in
            if refusing.withLock({ $0 }), operation == .write, file.lastPathComponent == "offline-library.json" {
                throw CocoaError(.fileWriteOutOfSpace)
            }
        })
        let downloader = MediaDownloader(
            engine: DownloadEngine(concurrency: 1, retry: .none, clock: clock, transport: inMemory))
        let library = OfflineLibrary(directory: folder, fileOptions: OfflineFileOptions(), fileSystem: fileSystem) {
            downloader.downloadLesson(from: $0, to: $1, preferredLanguages: [])
        }
        _ = try await library.load()
        #expect(await library.state(of: "a") == .paused)
        refusing.withLock { $0 = true }
        await library.cancel("a")
        let failure = try #require(await library.saveFailure)
        guard case .saveFailed = failure.kind else {
            Issue.record("\(failure)")
            return
        }
        #expect(await library.state(of: "a") == .cancelled)
        #expect(try String(decoding: Data(contentsOf: stateFile), as: UTF8.self).contains("paused"))
        refusing.withLock { $0 = false }
        // A pause of a downloaded item changes nothing; the save it makes is the cancel's.
        await library.pause("b")
        #expect(await library.saveFailure == nil)
        let saved = try String(decoding: Data(contentsOf: stateFile), as: UTF8.self)
        #expect(saved.contains("cancelled") && !saved.contains("paused"), "\(saved)")
    }
}

extension LibraryRaceTests {
    @Test(
        "the save a launch makes as it reconciles (a download a kill interrupted, now paused) reports its failure as saveFailure, and the next change saves it"
    )
    func loadSaveFailureReported() async throws {
        let folder = temporaryFolder("library-load-save")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("file".utf8).write(to: folder.appendingPathComponent("b.mp4"))
        let remote = lesson.entry
        let stateFile = folder.appendingPathComponent("offline-library.json")
        let items = [
            "\"a\":{\"remoteURL\":\"\(remote.absoluteString)\",\"state\":{\"downloading\":{\"fraction\":0.5}},\"fractionDone\":0.5}",
            "\"b\":{\"remoteURL\":\"\(remote.absoluteString)\",\"state\":{\"downloaded\":{\"fileName\":\"b.mp4\",\"byteCount\":4}}}",
        ]
        try Data("{\"version\":1,\"items\":{\(items.joined(separator: ","))}}".utf8).write(to: stateFile)
        let refusing = Locked(true)
        let fileSystem = TestFileSystem(plan: { operation, file in
            if refusing.withLock({ $0 }), operation == .write, file.lastPathComponent == "offline-library.json" {
                throw CocoaError(.fileWriteOutOfSpace)
            }
        })
        let downloader = MediaDownloader(
            engine: DownloadEngine(concurrency: 1, retry: .none, clock: clock, transport: inMemory))
        let library = OfflineLibrary(directory: folder, fileOptions: OfflineFileOptions(), fileSystem: fileSystem) {
            downloader.downloadLesson(from: $0, to: $1, preferredLanguages: [])
        }
        _ = try await library.load()
        #expect(await library.state(of: "a") == .paused)
        let failure = try #require(await library.saveFailure)
        guard case .saveFailed = failure.kind else {
            Issue.record("\(failure)")
            return
        }
        #expect(try String(decoding: Data(contentsOf: stateFile), as: UTF8.self).contains("downloading"))
        refusing.withLock { $0 = false }
        await library.pause("b")
        #expect(await library.saveFailure == nil)
        let saved = try String(decoding: Data(contentsOf: stateFile), as: UTF8.self)
        #expect(saved.contains("paused") && !saved.contains("downloading"), "\(saved)")
    }
}

extension LibraryRaceTests {
    @Test(
        "a pause that is the library's first call reads the saved states first: a lesson handed over at the last launch is paused, saved so, and not run again"
    )
    func pauseLoadsFirst() async throws {
        let folder = temporaryFolder("library-pause-first").appendingPathComponent("library")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let stateFile = folder.appendingPathComponent("offline-library.json")
        let item =
            "\"a\":{\"remoteURL\":\"\(lesson.entry.absoluteString)\",\"state\":{\"downloading\":{\"fraction\":0.5}},\"fractionDone\":0.5,\"inBackground\":true,\"handOver\":5}"
        try Data("{\"version\":1,\"items\":{\(item)}}".utf8).write(to: stateFile)
        let daemon = SimulatedBackgroundDaemon(
            transport: inMemory, scratch: folder.deletingLastPathComponent().appendingPathComponent("daemon"))
        let session = daemon.launch(landing: folder.deletingLastPathComponent().appendingPathComponent("landing"))
        let starts = Locked(0)
        let library = OfflineLibrary(
            directory: folder, fileOptions: OfflineFileOptions(), fileSystem: LocalFileSystem(),
            background: BackgroundTransfers(session: session, folder: folder),
            backgroundOptions: BackgroundTransferOptions(identifier: "app.background"),
            network: FixedNetworkPathMonitor(.unmetered)
        ) { [clock, inMemory] remote, destination in
            starts.withLock { $0 += 1 }
            return MediaDownloader(
                engine: DownloadEngine(concurrency: 1, retry: .none, clock: clock, transport: inMemory)
            )
            .downloadLesson(from: remote, to: destination, preferredLanguages: [])
        }
        await library.pause("a")
        #expect(await library.state(of: "a") == .paused)
        let saved = try String(decoding: Data(contentsOf: stateFile), as: UTF8.self)
        #expect(saved.contains("paused") && !saved.contains("downloading"), "\(saved)")
        await library.waitForDownload("a")
        #expect(starts.withLock { $0 } == 0, "the paused lesson ran again")
    }
}
