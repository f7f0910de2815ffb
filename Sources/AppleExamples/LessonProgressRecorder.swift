// The article *Counting watched progress*'s recorder: AVPlayer wired to a WatchTracker by hand.
// Compiled where AVFoundation exists (the Apple check type-checks it for iOS 17 and macOS 14);
// empty elsewhere. ArchitectureTests holds the article to the lines between the `example` markers.

#if canImport(AVFoundation) && canImport(AVKit) && canImport(SwiftUI)
    import AVFoundation
    import AVKit
    import Foundation
    import Progress
    import SwiftUI

    /// The device identifier the recorder stamps its progress with (an app keeps one per install).
    private let deviceIdentifier = "ipad-7"

    // example: begin avplayer-progress
    @MainActor
    final class LessonProgressRecorder {
        let lessonID: String
        private(set) var tracker: WatchTracker
        private let player: AVPlayer
        private var observer: Any?

        init(player: AVPlayer, lessonID: String, restored: WatchProgress?) {
            self.player = player
            self.lessonID = lessonID
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

        /// Stops the ticks; call it when the lesson closes, then save `tracker.progress`.
        func stop() {
            if let observer { player.removeTimeObserver(observer) }
            observer = nil
        }

        func playerDidPlay(at seconds: Double) { tracker.handle(.play(at: seconds), at: Date()) }
        func playerDidPause(at seconds: Double) { tracker.handle(.pause(at: seconds), at: Date()) }
        func userSeeked(from: Double, to: Double) { tracker.handle(.seek(from: from, to: to), at: Date()) }
        func durationLoaded(_ seconds: Double) { tracker.handle(.durationChanged(seconds), at: Date()) }
    }
    // example: end avplayer-progress

    /// A lesson screen wired by hand: the recorder follows the player while the screen shows it,
    /// and the progress is saved in `store` when the screen goes.
    struct HandWiredLessonView: View {
        let player: AVPlayer
        let store: ProgressStore
        @State var recorder: LessonProgressRecorder

        var body: some View {
            VideoPlayer(player: player)
                .onDisappear {
                    recorder.stop()
                    let (progress, lessonID) = (recorder.tracker.progress, recorder.lessonID)
                    Task { try? await store.merge(progress, into: lessonID) }
                }
        }
    }
#endif
