/// Why the circle player could not do what the learner asked.
public enum PlayerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The audio could not be downloaded; the message says why, for display.
    case fetchFailed(message: String)
    /// The downloaded file could not be played.
    case unplayable(message: String)
    /// The cached file could not be deleted after playback; the player still works, and the
    /// model removes the file later.
    case deleteFailed(message: String)

    /// A sentence for logs.
    public var description: String {
        switch self {
        case .fetchFailed(let message): "Downloading the audio failed: \(message)"
        case .unplayable(let message): "The audio file could not be played: \(message)"
        case .deleteFailed(let message): "The cached audio file could not be deleted: \(message)"
        }
    }

    /// Whether the learner should be told: a failed clean-up is the app's business, not theirs.
    public var isShownToLearner: Bool {
        switch self {
        case .fetchFailed, .unplayable: true
        case .deleteFailed: false
        }
    }
}
