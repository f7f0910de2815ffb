import Foundation
import HTTPSupport
import Locking
import TestSupport
import Testing

@testable import Downloads
@testable import OfflineLessons

/// An estimator whose answers wait until the test lets them through, counting how many wait at
/// once and which were cancelled.
final class GatedEstimator: Sendable {
    private let state = Locked(
        (inFlight: 0, most: 0, open: false, waiting: [CheckedContinuation<Void, Never>](), cancelled: 0))

    var most: Int { state.withLock { $0.most } }
    var inFlight: Int { state.withLock { $0.inFlight } }
    var cancelled: Int { state.withLock { $0.cancelled } }

    func estimate(_ url: URL) async throws -> DownloadEstimate {
        state.withLock { state in
            state.inFlight += 1
            state.most = max(state.most, state.inFlight)
        }
        defer { state.withLock { $0.inFlight -= 1 } }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let open = state.withLock { state in
                    if !state.open { state.waiting.append(waiter) }
                    return state.open
                }
                if open { waiter.resume() }
            }
        } onCancel: {
            let waiting = state.withLock { state in
                state.cancelled += 1
                defer { state.waiting = [] }
                return state.waiting
            }
            for waiter in waiting { waiter.resume() }
        }
        try Task.checkCancellation()
        return DownloadEstimate(bytes: 1_000_000, basis: .bandwidth)
    }

    /// Lets every estimate through.
    func open() {
        let waiting = state.withLock { state in
            state.open = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for waiter in waiting { waiter.resume() }
    }

    /// Suspends until `count` estimates wait at once.
    func waitForInFlight(_ count: Int) async {
        #expect(await withinPoolTurns { self.inFlight == count })
    }
}

@Suite("A course's sizes, estimated a few at a time")
@MainActor
struct QueueEstimateTests {
    static func course(_ count: Int) -> OfflineCourse {
        OfflineCourse(
            id: "course", title: "Course",
            sections: [
                OfflineCourse.Section(
                    id: "all", title: "All",
                    lessons: (0..<count).map {
                        OfflineCourse.Lesson(
                            id: "lesson-\($0)", title: "Lesson \($0)",
                            remoteURL: URL(fileURLWithPath: "/course/\($0)/index.m3u8"))
                    })
            ])
    }

    func queue(estimator: GatedEstimator) -> DownloadQueue {
        let folder = temporaryFolder("queue-estimates")
        let clock = ManualClock()
        let library = OfflineLibrary(
            directory: folder,
            downloader: MediaDownloader(
                engine: DownloadEngine(
                    concurrency: 1, retry: .none, clock: clock, transport: InMemoryHTTPTransport(clock: clock))),
            preferredLanguages: [])
        return DownloadQueue(
            library: library, file: folder.appendingPathComponent("queue.json"),
            requirements: DownloadRequirements(reserveBytes: 0), network: FixedNetworkPathMonitor(.offline),
            estimator: { try await estimator.estimate($0) }, freeSpace: { _ in 1 << 40 })
    }

    @Test(
        "downloadCourse returns once the lessons are queued: each row says estimating until its size is known, and at most four estimates run at once"
    )
    func courseShowsAtOnce() async throws {
        let estimator = GatedEstimator()
        let queue = queue(estimator: estimator)
        try await queue.start()
        let model = CourseDownloadsModel(queue: queue, course: Self.course(10))
        try await model.downloadCourse()  // returns with every estimate still waiting
        #expect(await queue.lessons.count == 10)
        #expect(model.sections[0].rows.allSatisfy { $0.isEstimating && $0.bytes == nil })
        await estimator.waitForInFlight(DownloadQueue.estimateConcurrency)
        estimator.open()
        await model.waitUntilSettled()
        #expect(model.sections[0].rows.allSatisfy { !$0.isEstimating && $0.bytes == 1_000_000 })
        #expect(estimator.most == DownloadQueue.estimateConcurrency)
        await queue.stop()
    }

    @Test("stopping the queue cancels the estimates under way, and no estimate starts after")
    func stopCancelsEstimates() async throws {
        let estimator = GatedEstimator()
        let queue = queue(estimator: estimator)
        try await queue.start()
        let model = CourseDownloadsModel(queue: queue, course: Self.course(10))
        try await model.downloadCourse()
        await estimator.waitForInFlight(DownloadQueue.estimateConcurrency)
        await queue.stop()
        #expect(await withinPoolTurns { estimator.inFlight == 0 })
        #expect(estimator.cancelled == DownloadQueue.estimateConcurrency)
        await queue.waitUntilSettled()
        #expect(estimator.most == DownloadQueue.estimateConcurrency)
        #expect(await queue.lessons.allSatisfy { $0.estimate == nil })
    }
}
