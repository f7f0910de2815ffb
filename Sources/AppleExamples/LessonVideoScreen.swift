// The article *Watching a video lesson*: a lesson screen over AVPlayer, its session recording
// watched progress through ObservedAVPlayer, and PlayerObservationBridge's doc comment. Compiled
// where SwiftUI and AVKit exist (the Apple check type-checks it for iOS 17 and macOS 14); empty
// elsewhere. ArchitectureTests holds the documentation to the lines between the `example` markers.

#if canImport(SwiftUI) && canImport(AVKit)
    import AVKit
    import Foundation
    import Player
    import Progress
    import SwiftUI

    /// A video lesson as an app's catalog lists it.
    struct VideoLesson: Sendable, Hashable {
        var id: String
        var title: String
        var videoURL: URL
    }

    // example: begin video-lesson-view
    struct LessonVideoView: View {
        let player: AVPlayer
        @State var session: VideoPlaybackSession

        var body: some View {
            VideoPlayer(player: player)
                .overlay(alignment: .bottomLeading) {
                    if let fraction = session.watchedFraction {
                        Text(fraction, format: .percent.precision(.fractionLength(0)))
                    }
                }
                .task { await session.start() }
                .onDisappear { Task { await session.exit() } }
        }
    }
    // example: end video-lesson-view

    /// The lesson screen an app's navigation shows for `lesson`, its progress saved in `store`
    /// under `deviceID`.
    @MainActor
    func lessonVideoScreen(for lesson: VideoLesson, store: ProgressStore, deviceID: String) -> LessonVideoView {
        // example: begin video-lesson-session
        let player = AVPlayer(url: lesson.videoURL)
        let session = VideoPlaybackSession(
            lessonID: lesson.id, engine: PlayerObservationBridge(player: ObservedAVPlayer(player)),
            store: store, deviceID: deviceID)
        let view = LessonVideoView(player: player, session: session)
        // example: end video-lesson-session
        return view
    }

    /// A lesson in a player the app already owns and shows (here in AVKit's `VideoPlayer`; an
    /// `AVPlayerViewController` works the same), its watched progress recorded from the moment
    /// the screen appears until it goes.
    struct ExistingPlayerLessonView: View {
        let avPlayer: AVPlayer
        let lesson: VideoLesson
        let store: ProgressStore
        let device: String
        @State private var session: VideoPlaybackSession?

        var body: some View {
            VideoPlayer(player: avPlayer)
                .task { session = await recordProgress(of: lesson, playingIn: avPlayer, store: store, device: device) }
                .onDisappear { Task { await session?.exit() } }
        }
    }

    /// Starts recording `lesson` as it plays in `avPlayer`, and returns the session to exit when
    /// the lesson closes.
    @MainActor
    func recordProgress(
        of lesson: VideoLesson, playingIn avPlayer: AVPlayer, store: ProgressStore, device: String
    ) async -> VideoPlaybackSession {
        // example: begin avplayer-bridge
        let engine = PlayerObservationBridge(player: ObservedAVPlayer(avPlayer))
        let session = VideoPlaybackSession(lessonID: lesson.id, engine: engine, store: store, deviceID: device)
        await session.start()
        // example: end avplayer-bridge
        return session
    }
#endif
