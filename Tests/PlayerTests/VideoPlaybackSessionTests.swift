import Foundation
import Player
import Progress
import TestSupport
import Testing

/// A video player the test drives: it moves the playhead when told and reports like AVPlayer.
@MainActor
final class FakeEngine: PlaybackEngine {
    var currentTime: Double = 0
    var duration: Double?
    var calls: [String] = []
    var seeksInFlight = 0
    var maximumSeeksInFlight = 0
    private var handler: (@MainActor (PlaybackObservation) -> Void)?
    private var seekContinuations: [CheckedContinuation<Bool, Never>] = []
    var holdSeeks = false

    init(duration: Double?) { self.duration = duration }

    func play() { calls.append("play") }
    func pause() { calls.append("pause") }

    func seek(to time: Double) async -> Bool {
        calls.append("seek \(time)")
        seeksInFlight += 1
        maximumSeeksInFlight = max(maximumSeeksInFlight, seeksInFlight)
        if holdSeeks {
            _ = await withCheckedContinuation { seekContinuations.append($0) }
        }
        currentTime = time
        seeksInFlight -= 1
        return true
    }

    func releaseSeeks() {
        holdSeeks = false
        let waiting = seekContinuations
        seekContinuations = []
        for continuation in waiting { continuation.resume(returning: true) }
    }

    func startObserving(every interval: Duration, _ handler: @escaping @MainActor (PlaybackObservation) -> Void) {
        calls.append("observe")
        self.handler = handler
    }

    func stopObserving() {
        calls.append("stop observing")
        handler = nil
    }

    /// Plays from the current time to `end`, reporting a tick every half second.
    func advance(to end: Double) {
        while currentTime + 0.5 <= end + 1e-9 {
            currentTime += 0.5
            handler?(.time(currentTime))
        }
    }

    func report(_ observation: PlaybackObservation) { handler?(observation) }

    /// The learner drags the player's own timeline to `target` in `steps` jumps: like
    /// `AVPlayerItem.timeJumpedNotification`, each jump is reported, then the periodic observer
    /// reports the time there.
    func scrub(to target: Double, steps: Int = 5) {
        let start = currentTime
        for step in 1...steps {
            currentTime = start + (target - start) * Double(step) / Double(steps)
            handler?(.seekFinished(at: currentTime))
            handler?(.time(currentTime))
        }
    }
}

@MainActor
@Suite("VideoPlaybackSession")
struct VideoPlaybackSessionTests {
    let folder: URL
    let store: ProgressStore
    var clockTime = Date(timeIntervalSince1970: 1_763_700_000)

    init() {
        folder = temporaryFolder("video-session")
        store = ProgressStore(directory: folder)
    }

    func session(engine: FakeEngine) -> VideoPlaybackSession {
        VideoPlaybackSession(
            lessonID: "salsa-101", engine: engine, store: store, deviceID: "ipad",
            now: { Date(timeIntervalSince1970: 1_763_700_000) })
    }

    @Test("records what was watched and saves on pause, seek and exit")
    func recordsAndSaves() async throws {
        let engine = FakeEngine(duration: 100)
        let session = session(engine: engine)
        await session.start()
        engine.advance(to: 10)
        session.pause()
        await session.waitUntilSettled()
        #expect(try await store.progress(for: "salsa-101")?.watched.intervals == [0..<10])
        session.seek(to: 90)
        // A tick from before the seek lands is stale and must not count.
        engine.report(.time(10.5))
        session.play()
        await session.waitUntilSettled()
        engine.advance(to: 100)
        engine.report(.ended)
        await session.exit()
        let saved = try #require(try await store.progress(for: "salsa-101"))
        #expect(saved.watched.intervals == [0..<10, 90..<100])
        #expect(saved.watchedFraction == 0.2)
        #expect(session.saveCount >= 3)
        #expect(engine.calls.last == "stop observing")
    }

    @Test(
        "a saved file that cannot be read is reported at start, then set aside by the first save: saving never stops",
        arguments: ["not json", #"{"format":"mediacore.watch-progress","version":99}"#])
    func damagedFileDoesNotStopSaving(contents: String) async throws {
        let engine = FakeEngine(duration: 100)
        let session = session(engine: engine)
        try await store.save(WatchProgress(watched: [], duration: 100), for: "salsa-101")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        try Data(contents.utf8).write(to: folder.appendingPathComponent(try #require(names.first)))
        await session.start()
        #expect(session.lastSaveError?.lessonID == "salsa-101")
        #expect(engine.currentTime == 0)
        engine.advance(to: 10)
        session.pause()
        await session.waitUntilSettled()
        #expect(session.lastSaveError == nil)
        #expect(try await store.progress(for: "salsa-101")?.watched.intervals == [0..<10])
        session.play()
        engine.advance(to: 20)
        session.pause()
        await session.waitUntilSettled()
        #expect(try await store.progress(for: "salsa-101")?.watched.intervals == [0..<20])
        // The damaged file's bytes are kept beside the new one, never deleted.
        let kept = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains(".corrupt-") }
        #expect(kept.count == 1)
        let keptBytes = try Data(contentsOf: folder.appendingPathComponent(try #require(kept.first)))
        #expect(keptBytes == Data(contents.utf8))
    }

    @Test("a new session resumes where the learner stopped")
    func resumes() async throws {
        let first = FakeEngine(duration: 100)
        let session = session(engine: first)
        await session.start()
        first.advance(to: 42)
        await session.exit()

        let second = FakeEngine(duration: 100)
        let resumed = self.session(engine: second)
        await resumed.start()
        #expect(second.calls.contains("seek 42.0"))
        #expect(second.currentTime == 42)
        #expect(resumed.tracker.progress.watched.intervals == [0..<42])
    }

    @Test("a lesson finished to the end starts again from the beginning")
    func restartsAfterTheEnd() async throws {
        try await store.save(
            WatchProgress(
                watched: [0..<100], duration: 100, isCompleted: true,
                resumePoint: ResumePoint(position: 99.5, recordedAt: Date(timeIntervalSince1970: 1), deviceID: "tv")),
            for: "salsa-101")
        let engine = FakeEngine(duration: 100)
        await session(engine: engine).start()
        #expect(!engine.calls.contains { $0.hasPrefix("seek") })
        #expect(engine.calls.contains("play"))
    }

    @Test("seeks are clamped to the media", arguments: [(-20.0, 0.0), (50, 50), (250, 100)])
    func clampedSeeks(requested: Double, expected: Double) async {
        let engine = FakeEngine(duration: 100)
        let session = session(engine: engine)
        await session.start()
        session.seek(to: requested)
        await session.waitUntilSettled()
        #expect(engine.currentTime == expected)
    }

    @Test("seeks that come faster than the engine serves them are coalesced to the latest")
    func coalescedSeeks() async {
        let engine = FakeEngine(duration: 100)
        let session = session(engine: engine)
        await session.start()
        engine.holdSeeks = true
        for target in stride(from: 10.0, through: 60, by: 10) { session.seek(to: target) }
        // Let the first seek reach the engine, then release it.
        while engine.seeksInFlight == 0 { await Task.yield() }
        engine.releaseSeeks()
        await session.waitUntilSettled()
        #expect(engine.calls.filter { $0.hasPrefix("seek") } == ["seek 10.0", "seek 60.0"])
        #expect(engine.maximumSeeksInFlight == 1)
        #expect(engine.currentTime == 60)
    }

    @Test("going to the background saves what was just watched")
    func background() async throws {
        let engine = FakeEngine(duration: 100)
        let session = session(engine: engine)
        await session.start()
        engine.advance(to: 5)
        engine.currentTime = 5.3
        session.didEnterBackground()
        await session.waitUntilSettled()
        let saved = try await store.progress(for: "salsa-101")
        #expect(saved?.watched.intervals == [0..<5.3])
        #expect(saved?.resumePosition == 5.3)
    }

    @Test("a live stream counts seconds without a fraction; bad times are ignored")
    func liveAndHostile() async {
        let engine = FakeEngine(duration: nil)
        let session = session(engine: engine)
        await session.start()
        engine.advance(to: 20)
        engine.report(.time(.nan))
        engine.report(.durationChanged(.infinity))
        #expect(session.watchedFraction == nil)
        #expect(session.tracker.progress.watchedSeconds == 20)
    }

    // MARK: What the player's own controls do

    @Test("the player's own pause button pauses the session and saves the progress")
    func nativePause() async throws {
        let engine = FakeEngine(duration: 100)
        let session = session(engine: engine)
        await session.start()
        engine.advance(to: 12)
        engine.report(.statusChanged(.paused, at: 12))
        #expect(!session.isPlaying)
        await session.waitUntilSettled()
        #expect(try await store.progress(for: "salsa-101")?.watched.intervals == [0..<12])
        engine.report(.statusChanged(.playing, at: 12))
        #expect(session.isPlaying)
        engine.advance(to: 20)
        #expect(session.tracker.progress.watched.intervals == [0..<20])
    }

    @Test(
        "a scrub on the player's own timeline is never counted as watched, paused or playing",
        arguments: [true, false])
    func nativeScrub(pausedFirst: Bool) async throws {
        let engine = FakeEngine(duration: 100)
        let session = session(engine: engine)
        await session.start()
        engine.advance(to: 10)
        if pausedFirst { engine.report(.statusChanged(.paused, at: 10)) }
        // Small steps: each alone would pass the tick-jump limit.
        engine.scrub(to: 60, steps: 100)
        if pausedFirst { engine.report(.statusChanged(.playing, at: 60)) }
        engine.advance(to: 65)
        #expect(session.tracker.progress.watched.intervals == [0..<10, 60..<65])
        await session.waitUntilSettled()
        #expect(try await store.progress(for: "salsa-101")?.resumePosition == 60)
    }

    @Test("rate changes and waiting are reported to the tracker; neither adds coverage")
    func rateAndWaiting() async {
        let engine = FakeEngine(duration: 100)
        let session = session(engine: engine)
        await session.start()
        engine.report(.rateChanged(2))
        engine.advance(to: 4)
        engine.report(.statusChanged(.waiting, at: 4))
        engine.report(.statusChanged(.playing, at: 4))
        engine.advance(to: 6)
        #expect(session.tracker.playbackRate == 2)
        #expect(session.tracker.progress.watched.intervals == [0..<6])
    }

    @Test("by default a playhead jump seen only through ticks is a seek: the limit follows the tick interval")
    func defaultJumpLimit() async {
        let engine = FakeEngine(duration: 100)
        let session = session(engine: engine)
        #expect(session.tracker.configuration.maximumTickJump == 1.5)  // 0.5 s ticks at up to 2×
        await session.start()
        engine.advance(to: 10)
        engine.currentTime = 90
        engine.report(.time(90))
        engine.advance(to: 100)
        engine.report(.ended)
        #expect(session.watchedFraction == 0.2)
    }
}
