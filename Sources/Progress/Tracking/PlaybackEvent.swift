/// Something a player reported, in media time (seconds of the media, not of the wall clock).
///
/// These are the callbacks every player offers: AVPlayer's periodic time observer gives ticks,
/// its `timeControlStatus` gives play, pause and stalls, seeks come from the app's own controls,
/// and `AVPlayerItemDidPlayToEndTime` gives the end.
public enum PlaybackEvent: Sendable, Hashable {
    /// Playback started or resumed at `position`.
    case play(at: Double)
    /// The playhead reached `position` during playback (a periodic observer's report).
    case tick(at: Double)
    /// Playback paused at `position`.
    case pause(at: Double)
    /// The playhead jumped from `from` (the current playhead when `nil`) to `to`.
    case seek(from: Double?, to: Double)
    /// The playback rate changed; coverage counts media time, so this never changes it.
    case rateChanged(Double)
    /// Playback stalled at `position` waiting for data; nothing was played.
    case stalled(at: Double)
    /// Playback reached the end at `position`.
    case ended(at: Double)
    /// The media's duration became known or changed; `nil` or a non-finite value means unknown
    /// or live.
    case durationChanged(Double?)

    /// A seek from the current playhead to `position`.
    public static func seek(to position: Double) -> PlaybackEvent {
        .seek(from: nil, to: position)
    }
}
