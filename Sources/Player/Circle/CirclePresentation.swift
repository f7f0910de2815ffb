import Downloads

/// What the circle shows for a state: derived from the state, never stored beside it.
public struct CirclePresentation: Sendable, Hashable {
    /// The symbol in the middle of the circle.
    public enum Icon: String, Sendable, Hashable {
        /// ▶︎ (SF Symbol `play.fill`).
        case play
        /// ❚❚ (SF Symbol `pause.fill`).
        case pause
        /// A progress spinner.
        case spinner

        /// The SF Symbol name, for SwiftUI's `Image(systemName:)`.
        public var systemImageName: String {
            switch self {
            case .play: "play.fill"
            case .pause: "pause.fill"
            case .spinner: "progress.indicator"
            }
        }
    }

    /// The symbol to draw.
    public var icon: Icon
    /// How much of the circle to fill with the download colour, 0…1, while fetching; `nil` otherwise.
    public var fillFraction: Double?
    /// What VoiceOver says the control is.
    public var accessibilityLabel: String
    /// What VoiceOver says a tap will do.
    public var accessibilityHint: String
    /// The accessibility value: download progress as a percentage while fetching.
    public var accessibilityValue: String?
    /// An error to show under the circle, if the last attempt failed.
    public var errorMessage: String?

    /// The presentation of `state`.
    public init(_ state: CirclePlayerMachine.State) {
        switch state {
        case .uninitialized(let error):
            icon = .play
            fillFraction = nil
            accessibilityLabel = "Play lesson audio"
            accessibilityHint =
                error?.isShownToLearner == true ? "Tries the download again" : "Downloads and plays the audio"
            accessibilityValue = nil
            errorMessage = error.flatMap { $0.isShownToLearner ? Self.message(for: $0) : nil }
        case .fetching(_, let fraction):
            icon = .spinner
            // A state built by hand may carry any Double; the view only ever sees 0…1.
            let shown = fraction.isFinite ? Swift.min(Swift.max(fraction, 0), 1) : 0
            fillFraction = shown
            accessibilityLabel = "Downloading lesson audio"
            accessibilityHint = "Cancels the download"
            accessibilityValue = "\(Int((shown * 100).rounded(.down))) percent"
            errorMessage = nil
        case .playing:
            icon = .pause
            fillFraction = nil
            accessibilityLabel = "Pause lesson audio"
            accessibilityHint = "Pauses playback"
            accessibilityValue = nil
            errorMessage = nil
        case .paused:
            icon = .play
            fillFraction = nil
            accessibilityLabel = "Resume lesson audio"
            accessibilityHint = "Resumes playback"
            accessibilityValue = nil
            errorMessage = nil
        case .completed, .discarding:
            icon = .spinner
            fillFraction = nil
            accessibilityLabel = "Finishing lesson audio"
            accessibilityHint = "Please wait"
            accessibilityValue = nil
            errorMessage = nil
        }
    }

    static func message(for error: PlayerError) -> String {
        switch error.kind {
        case .fetchFailed(let failure):
            switch failure.category {
            case .offline: "You're offline. Tap to try again when you're back online."
            case .accessDenied: "You don't have access to this audio. Sign in, then tap to try again."
            case .notFound: "This audio is no longer available."
            case .storageFull: "There's no room for the audio. Free up space, then tap to try again."
            case .notMedia:
                "The network answered with a page instead of the audio (a Wi-Fi that needs signing in?). "
                    + "Tap to try again."
            case .server: "The audio server has a problem. Tap to try again later."
            case .unsupported: "This audio can't be played offline."
            case .notWritable, .other, .cancelled, .paused: "The audio could not be downloaded. Tap to try again."
            }
        case .unplayable: "The audio could not be played. Tap to download it again."
        case .deleteFailed: ""
        }
    }
}
