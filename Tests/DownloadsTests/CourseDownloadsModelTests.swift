import Foundation
import HTTPSupport
import TestSupport
import Testing

@testable import Downloads
@testable import OfflineLessons

/// The course screen's model: rows per section and lesson, the course's bytes and progress,
/// the time left, the storage, and its actions.
@Suite("The course downloads model")
@MainActor
struct CourseDownloadsModelTests {
    @Test("the time left is the bytes left at the rate since the run began; none before a second has passed")
    func remainingTime() {
        let since = (time: Duration.seconds(10), bytes: 1_000.0)
        #expect(
            CourseDownloadsModel.remainingTime(total: 10_000, done: 3_000, since: since, now: .seconds(12))
                == .seconds(7))
        #expect(
            CourseDownloadsModel.remainingTime(total: 10_000, done: 3_000, since: since, now: .milliseconds(10_500))
                == nil)
        #expect(CourseDownloadsModel.remainingTime(total: 10_000, done: 1_000, since: since, now: .seconds(20)) == nil)
        #expect(
            CourseDownloadsModel.remainingTime(total: 10_000, done: 10_000, since: since, now: .seconds(20)) == .zero)
    }

    @Test(
        "a course of two sections downloaded from its screen: rows, sizes, progress and storage; then pinned and removed"
    )
    func screen() async throws {
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        let served = try ["ts-heaac", "packed-aac", "cmaf"].map { try ServedLesson($0) }
        for lesson in served { lesson.serve(on: transport) }
        let folder = temporaryFolder("course-model")
        let downloader = MediaDownloader(
            engine: DownloadEngine(concurrency: 2, retry: .none, clock: clock, transport: transport))
        let library = OfflineLibrary(directory: folder, downloader: downloader, preferredLanguages: [])
        let queue = DownloadQueue(
            library: library, file: folder.appendingPathComponent("queue.json"),
            requirements: DownloadRequirements(reserveBytes: 0, quotaBytes: 1 << 30),
            network: FixedNetworkPathMonitor(.unmetered),
            estimator: { url in try await downloader.estimateLesson(from: url, preferredLanguages: []) },
            freeSpace: { _ in 100 << 30 })
        try await queue.start()
        let course = OfflineCourse(
            id: "course", title: "Salsa",
            sections: [
                OfflineCourse.Section(
                    id: "basics", title: "Basics",
                    lessons: served.prefix(2).map {
                        OfflineCourse.Lesson(id: $0.name, title: $0.name, remoteURL: $0.entry)
                    }),
                OfflineCourse.Section(
                    id: "turns", title: "Turns",
                    lessons: [OfflineCourse.Lesson(id: "cmaf", title: "Cross-body lead", remoteURL: served[2].entry)]),
            ])
        let model = CourseDownloadsModel(queue: queue, course: course, clock: clock)
        #expect(model.sections.map(\.rows.count) == [2, 1])
        #expect(model.sections.allSatisfy { $0.rows.allSatisfy { $0.state == nil } })
        try await model.downloadCourse()
        for await _ in queue.updates where await queue.allStates.values.filter(\.isDownloaded).count == 3 { break }
        await model.refresh()
        let rows = model.sections.flatMap(\.rows)
        #expect(rows.allSatisfy { $0.state?.isDownloaded == true && $0.isExactSize })
        var files: UInt64 = 0
        for lesson in served {
            let file = try #require(await library.localFile(of: lesson.name))
            files += UInt64(try Data(contentsOf: file).count)
        }
        #expect(model.totalBytes == files && !model.isEstimate && model.fraction == 1)
        #expect(model.usedBytes == files && model.quotaBytes == 1 << 30)
        #expect(model.sections.map { $0.summary?.state } == [.downloaded, .downloaded])
        #expect(model.remainingTime == nil)
        try await model.pin("cmaf")
        #expect(model.sections[1].rows[0].isPinned)
        try await model.remove("ts-heaac")
        #expect(model.sections[0].rows[0].state == nil)
        #expect(await library.localFile(of: "ts-heaac") == nil)
        #expect(model.isEstimate)  // a lesson of the course is no longer queued
    }

    @Test("offline: every row says it waits for the network; a paused one says the learner paused it, until resumed")
    func pauseAndResume() async throws {
        let folder = temporaryFolder("course-model-offline")
        let clock = ManualClock()
        let downloader = MediaDownloader(
            engine: DownloadEngine(
                concurrency: 2, retry: .none, clock: clock, transport: InMemoryHTTPTransport(clock: clock)))
        let library = OfflineLibrary(directory: folder, downloader: downloader, preferredLanguages: [])
        let queue = DownloadQueue(
            library: library, file: folder.appendingPathComponent("queue.json"),
            network: FixedNetworkPathMonitor(.offline), freeSpace: { _ in 100 << 30 })
        try await queue.start()
        let lessons = ["a", "b"].map {
            OfflineCourse.Lesson(id: $0, title: $0, remoteURL: URL(literal: "https://lessons.example/lesson.m3u8"))
        }
        let model = CourseDownloadsModel(
            queue: queue,
            course: OfflineCourse(id: "c", title: "C", sections: [.init(id: "s", title: "S", lessons: lessons)]))
        try await model.downloadCourse()
        #expect(
            model.sections[0].rows.map(\.state) == [
                .waiting(.network(required: .any)), .waiting(.network(required: .any)),
            ])
        try await model.pause("a")
        #expect(model.sections[0].rows[0].state == .waiting(.pausedByLearner))
        try await model.resume()
        #expect(
            model.sections[0].rows.map(\.state) == [
                .waiting(.network(required: .any)), .waiting(.network(required: .any)),
            ])
        #expect(model.sections[0].summary?.state == .waiting(.network(required: .any)))
    }

    @Test("the documentation's model follows its queue")
    func documentationExample() async throws {
        let folder = temporaryFolder("course-model-example")
        let clock = ManualClock()
        let downloader = MediaDownloader(
            engine: DownloadEngine(
                concurrency: 2, retry: .none, clock: clock, transport: InMemoryHTTPTransport(clock: clock)))
        let queue = DownloadQueue(
            library: OfflineLibrary(directory: folder, downloader: downloader, preferredLanguages: []),
            file: folder.appendingPathComponent("queue.json"), network: FixedNetworkPathMonitor(.offline),
            freeSpace: { _ in 100 << 30 })
        try await queue.start()
        let course = OfflineCourse(
            id: "c", title: "C",
            sections: [
                .init(
                    id: "s", title: "S",
                    lessons: [.init(id: "a", title: "A", remoteURL: URL(literal: "https://lessons.example/a.m3u8"))])
            ])
        // example: begin course-downloads-model
        let model = CourseDownloadsModel(queue: queue, course: course)
        Task { await model.observe() }  // follows the queue until the task is cancelled
        try await model.downloadCourse()
        // A view reads model.sections, model.fraction, model.remainingTime, model.usedBytes…
        // example: end course-downloads-model
        #expect(model.sections[0].rows[0].state == .waiting(.network(required: .any)))
    }
}
