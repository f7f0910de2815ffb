import Foundation
import HTTPSupport
import TestSupport
import Testing

@testable import Downloads
@testable import OfflineLessons

/// What a lesson counts against the quota, corrected as evidence comes in, and the admissions
/// that follow: the same whatever order the estimates and the finishes come in.
@Suite("Estimates corrected by what was measured")
struct QueueCorrectedEstimateTests {
    static func lesson(_ id: String, bytes: UInt64?, basis: DownloadEstimate.Basis = .bandwidth, group: String? = "c")
        -> QueuedLesson
    {
        QueuedLesson(
            id: id, remoteURL: URL(fileURLWithPath: "/lessons/\(id)"), group: group,
            estimate: bytes.map { DownloadEstimate(bytes: $0, basis: basis) })
    }

    static func downloaded(_ bytes: UInt64) -> OfflineLibrary.ItemState {
        .downloaded(fileName: "f.mp4", byteCount: bytes)
    }

    @Test(
        "a BANDWIDTH estimate (an upper bound, RFC 8216 §4.3.4.2) counts at its figure times the median ratio of measured to estimated among its group's downloaded lessons"
    )
    func bandwidthCorrectedByTheMedianRatio() {
        let lessons = [
            Self.lesson("a", bytes: 1_000), Self.lesson("b", bytes: 2_000), Self.lesson("c", bytes: 1_000),
            Self.lesson("d", bytes: 1_500),
        ]
        // Ratios 0.4, 0.5 and 0.9: the median is 0.5.
        let states = ["a": Self.downloaded(400), "b": Self.downloaded(1_000), "c": Self.downloaded(900)]
        let counted = QueueSizes.counted(lessons, states: states, estimated: [:], written: [:])
        #expect(counted == ["d": 750])
        // Nothing downloaded yet: the estimate as it is.
        #expect(QueueSizes.counted(lessons, states: [:], estimated: [:], written: [:])["d"] == 1_500)
    }

    @Test(
        "the ratio is the estimator's: a lesson whose estimate its download refined is measured against the figure the estimator gave, and an exact or refined estimate is not corrected"
    )
    func refinedAndExactEstimates() {
        let lessons = [
            Self.lesson("a", bytes: 410, basis: .refined), Self.lesson("b", bytes: 1_000, basis: .byteRanges),
            Self.lesson("c", bytes: 700, basis: .refined), Self.lesson("d", bytes: 1_000),
        ]
        let estimated = ["a": DownloadEstimate(bytes: 1_000, basis: .bandwidth)]
        let counted = QueueSizes.counted(
            lessons, states: ["a": Self.downloaded(400)], estimated: estimated, written: [:])
        #expect(counted == ["b": 1_000, "c": 700, "d": 400])
    }

    @Test("the ratio of one group, or of one kind of estimate, does not correct another's")
    func groupsAndBasesApart() {
        let lessons = [
            Self.lesson("a", bytes: 1_000, group: "x"), Self.lesson("b", bytes: 1_000, group: "y"),
            Self.lesson("c", bytes: 1_000, basis: .firstSegment, group: "x"),
            Self.lesson("d", bytes: 1_000, group: nil),
        ]
        let counted = QueueSizes.counted(lessons, states: ["a": Self.downloaded(500)], estimated: [:], written: [:])
        #expect(counted == ["b": 1_000, "c": 1_000, "d": 1_000])
    }

    @Test("a lesson downloading counts at least the bytes it has written")
    func downloadingCountsItsBytes() {
        let lessons = [Self.lesson("a", bytes: 1_000), Self.lesson("b", bytes: nil)]
        let states: [String: OfflineLibrary.ItemState] = [
            "a": .downloading(fraction: 0.9), "b": .downloading(fraction: 0.5),
        ]
        let counted = QueueSizes.counted(lessons, states: states, estimated: [:], written: ["a": 1_300, "b": 20])
        #expect(counted == ["a": 1_300, "b": 20])
        #expect(
            QueueSizes.counted(lessons, states: states, estimated: [:], written: ["a": 300]) == ["a": 1_000])
    }

    @Test(
        "seeded: the figures depend on the evidence, not on the order of the lessons it came from",
        arguments: [0x5153_0001, 0x5153_0002, 0x5153_0003] as [UInt64])
    func orderDoesNotMatter(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        for _ in 0..<50 {
            let count = Int.random(in: 2...9, using: &random)
            let lessons = (0..<count).map { index in
                Self.lesson(
                    "l\(index)", bytes: UInt64.random(in: 100...10_000, using: &random),
                    group: Bool.random(using: &random) ? "x" : "y")
            }
            var states: [String: OfflineLibrary.ItemState] = [:]
            for lesson in lessons where Bool.random(using: &random) {
                states[lesson.id] = Self.downloaded(UInt64.random(in: 50...12_000, using: &random))
            }
            let counted = QueueSizes.counted(lessons, states: states, estimated: [:], written: [:])
            let shuffled = lessons.shuffled(using: &random)
            #expect(QueueSizes.counted(shuffled, states: states, estimated: [:], written: [:]) == counted)
        }
    }

    // MARK: Every order

    /// A course's admissions under a quota, as the queue decides them: the planner with the
    /// corrected figures, after each event.
    struct Course: Hashable {
        static let estimate: UInt64 = 1_500_000
        static let measured: UInt64 = 683_000

        let quota: UInt64
        let concurrency: Int
        /// Each lesson's estimate, and what its file measures.
        let sizes: [String: (estimate: UInt64, measured: UInt64)]
        var lessons: [QueuedLesson]
        var states: [String: OfflineLibrary.ItemState] = [:]

        /// `count` identical lessons.
        init(count: Int, quota: UInt64, concurrency: Int) {
            self.init(
                estimates: Array(repeating: Self.estimate, count: count),
                ratio: Double(Self.measured) / Double(Self.estimate),
                quota: quota, concurrency: concurrency)
        }

        /// Lessons of these estimates, each measuring `ratio` of it (one encoder's course).
        init(estimates: [UInt64], ratio: Double, quota: UInt64, concurrency: Int) {
            self.quota = quota
            self.concurrency = concurrency
            var sizes: [String: (UInt64, UInt64)] = [:]
            for (index, estimate) in estimates.enumerated() {
                sizes["l\(index + 1)"] = (estimate, UInt64((Double(estimate) * ratio).rounded()))
            }
            self.sizes = sizes
            lessons = estimates.indices.map { QueueCorrectedEstimateTests.lesson("l\($0 + 1)", bytes: nil) }
        }

        static func == (lhs: Course, rhs: Course) -> Bool {
            lhs.lessons == rhs.lessons && lhs.states == rhs.states
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(lessons)
            hasher.combine(states)
        }

        /// The events that can come next: an estimate arrives, or a download finishes.
        var events: [Event] {
            lessons.filter { $0.estimate == nil }.map { .estimate($0.id) }
                + lessons.filter { if case .downloading? = states[$0.id] { true } else { false } }.map {
                    .finish($0.id)
                }
        }

        enum Event: Hashable {
            case estimate(String)
            case finish(String)
        }

        mutating func take(_ event: Event) {
            switch event {
            case .estimate(let id):
                if let index = lessons.firstIndex(where: { $0.id == id }) {
                    lessons[index].estimate = DownloadEstimate(bytes: sizes[id]?.estimate, basis: .bandwidth)
                }
            case .finish(let id):
                states[id] = .downloaded(fileName: "\(id).mp4", byteCount: sizes[id]?.measured ?? 0)
            }
            plan()
        }

        mutating func plan() {
            let used = states.values.reduce(UInt64(0)) { sum, state in
                if case .downloaded(_, let bytes) = state { return sum + bytes }
                return sum
            }
            let estimating = Set(lessons.filter { $0.estimate == nil }.map(\.id))
            let decision = QueuePlanner.plan(
                lessons, library: states,
                conditions: QueuePlanner.Conditions(network: .unmetered, freeBytes: 1 << 40, usedBytes: used),
                requirements: DownloadRequirements(reserveBytes: 0, quotaBytes: quota), concurrency: concurrency,
                counted: QueueSizes.counted(lessons, states: states, estimated: [:], written: [:]),
                estimating: estimating)
            for id in decision.start { states[id] = .downloading(fraction: 0) }
        }

        var admitted: Set<String> {
            Set(states.compactMap { id, state in if case .downloaded = state { id } else { nil } })
        }
    }

    /// The admitted lessons of every order of `course`'s events, once nothing is left to happen.
    static func outcomes(of course: Course) -> Set<Set<String>> {
        var start = course
        start.plan()
        var visited: Set<Course> = [start]
        var frontier = [start]
        var outcomes: Set<Set<String>> = []
        while let world = frontier.popLast() {
            let events = world.events
            if events.isEmpty { outcomes.insert(world.admitted) }
            for event in events {
                var next = world
                next.take(event)
                if visited.insert(next).inserted { frontier.append(next) }
            }
        }
        return outcomes
    }

    @Test(
        "seven identical lessons, each estimated at 1.5 MB and measuring 683 KB, under a quota: every order of their estimates and finishes admits the same lessons, and as many as their measured sizes allow",
        arguments: [
            (quota: UInt64(5_000_000), concurrency: 1, admitted: 7),
            (quota: 4_800_000, concurrency: 2, admitted: 7),
            (quota: 4_000_000, concurrency: 1, admitted: 5),
            (quota: 4_000_000, concurrency: 3, admitted: 5),
            (quota: 1_000_000, concurrency: 2, admitted: 0),
        ])
    func everyOrderAdmitsTheSame(quota: UInt64, concurrency: Int, admitted: Int) {
        let outcomes = Self.outcomes(of: Course(count: 7, quota: quota, concurrency: concurrency))
        #expect(outcomes.count == 1, "\(outcomes.map { $0.sorted() })")
        #expect(outcomes.first?.count == admitted)
    }

    @Test(
        "lessons of different sizes from one encoder (each file half its BANDWIDTH estimate), under a quota: every order of estimates and finishes admits the same lessons, the longest run of the queue that fits, none passing one that waits (found by review: a smaller lesson could pass one waiting for room, by when a sibling finished)",
        arguments: [
            (quota: UInt64(2_000_000), concurrency: 2, admitted: ["l1", "l2", "l3"]),
            (quota: 2_600_000, concurrency: 2, admitted: ["l1", "l2", "l3", "l4"]),
            (quota: 3_000_000, concurrency: 3, admitted: ["l1", "l2", "l3", "l4", "l5"]),
            (quota: 1_600_000, concurrency: 1, admitted: ["l1", "l2"]),
            // The first lesson's estimate is over the quota, and no sibling can say it is smaller.
            (quota: 900_000, concurrency: 1, admitted: []),
        ])
    func everyOrderAdmitsTheSameOfDifferentSizes(quota: UInt64, concurrency: Int, admitted: [String]) {
        // Files: 750, 250, 1,000, 500, 400, 600 KB.
        let course = Course(
            estimates: [1_500_000, 500_000, 2_000_000, 1_000_000, 800_000, 1_200_000], ratio: 0.5, quota: quota,
            concurrency: concurrency)
        let outcomes = Self.outcomes(of: course)
        #expect(outcomes.count == 1, "\(outcomes.map { $0.sorted() })")
        #expect(outcomes.first.map { $0.sorted() } == admitted)
    }
}

/// The same over a real queue and library: lessons estimated far above what they measure.
@Suite("A queue that corrects its estimates")
struct QueueEstimateCorrectionTests {
    let clock = ManualClock()
    let transport: InMemoryHTTPTransport<ManualClock>
    let lesson: ServedLesson

    init() throws {
        transport = InMemoryHTTPTransport(clock: clock)
        lesson = try ServedLesson("packed-aac")
        lesson.serve(on: transport)
    }

    @Test(
        "seven lessons whose BANDWIDTH estimates are twice their files, under a quota that fits their files: all seven download, the last let in by its siblings' measured sizes (found by review: it waited on its estimate)"
    )
    func siblingsCorrectTheEstimate() async throws {
        let downloader = MediaDownloader(
            engine: DownloadEngine(concurrency: 2, retry: .none, clock: clock, transport: transport))
        let alone = temporaryFolder("queue-estimate-alone").appendingPathComponent("lesson")
        let measured = try await downloader.downloadLesson(from: lesson.entry, to: alone, preferredLanguages: [])
            .result().byteCount
        let inflated = DownloadEstimate(bytes: measured * 2, basis: .bandwidth)
        let folder = temporaryFolder("queue-estimate")
        let library = OfflineLibrary(directory: folder, downloader: downloader, preferredLanguages: [])
        let queue = DownloadQueue(
            library: library, file: folder.appendingPathComponent("queue.json"),
            requirements: DownloadRequirements(reserveBytes: 0, quotaBytes: measured * 7 + 100), concurrency: 1,
            network: FixedNetworkPathMonitor(.unmetered), estimator: { _ in inflated }, freeSpace: { _ in 100 << 30 })
        try await queue.start()
        let remote = lesson.entry
        try await queue.enqueue((1...7).map { QueuedLesson(id: "l\($0)", remoteURL: remote, group: "course") })
        await queue.waitUntilSettled()
        let states = await queue.allStates
        #expect(states.count == 7)
        let shown = states.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
        let allDownloaded = states.values.allSatisfy { $0.isDownloaded }
        #expect(allDownloaded, "\(shown)")
        #expect(await library.totalBytes <= measured * 7 + 100)
    }
}
