import Foundation
import HTTPSupport
import TestSupport
import Testing

@testable import Downloads
@testable import OfflineLessons

/// What was watched, as a test says.
struct FakeWatched: WatchedLessons {
    let records: LockedState<[String: WatchedLesson]>

    init(_ records: [String: WatchedLesson] = [:]) {
        self.records = LockedState(records)
    }

    func watched(_ ids: [String]) async -> [String: WatchedLesson] {
        records.withLock { all in all.filter { ids.contains($0.key) } }
    }

    func set(_ id: String, _ record: WatchedLesson) {
        records.withLock { $0[id] = record }
    }
}

/// A course that keeps itself ready: the pass's decisions, then the queue doing them.
@Suite("Smart downloads")
struct SmartDownloadTests {
    typealias Entry = SmartDownloadPlanner.Lesson

    static func entry(_ id: String, bytes: UInt64? = nil, queued: Bool = false, pinned: Bool = false) -> Entry {
        Entry(
            lesson: QueuedLesson(
                id: id, remoteURL: URL(string: "https://lessons.example/\(id)") ?? URL(fileURLWithPath: "/"),
                estimate: DownloadEstimate(bytes: 100, basis: .bandwidth), isPinned: pinned),
            downloadedBytes: bytes, isQueued: queued)
    }

    static let day: TimeInterval = 86_400

    @Test("the next unwatched lessons are queued, the watched ones removed, a pinned one kept")
    func aheadAndWatched() {
        let course = [
            Self.entry("1", bytes: 100), Self.entry("2", bytes: 100, pinned: true), Self.entry("3", bytes: 100),
            Self.entry("4"), Self.entry("5", queued: true), Self.entry("6"), Self.entry("7"),
        ]
        let watched = [
            "1": WatchedLesson(fraction: 0.95), "2": WatchedLesson(fraction: 1), "3": WatchedLesson(fraction: 0.5),
        ]
        let pass = SmartDownloadPlanner.plan(
            course: course, watched: watched, policy: SmartDownloadPolicy(lessonsAhead: 3), quota: nil,
            usedBytes: 300)
        // 3 (half watched), 4 and 5 are the three ahead: 4 is queued; 5 is already.
        #expect(pass.enqueued == ["4"])
        #expect(pass.removed == ["1"])
    }

    @Test("the threshold is the policy's, and a policy that keeps watched lessons removes none")
    func threshold() {
        let course = [Self.entry("1", bytes: 100), Self.entry("2")]
        let watched = ["1": WatchedLesson(fraction: 0.8)]
        let strict = SmartDownloadPlanner.plan(
            course: course, watched: watched, policy: SmartDownloadPolicy(lessonsAhead: 1, watchedThreshold: 0.75),
            quota: nil, usedBytes: 0)
        #expect(strict.removed == ["1"] && strict.enqueued == ["2"])
        let keeping = SmartDownloadPlanner.plan(
            course: course, watched: watched,
            policy: SmartDownloadPolicy(lessonsAhead: 1, watchedThreshold: 0.75, removesWatched: false), quota: nil,
            usedBytes: 0)
        #expect(keeping.removed.isEmpty)
    }

    @Test("over the quota, the least recently watched go first, never watched before watched, pins never")
    func quota() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let course = [
            Self.entry("old", bytes: 100), Self.entry("never", bytes: 100), Self.entry("recent", bytes: 100),
            Self.entry("pinned", bytes: 100, pinned: true), Self.entry("next"), Self.entry("after"),
        ]
        let watched = [
            "old": WatchedLesson(fraction: 0.2, lastWatched: now - 10 * Self.day),
            "recent": WatchedLesson(fraction: 0.3, lastWatched: now - Self.day),
            "pinned": WatchedLesson(fraction: 0.1, lastWatched: now - 20 * Self.day),
        ]
        // 400 used, a quota of 500: the two lessons ahead that are not downloaded need 200.
        let pass = SmartDownloadPlanner.plan(
            course: course, watched: watched, policy: SmartDownloadPolicy(lessonsAhead: 6), quota: 500,
            usedBytes: 400)
        #expect(pass.enqueued == ["next", "after"])
        // Every lesson is ahead here (none is watched): nothing may go, even over the quota.
        #expect(pass.removed.isEmpty)
        let narrow = SmartDownloadPlanner.plan(
            course: course, watched: watched, policy: SmartDownloadPolicy(lessonsAhead: 0), quota: 250,
            usedBytes: 400)
        #expect(narrow.removed == ["never", "old"])
    }

    @Test("a lesson too large for the quota even with every other gone removes nothing for it")
    func nothingForNothing() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        var large = Self.entry("large")
        large.lesson.estimate = DownloadEstimate(bytes: 900, basis: .bandwidth)
        let course = [Self.entry("old", bytes: 100), Self.entry("older", bytes: 100), large]
        let watched = [
            "old": WatchedLesson(fraction: 0.95, lastWatched: now - Self.day),
            "older": WatchedLesson(fraction: 0.95, lastWatched: now - 2 * Self.day),
        ]
        let keep = SmartDownloadPolicy(lessonsAhead: 1, removesWatched: false)
        // 300 used (100 by another course), a quota of 600: the large lesson never fits.
        let pass = SmartDownloadPlanner.plan(course: course, watched: watched, policy: keep, quota: 600, usedBytes: 300)
        #expect(pass == SmartDownloadPass(enqueued: ["large"]))
        // Smaller, it fits once the lesson watched longest ago is gone, and only that one goes.
        large.lesson.estimate = DownloadEstimate(bytes: 350, basis: .bandwidth)
        let fits = SmartDownloadPlanner.plan(
            course: [course[0], course[1], large], watched: watched, policy: keep, quota: 600, usedBytes: 300)
        #expect(fits == SmartDownloadPass(enqueued: ["large"], removed: ["older"]))
    }

    @Test(
        "seeded: a pass never removes a pinned lesson or one it keeps ahead, and queues only lessons ahead",
        arguments: 0..<UInt64(200))
    func laws(seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        let count = Int.random(in: 0...15, using: &generator)
        var course: [Entry] = []
        var watched: [String: WatchedLesson] = [:]
        for index in 0..<count {
            let downloaded = Bool.random(using: &generator)
            course.append(
                Self.entry(
                    "\(index)", bytes: downloaded ? UInt64.random(in: 1...300, using: &generator) : nil,
                    queued: !downloaded && Bool.random(using: &generator),
                    pinned: Int.random(in: 0..<4, using: &generator) == 0))
            if Bool.random(using: &generator) {
                watched["\(index)"] = WatchedLesson(
                    fraction: Double.random(in: 0...1, using: &generator),
                    lastWatched: Date(timeIntervalSince1970: Double.random(in: 0...1e9, using: &generator)))
            }
        }
        let policy = SmartDownloadPolicy(
            lessonsAhead: Int.random(in: 0...5, using: &generator),
            watchedThreshold: Double.random(in: 0.5...1, using: &generator))
        let used = course.compactMap(\.downloadedBytes).reduce(0, +)
        let quota: UInt64? = Bool.random(using: &generator) ? UInt64.random(in: 0...2_000, using: &generator) : nil
        let pass = SmartDownloadPlanner.plan(
            course: course, watched: watched, policy: policy, quota: quota, usedBytes: used)
        let ahead = course.map(\.lesson.id).filter { (watched[$0]?.fraction ?? 0) < policy.watchedThreshold }
            .prefix(policy.lessonsAhead)
        for id in pass.removed {
            let entry = course.first { $0.lesson.id == id }
            #expect(entry?.lesson.isPinned == false, "seed \(seed): pinned \(id) removed")
            #expect(!ahead.contains(id), "seed \(seed): \(id) is ahead")
        }
        #expect(Set(pass.removed).count == pass.removed.count, "seed \(seed)")
        #expect(pass.enqueued.allSatisfy(ahead.contains), "seed \(seed)")
        #expect(Set(pass.enqueued).isDisjoint(with: pass.removed), "seed \(seed)")
        // Without a quota, only watched lessons are removed.
        if quota == nil {
            #expect(
                pass.removed.allSatisfy { (watched[$0]?.fraction ?? 0) >= policy.watchedThreshold }, "seed \(seed)")
        }
    }

    /// Reads the queue's updates until lesson `id` is downloaded.
    static func waitForDownloaded(_ id: String, in queue: DownloadQueue) async {
        if await queue.state(of: id)?.isDownloaded == true { return }
        for await (changed, state) in queue.updates where changed == id && state.isDownloaded { return }
    }

    @Test("through the queue: a course keeps the next lesson downloaded, and removes it once watched")
    func queue() async throws {
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        let served = try ["ts-heaac", "packed-aac", "cmaf"].map { try ServedLesson($0) }
        for lesson in served { lesson.serve(on: transport) }
        let folder = temporaryFolder("smart")
        let downloader = MediaDownloader(
            engine: DownloadEngine(concurrency: 2, retry: .none, clock: clock, transport: transport))
        let library = OfflineLibrary(directory: folder, downloader: downloader, preferredLanguages: [])
        let queue = DownloadQueue(
            library: library, file: folder.appendingPathComponent("queue.json"),
            requirements: DownloadRequirements(reserveBytes: 0), network: FixedNetworkPathMonitor(.unmetered),
            freeSpace: { _ in 100 << 30 })
        try await queue.start()
        let course = served.map { QueuedLesson(id: $0.name, remoteURL: $0.entry, group: "course") }
        let watched = FakeWatched()
        let policy = SmartDownloadPolicy(lessonsAhead: 1)
        #expect(
            try await queue.keepReady(course, policy: policy, watched: watched)
                == SmartDownloadPass(enqueued: ["ts-heaac"]))
        await Self.waitForDownloaded("ts-heaac", in: queue)
        let first = await library.state(of: "ts-heaac")
        #expect(await library.localFile(of: "ts-heaac") != nil, "\(first)")
        // The learner watches it: the pass removes it and queues the next one.
        watched.set("ts-heaac", WatchedLesson(fraction: 0.97, lastWatched: Date()))
        let pass = try await queue.keepReady(course, policy: policy, watched: watched)
        #expect(pass == SmartDownloadPass(enqueued: ["packed-aac"], removed: ["ts-heaac"]))
        #expect(await library.localFile(of: "ts-heaac") == nil)
        await Self.waitForDownloaded("packed-aac", in: queue)
        #expect(await library.localFile(of: "packed-aac") != nil)
        #expect(await queue.lessons.map(\.id) == ["packed-aac"])
    }
}
