import Foundation

/// A value that tasks and threads share behind a lock: the one lock type of MediaCore.
///
/// Every access goes through ``withLock(_:)``, so the value is never read or written outside the
/// lock, and no caller forgets to unlock: the box is `Sendable` when its value is. It serves the
/// state that callbacks on arbitrary threads (a `URLSession` delegate, a `Dispatch` timer) share
/// with tasks, where an actor's hop would reorder or delay them. (The standard library's
/// `Mutex` needs iOS 18 and macOS 15.) For example, `let count = Locked(0)`, then
/// `count.withLock { $0 += 1 }`.
package final class Locked<Value>: @unchecked Sendable {
    // `@unchecked`: the value is only ever touched inside `withLock`, under `lock`.
    private let lock = NSLock()
    private var value: Value

    /// Creates a box holding `value`.
    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with the value, under the lock, and returns what it returns.
    ///
    /// Do not call the same box's `withLock` from `body`: the lock is not recursive.
    ///
    /// - Complexity: O(1) beyond `body`.
    @discardableResult
    package func withLock<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    /// The value, read under the lock.
    package var current: Value {
        withLock { $0 }
    }
}
