import Foundation

/// Lets one download at a time use a destination's staging files, in this process.
///
/// A cancelled job removes its staging files after its transfers stop; a new job for the same
/// destination started meanwhile (a user who taps, cancels and taps again) would otherwise find
/// them half-removed, or have its own files removed under it. Each run holds its destination
/// from before it opens the journal until after its clean-up, and a later run waits its turn,
/// first come first served.
final class DestinationLocks: @unchecked Sendable {
    /// The locks of every download in the process.
    static let shared = DestinationLocks()

    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private let lock = NSLock()
    private var held: Set<String> = []
    private var waiters: [String: [Waiter]] = [:]
    private var nextID: UInt64 = 0

    /// Waits until no other run holds `key`, then holds it.
    ///
    /// - Throws: `CancellationError` when the calling task is cancelled while it waits.
    func acquire(_ key: String) async throws {
        guard let id = tryAcquire(key) else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                lock.lock()
                if Task.isCancelled {
                    lock.unlock()
                    continuation.resume(throwing: CancellationError())
                } else if !held.contains(key) {
                    held.insert(key)
                    lock.unlock()
                    continuation.resume()
                } else {
                    waiters[key, default: []].append(Waiter(id: id, continuation: continuation))
                    lock.unlock()
                }
            }
        } onCancel: {
            lock.lock()
            let index = waiters[key]?.firstIndex { $0.id == id }
            let waiter = index.flatMap { waiters[key]?.remove(at: $0) }
            if waiters[key]?.isEmpty == true { waiters[key] = nil }
            lock.unlock()
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Holds `key` if it is free and returns `nil`; otherwise returns the id to wait under.
    private func tryAcquire(_ key: String) -> UInt64? {
        lock.lock()
        defer { lock.unlock() }
        if !held.contains(key) {
            held.insert(key)
            return nil
        }
        nextID += 1
        return nextID
    }

    /// Hands `key` to the next waiter, or frees it.
    func release(_ key: String) {
        lock.lock()
        guard var queue = waiters[key], !queue.isEmpty else {
            held.remove(key)
            lock.unlock()
            return
        }
        let next = queue.removeFirst()
        waiters[key] = queue.isEmpty ? nil : queue
        lock.unlock()
        // `key` stays held: it passes to `next`.
        next.continuation.resume()
    }
}
