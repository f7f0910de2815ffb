import Foundation

extension OfflineLibrary {
    /// Hands the remaining parts of every running download to the background session the
    /// library was created with, so that they go on while the app is suspended or not running.
    ///
    /// Call it when the app leaves the foreground (`scenePhase` becoming `.background`). Each
    /// running download is paused: what it wrote stays in its journal. Its parts not yet
    /// written (segments, initialisation sections, ranges of a file, and its keys, which every
    /// run fetches again) go to the session as one batch, adjacent ranges of one resource in
    /// one task. The items stay ``ItemState/downloading(fraction:)``. When every task of an item
    /// has ended, its download runs again: it reads what the tasks brought (staged beside its
    /// file) through its one journal and remux, fetches what they could not, and ends with the
    /// same file an uninterrupted download writes.
    ///
    /// Without background options, or where the platform has none, nothing is handed over and
    /// the downloads go on as they were.
    ///
    /// - Returns: The items handed over. An item whose download could not say what remains
    ///   (it was still planning) is paused, as is one whose hand-over failed; one refused for
    ///   want of space fails as ``DownloadError/Category/storageFull``, before anything was
    ///   submitted.
    /// - Complexity: O(*p*) for the *p* parts of the running downloads, plus one save per item.
    public func continueInBackground() async -> [String] {
        loadIfNeeded()
        guard let background else { return [] }
        startBackgroundIfNeeded()
        // A job the learner is pausing or cancelling stops as asked, not in the background.
        let running = jobs.filter { !stopping.contains($0.key) && !cancelling.contains($0.key) }
            .sorted { $0.key < $1.key }
        for (id, job) in running {
            handingOver.insert(id)
            job.pause()
        }
        var handed: [String] = []
        for (id, job) in running {
            await waitForDownload(id)
            handingOver.remove(id)
            // It ended some other way (done, failed, cancelled): nothing to hand over.
            guard case .downloading? = entries[id]?.state, jobs[id] == nil else { continue }
            guard let remainder = job.remaining else {
                set(id, .paused)
                try? save()
                continue
            }
            let parts = remainder.remaining
            guard !parts.isEmpty else {
                // Every part is written: the run that finishes the file runs now.
                restartAfterBackground(id)
                continue
            }
            do {
                try await background.handOver(id, destination: remainder.destination, parts: parts)
                // Cancelled, deleted or started again while it was handed over: not waited for.
                guard case .downloading? = entries[id]?.state, jobs[id] == nil else {
                    await background.finish(id)
                    continue
                }
                entries[id]?.inBackground = true
                try? save()
                handed.append(id)
            } catch {
                set(id, Self.state(refusedBy: error))
                try? save()
            }
        }
        return handed
    }

    /// Gives the library the completion handler the system passed the app for the background
    /// session's events, and returns at once; the library calls it on the main actor once the
    /// events of this wake-up are recorded and saved.
    ///
    /// Call it from `application(_:handleEventsForBackgroundURLSession:completionHandler:)`
    /// (or SwiftUI's `.backgroundTask(.urlSession(_:))`) when the identifier is the library's.
    /// Without background transfers the handler is called at once.
    public func handleBackgroundEvents(completion: @escaping @MainActor @Sendable () -> Void) async {
        loadIfNeeded()
        guard let background else {
            await completion()
            return
        }
        startBackgroundIfNeeded()
        await background.handleEvents { Task { @MainActor in completion() } }
    }

    /// Returns once the events of the background session's wake-up are recorded and saved:
    /// for SwiftUI's `.backgroundTask(.urlSession(_:))`, whose action ends the wake-up when it
    /// returns. Without background transfers it returns at once.
    public func handleBackgroundEvents() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Task { await handleBackgroundEvents { done.resume() } }
        }
    }

    /// Starts reading the background session's events and resubmits what the system stopped
    /// (once per process, after the states are loaded).
    func startBackgroundIfNeeded() {
        guard let background, isLoaded, !isBackgroundStarted else { return }
        isBackgroundStarted = true
        let settled = background.settled
        Task {
            await background.start()
            // An item waiting for a hand-over the transfers no longer know (their journal was
            // lost) runs again: nothing else would ever start it.
            let known = Set(await background.handovers.map(\.key))
            self.restartOrphans(known: known)
        }
        Task { [weak self] in
            for await id in settled { await self?.restartAfterBackground(id) }
        }
    }

    /// Runs again every item waiting for background transfers that `known` does not name.
    func restartOrphans(known: Set<String>) {
        for (id, entry) in entries where entry.inBackground == true && !known.contains(id) {
            restartAfterBackground(id)
        }
    }

    /// Runs item `id`'s download again once its background tasks have all ended: it reads what
    /// they staged and fetches the rest.
    func restartAfterBackground(_ id: String) {
        guard let entry = entries[id], jobs[id] == nil, case .downloading = entry.state else { return }
        entries[id]?.inBackground = nil
        // Announced by the download below, which starts from the fraction kept.
        entries[id]?.state = .paused
        do {
            try download(id, from: entry.remoteURL)
        } catch {
            // Its state could not be saved (a full disk): shown with why, kept to resume.
            set(id, .failed(DownloadFailure(error)))
        }
    }

    /// Forgets item `id`'s hand-over, with what it staged (its download has finished, or was
    /// removed).
    func forgetBackground(_ id: String) {
        entries[id]?.inBackground = nil
        guard let background else { return }
        Task { await background.finish(id) }
    }

    /// The state of an item whose hand-over `error` refused.
    private static func state(refusedBy error: BackgroundTransfers.HandoverError) -> ItemState {
        switch error {
        case .insufficientStorage(let needed, let available):
            .failed(
                DownloadFailure(
                    category: .storageFull,
                    message:
                        "The download needs \(needed) bytes of free space to go on in the background; \(available) are free."
                ))
        case .saveFailed, .duplicate:
            .paused
        }
    }
}
