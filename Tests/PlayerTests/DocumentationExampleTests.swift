// The Player module's SwiftUI and AVFoundation examples (the articles *The audio circle* and
// *Watching a video lesson*, and the doc comments of CirclePlayerModel and
// PlayerObservationBridge), compiled where those frameworks exist. The architecture
// tests check that the documentation shows exactly the lines between the `example` markers.

#if canImport(SwiftUI)
    import Player
    import SwiftUI

    // example: begin audio-circle-view
    struct AudioCircle: View {
        @State var model: CirclePlayerModel

        var body: some View {
            let shown = model.presentation
            VStack {
                Button(action: model.tap) {
                    ZStack {
                        Circle().stroke(.secondary, lineWidth: 6)
                        Circle().trim(from: 0, to: shown.fillFraction ?? 0).stroke(.tint, lineWidth: 6)
                        if shown.icon == .spinner {
                            ProgressView()
                        } else {
                            Image(systemName: shown.icon.systemImageName)
                        }
                    }
                }
                .accessibilityLabel(shown.accessibilityLabel)
                .accessibilityHint(shown.accessibilityHint)
                .accessibilityValue(shown.accessibilityValue ?? "")
                if let message = shown.errorMessage { Text(message) }
            }
            .onDisappear(perform: model.exit)
        }
    }
    // example: end audio-circle-view

    // example: begin circle-model-view
    struct AudioCircleButton: View {
        @State var model: CirclePlayerModel

        var body: some View {
            let shown = model.presentation
            Button(action: model.tap) {
                ZStack {
                    Circle().trim(from: 0, to: shown.fillFraction ?? 0).stroke(.tint, lineWidth: 6)
                    if shown.icon == .spinner { ProgressView() } else { Image(systemName: shown.icon.systemImageName) }
                }
            }
            .accessibilityLabel(shown.accessibilityLabel)
            .accessibilityHint(shown.accessibilityHint)
            .onDisappear(perform: model.exit)
        }
    }
// example: end circle-model-view
#endif

#if canImport(SwiftUI) && canImport(AVKit)
    import AVKit
    import Foundation
    import Player
    import Progress
    import SwiftUI
    import TestSupport
    import Testing

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

    @Suite("Documentation examples with AVKit")
    @MainActor
    struct VideoLessonExampleTests {
        @Test("the article's lesson screen: a session over AVPlayer through the bridge")
        func lessonScreen() async {
            let lesson = (id: "salsa-2", videoURL: URL(fileURLWithPath: "/nonexistent/salsa-2.mp4"))
            let store = ProgressStore(directory: temporaryFolder("doc-video"))
            let deviceID = "iphone-doc"
            // example: begin video-lesson-session
            let player = AVPlayer(url: lesson.videoURL)
            let session = VideoPlaybackSession(
                lessonID: lesson.id, engine: PlayerObservationBridge(player: ObservedAVPlayer(player)),
                store: store, deviceID: deviceID)
            let view = LessonVideoView(player: player, session: session)
            // example: end video-lesson-session
            _ = view.body
            await session.start()
            #expect(session.isPlaying)
            await session.exit()
            #expect(!session.isPlaying)
        }
    }
#endif

#if canImport(AVFoundation)
    import AVFoundation
    import Downloads
    import Foundation
    import Player
    import Progress
    import TestSupport
    import Testing

    @Suite("Documentation examples on Apple platforms")
    @MainActor
    struct AudioPlayerOutputExampleTests {
        @Test("the article's circle over AudioPlayerOutput starts at rest, with the play symbol")
        func circleOverAudioPlayer() {
            let lesson = (id: "salsa-1", audioURL: URL(literal: "https://media.example/salsa-1/master.m3u8"))
            let cacheFolder = temporaryFolder("doc-circle")
            // example: begin audio-player-output
            let model = CirclePlayerModel(
                fetcher: HLSAudioFetcher(
                    masterURL: lesson.audioURL, destination: cacheFolder.appending(path: "\(lesson.id).m4a"),
                    downloader: MediaDownloader(engine: DownloadEngine())),
                output: AudioPlayerOutput())
            // example: end audio-player-output
            #expect(model.presentation.icon == .play)
        }

        @Test("the bridge's doc comment: a session over AVPlayer in three lines")
        func bridgeOverAVPlayer() async {
            let avPlayer = AVPlayer()
            let lesson = (id: "salsa-3", title: "Salsa 3")
            let store = ProgressStore(directory: temporaryFolder("doc-bridge"))
            let device = "iphone-doc"
            // example: begin avplayer-bridge
            let engine = PlayerObservationBridge(player: ObservedAVPlayer(avPlayer))
            let session = VideoPlaybackSession(lessonID: lesson.id, engine: engine, store: store, deviceID: device)
            await session.start()
            // example: end avplayer-bridge
            #expect(session.isPlaying)
            await session.exit()
        }

        @Test("AudioPlayerOutput throws for a file that is not audio, and stopping an idle output does nothing")
        func unplayableFile() throws {
            let output = AudioPlayerOutput()
            output.stop()
            let folder = temporaryFolder("doc-unplayable")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let file = folder.appendingPathComponent("not-audio.m4a")
            try Data("not audio".utf8).write(to: file)
            #expect(throws: (any Error).self) { try output.play(file, onEnd: {}) }
        }
    }
#endif
