package import Foundation
import Locking

/// A running download: its progress, its result, and the controls to stop it.
///
/// ``cancel()`` stops the transfers and removes the partial file; ``pause()`` stops them and
/// keeps the partial file, so starting the same download again resumes it. Cancelling the task
/// that awaits ``result()`` cancels the job.
///
/// What a job leaves beside its destination, and when: the hidden staging files
/// (`.NAME.partial`, `.NAME.journal`, `.NAME.validators`, and `.NAME.lock` while it runs) stay
/// after a pause, and after a failure that a later run can resume from (offline, a server
/// error, a segment not found or a portal's page for now, a full disk, a folder that was not
/// writable, access denied); they are removed after a cancel, after a failure no resume can use
/// (``DownloadError/Category/unsupported``), and by ``discard()``, which an app calls when it
/// gives the download up.
public final class DownloadJob: Sendable {
    private enum StopRequest {
        case none, cancel, pause
    }

    private struct Shared {
        var stop = StopRequest.none
        var fraction = 0.0
        var hasEnded = false
    }

    /// Progress reports, ending when the download ends.
    ///
    /// Every reading of this property is a subscriber of its own: it starts from the latest
    /// report and sees every later one, so a list and a detail screen can both follow the job.
    /// A subscriber that stops reading keeps only the newest reports (a bounded buffer).
    public var progress: AsyncStream<DownloadProgress> { broadcast.subscribe() }
    private let broadcast = Broadcast<DownloadProgress>()
    private let shared = Locked(Shared())
    /// The job's task, set once the job exists.
    private let task = Locked<Task<Result<DownloadResult, DownloadError>, Never>?>(nil)
    /// What the run fetches, once it knows its plan (for a hand-over to background transfers),
    /// and who waits for it.
    private let published = Locked<PlanState>(PlanState())
    /// The file the download writes (its extension may change, as `downloadLesson`'s does), for
    /// ``discard()`` and for the clean-up after a failure no resume can use.
    private let destination: URL?

    init(destination: URL? = nil, _ body: @escaping @Sendable (DownloadJob) async throws -> DownloadResult) {
        self.destination = destination
        let broadcast = broadcast
        // The task holds the job until the download ends, so a caller may drop its handle.
        let shared = shared
        let published = published
        let created = Task { () -> Result<DownloadResult, DownloadError> in
            defer {
                shared.withLock { $0.hasEnded = true }
                broadcast.finish()
                let waiting = published.withLock { state in
                    state.hasEnded = true
                    defer { state.waiters = [] }
                    return state.waiters
                }
                for waiter in waiting { waiter.resume(returning: false) }
            }
            do {
                return .success(try await body(self))
            } catch {
                let failure = self.settle(error)
                if let destination, !StagingCleanup.keepsFiles(after: failure.category) {
                    await StagingCleanup.removeHoldingLocks(for: destination)
                }
                return .failure(failure)
            }
        }
        task.withLock { $0 = created }
    }

    /// Creates a job that has already failed, for a download that could not even be planned.
    init(failed error: DownloadError) {
        broadcast.finish()
        destination = nil
        task.withLock { $0 = Task { .failure(error) } }
    }

    /// Publishes `progress`, its fraction held at least at the last one published: a retried
    /// part's bytes or a refined estimate never move a progress ring back.
    func report(_ progress: DownloadProgress) {
        let shown = shared.withLock { shared in
            var shown = progress
            shown.fraction = max(shown.fraction, shared.fraction)
            shared.fraction = shown.fraction
            return shown
        }
        broadcast.yield(shown)
    }

    /// Waits for the download to end.
    ///
    /// - Throws: ``DownloadError``; of kind ``DownloadError/Kind/cancelled`` or
    ///   ``DownloadError/Kind/paused`` when it was stopped.
    public func result() async throws(DownloadError) -> DownloadResult {
        guard let running = currentTask() else { throw DownloadError(.cancelled) }
        let outcome = await withTaskCancellationHandler {
            await running.value
        } onCancel: {
            self.cancel()
        }
        return try outcome.get()
    }

    /// Stops the download and removes its partial file.
    public func cancel() { stop(.cancel) }

    /// Stops the download and keeps its partial file for a later resume.
    public func pause() { stop(.pause) }

    /// Gives the download up: stops it if it runs (as ``cancel()`` does), waits until it has
    /// stopped, and removes every hidden file it kept for a resume, whether it was paused,
    /// failed or interrupted by a crash, and the subtitle files an unfinished download wrote
    /// beside its destination. A file it completed is kept, with its subtitles. While another
    /// process downloads to the same destination, nothing is removed.
    public func discard() async {
        cancel()
        _ = await currentTask()?.value
        if let destination { await StagingCleanup.removeHoldingLocks(for: destination) }
    }

    private func stop(_ request: StopRequest) {
        shared.withLock { if $0.stop == .none { $0.stop = request } }
        currentTask()?.cancel()
    }

    private func currentTask() -> Task<Result<DownloadResult, DownloadError>, Never>? {
        task.current
    }

    /// Turns what the run threw into the job's error, cleaning up after a cancellation.
    private func settle(_ error: any Error) -> DownloadError {
        let request = shared.withLock { $0.stop }
        let wasCancelled = error is CancellationError || Task.isCancelled
        if let failure = error as? DownloadError, !wasCancelled { return failure }
        if wasCancelled || request != .none {
            return DownloadError(request == .pause ? .paused : .cancelled)
        }
        return DownloadError.file("download", error, path: nil)
    }

    /// What the job is doing, for a test that stalls: its stop request, its fraction, and
    /// whether its task has ended.
    package var diagnosis: String {
        shared.withLock { "stop: \($0.stop), fraction: \($0.fraction), ended: \($0.hasEnded)" }
    }

    /// The parts a run planned, and those it has done (kept in its journal): what a hand-over
    /// to background transfers sends is the rest.
    package struct Remainder: Sendable {
        /// The file the run writes (a lesson's extension is known once it is planned).
        package var destination: URL
        /// Every part the run fetches, by its index in the label (the plan's parts, then the keys).
        package var parts: [PlannedPart]
        /// The indices of the parts done.
        package var done: Set<Int> = []

        /// The parts not done, in order.
        ///
        /// - Complexity: O(*p*) for *p* parts.
        package var remaining: [PlannedPart] { parts.filter { !done.contains($0.index) } }
    }

    /// A run's plan as it published it: its parts are listed only when a hand-over asks, so a
    /// run that is never handed over lists nothing.
    private struct Published: Sendable {
        var destination: URL
        var parts: @Sendable () -> [PlannedPart]
        var done: Set<Int>
    }

    /// The plan published, and the waits for it (``waitUntilPlanned()``).
    private struct PlanState {
        var plan: Published?
        var waiters: [CheckedContinuation<Bool, Never>] = []
        var hasEnded = false
    }

    /// Records what the run fetches into `destination`: the parts `parts` lists when asked, of
    /// which `done` are done as the run starts.
    ///
    /// - Complexity: O(1); `parts` is not called here.
    func planned(into destination: URL, done: Set<Int>, parts: @escaping @Sendable () -> [PlannedPart]) {
        let waiting = published.withLock { state in
            state.plan = Published(destination: destination, parts: parts, done: done)
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiting { waiter.resume(returning: true) }
    }

    /// Whether the run has published its plan.
    package var hasPlanned: Bool { published.withLock { $0.plan != nil } }

    /// Returns `true` once the run has published its plan, or `false` if the job ended first.
    package func waitUntilPlanned() async -> Bool {
        await withCheckedContinuation { (waiter: CheckedContinuation<Bool, Never>) in
            let now: Bool? = published.withLock { state in
                if state.plan != nil { return true }
                if state.hasEnded { return false }
                state.waiters.append(waiter)
                return nil
            }
            if let now { waiter.resume(returning: now) }
        }
    }

    /// Records the parts `indices` done (written, and kept by the run's journal): a run calls it
    /// once as it stops, with what its journal holds.
    func partsDone<S: Sequence<Int>>(_ indices: S) {
        published.withLock { $0.plan?.done.formUnion(indices) }
    }

    /// What the run still has to fetch, or `nil` before it has planned (or for a run that
    /// cannot say). Read it once the run has stopped: the parts done are those it recorded then.
    ///
    /// - Complexity: O(*p*) for the plan's *p* parts, listed now.
    package var remaining: Remainder? {
        guard let published = published.withLock({ $0.plan }) else { return nil }
        return Remainder(destination: published.destination, parts: published.parts(), done: published.done)
    }

    /// Whether a pause (rather than a cancellation) stopped the job.
    var isPauseRequested: Bool {
        shared.withLock { $0.stop == .pause }
    }
}
