public import Foundation

/// Turns a player's events into exact watched progress.
///
/// Feed it every ``PlaybackEvent`` with the wall-clock time it happened. It records only media
/// time that was actually played:
///
/// - Playback from `a` to `b` (play, ticks, pause or end) records `[a, b)`.
/// - A seek closes the open interval at the current playhead; a seek while paused records
///   nothing and only moves the playhead.
/// - `play(at:)` while already playing starts a new interval there: the jump to it was not played.
/// - A tick that moves backwards, or further forward than ``Configuration/maximumTickJump``
///   (3 s by default, from a 1 s tick interval at up to 2× speed), is an implicit seek: the
///   player skipped, nothing was played. A pause or end that moves backwards is one too.
/// - The playback rate changes how long playing takes, never what is covered.
/// - Non-finite positions are ignored; negative ones count as 0.
///
/// <!-- example: watch-tracker -->
/// ```swift
/// var tracker = WatchTracker(deviceID: "ipad-7", duration: 100)
/// tracker.handle(.play(at: 0), at: now)
/// tracker.handle(.pause(at: 15), at: now)
/// tracker.handle(.seek(to: 0), at: now)
/// tracker.handle(.play(at: 0), at: now)
/// tracker.handle(.pause(at: 20), at: now)
/// let fraction = tracker.progress.watchedFraction  // 0.2
/// ```
///
/// The tracker is a value: copy it, store ``progress``, or ``merge(_:)`` another device's
/// progress into it.
public struct WatchTracker: Sendable {
    /// How the tracker interprets events.
    public struct Configuration: Sendable, Hashable, Codable {
        /// The largest forward step between two ticks that still counts as playback, in seconds;
        /// `nil` accepts any forward step.
        ///
        /// It follows from how often the player reports the playhead: see
        /// ``maximumTickJump(tickInterval:maximumPlaybackRate:)``. The default, 3 s, suits ticks
        /// every second at up to 2× speed; a session that ticks every 0.5 s passes 1.5.
        public var maximumTickJump: Double?
        /// The watched fraction at which the lesson counts as completed (xAPI's default is 1.0).
        public var completionThreshold: Double
        /// Gaps shorter than this many seconds are filled, so a missed tick or a short skip does
        /// not keep a lesson from completing; 0 fills nothing.
        public var gapTolerance: Double
        /// The longest wall-clock gap between two events that counts as time spent, in seconds.
        /// A longer gap (the app left paused overnight) means the learner went away: it adds
        /// nothing. The default is 30 minutes.
        public var maximumCountedIdle: Double

        /// The largest step a tick can show during real playback, with room for late timers:
        /// 1.5 × `tickInterval` × `maximumPlaybackRate` (at least the interval itself).
        ///
        /// - Parameters:
        ///   - tickInterval: How often the player reports the playhead, in seconds.
        ///   - maximumPlaybackRate: The fastest rate the app offers (2 by default).
        /// - Returns: The jump limit, or `nil` (no limit) for an interval that is not a positive
        ///   finite number.
        /// - Complexity: O(1).
        public static func maximumTickJump(tickInterval: Double, maximumPlaybackRate: Double = 2) -> Double? {
            guard tickInterval.isFinite, tickInterval > 0 else { return nil }
            let rate = maximumPlaybackRate.isFinite && maximumPlaybackRate >= 1 ? maximumPlaybackRate : 1
            return 1.5 * tickInterval * rate
        }

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - maximumTickJump: The largest forward step between ticks that counts as playback
        ///     (3 s, for ticks every second at up to 2×); `nil` accepts any.
        ///   - completionThreshold: The watched fraction that completes the lesson (1.0).
        ///   - gapTolerance: Gaps shorter than this are filled (0).
        ///   - maximumCountedIdle: The longest wall-clock gap counted as time spent (30 minutes).
        public init(
            maximumTickJump: Double? = Configuration.maximumTickJump(tickInterval: 1),
            completionThreshold: Double = 1.0,
            gapTolerance: Double = 0,
            maximumCountedIdle: Double = 1_800
        ) {
            self.maximumTickJump = maximumTickJump
            self.completionThreshold = completionThreshold
            self.gapTolerance = gapTolerance
            self.maximumCountedIdle = maximumCountedIdle
        }
    }

    /// The device this tracker runs on, which stamps resume positions and time spent.
    public let deviceID: String
    /// How events are interpreted.
    public let configuration: Configuration
    /// The progress recorded so far, ready to store or sync.
    public private(set) var progress: WatchProgress
    /// Whether the player is playing, as far as the events tell.
    public private(set) var isPlaying: Bool
    /// The last finite playhead position reported, in media seconds.
    public private(set) var playhead: Double?
    /// The current playback rate (1 is normal speed).
    public private(set) var playbackRate: Double
    /// Each continuous stretch played in this session, in the order played, overlaps kept:
    /// the input for ``PlayCounts`` (which spans were re-watched). Not part of the synced state.
    public private(set) var playedSpans: [Range<Double>]
    /// The wall-clock time of the latest event, for time spent.
    private var lastEventTime: Date?
    /// Whether the last played span is still open (the next playback step extends it).
    private var spanIsOpen: Bool

    /// Creates a tracker for one lesson on one device.
    ///
    /// - Parameters:
    ///   - deviceID: Identifies this device in resume positions and time spent.
    ///   - duration: The media's duration in seconds, if already known.
    ///   - progress: Progress restored from a store, to continue from.
    ///   - configuration: How events are interpreted.
    public init(
        deviceID: String,
        duration: Double? = nil,
        progress: WatchProgress = WatchProgress(),
        configuration: Configuration = Configuration()
    ) {
        self.deviceID = deviceID
        self.configuration = configuration
        var progress = progress
        if let duration {
            progress.setDuration(duration)
        }
        self.progress = progress.closingGaps(shorterThan: configuration.gapTolerance)
        isPlaying = false
        playhead = nil
        playbackRate = 1
        playedSpans = []
        lastEventTime = nil
        spanIsOpen = false
    }

    /// Updates the progress with what a player reported at wall-clock time `time`.
    ///
    /// - Parameters:
    ///   - event: What happened, in media time.
    ///   - time: When it happened on the wall clock (`Date()` in an app, a fixed date in a
    ///     test); it stamps the resume position and adds up the time spent.
    /// - Complexity: Amortized O(1) for ordinary playback; a seek followed by playback elsewhere
    ///   costs one interval-set insert, O(log *n*) plus merged intervals.
    public mutating func handle(_ event: PlaybackEvent, at time: Date) {
        accumulateTimeSpent(until: time)
        switch event {
        case .play(let position):
            // Playing while already playing starts over at `position`: whatever lies between
            // the playhead and it was not played.
            isPlaying = true
            spanIsOpen = false
            movePlayhead(to: position)
        case .tick(let position):
            if isPlaying {
                advance(to: position, limitingJumps: true)
            } else {
                movePlayhead(to: position)
            }
        case .pause(let position), .ended(let position):
            if isPlaying {
                advance(to: position, limitingJumps: false)
            } else {
                movePlayhead(to: position)
            }
            isPlaying = false
            spanIsOpen = false
        case .seek(let from, let target):
            if isPlaying, let from {
                advance(to: from, limitingJumps: false)
            }
            spanIsOpen = false
            movePlayhead(to: target)
        case .rateChanged(let rate):
            if rate.isFinite, rate >= 0 { playbackRate = rate }
        case .stalled:
            // The playhead does not move while stalled; the next tick continues from it.
            break
        case .durationChanged(let duration):
            progress.setDuration(duration)
        }
        if let position = playhead {
            progress.recordResumePosition(position, at: time, deviceID: deviceID)
        }
        progress.markCompletedIfReached(threshold: configuration.completionThreshold)
    }

    /// Merges progress from another device (or from the store) into the tracker's.
    ///
    /// - Complexity: O(*n* + *m*) for the two interval counts.
    public mutating func merge(_ other: WatchProgress) {
        progress = progress.merged(with: other).closingGaps(shorterThan: configuration.gapTolerance)
        progress.markCompletedIfReached(threshold: configuration.completionThreshold)
    }

    /// Records an interval as watched directly, as when importing another system's history.
    public mutating func recordWatched(_ interval: Range<Double>) {
        progress.recordWatched(interval, mergingGapsShorterThan: configuration.gapTolerance)
        progress.markCompletedIfReached(threshold: configuration.completionThreshold)
    }

    // MARK: Private

    /// Normalises a reported position: `nil` when it is not finite, 0 when it is negative.
    private static func normalised(_ position: Double) -> Double? {
        guard position.isFinite else { return nil }
        return max(position, 0)
    }

    /// Moves the playhead without recording playback.
    private mutating func movePlayhead(to position: Double) {
        guard let position = Self.normalised(position) else { return }
        playhead = position
    }

    /// Moves the playhead during playback, recording `[playhead, position)` unless the move is
    /// an implicit seek: backwards, or (for a periodic tick, when `limitingJumps`) further
    /// forward than ``Configuration/maximumTickJump``.
    private mutating func advance(to position: Double, limitingJumps: Bool) {
        guard let position = Self.normalised(position) else { return }
        guard let start = playhead else {
            playhead = position
            return
        }
        let step = position - start
        let isJump = step < 0 || (limitingJumps && (configuration.maximumTickJump.map { step > $0 } ?? false))
        playhead = position
        guard !isJump else {
            spanIsOpen = false
            return
        }
        guard step > 0 else { return }
        progress.recordWatched(start..<position, mergingGapsShorterThan: configuration.gapTolerance)
        if spanIsOpen, let last = playedSpans.last, last.upperBound == start {
            playedSpans[playedSpans.count - 1] = last.lowerBound..<position
        } else {
            playedSpans.append(start..<position)
            spanIsOpen = true
        }
    }

    private mutating func accumulateTimeSpent(until time: Date) {
        if let last = lastEventTime {
            let elapsed = time.timeIntervalSince(last)
            if elapsed <= configuration.maximumCountedIdle {
                progress.addTimeSpent(elapsed, deviceID: deviceID)
            }
        }
        // A wall clock that steps backwards adds nothing and does not rewind the reference.
        lastEventTime = max(time, lastEventTime ?? time)
    }
}
