// The article *The audio circle*'s model over AVAudioPlayer: a circle that downloads a lesson's
// best audio track and plays it. Compiled where AVFoundation exists (the Apple check type-checks
// it for iOS 17 and macOS 14); empty elsewhere. ArchitectureTests holds the article to the lines
// between the `example` markers.

#if canImport(AVFoundation)
    import Downloads
    import Foundation
    import Player

    /// An audio lesson as an app's catalog lists it.
    struct AudioLesson: Sendable, Hashable {
        var id: String
        var title: String
        var audioURL: URL
    }

    /// The circle's model for `lesson`, caching its audio in `cacheFolder`.
    @MainActor
    func audioCircleModel(for lesson: AudioLesson, cacheFolder: URL) -> CirclePlayerModel {
        // example: begin audio-player-output
        let model = CirclePlayerModel(
            fetcher: HLSAudioFetcher(
                masterURL: lesson.audioURL, destination: cacheFolder.appending(path: "\(lesson.id).m4a"),
                downloader: MediaDownloader(engine: DownloadEngine())),
            output: AudioPlayerOutput())
        // example: end audio-player-output
        return model
    }
#endif
