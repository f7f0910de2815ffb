import Foundation
import Player
import Progress
import TestSupport
import Testing

/// A video player that reports what `AVPlayer` reports, in the orders it reports them: `play()`
/// sets the rate, passes through waiting to playing and fires the periodic observer; `pause()`
/// sets the rate to 0, the status to paused, and fires the observer; a seek posts the time jump
/// and fires the observer at its target before its completion handler runs.
@MainActor
final class SimulatedAVPlayer: ObservableVideoPlayer {
    var currentTime: Double = 0
    var duration: Double?
    var defaultRate: Double = 1
    private(set) var rate: Double = 0
    private(set) var playCalls = 0
    private(set) var pauseCalls = 0
    private var report: (@MainActor @Sendable (PlayerObservation) -> Void)?
    private var heldSeeks: [(target: Double, continuation: CheckedContinuation<Bool, Never>)] = []
    /// Seeks wait for ``completeSeeks(finished:)`` while set.
    var holdsSeeks = false
    /// The observer's stale report of the old position that `AVPlayer` may make during a seek.
    var reportsStaleTimeDuringSeeks = true

    init(duration: Double?) { self.duration = duration }

    var isReporting: Bool { report != nil }

    func play() {
        playCalls += 1
        rate = defaultRate
        send(.rate(rate))
        send(.timeControlStatus(.waiting))
        send(.timeControlStatus(.playing))
        send(.periodicTime(currentTime))
    }

    func pause() {
        pauseCalls += 1
        stop()
    }

    func seek(to time: Double) async -> Bool {
        let old = currentTime
        if reportsStaleTimeDuringSeeks { send(.periodicTime(old + 0.25)) }
        currentTime = time
        send(.timeJumped(to: time))
        send(.periodicTime(time))
        guard holdsSeeks else { return true }
        return await withCheckedContinuation { heldSeeks.append((time, $0)) }
    }

    /// Runs the completion handlers of the held seeks: every one but the last `false`, as
    /// `AVPlayer` reports seeks a later one interrupted.
    func completeSeeks(finished: Bool = true) {
        holdsSeeks = false
        let held = heldSeeks
        heldSeeks = []
        for (index, seek) in held.enumerated() {
            seek.continuation.resume(returning: finished && index == held.count - 1)
        }
    }

    var hasHeldSeek: Bool { !heldSeeks.isEmpty }

    func startReporting(every interval: Duration, to report: @escaping @MainActor @Sendable (PlayerObservation) -> Void)
    {
        self.report = report
        if let duration { report(.durationChanged(duration)) }
    }

    func stopReporting() { report = nil }

    // MARK: What the player does by itself

    /// Plays on to `end`, firing the periodic observer every half second.
    func advance(to end: Double) {
        while currentTime + 0.5 <= end + 1e-9 {
            currentTime += 0.5
            send(.periodicTime(currentTime))
        }
    }

    /// The rate drops to 0 and the status to paused, with the observer's report at the stop.
    func stop() {
        rate = 0
        send(.rate(0))
        send(.timeControlStatus(.paused))
        send(.periodicTime(currentTime))
    }

    /// The player's own scrubber: each step jumps the time, then the observer fires there.
    func scrub(to target: Double, steps: Int = 4) {
        let start = currentTime
        for step in 1...steps {
            currentTime = start + (target - start) * Double(step) / Double(steps)
            send(.timeJumped(to: currentTime))
            send(.periodicTime(currentTime))
        }
    }

    func send(_ observation: PlayerObservation) { report?(observation) }
}

@MainActor
@Suite("PlayerObservationBridge: AVPlayer's reports into a session's events")
struct PlayerObservationBridgeTests {
    let store: ProgressStore
    let clock = ManualClock()

    init() {
        store = ProgressStore(directory: temporaryFolder("bridge"))
    }

    func make(duration: Double? = 100) -> (SimulatedAVPlayer, PlayerObservationBridge, VideoPlaybackSession) {
        let player = SimulatedAVPlayer(duration: duration)
        let bridge = PlayerObservationBridge(player: player, clock: clock)
        let session = VideoPlaybackSession(
            lessonID: "bachata-2", engine: bridge, store: store, deviceID: "iphone",
            now: { Date(timeIntervalSince1970: 1_763_700_000) })
        return (player, bridge, session)
    }

    func saved() async throws -> WatchProgress {
        try #require(try await store.progress(for: "bachata-2"))
    }

    @Test("periodic times that arrive before the session's seek completes are the seek's, not playback")
    func ticksBeforeSeekCompletes() async throws {
        let (player, _, session) = make()
        await session.start()
        player.advance(to: 10)
        player.holdsSeeks = true
        session.seek(to: 11.5)
        while !player.hasHeldSeek { await Task.yield() }
        // The observer reports the old position, then the target, while the seek is in flight.
        player.send(.periodicTime(10.5))
        player.send(.periodicTime(11.5))
        player.completeSeeks()
        await session.waitUntilSettled()
        // The time jump AVPlayer posts for the seek may arrive after its completion.
        player.send(.timeJumped(to: 11.5))
        player.advance(to: 20)
        await session.exit()
        #expect(try await saved().watched.intervals == [0..<10, 11.5..<20])
    }

    @Test("a seek of the session's that the player's own scrubber interrupted lands where the player is")
    func interruptedSeek() async throws {
        let (player, _, session) = make()
        await session.start()
        player.advance(to: 10)
        player.holdsSeeks = true
        session.seek(to: 30)
        while !player.hasHeldSeek { await Task.yield() }
        // The learner drags the system scrubber to 31 before the seek to 30 completes.
        player.currentTime = 31
        player.send(.timeJumped(to: 31))
        player.completeSeeks(finished: false)
        await session.waitUntilSettled()
        player.advance(to: 40)
        await session.exit()
        // 30..<31 was never played; without the landing jump it would count as watched.
        #expect(try await saved().watched.intervals == [0..<10, 31..<40])
    }

    @Test("the player's own scrubber is a seek at every step, never time watched")
    func scrubber() async throws {
        let (player, _, session) = make()
        await session.start()
        player.advance(to: 10)
        player.scrub(to: 12, steps: 4)
        player.advance(to: 20)
        player.scrub(to: 5, steps: 3)
        player.advance(to: 8)
        await session.exit()
        #expect(try await saved().watched.intervals == [0..<10, 12..<20])
        #expect(session.currentTime == 8)
    }

    @Test("a seek reported by other code (a remote command) hides its periodic times and lands once")
    func otherCodeSeek() async throws {
        let (player, bridge, session) = make()
        await session.start()
        player.advance(to: 10)
        bridge.receive(.seekRequested(to: 12))
        player.send(.periodicTime(10.5))
        player.currentTime = 12
        player.send(.timeJumped(to: 12))
        player.send(.periodicTime(12))
        bridge.receive(.seekCompleted(finished: true))
        player.advance(to: 15)
        await session.exit()
        #expect(try await saved().watched.intervals == [0..<10, 12..<15])
    }

    @Test("a stall while waiting to minimize stalls keeps the session playing")
    func waitingStall() async throws {
        let (player, _, session) = make()
        await session.start()
        player.advance(to: 10)
        player.send(.playbackStalled)
        player.send(.timeControlStatus(.waiting))
        #expect(session.isPlaying)
        player.send(.likelyToKeepUp)
        player.send(.timeControlStatus(.playing))
        player.advance(to: 20)
        await session.exit()
        #expect(try await saved().watched.intervals == [0..<20])
    }

    @Test(
        "a stall that stops the player (rate 0) resumes by itself when media is buffered, whichever report comes first",
        arguments: [true, false])
    func stallAsRateZero(stallReportedFirst: Bool) async throws {
        let (player, _, session) = make()
        await session.start()
        player.advance(to: 10)
        let playsBefore = player.playCalls
        if stallReportedFirst { player.send(.playbackStalled) }
        player.stop()
        if !stallReportedFirst { player.send(.playbackStalled) }
        player.send(.likelyToKeepUp)
        #expect(player.playCalls == playsBefore + 1)
        #expect(session.isPlaying)
        player.advance(to: 20)
        await session.exit()
        #expect(try await saved().watched.intervals == [0..<20])
    }

    @Test("a stall after the learner paused does not start playback")
    func stallAfterPause() async throws {
        let (player, _, session) = make()
        await session.start()
        player.advance(to: 10)
        session.pause()
        clock.advance(by: .seconds(5))
        player.send(.playbackStalled)
        player.send(.likelyToKeepUp)
        #expect(player.playCalls == 1)
        #expect(!session.isPlaying)
    }

    @Test(
        "the end of the item is reported once, whether the stop or the notification comes first",
        arguments: [true, false])
    func end(stopFirst: Bool) async throws {
        let (player, _, session) = make()
        await session.start()
        player.advance(to: 100)
        if stopFirst {
            player.stop()
            player.send(.playedToEnd)
        } else {
            player.send(.playedToEnd)
            player.stop()
        }
        await session.waitUntilSettled()
        #expect(!session.isPlaying)
        let progress = try await saved()
        #expect(progress.watched.intervals == [0..<100])
        #expect(progress.isCompleted)
        await session.exit()
    }

    @Test(
        "an interruption pauses and saves, and resumes when the system says so, whichever report comes first",
        arguments: [(true, true), (true, false), (false, true), (false, false)])
    func interruption(reportedBeforeTheStop: Bool, shouldResume: Bool) async throws {
        let (player, _, session) = make()
        await session.start()
        player.advance(to: 10)
        if reportedBeforeTheStop { player.send(.interruptionBegan) }
        player.stop()
        if !reportedBeforeTheStop {
            clock.advance(by: .milliseconds(200))
            player.send(.interruptionBegan)
        }
        #expect(!session.isPlaying)
        await session.waitUntilSettled()
        #expect(try await saved().watched.intervals == [0..<10])
        clock.advance(by: .seconds(30))
        player.send(.interruptionEnded(shouldResume: shouldResume))
        #expect(session.isPlaying == shouldResume)
        #expect(player.playCalls == (shouldResume ? 2 : 1))
        if shouldResume { player.advance(to: 15) }
        await session.exit()
        #expect(try await saved().watched.intervals == [0..<(shouldResume ? 15 : 10)])
    }

    @Test("an interruption long after the learner paused never resumes playback")
    func interruptionAfterPause() async throws {
        let (player, _, session) = make()
        await session.start()
        player.advance(to: 10)
        // The learner pauses with the system's own button: the player stops by itself.
        player.stop()
        clock.advance(by: .seconds(60))
        player.send(.interruptionBegan)
        player.send(.interruptionEnded(shouldResume: true))
        #expect(player.playCalls == 1)
        #expect(!session.isPlaying)
    }

    @Test("the player's own play, pause and speed reach the session")
    func systemControls() async throws {
        let (player, _, session) = make()
        await session.start()
        player.advance(to: 10)
        player.stop()
        #expect(!session.isPlaying)
        player.defaultRate = 2
        player.play()
        #expect(session.isPlaying)
        #expect(session.tracker.playbackRate == 2)
        player.advance(to: 20)
        player.send(.failedToPlayToEnd)
        #expect(!session.isPlaying)
        await session.exit()
        #expect(try await saved().watched.intervals == [0..<20])
        #expect(!player.isReporting)
    }

    @Test("a duration learned late reaches the tracker, and an indefinite one clears it")
    func duration() async throws {
        let (player, bridge, session) = make(duration: nil)
        await session.start()
        player.duration = 80
        bridge.receive(.durationChanged(80))
        #expect(session.tracker.progress.duration == 80)
        player.advance(to: 8)
        #expect(session.watchedFraction == 0.1)
        await session.exit()
    }
}

@MainActor
@Suite("PlayerObservationBridge: the learner's pauses, early ends and late jumps")
struct PlayerObservationBridgeEdgeTests {
    let store = ProgressStore(directory: temporaryFolder("bridge-edges"))
    let clock = ManualClock()

    func make() -> (SimulatedAVPlayer, PlayerObservationBridge, VideoPlaybackSession) {
        let player = SimulatedAVPlayer(duration: 100)
        let bridge = PlayerObservationBridge(player: player, clock: clock)
        let session = VideoPlaybackSession(
            lessonID: "kizomba-1", engine: bridge, store: store, deviceID: "iphone",
            now: { Date(timeIntervalSince1970: 1_763_700_000) })
        return (player, bridge, session)
    }

    @Test(
        "a pause through the player's own controls is never resumed by an interruption that follows at once, whichever report comes first",
        arguments: [true, false])
    func learnerPauseThenInterruption(reasonFirst: Bool) async {
        let (player, _, session) = make()
        await session.start()
        player.advance(to: 10)
        if reasonFirst { player.send(.rateChangeReason(.setRateCalled, rate: 0)) }
        player.stop()
        if !reasonFirst { player.send(.rateChangeReason(.setRateCalled, rate: 0)) }
        clock.advance(by: .milliseconds(300))
        player.send(.interruptionBegan)
        player.send(.interruptionEnded(shouldResume: true))
        #expect(player.playCalls == 1)
        #expect(!session.isPlaying)
    }

    @Test("a stop the system attributes to the interruption resumes, however late the interruption's report")
    func interruptionReason() async {
        let (player, _, session) = make()
        await session.start()
        player.advance(to: 10)
        player.send(.rateChangeReason(.audioSessionInterrupted, rate: 0))
        player.stop()
        clock.advance(by: .seconds(5))
        player.send(.interruptionBegan)
        player.send(.interruptionEnded(shouldResume: true))
        #expect(player.playCalls == 2)
        #expect(session.isPlaying)
    }

    @Test("a pause while a stall waits for media cancels the resume")
    func pauseDuringStall() async {
        let (player, _, session) = make()
        await session.start()
        player.advance(to: 10)
        player.send(.playbackStalled)
        player.stop()
        #expect(session.isPlaying)
        // The learner presses pause in the player's controls: a further stop.
        player.send(.timeControlStatus(.paused))
        #expect(!session.isPlaying)
        player.send(.likelyToKeepUp)
        #expect(player.playCalls == 1)
    }

    @Test("an end reported short of the item's end (a buffer run dry) is a pause, not the end")
    func earlyEnd() async throws {
        let (player, _, session) = make()
        await session.start()
        player.advance(to: 40)
        player.send(.playedToEnd)
        #expect(!session.isPlaying)
        await session.waitUntilSettled()
        let saved = try #require(try await store.progress(for: "kizomba-1"))
        #expect(!saved.isCompleted)
        #expect(saved.watched.intervals == [0..<40])
    }

    @Test("a scrub back near the session's earlier seek target, once playback moved on, is a seek")
    func lateJumpNearLanding() async throws {
        let (player, _, session) = make()
        await session.start()
        player.advance(to: 5)
        session.seek(to: 50)
        await session.waitUntilSettled()
        // The seek's own jump never came before playback went on.
        player.advance(to: 60)
        await session.waitUntilSettled()
        let savesBefore = session.saveCount
        player.scrub(to: 50.3, steps: 1)
        await session.waitUntilSettled()
        // The session saves at a seek, never at a tick: the jump was taken as the scrub it is.
        #expect(session.saveCount == savesBefore + 1)
        player.advance(to: 52)
        await session.exit()
        let saved = try #require(try await store.progress(for: "kizomba-1"))
        #expect(saved.watched.intervals == [0..<5, 50..<60])
    }

    @Test("a play ends an interruption whose end never came: a later stall resumes by itself")
    func interruptionWithoutEnd() async {
        let (player, _, session) = make()
        await session.start()
        player.advance(to: 10)
        player.send(.interruptionBegan)
        player.stop()
        session.play()
        player.advance(to: 12)
        player.send(.playbackStalled)
        player.stop()
        player.send(.likelyToKeepUp)
        #expect(player.playCalls == 3)
        #expect(session.isPlaying)
    }
}
