import Foundation
import Locking

/// Lets one download at a time use a destination's staging files, in this process.
///
/// A cancelled job removes its staging files after its transfers stop; a new job for the same
/// destination started meanwhile (a user who taps, cancels and taps again) would otherwise find
/// them half-removed, or have its own files removed under it. Each run holds its destination
/// from before it opens the journal until after its clean-up, and a later run waits its turn,
/// first come first served.
final class DestinationLocks: Sendable {
    /// The locks of every download in the process.
    static let shared = DestinationLocks()

    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var held: Set<String> = []
        var waiters: [String: [Waiter]] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Locked(State())

    /// Waits until no other run holds `key`, then holds it.
    ///
    /// - Throws: `CancellationError` when the calling task is cancelled while it waits.
    func acquire(_ key: String) async throws {
        guard let id = tryAcquire(key) else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome { case cancelled, held, waiting }
                let outcome = state.withLock { state -> Outcome in
                    if Task.isCancelled { return .cancelled }
                    if !state.held.contains(key) {
                        state.held.insert(key)
                        return .held
                    }
                    state.waiters[key, default: []].append(Waiter(id: id, continuation: continuation))
                    return .waiting
                }
                switch outcome {
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .held: continuation.resume()
                case .waiting: break
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                let index = state.waiters[key]?.firstIndex { $0.id == id }
                let waiter = index.flatMap { state.waiters[key]?.remove(at: $0) }
                if state.waiters[key]?.isEmpty == true { state.waiters[key] = nil }
                return waiter
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Holds `key` if it is free and returns `nil`; otherwise returns the id to wait under.
    private func tryAcquire(_ key: String) -> UInt64? {
        state.withLock { state in
            if !state.held.contains(key) {
                state.held.insert(key)
                return nil
            }
            state.nextID += 1
            return state.nextID
        }
    }

    /// Hands `key` to the next waiter, or frees it.
    func release(_ key: String) {
        let next = state.withLock { state -> Waiter? in
            guard var queue = state.waiters[key], !queue.isEmpty else {
                state.held.remove(key)
                return nil
            }
            let next = queue.removeFirst()
            state.waiters[key] = queue.isEmpty ? nil : queue
            return next
        }
        // `key` stays held: it passes to `next`.
        next?.continuation.resume()
    }
}
