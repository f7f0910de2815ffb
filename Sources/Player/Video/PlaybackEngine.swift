/// News from a playback engine, delivered on the main actor.
public enum PlaybackObservation: Sendable, Hashable {
    /// The playhead's position during playback (a periodic time observer's report), in seconds.
    case time(Double)
    /// The media's duration became known or changed; `nil` or non-finite for a live stream.
    case durationChanged(Double?)
    /// Playback stalled waiting for data at this position.
    case stalled(Double)
    /// Playback reached the end.
    case ended
}

/// A video player, as a playback session needs it; an app implements it with `AVPlayer`.
///
/// An `AVPlayer` adapter maps `addPeriodicTimeObserver` to ``PlaybackObservation/time(_:)``,
/// the item's `duration` to ``PlaybackObservation/durationChanged(_:)``, and
/// `AVPlayerItemDidPlayToEndTime` to ``PlaybackObservation/ended``.
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
