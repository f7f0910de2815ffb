import Foundation

/// A value guarded by a lock, for test helpers and tests that share it across tasks.
///
/// `Synchronization.Mutex` needs iOS 18 and macOS 15; MediaCore supports iOS 17 and macOS 14,
/// so the helpers use `NSLock`, which every supported platform has.
public final class LockedState<State>: @unchecked Sendable {
    private let lock = NSLock()
    private var state: State

    /// Guards `state`.
    public init(_ state: State) {
        self.state = state
    }

    /// Runs `body` with exclusive access to the state.
    public func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}
