#if canImport(AVFoundation)
    import AVFoundation
    import Foundation
    import Progress
    import Testing

    /// The device identifier the article's recorder stamps its progress with.
    private let deviceIdentifier = "ipad-doc"

    // The article's AVPlayer recorder (Counting watched progress), compiled where AVFoundation
    // exists. The architecture tests check that the article shows exactly these lines.
    // example: begin avplayer-progress
    @MainActor
    final class LessonProgressRecorder {
        private(set) var tracker: WatchTracker
        private var observer: Any?

        init(player: AVPlayer, lessonID: String, restored: WatchProgress?) {
            tracker = WatchTracker(
                deviceID: deviceIdentifier,
                progress: restored ?? WatchProgress(),
                configuration: .init(maximumTickJump: WatchTracker.Configuration.maximumTickJump(tickInterval: 0.5)))
            // Ticks every half second: a tick further than 1.5 s (2× playback, with slack) is a seek.
            observer = player.addPeriodicTimeObserver(
                forInterval: CMTime(seconds: 0.5, preferredTimescale: 600), queue: .main
            ) { [weak self] time in
                MainActor.assumeIsolated {
                    self?.tracker.handle(.tick(at: time.seconds), at: Date())
                }
            }
        }

        func playerDidPlay(at seconds: Double) { tracker.handle(.play(at: seconds), at: Date()) }
        func playerDidPause(at seconds: Double) { tracker.handle(.pause(at: seconds), at: Date()) }
        func userSeeked(from: Double, to: Double) { tracker.handle(.seek(from: from, to: to), at: Date()) }
        func durationLoaded(_ seconds: Double) { tracker.handle(.durationChanged(seconds), at: Date()) }
    }
    // example: end avplayer-progress

    @Suite("Documentation examples on Apple platforms")
    @MainActor
    struct AVPlayerExampleTests {
        @Test("the article's recorder turns play, pause and seek callbacks into watched progress")
        func recorder() {
            let recorder = LessonProgressRecorder(player: AVPlayer(), lessonID: "salsa-101", restored: nil)
            recorder.durationLoaded(100)
            recorder.playerDidPlay(at: 0)
            recorder.playerDidPause(at: 15)
            recorder.userSeeked(from: 15, to: 0)
            recorder.playerDidPlay(at: 0)
            recorder.playerDidPause(at: 20)
            #expect(recorder.tracker.progress.watchedFraction == 0.2)
        }
    }
#endif
