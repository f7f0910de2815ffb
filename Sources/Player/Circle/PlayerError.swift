public import Foundation

/// Why the circle player could not do what the learner asked, and which file it concerned.
public struct PlayerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong. The messages come from the app's own fetcher, audio output and cache,
    /// whose errors may be of any type, so their descriptions are kept.
    public enum Kind: Hashable, Sendable {
        /// The audio could not be downloaded; the fetcher's error, described.
        case fetchFailed(message: String)
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
        case .fetchFailed(let message): "Downloading the audio failed: \(message)"
        case .unplayable(let message): "The audio file\(place) could not be played: \(message)"
        case .deleteFailed(let message): "The cached audio file\(place) could not be deleted: \(message)"
        }
    }

    /// Whether the learner should be told: a failed clean-up is the app's business, not theirs.
    public var isShownToLearner: Bool {
        switch kind {
        case .fetchFailed, .unplayable: true
        case .deleteFailed: false
        }
    }
}
