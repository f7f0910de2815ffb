#if canImport(AVFoundation)
    public import AVFoundation

    /// The audio circle's ``AudioOutput`` over `AVAudioPlayer`, on Apple platforms.
    ///
    /// It plays one local file at a time: ``play(_:onEnd:)`` stops whatever was playing, opens the
    /// file and starts it, and `onEnd` runs on the main actor once that file plays to its end
    /// (or stops because its audio cannot be decoded). A player that was stopped or replaced
    /// never reports an end. The app configures its `AVAudioSession` (for example the
    /// `.playback` category) as it needs; this type leaves the session alone.
    ///
    /// Pass it to the model: `CirclePlayerModel(fetcher: fetcher, output: AudioPlayerOutput())`.
    @MainActor
    public final class AudioPlayerOutput: AudioOutput {
        /// Why a file could not be played.
        public struct PlaybackError: Error, Hashable, Sendable {
            /// The file.
            public var file: URL
        }

        private let playback = SingleFilePlayback<AVAudioPlayer>()
        /// The delegate of the current player (`AVAudioPlayer` holds its delegate weakly).
        private var relay: EndRelay?

        /// Creates an output that plays nothing yet.
        public init() {}

        /// Stops what was playing and plays `file` from its start.
        ///
        /// - Throws: `AVAudioPlayer`'s error when the file cannot be opened as audio, or
        ///   ``PlaybackError`` when the player refuses to start.
        public func play(_ file: URL, onEnd: @escaping @MainActor () -> Void) throws {
            stop()
            let player = try AVAudioPlayer(contentsOf: file)
            let token = playback.nextToken
            let relay = EndRelay { [weak self] in
                Task { @MainActor in self?.playback.playerEnded(token) }
            }
            player.delegate = relay
            guard playback.start(player, onEnd: onEnd) else {
                player.delegate = nil
                throw PlaybackError(file: file)
            }
            self.relay = relay
        }

        /// Pauses playback; ``resume()`` continues from here.
        public func pause() { playback.pause() }

        /// Resumes paused playback.
        public func resume() { playback.resume() }

        /// Stops playback for good; no end is reported for the file that was playing.
        public func stop() {
            playback.stop()
            relay = nil
        }
    }

    extension AVAudioPlayer: AudioFilePlayer {}

    /// Receives `AVAudioPlayer`'s delegate calls, on whichever thread the player makes them, and
    /// passes the end of playback on (each relay serves one player, so it needs no identity).
    private final class EndRelay: NSObject, AVAudioPlayerDelegate, Sendable {
        private let ended: @Sendable () -> Void

        init(ended: @escaping @Sendable () -> Void) {
            self.ended = ended
            super.init()
        }

        func audioPlayerDidFinishPlaying(_ player: AVAudioPlayer, successfully flag: Bool) {
            ended()
        }

        func audioPlayerDecodeErrorDidOccur(_ player: AVAudioPlayer, error: (any Error)?) {
            ended()
        }
    }
#endif
