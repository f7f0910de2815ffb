import Observation

/// Whether `condition`, which reads `@Observable` models, holds: it is checked now and again
/// each time a property it read changes, and `false` is returned only when the test process
/// stood still first (``withLivenessCheck(_:)``).
///
/// A wait for an event, not a count of turns: a model that runs behind a loaded cooperative
/// pool changes later, and the wait simply waits. The condition must read only observable
/// state (a model's properties), or no change would wake it.
@MainActor
public func waitUntilObserved(_ condition: @escaping @MainActor @Sendable () -> Bool) async -> Bool {
    await withLivenessCheck { @MainActor in
        while !Task.isCancelled {
            let waiter = LockedState<CheckedContinuation<Bool, Never>?>(nil)
            @Sendable func resume(_ held: Bool) {
                waiter.withLock { waiting in
                    defer { waiting = nil }
                    return waiting
                }?.resume(returning: held)
            }
            let held = await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                    waiter.withLock { $0 = continuation }
                    let holds = withObservationTracking {
                        condition()
                    } onChange: {
                        resume(false)
                    }
                    if holds || Task.isCancelled { resume(holds) }
                }
            } onCancel: {
                resume(false)
            }
            if held { return true }
        }
        return condition()
    } ?? false
}
