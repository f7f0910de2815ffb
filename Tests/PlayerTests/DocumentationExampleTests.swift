// The Player module's SwiftUI and AVFoundation examples (the article *The audio circle* and
// CirclePlayerModel's doc comment), compiled where those frameworks exist. The architecture
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

#if canImport(AVFoundation)
    import Downloads
    import Foundation
    import Player
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
