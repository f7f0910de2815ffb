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
        private var observedItem: AVPlayerItem?
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
                    guard let status = change.newValue,
                        let observation = PlayerObservation.timeControlStatus(rawValue: status.rawValue)
                    else { return }
                    deliver(observation)
                })
            let center = NotificationCenter.default
            if let item = player.currentItem {
                keyValueObservations.append(
                    item.observe(\.duration, options: [.new]) { _, change in
                        guard let seconds = change.newValue?.seconds else { return }
                        deliver(.duration(seconds: seconds))
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
                // The notification itself is not `Sendable`: the main actor reads the item this
                // player observes instead of the notification's object (the same item).
                observedItem = item
                notificationObservers.append(
                    center.addObserver(forName: AVPlayerItem.timeJumpedNotification, object: item, queue: .main) {
                        [weak self] _ in
                        // A player that is gone has nothing to report (its owner forgot
                        // `stopReporting()`).
                        guard let seconds = MainActor.assumeIsolated({ self?.observedItem?.currentTime().seconds })
                        else { return }
                        deliver(.timeJumped(to: seconds))
                    })
            }
            // The reason is read from the notification where it arrives (on the main queue); only
            // `Sendable` values (the key, the reason, the rate) cross into main-actor code.
            notificationObservers.append(
                center.addObserver(forName: AVPlayer.rateDidChangeNotification, object: player, queue: .main) {
                    [weak self] notification in
                    let key = MainActor.assumeIsolated { AVPlayer.rateDidChangeReasonKey }
                    guard let raw = notification.userInfo?[key] as? AVPlayer.RateDidChangeReason,
                        let reason = RateChangeReason(raw)
                    else { return }
                    guard let rate = MainActor.assumeIsolated({ self.map { Double($0.player.rate) } }) else { return }
                    deliver(.rateChangeReason(reason, rate: rate))
                })
            #if !os(macOS)
                notificationObservers.append(
                    center.addObserver(forName: AVAudioSession.interruptionNotification, object: nil, queue: nil) {
                        notification in
                        let info = notification.userInfo
                        if let observation = PlayerObservation.interruption(
                            type: info?[AVAudioSessionInterruptionTypeKey] as? UInt,
                            options: info?[AVAudioSessionInterruptionOptionKey] as? UInt)
                        {
                            deliver(observation)
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
            observedItem = nil
        }
    }

    extension RateChangeReason {
        /// The reason `AVPlayer` gave, or `nil` for one a bridge does not act on.
        init?(_ reason: AVPlayer.RateDidChangeReason) {
            switch reason {
            case .setRateCalled: self = .setRateCalled
            case .setRateFailed: self = .setRateFailed
            case .audioSessionInterrupted: self = .audioSessionInterrupted
            case .appBackgrounded: self = .appBackgrounded
            default: return nil
            }
        }
    }
#endif
