import Foundation
import Progress
import TestSupport
import Testing

extension SplitMix64 {
    /// A random progress state as a device could hold it.
    mutating func progress() -> WatchProgress {
        let devices = ["ipad", "phone", "tv"]
        let durations: [Double?] = [nil, 100, 100.5, 120]
        let resume: ResumePoint? =
            Bool.random(using: &self)
            ? ResumePoint(
                position: Double(Int.random(in: 0..<200, using: &self)) / 2,
                // Few distinct times and devices, so ties are common and the tie-breaks are tested.
                recordedAt: Date(timeIntervalSince1970: Double(Int.random(in: 0..<4, using: &self))),
                deviceID: devices[Int.random(in: 0..<devices.count, using: &self)])
            : nil
        var spent: [String: Double] = [:]
        for device in devices where Bool.random(using: &self) {
            spent[device] = Double(Int.random(in: 1..<100, using: &self))
        }
        return WatchProgress(
            watched: intervalSet(count: Int.random(in: 0..<25, using: &self)),
            duration: durations[Int.random(in: 0..<durations.count, using: &self)],
            isCompleted: Int.random(in: 0..<5, using: &self) == 0,
            resumePoint: resume,
            timeSpentByDevice: spent
        )
    }
}

@Suite("WatchProgress merge (CRDT laws)")
struct WatchProgressMergeTests {
    static let seeds = UInt64(0)..<3_000

    @Test("merge is commutative")
    func commutative() {
        for seed in Self.seeds {
            var generator = SplitMix64(seed: seed)
            let a = generator.progress()
            let b = generator.progress()
            #expect(a.merged(with: b) == b.merged(with: a), "seed \(seed)")
        }
    }

    @Test("merge is associative")
    func associative() {
        for seed in Self.seeds {
            var generator = SplitMix64(seed: seed)
            let a = generator.progress()
            let b = generator.progress()
            let c = generator.progress()
            #expect(a.merged(with: b).merged(with: c) == a.merged(with: b.merged(with: c)), "seed \(seed)")
        }
    }

    @Test("merge is idempotent, and never smaller than its inputs")
    func idempotentAndInflationary() {
        for seed in Self.seeds {
            var generator = SplitMix64(seed: seed)
            let a = generator.progress()
            let b = generator.progress()
            #expect(a.merged(with: a) == a, "seed \(seed)")
            let merged = a.merged(with: b)
            #expect(merged.merged(with: b) == merged, "seed \(seed)")
            #expect(merged.watched.intersection(a.watched) == a.watched, "seed \(seed)")
            #expect(
                merged.watched.coveredLength >= max(a.watched.coveredLength, b.watched.coveredLength), "seed \(seed)")
            #expect(merged.isCompleted == (a.isCompleted || b.isCompleted), "seed \(seed)")
            #expect(merged.timeSpent >= max(a.timeSpent, b.timeSpent), "seed \(seed)")
        }
    }

    @Test("the later resume point wins; equal times break ties by device, the same way everywhere")
    func lastWriterWins() {
        let early = ResumePoint(position: 10, recordedAt: Date(timeIntervalSince1970: 100), deviceID: "tv")
        let late = ResumePoint(position: 70, recordedAt: Date(timeIntervalSince1970: 200), deviceID: "ipad")
        let tie = ResumePoint(position: 30, recordedAt: Date(timeIntervalSince1970: 200), deviceID: "phone")
        let a = WatchProgress(watched: [], duration: 100, resumePoint: early)
        let b = WatchProgress(watched: [], duration: 100, resumePoint: late)
        let c = WatchProgress(watched: [], duration: 100, resumePoint: tie)
        #expect(a.merged(with: b).resumePosition == 70)
        #expect(b.merged(with: a).resumePosition == 70)
        #expect(b.merged(with: c).resumePoint == tie)
        #expect(c.merged(with: b).resumePoint == tie)
    }

    @Test(
        "a resume point with a position or time that is not finite, or a negative position, cannot be made",
        arguments: [
            (Double.nan, 1.0), (.infinity, 1), (-1, 1), (5, .nan), (5, -.infinity),
        ])
    func invalidResumePoints(position: Double, seconds: Double) {
        #expect(
            ResumePoint(position: position, recordedAt: Date(timeIntervalSince1970: seconds), deviceID: "tv") == nil)
        var progress = WatchProgress(watched: [], duration: 100)
        progress.recordResumePosition(position, at: Date(timeIntervalSince1970: seconds), deviceID: "tv")
        #expect(progress.resumePoint == nil || position < 0)
        #expect(progress.resumePoint.map { $0.position == 0 && $0.secondsSince1970 == seconds } ?? true)
    }

    @Test("a local write after a merge wins even when the remote clock ran ahead")
    func localWriteAfterSkewedRemote() {
        var tracker = WatchTracker(deviceID: "phone", duration: 100)
        let ahead = ResumePoint(position: 80, recordedAt: Date(timeIntervalSince1970: 5_000), deviceID: "tv")
        tracker.merge(WatchProgress(watched: [0..<80], duration: 100, resumePoint: ahead))
        tracker.handle(.seek(to: 12), at: Date(timeIntervalSince1970: 4_000))
        #expect(tracker.progress.resumePosition == 12)
    }

    @Test("merging with a gap tolerance does not depend on the merge order")
    func toleranceOrderIndependent() {
        for seed in UInt64(0)..<500 {
            var generator = SplitMix64(seed: seed)
            let remote = [generator.progress(), generator.progress()]
            let configuration = WatchTracker.Configuration(gapTolerance: 1)
            var forward = WatchTracker(deviceID: "x", configuration: configuration)
            var backward = forward
            for progress in remote { forward.merge(progress) }
            for progress in remote.reversed() { backward.merge(progress) }
            #expect(forward.progress == backward.progress, "seed \(seed)")
        }
    }

    @Test("the fraction after a merge clips to the larger known duration")
    func mergeDuration() throws {
        let a = WatchProgress(watched: [0..<50], duration: 100)
        let b = WatchProgress(watched: [40..<120], duration: nil)
        let merged = a.merged(with: b)
        #expect(merged.duration == 100)
        #expect(merged.watchedSeconds == 100)
        #expect(try #require(merged.watchedFraction) == 1)
        #expect(merged.unwatchedSpans == [])
        #expect(a.unwatchedSpans == [50..<100])
    }
}
