public import Foundation
public import Observation
public import Progress

/// One learner watching one lesson video: the player's controls, wired to exact progress.
///
/// The session drives a ``PlaybackEngine`` and feeds everything it does and hears to a
/// `WatchTracker`, so the lesson's watched intervals, resume position and time spent are exact.
/// It saves the progress to a `ProgressStore` (merging, so nothing is lost) when the learner
/// pauses, seeks, reaches the end, leaves, or the app goes to the background, and on
/// ``start()`` it resumes where the learner stopped.
///
/// Seeks are clamped to the media and coalesced: while the engine is still serving one seek,
/// further requests replace each other and only the latest is sent next, so scrubbing never
/// queues a backlog.
@MainActor
@Observable
public final class VideoPlaybackSession {
    /// The lesson being watched.
    public let lessonID: String
    /// The tracker holding the lesson's progress.
    public private(set) var tracker: WatchTracker
    /// Whether the video is playing.
    public private(set) var isPlaying = false
    /// The last playhead position the session knows.
    public private(set) var currentTime: Double = 0
    /// The last save error, if the last save failed; progress is still held and saved next time.
    public private(set) var lastSaveError: ProgressStoreError?
    /// How many saves have completed; tests in the package read it.
    package private(set) var saveCount = 0

    @ObservationIgnored private let engine: any PlaybackEngine
    @ObservationIgnored private let store: ProgressStore
    @ObservationIgnored private let now: @Sendable () -> Date
    @ObservationIgnored private let tickInterval: Duration
    @ObservationIgnored private var seekInFlight = false
    @ObservationIgnored private var pendingSeek: Double?
    @ObservationIgnored private var work: [Task<Void, Never>] = []

    /// Creates a session.
    ///
    /// - Parameters:
    ///   - lessonID: The lesson, which keys its progress in `store`.
    ///   - engine: The video player.
    ///   - store: Where progress is kept.
    ///   - deviceID: This device, for resume positions and time spent.
    ///   - configuration: How the tracker reads events; `nil` (the default) derives the
    ///     maximum tick jump from `tickInterval` (see
    ///     `WatchTracker.Configuration.maximumTickJump(tickInterval:maximumPlaybackRate:)`), so a
    ///     playhead jump seen only through ticks is a seek, not time watched.
    ///   - tickInterval: How often the engine reports the playhead.
    ///   - now: The wall clock (`Date.init` in an app, fixed dates in tests).
    public init(
        lessonID: String,
        engine: any PlaybackEngine,
        store: ProgressStore,
        deviceID: String,
        configuration: WatchTracker.Configuration? = nil,
        tickInterval: Duration = .milliseconds(500),
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.lessonID = lessonID
        self.engine = engine
        self.store = store
        self.now = now
        self.tickInterval = tickInterval
        let interval = tickInterval / .seconds(1)
        let derived = WatchTracker.Configuration(
            maximumTickJump: WatchTracker.Configuration.maximumTickJump(tickInterval: interval))
        tracker = WatchTracker(deviceID: deviceID, duration: engine.duration, configuration: configuration ?? derived)
    }

    /// The watched fraction, 0…1, when the duration is known.
    public var watchedFraction: Double? { tracker.progress.watchedFraction }

    /// Loads the saved progress, moves to the resume position and starts playing.
    ///
    /// A lesson watched to its last two seconds starts again from the beginning.
    public func start() async {
        do throws(ProgressStoreError) {
            if let saved = try await store.progress(for: lessonID) {
                tracker.merge(saved)
            }
        } catch {
            lastSaveError = error
        }
        engine.startObserving(every: tickInterval) { [weak self] observation in
            self?.observe(observation)
        }
        if let duration = engine.duration { record(.durationChanged(duration)) }
        if let resume = tracker.progress.resumePosition {
            let nearEnd = tracker.progress.duration.map { resume >= $0 - 2 } ?? false
            let target = nearEnd ? 0 : resume
            if target > 0 {
                _ = await engine.seek(to: clamped(target))
                currentTime = clamped(target)
                record(.seek(from: nil, to: currentTime))
            }
        }
        play()
    }

    /// Starts or resumes playback.
    public func play() {
        guard !isPlaying else { return }
        isPlaying = true
        engine.play()
        record(.play(at: playhead))
    }

    /// Pauses playback and saves the progress.
    public func pause() {
        guard isPlaying else { return }
        isPlaying = false
        engine.pause()
        record(.pause(at: playhead))
        save()
    }

    /// Moves the playhead to `time` (clamped to the media) and saves the progress.
    public func seek(to time: Double) {
        guard time.isFinite else { return }
        let target = clamped(time)
        record(.seek(from: playhead, to: target))
        currentTime = target
        save()
        if seekInFlight {
            pendingSeek = target
            return
        }
        seekInFlight = true
        work.append(
            Task {
                var next: Double? = target
                while let destination = next {
                    _ = await engine.seek(to: destination)
                    next = pendingSeek
                    pendingSeek = nil
                }
                seekInFlight = false
            })
    }

    /// The app went to the background: save now, as it may not come back.
    public func didEnterBackground() {
        if isPlaying { record(.tick(at: playhead)) }
        save()
    }

    /// The learner left the player: pause, stop observing, and save.
    public func exit() async {
        if isPlaying {
            isPlaying = false
            engine.pause()
            record(.pause(at: playhead))
        }
        engine.stopObserving()
        save()
        await waitUntilSettled()
    }

    /// Waits for pending seeks and saves (``exit()`` uses it to leave cleanly): for tests and
    /// previews, which then check the progress without polling or sleeping.
    public func waitUntilSettled() async {
        while !work.isEmpty {
            let task = work.removeFirst()
            await task.value
        }
    }

    // MARK: Private

    private func observe(_ observation: PlaybackObservation) {
        switch observation {
        case .time(let time):
            // During a seek the engine may still report the old position: not playback.
            guard time.isFinite, !seekInFlight else { return }
            currentTime = time
            // While paused the tracker only moves the resume position.
            record(.tick(at: time))
        case .durationChanged(let duration):
            record(.durationChanged(duration))
        case .stalled(let time):
            record(.stalled(at: time))
        case .statusChanged(.playing, let time):
            // The player's own play button (or the end of a stall, when already playing).
            guard !isPlaying, time.isFinite else { return }
            isPlaying = true
            currentTime = time
            record(.play(at: time))
        case .statusChanged(.paused, let time):
            // The player's own pause button, a headphone unplugged, an interruption: save.
            guard isPlaying else { return }
            isPlaying = false
            if time.isFinite { currentTime = time }
            record(.pause(at: time.isFinite ? time : playhead))
            save()
        case .statusChanged(.waiting, let time):
            record(.stalled(at: time))
        case .rateChanged(let rate):
            record(.rateChanged(rate))
        case .seekFinished(let time):
            // The session's own seeks are recorded when asked for; any other is the player's
            // timeline: the jump is a seek, never time watched.
            guard !seekInFlight, time.isFinite else { return }
            let target = clamped(time)
            record(.seek(from: nil, to: target))
            currentTime = target
            save()
        case .ended:
            let end = engine.duration ?? engine.currentTime
            isPlaying = false
            record(.ended(at: end))
            save()
        }
    }

    /// Where the playhead is: the seek target while a seek is in flight (the engine may still
    /// report the old position), the engine's position otherwise.
    private var playhead: Double {
        seekInFlight ? currentTime : engine.currentTime
    }

    private func record(_ event: PlaybackEvent) {
        tracker.handle(event, at: now())
    }

    private func clamped(_ time: Double) -> Double {
        let lower = Swift.max(time, 0)
        guard let duration = engine.duration, duration.isFinite, duration > 0 else { return lower }
        return Swift.min(lower, duration)
    }

    private func save() {
        let progress = tracker.progress
        let store = store
        let lessonID = lessonID
        work.append(
            Task {
                do throws(ProgressStoreError) {
                    try await store.merge(progress, into: lessonID)
                    self.lastSaveError = nil
                    self.saveCount += 1
                } catch {
                    self.lastSaveError = error
                }
            })
    }
}
