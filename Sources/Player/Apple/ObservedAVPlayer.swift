#if canImport(AVFoundation)
    public import AVFoundation
    import Dispatch

    /// `AVPlayer` as an ``ObservableVideoPlayer``, on Apple platforms: its controls, and its
    /// signals as ``PlayerObservation``s for a ``PlayerObservationBridge``.
    ///
    /// It reports the periodic time observer, key-value observation of `rate`,
    /// `timeControlStatus`, the current item's `duration` and `isPlaybackLikelyToKeepUp`, the
    /// item's time-jumped, stalled, played-to-end and failed-to-play-to-end notifications, the
    /// player's rate changes with their reason and, where `AVAudioSession` exists, its
    /// interruptions. Every report reaches the bridge on the
    /// main queue in the order the player made it. It observes the item that is current when
    /// reporting starts: one lesson per session.
    @MainActor
    public final class ObservedAVPlayer: ObservableVideoPlayer {
        /// The player.
        public let player: AVPlayer

        private var timeObserver: Any?
        private var keyValueObservations: [NSKeyValueObservation] = []
        private var notificationObservers: [any NSObjectProtocol] = []

        /// Observes `player`.
        public init(_ player: AVPlayer) {
            self.player = player
        }

        /// The player's current time in seconds.
        public var currentTime: Double { player.currentTime().seconds }

        /// The current item's duration in seconds, when finite.
        public var duration: Double? {
            guard let seconds = player.currentItem?.duration.seconds, seconds.isFinite else { return nil }
            return seconds
        }

        /// Plays.
        public func play() { player.play() }

        /// Pauses.
        public func pause() { player.pause() }

        /// Seeks exactly (zero tolerance) to `time`.
        public func seek(to time: Double) async -> Bool {
            let target = CMTime(seconds: time, preferredTimescale: 600)
            return await withCheckedContinuation { continuation in
                player.seek(to: target, toleranceBefore: .zero, toleranceAfter: .zero) { finished in
                    continuation.resume(returning: finished)
                }
            }
        }

        /// Installs the observers; each report hops to the main queue, in order.
        public func startReporting(
            every interval: Duration, to report: @escaping @MainActor @Sendable (PlayerObservation) -> Void
        ) {
            stopReporting()
            let deliver: @Sendable (PlayerObservation) -> Void = { observation in
                DispatchQueue.main.async { MainActor.assumeIsolated { report(observation) } }
            }
            let seconds = interval / .seconds(1)
            timeObserver = player.addPeriodicTimeObserver(
                forInterval: CMTime(seconds: seconds, preferredTimescale: 600), queue: .main
            ) { time in deliver(.periodicTime(time.seconds)) }
            keyValueObservations.append(
                player.observe(\.rate, options: [.new]) { _, change in
                    if let rate = change.newValue { deliver(.rate(Double(rate))) }
                })
            keyValueObservations.append(
                player.observe(\.timeControlStatus, options: [.new]) { _, change in
                    switch change.newValue {
                    case .playing: deliver(.timeControlStatus(.playing))
                    case .paused: deliver(.timeControlStatus(.paused))
                    case .waitingToPlayAtSpecifiedRate: deliver(.timeControlStatus(.waiting))
                    default: break
                    }
                })
            let center = NotificationCenter.default
            if let item = player.currentItem {
                keyValueObservations.append(
                    item.observe(\.duration, options: [.new]) { _, change in
                        guard let seconds = change.newValue?.seconds else { return }
                        deliver(.durationChanged(seconds.isFinite ? seconds : nil))
                    })
                keyValueObservations.append(
                    item.observe(\.isPlaybackLikelyToKeepUp, options: [.new]) { _, change in
                        if change.newValue == true { deliver(.likelyToKeepUp) }
                    })
                let itemSignals: [(Notification.Name, PlayerObservation)] = [
                    (AVPlayerItem.playbackStalledNotification, .playbackStalled),
                    (AVPlayerItem.didPlayToEndTimeNotification, .playedToEnd),
                    (AVPlayerItem.failedToPlayToEndTimeNotification, .failedToPlayToEnd),
                ]
                for (name, observation) in itemSignals {
                    notificationObservers.append(
                        center.addObserver(forName: name, object: item, queue: nil) { _ in deliver(observation) })
                }
                // Registered on the main queue, so the item's time is read there, as the jump lands.
                notificationObservers.append(
                    center.addObserver(forName: AVPlayerItem.timeJumpedNotification, object: item, queue: .main) {
                        notification in
                        let seconds = MainActor.assumeIsolated {
                            (notification.object as? AVPlayerItem)?.currentTime().seconds ?? .nan
                        }
                        deliver(.timeJumped(to: seconds))
                    })
            }
            notificationObservers.append(
                center.addObserver(forName: AVPlayer.rateDidChangeNotification, object: player, queue: .main) {
                    notification in
                    let key = AVPlayer.rateDidChangeReasonKey
                    guard let raw = notification.userInfo?[key] as? AVPlayer.RateDidChangeReason else { return }
                    let rate = MainActor.assumeIsolated { Double((notification.object as? AVPlayer)?.rate ?? 0) }
                    let reason: RateChangeReason? =
                        switch raw {
                        case .setRateCalled: .setRateCalled
                        case .setRateFailed: .setRateFailed
                        case .audioSessionInterrupted: .audioSessionInterrupted
                        case .appBackgrounded: .appBackgrounded
                        default: nil
                        }
                    if let reason { deliver(.rateChangeReason(reason, rate: rate)) }
                })
            #if !os(macOS)
                notificationObservers.append(
                    center.addObserver(forName: AVAudioSession.interruptionNotification, object: nil, queue: nil) {
                        notification in
                        let info = notification.userInfo
                        guard let raw = info?[AVAudioSessionInterruptionTypeKey] as? UInt,
                            let type = AVAudioSession.InterruptionType(rawValue: raw)
                        else { return }
                        switch type {
                        case .began:
                            deliver(.interruptionBegan)
                        case .ended:
                            let options = (info?[AVAudioSessionInterruptionOptionKey] as? UInt) ?? 0
                            let shouldResume = AVAudioSession.InterruptionOptions(rawValue: options).contains(
                                .shouldResume)
                            deliver(.interruptionEnded(shouldResume: shouldResume))
                        @unknown default:
                            break
                        }
                    })
            #endif
        }

        /// Removes every observer.
        public func stopReporting() {
            if let timeObserver { player.removeTimeObserver(timeObserver) }
            timeObserver = nil
            for observation in keyValueObservations { observation.invalidate() }
            keyValueObservations = []
            for observer in notificationObservers { NotificationCenter.default.removeObserver(observer) }
            notificationObservers = []
        }
    }
#endif
