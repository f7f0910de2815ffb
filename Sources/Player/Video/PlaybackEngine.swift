/// What a player is doing, as `AVPlayer.timeControlStatus` reports it.
public enum PlaybackStatus: Sendable, Hashable {
    /// Playing (`.playing`).
    case playing
    /// Paused, by the app, the learner or the system (`.paused`).
    case paused
    /// Asked to play, but waiting for data or for a policy (`.waitingToPlayAtSpecifiedRate`).
    case waiting
}

/// News from a playback engine, delivered on the main actor.
///
/// Besides the periodic time, an engine reports what its own controls did, since a system
/// player's buttons and timeline pause, play, change the rate and scrub without going through
/// the app: ``statusChanged(_:at:)``, ``rateChanged(_:)`` and ``seekFinished(at:)``.
public enum PlaybackObservation: Sendable, Hashable {
    /// The playhead's position during playback (a periodic time observer's report), in seconds.
    case time(Double)
    /// The player's status changed (`timeControlStatus`), with the playhead's position then.
    case statusChanged(PlaybackStatus, at: Double)
    /// The playback rate changed (`AVPlayer.rate` or `defaultRate`).
    case rateChanged(Double)
    /// The playhead jumped to this position: a seek of the player's own timeline (each step of
    /// a scrub), or one the session asked for, which the session recognises and ignores.
    ///
    /// Report it before the periodic time at the new position (as
    /// `AVPlayerItem.timeJumpedNotification` comes before the observer's next report), so that
    /// no step of a scrub is mistaken for playback.
    case seekFinished(at: Double)
    /// The media's duration became known or changed; `nil` or non-finite for a live stream.
    case durationChanged(Double?)
    /// Playback stalled waiting for data at this position.
    case stalled(Double)
    /// Playback reached the end.
    case ended
}

/// A video player, as a playback session needs it.
///
/// For `AVPlayer` (or any player that reports raw signals), use ``PlayerObservationBridge``:
/// it is the engine, and it turns the player's periodic time, rate, `timeControlStatus`, time
/// jumps, stalls, end and interruptions into these observations in the right order. Implement
/// the protocol directly only for a player that already reports play, pause and seeks as
/// ``PlaybackObservation`` describes: a time jump reported before the periodic time at the new
/// position, and the session's own seeks answered by ``seek(to:)`` only once they complete.
@MainActor
public protocol PlaybackEngine: AnyObject {
    /// The playhead's position in seconds (NaN or negative values are tolerated and ignored).
    var currentTime: Double { get }
    /// The media's duration in seconds, if known.
    var duration: Double? { get }
    /// Starts or resumes playback.
    func play()
    /// Pauses playback.
    func pause()
    /// Moves the playhead; returns `false` when a later seek interrupted this one.
    func seek(to time: Double) async -> Bool
    /// Starts delivering observations, the time every `interval`.
    func startObserving(every interval: Duration, _ handler: @escaping @MainActor (PlaybackObservation) -> Void)
    /// Stops delivering observations.
    func stopObserving()
}
