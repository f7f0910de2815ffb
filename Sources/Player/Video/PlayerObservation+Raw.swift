// The raw values AVFoundation hands its observers, read into observations apart from the
// AVFoundation calls, so that `ObservedAVPlayer`'s decoding runs in tests on every platform.
extension PlayerObservation {
    /// The observation for an audio-session interruption notification, from its user info's
    /// `AVAudioSessionInterruptionTypeKey` (`AVAudioSession.InterruptionType`: 1 began, 0 ended)
    /// and `AVAudioSessionInterruptionOptionKey` (`AVAudioSession.InterruptionOptions`, whose
    /// bit 1 is `shouldResume`; absent means no advice to resume); `nil` for a type it does not
    /// know or a notification without one.
    ///
    /// - Complexity: O(1).
    package static func interruption(type: UInt?, options: UInt?) -> PlayerObservation? {
        switch type {
        case 1?: .interruptionBegan
        case 0?: .interruptionEnded(shouldResume: (options ?? 0) & 1 != 0)
        default: nil
        }
    }

    /// The observation for an `AVPlayer.timeControlStatus` of this raw value (0 paused,
    /// 1 waiting to play at the specified rate, 2 playing); `nil` for one it does not know.
    ///
    /// - Complexity: O(1).
    package static func timeControlStatus(rawValue: Int) -> PlayerObservation? {
        switch rawValue {
        case 0: .timeControlStatus(.paused)
        case 1: .timeControlStatus(.waiting)
        case 2: .timeControlStatus(.playing)
        default: nil
        }
    }

    /// The observation for an item's duration of `seconds`: `nil` inside when it is not finite
    /// (an indefinite live duration, or an invalid time's NaN).
    ///
    /// - Complexity: O(1).
    package static func duration(seconds: Double) -> PlayerObservation {
        .durationChanged(seconds.isFinite ? seconds : nil)
    }
}
