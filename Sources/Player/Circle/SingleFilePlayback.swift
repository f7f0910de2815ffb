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
    /// The token of the last start; a player's end reports carry the token it started with, so
    /// the end of a freed player is never taken for that of a new one at the same address.
    private var issued: UInt64 = 0

    /// Creates playback with no file.
    package init() {}

    /// Whether a player is current (started, and neither ended nor stopped).
    package var isActive: Bool { player != nil }

    /// The token the next ``start(_:onEnd:)`` gives its player: its end reports pass it to
    /// ``playerEnded(_:)``.
    package var nextToken: UInt64 { issued &+ 1 }

    /// Stops what was playing and starts `player` under ``nextToken``; `onEnd` runs once its end
    /// is reported.
    ///
    /// - Returns: `false`, keeping nothing, when the player refuses to start.
    package func start(_ player: Player, onEnd: @escaping @MainActor () -> Void) -> Bool {
        stop()
        issued &+= 1
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

    /// The player started under `token` reached its end, or stopped because it could not decode
    /// its audio: runs the end handler if that player is still the current one.
    package func playerEnded(_ token: UInt64) {
        guard player != nil, token == issued else { return }
        let onEnd = self.onEnd
        player = nil
        self.onEnd = nil
        onEnd?()
    }
}
