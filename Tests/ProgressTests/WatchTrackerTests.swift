import Foundation
import Progress
import TestSupport
import Testing

/// Replays events on a tracker with a wall clock that starts at a fixed date and moves as told.
///
/// These tests speak in sparse ticks (`tick(at: 15)` right after `play(at: 0)`) to exercise one
/// rule at a time, so their default configuration accepts any forward tick; the default jump
/// limit has tests of its own.
struct Replay {
    var tracker: WatchTracker
    var now = Date(timeIntervalSince1970: 1_763_700_000)

    init(duration: Double? = 100, configuration: WatchTracker.Configuration = .init(maximumTickJump: nil)) {
        tracker = WatchTracker(deviceID: "phone", duration: duration, configuration: configuration)
    }

    mutating func callAsFunction(_ events: PlaybackEvent..., every step: TimeInterval = 1) {
        for event in events {
            tracker.handle(event, at: now)
            now += step
        }
    }

    var progress: WatchProgress { tracker.progress }
}

@Suite("WatchTracker")
struct WatchTrackerTests {
    @Test("reproduces the shared progress vectors", arguments: try ProgressCase.all())
    func sharedVectors(vector: ProgressCase) throws {
        let configuration = WatchTracker.Configuration(
            maximumTickJump: vector.configuration.maxJump,
            completionThreshold: vector.configuration.completionThreshold,
            gapTolerance: vector.configuration.tolerance
        )
        var tracker = WatchTracker(
            deviceID: "local", duration: vector.configuration.duration?.value, configuration: configuration)
        var wallClock = Date(timeIntervalSince1970: 0)
        for event in vector.events {
            switch event {
            case .playback(let name, let value):
                let playbackEvent: PlaybackEvent =
                    switch name {
                    case "play": .play(at: value)
                    case "tick": .tick(at: value)
                    case "pause": .pause(at: value)
                    case "end": .ended(at: value)
                    case "seek": .seek(to: value)
                    case "rate": .rateChanged(value)
                    case "buffering": .stalled(at: value)
                    case "duration": .durationChanged(value)
                    default: .stalled(at: .nan)
                    }
                #expect(["play", "tick", "pause", "end", "seek", "rate", "buffering", "duration"].contains(name))
                tracker.handle(playbackEvent, at: wallClock)
            case .segment(let start, let end):
                guard start.isFinite, end.isFinite, start < end else { continue }
                tracker.recordWatched(start..<end)
            case .xapi(let text):
                for interval in try PlayedSegments.parse(text) { tracker.recordWatched(interval) }
            case .localResumeAt(let time):
                wallClock = Date(timeIntervalSince1970: time)
            case .merge(let segments, let resume, let time):
                let remote = WatchProgress(
                    watched: IntervalSet(segments.map { $0[0]..<$0[1] }),
                    duration: nil,
                    resumePoint: resume.flatMap {
                        ResumePoint(
                            position: $0, recordedAt: Date(timeIntervalSince1970: time ?? 0), deviceID: "remote")
                    })
                tracker.merge(remote)
            }
        }
        let progress = tracker.progress
        let expected = vector.expected
        if let fraction = expected.fraction {
            let measured = try #require(progress.watchedFraction)
            #expect(abs(measured - fraction) < 1e-12)
        } else {
            #expect(progress.watchedFraction == nil)
        }
        #expect(abs(progress.watchedSeconds - expected.watchedSeconds) < 1e-9)
        #expect(progress.resumePosition == expected.resume)
        #expect(progress.isCompleted == expected.completed)
        #expect(progress.watched.intervals == expected.segments.map { $0[0]..<$0[1] })
        if let reported = expected.reportedProgress, let fraction = progress.watchedFraction {
            #expect(PlayedSegments.progress(forFraction: fraction) == reported)
        }
    }

    @Test(
        "the brief's three cases",
        arguments: [
            ([PlaybackEvent.play(at: 0), .pause(at: 10), .seek(to: 0), .play(at: 0), .pause(at: 10)], 0.1),
            ([.play(at: 0), .tick(at: 15), .seek(to: 0), .tick(at: 20), .pause(at: 20)], 0.2),
            ([.play(at: 0), .tick(at: 10), .seek(to: 90), .tick(at: 100), .ended(at: 100)], 0.2),
        ]
    )
    func briefCases(events: [PlaybackEvent], fraction: Double) {
        var replay = Replay()
        for event in events { replay(event) }
        #expect(replay.progress.watchedFraction == fraction)
    }

    /// The third case as a player reports it when the learner drags the playhead: no seek
    /// event, only the periodic observer's ticks, once a second.
    @Test("with the default configuration, the brief's third case reported only as ticks is 20%, not 100%")
    func thirdCaseByTicksAlone() {
        var replay = Replay(configuration: WatchTracker.Configuration())
        replay(.play(at: 0))
        for second in 1...10 { replay(.tick(at: Double(second))) }
        // The playhead is at 90 at the next tick: 80 seconds in one second of playback.
        for second in 90...100 { replay(.tick(at: Double(second))) }
        replay(.ended(at: 100))
        #expect(replay.progress.watched.intervals == [0..<10, 90..<100])
        #expect(replay.progress.watchedFraction == 0.2)
    }

    @Test(
        "the default tick-jump limit follows from the tick interval",
        arguments: [(1.0, 2.0, 3.0), (0.5, 2.0, 1.5), (0.25, 1.0, 0.375), (1.0, 0.5, 1.5)] as [(Double, Double, Double)]
    )
    func tickJumpFromInterval(interval: Double, rate: Double, expected: Double) {
        #expect(
            WatchTracker.Configuration.maximumTickJump(tickInterval: interval, maximumPlaybackRate: rate) == expected)
        #expect(WatchTracker.Configuration().maximumTickJump == 3)
        #expect(WatchTracker.Configuration.maximumTickJump(tickInterval: .nan) == nil)
        #expect(WatchTracker.Configuration.maximumTickJump(tickInterval: 0) == nil)
    }

    @Test("play while already playing starts a new interval there: the jump between is not watched")
    func playWhilePlaying() {
        var replay = Replay(configuration: WatchTracker.Configuration())
        replay(.play(at: 0), .tick(at: 1), .tick(at: 2), .play(at: 40), .tick(at: 41), .pause(at: 42))
        #expect(replay.progress.watched.intervals == [0..<2, 40..<42])
        #expect(replay.tracker.playedSpans == [0..<2, 40..<42])
    }

    @Test("a pause reported without ticks still counts what was played; only ticks are held to the jump limit")
    func pauseWithoutTicks() {
        var replay = Replay(configuration: WatchTracker.Configuration())
        replay(.play(at: 0), .pause(at: 15))
        #expect(replay.progress.watched.intervals == [0..<15])
    }

    @Test("a seek during playback closes the interval at the seek's origin")
    func seekWithOrigin() {
        var replay = Replay()
        replay(.play(at: 0), .tick(at: 10), .seek(from: 12, to: 50), .tick(at: 55), .pause(at: 55))
        #expect(replay.progress.watched.intervals == [0..<12, 50..<55])
    }

    @Test(
        "a tick backwards or past the maximum jump is a seek, not playback",
        arguments: [(1.5, [0..<2, 10..<11]), (nil, [0..<11])] as [(Double?, [Range<Double>])]
    )
    func implicitSeek(maximumJump: Double?, expected: [Range<Double>]) {
        var replay = Replay(configuration: .init(maximumTickJump: maximumJump))
        replay(.play(at: 0), .tick(at: 1), .tick(at: 2), .tick(at: 10), .tick(at: 11), .pause(at: 11))
        #expect(replay.progress.watched.intervals == expected)
        var backwards = Replay()
        backwards(.play(at: 30), .tick(at: 40), .tick(at: 5), .tick(at: 8), .pause(at: 8))
        #expect(backwards.progress.watched.intervals == [5..<8, 30..<40])
    }

    @Test("the playback rate changes time spent, never coverage")
    func playbackRate() {
        var normal = Replay()
        normal(.play(at: 0), .tick(at: 10), .pause(at: 20), every: 10)
        var fast = Replay()
        fast(.rateChanged(2), .play(at: 0), .tick(at: 10), .pause(at: 20), every: 5)
        #expect(fast.progress.watched == normal.progress.watched)
        #expect(fast.tracker.playbackRate == 2)
        #expect(fast.progress.timeSpent < normal.progress.timeSpent)
    }

    @Test(
        "non-finite positions are ignored and negative ones clamp to 0",
        arguments: [Double.nan, .infinity, -.infinity]
    )
    func hostilePositions(bad: Double) {
        var replay = Replay()
        replay(.play(at: bad), .tick(at: -5), .tick(at: bad), .tick(at: 10), .seek(to: bad), .pause(at: 12))
        #expect(replay.progress.watched.intervals == [0..<12])
        #expect(replay.progress.resumePosition == 12)
        replay(.durationChanged(bad))
        #expect(replay.progress.watchedFraction == nil)
        #expect(replay.progress.watchedSeconds == 12)
    }

    @Test("a later duration change re-clips the fraction; a live stream has none")
    func durationChanges() throws {
        var replay = Replay(duration: nil)
        replay(.play(at: 0), .tick(at: 80), .pause(at: 80))
        #expect(replay.progress.watchedFraction == nil)
        #expect(replay.progress.watchedSeconds == 80)
        replay(.durationChanged(50))
        #expect(replay.progress.watchedFraction == 1)
        #expect(replay.progress.watchedSeconds == 50)
        #expect(replay.progress.resumePosition == 50)
        replay(.durationChanged(160))
        #expect(replay.progress.watchedFraction == 0.5)
        #expect(replay.progress.watched.intervals == [0..<80])
        // Completion reached at duration 50 stays latched.
        #expect(replay.progress.isCompleted)
    }

    @Test("completion allows float accumulation error and latches")
    func completion() {
        var replay = Replay(duration: 1)
        replay(.play(at: 0))
        var position = 0.0
        for _ in 0..<10 {
            position += 0.1
            replay(.tick(at: position))
        }
        // 0.1 added ten times is 0.9999999999999999, not 1.
        #expect(position < 1)
        #expect(replay.progress.isCompleted)
        var partial = Replay(duration: 100, configuration: .init(maximumTickJump: nil, completionThreshold: 0.9))
        partial(.play(at: 0), .tick(at: 89), .pause(at: 89))
        #expect(!partial.progress.isCompleted)
        partial(.play(at: 89), .tick(at: 90), .pause(at: 90))
        #expect(partial.progress.isCompleted)
        partial(.durationChanged(1_000))
        #expect(partial.progress.isCompleted)
    }

    @Test("resume follows the playhead, including a seek while paused")
    func resume() {
        var replay = Replay()
        replay(.play(at: 0), .pause(at: 10), .seek(to: 42))
        #expect(replay.progress.resumePosition == 42)
        #expect(replay.progress.watched.intervals == [0..<10])
    }

    @Test("time spent counts pauses but not long absences")
    func timeSpent() {
        var replay = Replay(configuration: .init(maximumTickJump: nil, maximumCountedIdle: 600))
        replay(.play(at: 0), .pause(at: 10), every: 10)
        // Paused for five minutes: counted.
        replay.now += 290
        replay(.play(at: 10), .pause(at: 20), every: 10)
        #expect(replay.progress.timeSpent == .seconds(10 + 300 + 10))
        // Away for a day: not counted.
        replay.now += 86_400
        replay(.play(at: 20), .pause(at: 30), every: 10)
        #expect(replay.progress.timeSpent == .seconds(10 + 300 + 10 + 10))
        #expect(replay.progress.timeSpentByDevice.keys.sorted() == ["phone"])
    }

    @Test("gap tolerance fills short skips so the lesson can complete")
    func gapTolerance() {
        var replay = Replay(duration: 10, configuration: .init(maximumTickJump: nil, gapTolerance: 0.5))
        replay(.play(at: 0), .tick(at: 4), .seek(to: 4.3), .tick(at: 10), .ended(at: 10))
        #expect(replay.progress.watched.intervals == [0..<10])
        #expect(replay.progress.isCompleted)
    }

    @Test("played spans keep every replay for the re-watch analysis")
    func playedSpans() {
        var replay = Replay()
        replay(.play(at: 0), .tick(at: 5), .tick(at: 10), .seek(to: 2), .tick(at: 6), .pause(at: 6))
        replay(.play(at: 6), .tick(at: 8), .pause(at: 8))
        #expect(replay.tracker.playedSpans == [0..<10, 2..<6, 6..<8])
        let counts = PlayCounts(played: replay.tracker.playedSpans)
        #expect(counts.mostRewatched() == [PlayCounts.Span(range: 2..<8, playCount: 2)])
    }

    @Test("stalls and ticks while paused add nothing")
    func stalls() {
        var replay = Replay()
        replay(.play(at: 0), .tick(at: 5), .stalled(at: 5), .tick(at: 6), .pause(at: 6), .tick(at: 30))
        #expect(replay.progress.watched.intervals == [0..<6])
        #expect(replay.progress.resumePosition == 30)
    }
}
