import Foundation
import HTTPSupport
import TestSupport
import Testing

@testable import Downloads
@testable import OfflineLessons

/// A queue file that a crash, a full disk or a newer app left unreadable: real files, a real
/// library with a lesson downloaded.
@Suite("A damaged queue file")
@MainActor
struct QueueRecoveryTests {
    nonisolated static let damaged: [(name: String, bytes: Data)] = [
        ("not JSON", Data("\u{0}\u{1}garbage".utf8)),
        ("cut short", Data(#"{"version":1,"lessons":[{"id":"cm"#.utf8)),
        ("an unknown earlier version", Data(#"{"version":0,"lessons":[],"requirements":{}}"#.utf8)),
        ("empty", Data()),
    ]

    @Test(
        "a damaged queue file is moved aside and kept, the queue starts again with a notice, and every downloaded lesson still shows downloaded on the course screen",
        arguments: damaged.map(\.name))
    func damagedFileRecovered(name: String) async throws {
        let bytes = try #require(Self.damaged.first { $0.name == name }).bytes
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        let lesson = try ServedLesson("cmaf")
        lesson.serve(on: transport)
        let folder = temporaryFolder("queue-damaged")
        let downloader = MediaDownloader(
            engine: DownloadEngine(concurrency: 2, retry: .none, clock: clock, transport: transport))
        let library = OfflineLibrary(directory: folder, downloader: downloader, preferredLanguages: [])
        try await library.download("cmaf", from: lesson.entry)
        await library.waitForDownload("cmaf")
        let file = folder.appendingPathComponent("queue.json")
        try bytes.write(to: file)

        let queue = DownloadQueue(
            library: library, file: file, requirements: DownloadRequirements(reserveBytes: 0),
            network: FixedNetworkPathMonitor(.unmetered), freeSpace: { _ in 100 << 30 })
        try await queue.start()
        guard case .queueFileRecovered(_, let movedTo)? = await queue.notices.first else {
            Issue.record("no notice: \(await queue.notices)")
            return
        }
        #expect(try Data(contentsOf: movedTo) == bytes, "the damaged file is kept for a report")
        #expect(movedTo.lastPathComponent == "queue.json.damaged-1")
        #expect(await queue.lessons.isEmpty)

        let course = OfflineCourse(
            id: "course", title: "Salsa",
            sections: [
                OfflineCourse.Section(
                    id: "basics", title: "Basics",
                    lessons: [OfflineCourse.Lesson(id: "cmaf", title: "Basic step", remoteURL: lesson.entry)])
            ])
        let model = CourseDownloadsModel(queue: queue, course: course, clock: clock)
        await model.refresh()
        #expect(model.sections[0].rows[0].state?.isDownloaded == true, "before the course is queued again")
        try await model.downloadCourse()
        #expect(await queue.state(of: "cmaf")?.isDownloaded == true)
        #expect(model.sections[0].rows[0].state?.isDownloaded == true)
        // The new queue is saved beside the one kept.
        #expect(FileManager.default.fileExists(atPath: file.path))
        #expect(try Data(contentsOf: movedTo) == bytes)
        await queue.stop()
    }

    static func downloader() -> MediaDownloader<ManualClock> {
        let clock = ManualClock()
        return MediaDownloader(
            engine: DownloadEngine(
                concurrency: 1, retry: .none, clock: clock, transport: InMemoryHTTPTransport(clock: clock)))
    }

    @Test("a queue file a newer version wrote is never saved over: start and every change refuse with its version")
    func newerVersionKept() async throws {
        let folder = temporaryFolder("queue-newer")
        let library = OfflineLibrary(
            directory: folder,
            downloader: Self.downloader(),
            preferredLanguages: [])
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("queue.json")
        let bytes = Data(#"{"version":2,"lessons":[],"requirements":{},"shelves":[]}"#.utf8)
        try bytes.write(to: file)
        let queue = DownloadQueue(
            library: library, file: file, requirements: DownloadRequirements(reserveBytes: 0),
            network: FixedNetworkPathMonitor(.unmetered), freeSpace: { _ in 100 << 30 })
        await #expect(throws: DownloadQueue.QueueError(.newerVersion(2), path: file.path)) { try await queue.start() }
        await #expect(throws: DownloadQueue.QueueError(.newerVersion(2), path: file.path)) {
            try await queue.enqueue([QueuedLesson(id: "a", remoteURL: URL(fileURLWithPath: "/a.mp4"))])
        }
        #expect(try Data(contentsOf: file) == bytes)
        #expect(await queue.notices.isEmpty)
    }

    @Test("a queue file that is there but cannot be read now is left as it is, and read at the next call")
    func unreadableForNow() async throws {
        let folder = temporaryFolder("queue-unreadable")
        let library = OfflineLibrary(
            directory: folder,
            downloader: Self.downloader(),
            preferredLanguages: [])
        // A folder where the file should be: reading it fails, as a protected file does.
        let file = folder.appendingPathComponent("queue.json")
        try FileManager.default.createDirectory(at: file, withIntermediateDirectories: true)
        let queue = DownloadQueue(
            library: library, file: file, requirements: DownloadRequirements(reserveBytes: 0),
            network: FixedNetworkPathMonitor(.unmetered), freeSpace: { _ in 100 << 30 })
        do {
            try await queue.start()
            Issue.record("started over an unreadable queue file")
        } catch {
            guard case .unreadable = error.kind else {
                Issue.record("\(error)")
                return
            }
        }
        #expect(FileManager.default.fileExists(atPath: file.path))
        // Readable again (the device unlocked): the next call reads it.
        try FileManager.default.removeItem(at: file)
        try await queue.start()
        #expect(await queue.notices.isEmpty)
        await queue.stop()
    }
}
