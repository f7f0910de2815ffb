/// A player of one local audio file, as `AVAudioPlayer` is: what ``SingleFilePlayback`` drives.
@MainActor
package protocol AudioFilePlayer: AnyObject {
    /// Starts or resumes playback; `false` when the player refuses to start.
    func play() -> Bool
    /// Pauses playback.
    func pause()
    /// Stops playback for good.
    func stop()
}

/// The rules of an ``AudioOutput`` that plays one file at a time, apart from the system player
/// it drives, so that they run in tests on every platform (`AudioPlayerOutput` applies them to
/// `AVAudioPlayer` on Apple platforms).
///
/// Starting a file stops the one before; the end is reported once, on the main actor, and only
/// for the current player: a player that was stopped or replaced, or one whose end was already
/// reported, never reports an end. A player that refuses to start is not kept.
@MainActor
package final class SingleFilePlayback<Player: AudioFilePlayer> {
    private var player: Player?
    private var onEnd: (@MainActor () -> Void)?

    /// Creates playback with no file.
    package init() {}

    /// Whether a player is current (started, and neither ended nor stopped).
    package var isActive: Bool { player != nil }

    /// Stops what was playing and starts `player`, which reports its end through
    /// ``playerEnded(_:)``; `onEnd` runs once that end is reported.
    ///
    /// - Returns: `false`, keeping nothing, when the player refuses to start.
    package func start(_ player: Player, onEnd: @escaping @MainActor () -> Void) -> Bool {
        stop()
        guard player.play() else { return false }
        self.player = player
        self.onEnd = onEnd
        return true
    }

    /// Pauses the current player.
    package func pause() { player?.pause() }

    /// Resumes the current player.
    package func resume() { _ = player?.play() }

    /// Stops the current player; its end is never reported.
    package func stop() {
        player?.stop()
        player = nil
        onEnd = nil
    }

    /// The player identified by `ended` reached its end, or stopped because it could not decode
    /// its audio: runs the end handler if that player is still the current one.
    package func playerEnded(_ ended: ObjectIdentifier) {
        guard let player, ObjectIdentifier(player) == ended else { return }
        let onEnd = self.onEnd
        self.player = nil
        self.onEnd = nil
        onEnd?()
    }
}
