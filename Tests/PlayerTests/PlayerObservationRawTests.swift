import Player
import Testing

/// The raw values `ObservedAVPlayer` reads from AVFoundation (the audio session's interruption
/// user info, `timeControlStatus`, the item's duration), decoded by the same functions here.
@Suite("AVFoundation's raw values into observations")
struct PlayerObservationRawTests {
    @Test(
        "AVAudioSession.InterruptionType 1 began, 0 ended; InterruptionOptions bit 1 is shouldResume",
        arguments: [
            (UInt?(1), UInt?(nil), PlayerObservation?.some(.interruptionBegan)),
            (1, 1, .interruptionBegan),
            (0, nil, .interruptionEnded(shouldResume: false)),
            (0, 0, .interruptionEnded(shouldResume: false)),
            (0, 1, .interruptionEnded(shouldResume: true)),
            (0, 3, .interruptionEnded(shouldResume: true)),
            (0, 2, .interruptionEnded(shouldResume: false)),
            (2, 1, nil),
            (nil, 1, nil),
        ])
    func interruption(type: UInt?, options: UInt?, expected: PlayerObservation?) {
        #expect(PlayerObservation.interruption(type: type, options: options) == expected)
    }

    @Test(
        "AVPlayer.TimeControlStatus 0 paused, 1 waiting, 2 playing; another value is no report",
        arguments: [
            (0, PlayerObservation?.some(.timeControlStatus(.paused))), (1, .timeControlStatus(.waiting)),
            (2, .timeControlStatus(.playing)), (3, nil), (-1, nil),
        ])
    func timeControlStatus(raw: Int, expected: PlayerObservation?) {
        #expect(PlayerObservation.timeControlStatus(rawValue: raw) == expected)
    }

    @Test("a finite duration is reported; an indefinite or invalid one (infinity, NaN) is none")
    func duration() {
        #expect(PlayerObservation.duration(seconds: 93.5) == .durationChanged(93.5))
        #expect(PlayerObservation.duration(seconds: .infinity) == .durationChanged(nil))
        #expect(PlayerObservation.duration(seconds: .nan) == .durationChanged(nil))
    }
}
