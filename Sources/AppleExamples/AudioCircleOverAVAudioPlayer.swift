// The article *The audio circle*'s model over AVAudioPlayer: a circle that downloads a lesson's
// best audio track and plays it, on the article's screen. Compiled where AVFoundation and SwiftUI
// exist (the Apple check type-checks
// it for iOS 17 and macOS 14); empty elsewhere. ArchitectureTests holds the article to the lines
// between the `example` markers.

#if canImport(AVFoundation) && canImport(SwiftUI)
    import Downloads
    import Foundation
    import Player
    import SwiftUI

    /// An audio lesson as an app's catalog lists it.
    struct AudioLesson: Sendable, Hashable {
        var id: String
        var title: String
        var audioURL: URL
    }

    /// The audio circle screen for `lesson`, caching its audio in `cacheFolder`.
    @MainActor
    func audioCircleScreen(for lesson: AudioLesson, cacheFolder: URL) -> AudioCircle {
        // example: begin audio-player-output
        let model = CirclePlayerModel(
            fetcher: HLSAudioFetcher(
                masterURL: lesson.audioURL, destination: cacheFolder.appending(path: "\(lesson.id).m4a"),
                downloader: MediaDownloader(engine: DownloadEngine())),
            output: AudioPlayerOutput())
        // example: end audio-player-output
        return AudioCircle(model: model)
    }
#endif
