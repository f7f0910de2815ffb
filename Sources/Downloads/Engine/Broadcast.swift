import Foundation
import Locking

/// Sends every value to every subscriber, each of which starts from the current state.
///
/// The current state is the latest value, or with a `key`, the latest value of each key (in the
/// order keys first appeared). A subscriber's buffer holds as many values as there were keys
/// when it subscribed plus ``laggingLimit``, the newest ones: one that stops reading holds a
/// bounded amount. One that falls further behind loses the oldest values, which may be a key's
/// last value when other keys' values came after it; a reader whose decisions need each key's
/// last value subscribes with `keepingEvery`.
///
/// Two locks: `state` guards the subscribers and the current state and is never held while a
/// stream is yielded to; `delivery` keeps every subscriber's order the broadcast's and is held
/// across the yields. A stream's termination handler (which runs under its reading task's
/// status lock when that task is cancelled) takes only `state`, so a cancel during a yield
/// never waits on a lock the yield holds: holding one lock for both deadlocked the two.
package final class Broadcast<Element: Sendable>: Sendable {
    /// How many values beyond the current state a subscriber that falls behind keeps.
    package static var laggingLimit: Int { 64 }

    private struct State {
        var order: [String] = []
        var latest: [String: Element] = [:]
        var subscribers: [Int: AsyncStream<Element>.Continuation] = [:]
        var nextSubscriber = 0
        var isFinished = false
    }

    private let key: (@Sendable (Element) -> String)?
    private let state = Locked(State())
    /// The number of values sent, under the lock that orders the sends. (A `Locked<Void>`
    /// would do as well, but ThreadSanitizer reports the in-out access to its empty value as a
    /// race with reads of the box itself.)
    private let delivery = Locked<UInt64>(0)

    /// A broadcast whose state is its latest value, or with `key`, the latest value per key.
    package init(key: (@Sendable (Element) -> String)? = nil) {
        self.key = key
    }

    /// A new subscriber's stream: the current state first, then every later value, ending
    /// when the broadcast finishes (at once if it has).
    ///
    /// - Parameter keepingEvery: Whether the stream keeps every value however far its reader
    ///   falls behind, for a reader whose decisions need each key's last value (a lagging
    ///   bounded reader can lose a key's last value under newer values of other keys). Only for
    ///   a reader that always goes on reading: what it has not read is held.
    /// - Complexity: O(*k*) for *k* keys in the state.
    package func subscribe(keepingEvery: Bool = false) -> AsyncStream<Element> {
        delivery.withLock { _ in
            let (current, isFinished) = state.withLock { state in
                (state.order.compactMap { state.latest[$0] }, state.isFinished)
            }
            let (stream, continuation) = AsyncStream.makeStream(
                of: Element.self,
                bufferingPolicy: keepingEvery ? .unbounded : .bufferingNewest(current.count + Self.laggingLimit))
            for value in current { continuation.yield(value) }
            guard !isFinished else {
                continuation.finish()
                return stream
            }
            let id = state.withLock { state in
                let id = state.nextSubscriber
                state.nextSubscriber += 1
                state.subscribers[id] = continuation
                return id
            }
            continuation.onTermination = { [weak self] _ in self?.remove(id) }
            return stream
        }
    }

    /// Sends `value` to every subscriber and makes it part of the current state.
    ///
    /// - Complexity: O(*s*) for *s* subscribers.
    package func yield(_ value: Element) {
        let name = key?(value) ?? ""
        delivery.withLock { sent in
            sent &+= 1
            let subscribers = state.withLock { state -> [AsyncStream<Element>.Continuation] in
                guard !state.isFinished else { return [] }
                if state.latest.updateValue(value, forKey: name) == nil { state.order.append(name) }
                return Array(state.subscribers.values)
            }
            // Under `delivery` only: every subscriber's order stays the broadcast's, and a
            // termination handler run meanwhile takes `state`, which is free.
            for continuation in subscribers { continuation.yield(value) }
        }
    }

    /// The latest value of `key` in the current state (the latest value, without a key).
    ///
    /// - Complexity: O(1).
    package func latest(for name: String = "") -> Element? {
        state.withLock { $0.latest[name] }
    }

    /// Drops the latest value of `key` from the current state (a download that ended has no
    /// progress to show), so later subscribers do not start from it.
    ///
    /// - Complexity: O(*k*) for *k* keys in the state.
    package func forget(key name: String) {
        state.withLock { state in
            guard state.latest.removeValue(forKey: name) != nil else { return }
            state.order.removeAll { $0 == name }
        }
    }

    /// Ends every subscriber's stream; later subscribers get the final state, then the end.
    package func finish() {
        delivery.withLock { _ in
            let ended = state.withLock { state in
                state.isFinished = true
                defer { state.subscribers = [:] }
                return Array(state.subscribers.values)
            }
            // Outside `state`: finishing runs each stream's termination handler, which takes it.
            for continuation in ended { continuation.finish() }
        }
    }

    private func remove(_ id: Int) {
        state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
    }
}
