/// What a system video player reports, raw: one value per callback, notification or key-value
/// change, in the order the player delivered them.
///
/// These are `AVPlayer`'s own signals (``ObservableVideoPlayer`` names where each comes from);
/// ``PlayerObservationBridge`` turns them into the ``PlaybackObservation``s a
/// ``VideoPlaybackSession`` reads.
public enum PlayerObservation: Sendable, Hashable {
    /// The periodic time observer fired at this position, in seconds. `AVPlayer` also fires it
    /// when playback starts or stops and when time jumps, so its reports may repeat a position
    /// or come during a seek.
    case periodicTime(Double)
    /// The player's `rate` changed: 0 when it stopped, otherwise the speed it plays at.
    case rate(Double)
    /// The player's `timeControlStatus` changed.
    case timeControlStatus(PlaybackStatus)
    /// Code other than the bridge asked the player to seek to this position (a remote command,
    /// another control of the app). The bridge's own seeks need no report.
    case seekRequested(to: Double)
    /// A seek reported with ``seekRequested(to:)`` completed; `finished` is `false` when a
    /// later seek interrupted it.
    case seekCompleted(finished: Bool)
    /// The item's time jumped to this position (`AVPlayerItem.timeJumpedNotification`): every
    /// seek posts it, the player's own scrubber included, often before the seek completes.
    case timeJumped(to: Double)
    /// The item's duration became known or changed; `nil` when it is indefinite (live).
    case durationChanged(Double?)
    /// Media did not arrive in time (`AVPlayerItem.playbackStalledNotification`). When the
    /// player does not wait to minimize stalls, its rate drops to 0 around this report.
    case playbackStalled
    /// Enough media is buffered again (`isPlaybackLikelyToKeepUp` became `true`).
    case likelyToKeepUp
    /// The item played to its end (`AVPlayerItem.didPlayToEndTimeNotification`).
    case playedToEnd
    /// The item could not play to its end, for example after a network failure
    /// (`AVPlayerItem.failedToPlayToEndTimeNotification`).
    case failedToPlayToEnd
    /// The audio session was interrupted (a call, an alarm); the system pauses the player.
    case interruptionBegan
    /// The interruption ended; `shouldResume` is the system's advice to resume playback.
    case interruptionEnded(shouldResume: Bool)
    /// Why the rate last changed, and to what (`AVPlayer.rateDidChangeNotification` with its
    /// `rateDidChangeReasonKey`): it tells a learner's pause from the system's.
    case rateChangeReason(RateChangeReason, rate: Double)
}

/// Why a player's rate changed (`AVPlayer.RateDidChangeReason`).
public enum RateChangeReason: Sendable, Hashable {
    /// The app or the learner (through the player's controls) set the rate.
    case setRateCalled
    /// Setting the rate failed.
    case setRateFailed
    /// The audio session was interrupted.
    case audioSessionInterrupted
    /// The app went to the background.
    case appBackgrounded
}

/// A system video player as the bridge drives it: its controls, and a stream of raw reports.
///
/// `ObservedAVPlayer` is the implementation over `AVPlayer` on Apple platforms; a test, or an
/// app with another player, implements it directly.
@MainActor
public protocol ObservableVideoPlayer: AnyObject {
    /// The playhead's position in seconds (`AVPlayer.currentTime()`).
    var currentTime: Double { get }
    /// The item's duration in seconds, if known and finite.
    var duration: Double? { get }
    /// Starts or resumes playback.
    func play()
    /// Pauses playback.
    func pause()
    /// Seeks exactly to `time`; returns `false` when a later seek interrupted this one.
    func seek(to time: Double) async -> Bool
    /// Starts reporting: the periodic time every `interval`, and every other
    /// ``PlayerObservation`` as it happens, in order, on the main actor.
    func startReporting(every interval: Duration, to report: @escaping @MainActor @Sendable (PlayerObservation) -> Void)
    /// Stops every report.
    func stopReporting()
}

/// The ``PlaybackEngine`` over a system video player: it reads the player's raw reports in the
/// orders `AVPlayer` really produces them and tells the ``VideoPlaybackSession`` what happened.
///
/// A session over `AVPlayer` is three lines on Apple platforms:
///
/// <!-- example: avplayer-bridge -->
/// ```swift
/// let engine = PlayerObservationBridge(player: ObservedAVPlayer(avPlayer))
/// let session = VideoPlaybackSession(lessonID: lesson.id, engine: engine, store: store, deviceID: device)
/// await session.start()
/// ```
///
/// What the bridge decides, so that no app maps these signals itself:
///
/// - **Seeks.** While a seek the bridge made is in flight, the periodic times and the time
///   jumps it causes are the seek's, not playback: they are dropped, and the jump reported once
///   the seek completes is recognised. A time jump the bridge did not cause (the player's own
///   scrubber) is reported as ``PlaybackObservation/seekFinished(at:)`` before any periodic
///   time at the new position, so no step of a scrub counts as watched. A seek of the bridge's
///   that another seek interrupted is followed by a jump to wherever the player landed.
/// - **Stalls.** A `.waitingToPlayAtSpecifiedRate` status is a stall; so is a rate of 0 around
///   a ``PlayerObservation/playbackStalled`` report, in either order. After a stall that stopped
///   the player, the bridge plays again when ``PlayerObservation/likelyToKeepUp`` arrives,
///   unless the learner paused meanwhile (a further stop, or a pause through the session).
/// - **The end.** A stop at the item's end (within `endTolerance`) is the end, whether the
///   stop or ``PlayerObservation/playedToEnd`` comes first; the end is reported once. An end
///   reported short of the item's end (a buffer run dry on a lost network) is a pause.
/// - **Interruptions.** The system's pause is reported as a pause (the session saves); when the
///   interruption ends with `shouldResume`, the bridge resumes playback if the learner was
///   playing when it began, and leaves a learner's earlier pause alone. The rate change's
///   reason (``PlayerObservation/rateChangeReason(_:rate:)``) says whose stop it was; without
///   it, a stop within `interruptionWindow` before the interruption's report counts as its own.
///   A play (the session's or the player's) ends an interruption whose end never came.
/// - Everything else passes through: a stop is a pause, `.playing` is play, a new non-zero
///   rate is a rate change, and a failure to play to the end is a pause.
///
/// - Complexity: O(1) per report.
@MainActor
public final class PlayerObservationBridge: PlaybackEngine {
    /// The player the bridge drives.
    public let player: any ObservableVideoPlayer
    /// How close to the item's end a stop must be to count as the end, in seconds.
    public let endTolerance: Double
    /// Whether an interruption that ends with `shouldResume` resumes playback.
    public let resumesAfterInterruption: Bool

    private let elapsed: @MainActor () -> Duration
    private let interruptionWindow: Duration
    private var handler: (@MainActor (PlaybackObservation) -> Void)?

    /// Whether the learner (or the app) wants playback: set by play, cleared by a pause, a stop
    /// or the end.
    private var wantsToPlay = false
    /// When the player last stopped while wanted to play, without being asked to.
    private var unaskedStopAt: Duration?
    private var ownSeeks = 0
    private var otherSeeks = 0
    /// The landing position of the bridge's own seek, whose time jump may still arrive.
    private var ownLanding: Double?
    /// Where the player was when a seek of the bridge's was interrupted: reported as a jump
    /// before the next periodic time, once the session's seek is over.
    private var interruptedLanding: Double?
    private var stalled = false
    private var resumeWhenReady = false
    /// The stop signals (rate, status) already taken as the stall's own stop.
    private var stallStopSignals: Set<StopSignal> = []
    /// The player reported that it was set to stop on purpose (a learner's pause through its
    /// controls): the stop is never an interruption's or a stall's.
    private var deliberateStop = false
    /// The player reported that the audio session's interruption stopped it.
    private var interruptionStop = false
    private var interrupted = false
    private var resumeAfterInterruption = false
    private var hasEnded = false
    private var lastRate: Double?
    private var lastTime: Double?

    /// Creates a bridge over `player`, timing interruptions with a continuous clock.
    ///
    /// - Parameters:
    ///   - player: The system player (``ObservableVideoPlayer``).
    ///   - endTolerance: How close to the end a stop must be to count as the end, in seconds.
    ///   - resumesAfterInterruption: Whether playback resumes after an interruption that ends
    ///     with the system's `shouldResume` advice.
    ///   - interruptionWindow: How long before an interruption's report a stop of the player
    ///     still counts as the interruption's own.
    public convenience init(
        player: any ObservableVideoPlayer,
        endTolerance: Double = 0.25,
        resumesAfterInterruption: Bool = true,
        interruptionWindow: Duration = .seconds(1)
    ) {
        self.init(
            player: player, clock: ContinuousClock(), endTolerance: endTolerance,
            resumesAfterInterruption: resumesAfterInterruption, interruptionWindow: interruptionWindow)
    }

    /// Creates a bridge over `player` that times interruptions with `clock`.
    ///
    /// - Parameters:
    ///   - player: The system player (``ObservableVideoPlayer``).
    ///   - clock: The clock that says how long ago the player stopped (a manual clock in tests).
    ///   - endTolerance: How close to the end a stop must be to count as the end, in seconds.
    ///   - resumesAfterInterruption: Whether playback resumes after an interruption that ends
    ///     with the system's `shouldResume` advice.
    ///   - interruptionWindow: How long before an interruption's report a stop of the player
    ///     still counts as the interruption's own.
    public init<C: Clock>(
        player: any ObservableVideoPlayer,
        clock: C,
        endTolerance: Double = 0.25,
        resumesAfterInterruption: Bool = true,
        interruptionWindow: Duration = .seconds(1)
    ) where C.Duration == Duration {
        self.player = player
        self.endTolerance = endTolerance
        self.resumesAfterInterruption = resumesAfterInterruption
        self.interruptionWindow = interruptionWindow
        let origin = clock.now
        elapsed = { origin.duration(to: clock.now) }
    }

    // MARK: PlaybackEngine

    /// The player's playhead.
    public var currentTime: Double { player.currentTime }

    /// The player's item's duration.
    public var duration: Double? { player.duration }

    /// Plays.
    public func play() {
        wantsToPlay = true
        unaskedStopAt = nil
        resumeWhenReady = false
        interrupted = false
        deliberateStop = false
        player.play()
    }

    /// Pauses; a stall or an interruption no longer resumes by itself.
    public func pause() {
        wantsToPlay = false
        unaskedStopAt = nil
        interruptionStop = false
        resumeWhenReady = false
        resumeAfterInterruption = false
        player.pause()
    }

    /// Seeks, treating the player's reports until it completes as the seek's own.
    public func seek(to time: Double) async -> Bool {
        ownSeeks += 1
        hasEnded = false
        ownLanding = nil
        let finished = await player.seek(to: time)
        ownSeeks -= 1
        if ownSeeks == 0 {
            if finished {
                ownLanding = player.currentTime
                lastTime = ownLanding
            } else {
                interruptedLanding = player.currentTime
            }
        }
        return finished
    }

    /// Starts the player's reports and passes on what they mean.
    public func startObserving(every interval: Duration, _ handler: @escaping @MainActor (PlaybackObservation) -> Void)
    {
        self.handler = handler
        player.startReporting(every: interval) { [weak self] observation in
            self?.receive(observation)
        }
    }

    /// Stops the player's reports.
    public func stopObserving() {
        player.stopReporting()
        handler = nil
    }

    // MARK: Reports

    /// Reads one raw report; ``ObservableVideoPlayer/startReporting(every:to:)`` delivers them
    /// here, and an app may pass its own (a remote command's seek, for example).
    public func receive(_ observation: PlayerObservation) {
        switch observation {
        case .periodicTime(let time):
            receiveTime(time)
        case .rate(let rate):
            guard rate.isFinite else { return }
            if rate > 0 {
                if rate != lastRate { forward(.rateChanged(rate)) }
                lastRate = rate
            } else {
                playerStopped(.rate)
            }
        case .timeControlStatus(.playing):
            wantsToPlay = true
            unaskedStopAt = nil
            stalled = false
            resumeWhenReady = false
            stallStopSignals = []
            interrupted = false
            deliberateStop = false
            interruptionStop = false
            hasEnded = false
            forward(.statusChanged(.playing, at: player.currentTime))
        case .timeControlStatus(.waiting):
            forward(.statusChanged(.waiting, at: player.currentTime))
        case .timeControlStatus(.paused):
            playerStopped(.status)
        case .seekRequested:
            otherSeeks += 1
            hasEnded = false
        case .seekCompleted:
            guard otherSeeks > 0 else { return }
            otherSeeks -= 1
            if otherSeeks == 0, ownSeeks == 0 { jumped(to: player.currentTime) }
        case .timeJumped(let time):
            receiveJump(to: time)
        case .durationChanged(let duration):
            forward(.durationChanged(duration))
        case .playbackStalled:
            stalled = true
            stallStopSignals = []
            resumeWhenReady = !deliberateStop && (wantsToPlay || stoppedJustNow)
            forward(.stalled(player.currentTime))
        case .likelyToKeepUp:
            guard stalled, resumeWhenReady, !interrupted else { return }
            play()
        case .playedToEnd:
            // The item can report its end early when its buffer runs dry on a lost network:
            // short of the end, that is a stop (saved), not the end.
            if isAtEnd || player.duration == nil {
                reachedEnd()
            } else {
                wantsToPlay = false
                forward(.statusChanged(.paused, at: player.currentTime))
            }
        case .failedToPlayToEnd:
            wantsToPlay = false
            resumeWhenReady = false
            forward(.statusChanged(.paused, at: player.currentTime))
        case .interruptionBegan:
            interrupted = true
            resumeAfterInterruption = !deliberateStop && (wantsToPlay || stoppedJustNow || interruptionStop)
            wantsToPlay = false
            forward(.statusChanged(.paused, at: player.currentTime))
        case .interruptionEnded(let shouldResume):
            interrupted = false
            let resume = shouldResume && resumeAfterInterruption && resumesAfterInterruption
            resumeAfterInterruption = false
            interruptionStop = false
            if resume { play() }
        case .rateChangeReason(let reason, let rate):
            guard rate.isFinite, rate <= 0 else { return }
            switch reason {
            case .setRateCalled:
                // A pause through the player's own controls: never resumed by a stall or an
                // interruption, whichever report came first.
                deliberateStop = true
                unaskedStopAt = nil
                resumeWhenReady = false
                resumeAfterInterruption = false
            case .audioSessionInterrupted:
                interruptionStop = wantsToPlay || stoppedJustNow
            case .setRateFailed, .appBackgrounded:
                break
            }
        }
    }

    // MARK: Private

    /// How far a time jump may be from where the bridge's own seek landed and still be its own.
    private static let landingTolerance = 0.5

    /// Whether the player stopped by itself, while wanted to play, within the interruption
    /// window: the stop an interruption or a stall causes, reported before it.
    private var stoppedJustNow: Bool {
        guard let stop = unaskedStopAt else { return false }
        return elapsed() - stop <= interruptionWindow
    }

    private var isAtEnd: Bool {
        guard let duration = player.duration, duration.isFinite else { return false }
        let time = player.currentTime
        return time.isFinite && time >= duration - endTolerance
    }

    private func receiveTime(_ time: Double) {
        guard time.isFinite, ownSeeks == 0, otherSeeks == 0 else { return }
        // Playback moved on from the session's seek: a jump from now on is someone else's.
        if let landing = ownLanding, abs(time - landing) > Self.landingTolerance { ownLanding = nil }
        if let landing = interruptedLanding {
            jumped(to: landing.isFinite ? landing : time)
        }
        lastTime = time
        forward(.time(time))
    }

    private func receiveJump(to time: Double) {
        guard time.isFinite, ownSeeks == 0, otherSeeks == 0 else { return }
        if let landing = ownLanding {
            ownLanding = nil
            if abs(landing - time) <= Self.landingTolerance { return }
        }
        // A jump to where the playhead already is (an item that becomes ready) moves nothing.
        if let last = lastTime, abs(last - time) < 0.001 { return }
        jumped(to: time)
    }

    private func jumped(to time: Double) {
        guard time.isFinite else { return }
        interruptedLanding = nil
        hasEnded = false
        lastTime = time
        forward(.seekFinished(at: time))
    }

    /// A signal that the player stopped.
    private enum StopSignal: Hashable {
        case rate
        case status
    }

    /// The player stopped (a rate of 0 or a paused status): a stall, the end, or a pause.
    ///
    /// While a stall that stopped the player is waiting for media, its own stop (one rate of 0,
    /// one paused status) is the stall's; a further stop is a pause, which cancels the resume.
    private func playerStopped(_ signal: StopSignal) {
        if stalled, resumeWhenReady {
            if stallStopSignals.insert(signal).inserted { return }
            resumeWhenReady = false
        }
        if isAtEnd {
            reachedEnd()
            return
        }
        if wantsToPlay {
            wantsToPlay = false
            unaskedStopAt = deliberateStop ? nil : elapsed()
        }
        forward(.statusChanged(.paused, at: player.currentTime))
    }

    private func reachedEnd() {
        wantsToPlay = false
        resumeWhenReady = false
        guard !hasEnded else { return }
        hasEnded = true
        forward(.ended)
    }

    private func forward(_ observation: PlaybackObservation) {
        handler?(observation)
    }
}
