// Tests that run only where AVFoundation and SwiftUI exist (a Mac's `swift test`): the Apple
// adapters over the real AVFoundation, and the documentation's screens in AppleExamples. Linux
// runs the same logic through SingleFilePlaybackTests and PlayerObservationBridgeTests; the Apple
// check type-checks the adapters and the examples, not this file (Docs/ApplePlatforms.md).

#if canImport(AVFoundation) && canImport(AVKit) && canImport(SwiftUI)
    import AVFoundation
    import Foundation
    import Player
    import Progress
    import SwiftUI
    import TestSupport
    import Testing

    @testable import AppleExamples

    @Suite("The Apple adapters and the documentation's screens, on a Mac")
    @MainActor
    struct AppleAdapterTests {
        @Test("AudioPlayerOutput throws for a file that is not audio, and stopping an idle output does nothing")
        func unplayableFile() throws {
            let output = AudioPlayerOutput()
            output.stop()
            let folder = temporaryFolder("apple-unplayable")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let file = folder.appendingPathComponent("not-audio.m4a")
            try Data("not audio".utf8).write(to: file)
            #expect(throws: (any Error).self) { try output.play(file, onEnd: {}) }
        }

        @Test("the audio circle's screen starts at rest, with the play symbol")
        func audioCircleScreen() {
            let lesson = AudioLesson(
                id: "salsa-1", title: "Salsa 1", audioURL: URL(literal: "https://media.example/salsa-1/master.m3u8"))
            let screen = audioCircleScreen(for: lesson, cacheFolder: temporaryFolder("apple-circle"))
            #expect(screen.model.presentation.icon == .play)
        }

        @Test("a session over a real AVPlayer through the bridge plays, and exits")
        func bridgeOverAVPlayer() async {
            let lesson = VideoLesson(
                id: "salsa-3", title: "Salsa 3", videoURL: URL(fileURLWithPath: "/nonexistent/salsa-3.mp4"))
            let store = ProgressStore(directory: temporaryFolder("apple-bridge"))
            let session = await recordProgress(of: lesson, playingIn: AVPlayer(), store: store, device: "mac-test")
            #expect(session.isPlaying)
            await session.exit()
            #expect(!session.isPlaying)
        }

        @Test("the hand-wired recorder turns play, pause and seek callbacks into watched progress")
        func recorder() {
            let recorder = LessonProgressRecorder(player: AVPlayer(), lessonID: "salsa-101", restored: nil)
            recorder.durationLoaded(100)
            recorder.playerDidPlay(at: 0)
            recorder.playerDidPause(at: 15)
            recorder.userSeeked(from: 15, to: 0)
            recorder.playerDidPlay(at: 0)
            recorder.playerDidPause(at: 20)
            recorder.stop()
            #expect(recorder.tracker.progress.watchedFraction == 0.2)
        }

        @Test("the slider screen on the in-process server is at rest before its first step")
        func sliderScreen() {
            let screen = SliderSessionScreen.onReferenceServer(steps: 2)
            #expect(screen.model.ticks.isEmpty)
            #expect(!screen.model.isBusy)
        }
    }
#endif
