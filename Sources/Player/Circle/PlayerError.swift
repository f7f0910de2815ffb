public import Downloads
public import Foundation

/// Why the circle player could not do what the learner asked, and which file it concerned.
public struct PlayerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong. A failed download keeps its typed `DownloadFailure` (its category
    /// chooses the screen's words: offline, access denied, not found, storage full…); the audio
    /// output's and the cache's errors may be of any type, so their descriptions are kept.
    public enum Kind: Hashable, Sendable {
        /// The audio could not be downloaded: the download's failure, with its category (a
        /// fetcher's error that is not a `DownloadError` is `DownloadError.Category.other`).
        case fetchFailed(DownloadFailure)
        /// The downloaded file could not be played; the audio output's error, described.
        case unplayable(message: String)
        /// The cached file could not be deleted after playback; the player still works, and the
        /// model removes the file later.
        case deleteFailed(message: String)
    }

    /// What went wrong.
    public var kind: Kind
    /// The local audio file concerned, when there is one.
    public var file: URL?

    /// Creates an error.
    public init(_ kind: Kind, file: URL? = nil) {
        self.kind = kind
        self.file = file
    }

    /// A sentence for logs.
    public var description: String {
        let place = file.map { " (\($0.lastPathComponent))" } ?? ""
        return switch kind {
        case .fetchFailed(let failure): "Downloading the audio failed: \(failure.message)"
        case .unplayable(let message): "The audio file\(place) could not be played: \(message)"
        case .deleteFailed(let message): "The cached audio file\(place) could not be deleted: \(message)"
        }
    }

    /// The failure of a fetcher that threw `error`: a `DownloadError` keeps its category and
    /// typed error; any other error is `DownloadError.Category.other`, described.
    public static func fetchFailed(_ error: any Error) -> PlayerError {
        if let error = error as? DownloadError { return PlayerError(.fetchFailed(DownloadFailure(error))) }
        return PlayerError(.fetchFailed(DownloadFailure(category: .other, message: String(describing: error))))
    }

    /// Whether the learner should be told: a failed clean-up is the app's business, not theirs.
    public var isShownToLearner: Bool {
        switch kind {
        case .fetchFailed, .unplayable: true
        case .deleteFailed: false
        }
    }
}
