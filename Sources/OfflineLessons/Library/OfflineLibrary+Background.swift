import Downloads
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
    ///   (it was still planning) is paused (with ``BackgroundTransferOptions/HandOver/always``, it
    ///   is handed over once planned), as is one whose hand-over failed; one refused for
    ///   want of space fails as `DownloadError/Category/storageFull`, before anything was
    ///   submitted.
    /// - Complexity: O(*p*) for the *p* parts of the running downloads, plus one save per item.
    public func continueInBackground() async -> [String] {
        loadIfNeeded()
        guard background != nil else { return [] }
        // A job the learner is pausing or cancelling stops as asked, not in the background; one
        // being handed over is on its way, as is, with ``BackgroundTransferOptions/HandOver/always``,
        // one still reading its playlists (handed over once it has).
        let always = backgroundOptions?.handOver == .always
        let running = jobs.filter {
            !stopping.contains($0.key) && !cancelling.contains($0.key) && !handingOver.contains($0.key)
                && (!always || $0.value.hasPlanned)
        }
        .sorted { $0.key < $1.key }
        return await handOver(running)
    }

    /// With ``BackgroundTransferOptions/HandOver/always``: hands item `id`'s download over as
    /// soon as `job` has planned its parts. (The run that reads what an earlier hand-over brought
    /// is never started with this: handing it over again would fetch those parts twice.)
    func handOverOncePlanned(_ id: String, job: DownloadJob) {
        Task {
            guard await job.waitUntilPlanned() else { return }
            // Still this job, and nobody is stopping or handing it over.
            guard jobs[id] === job, !stopping.contains(id), !cancelling.contains(id), !handingOver.contains(id)
            else { return }
            _ = await handOver([(id, job)])
        }
    }

    /// Whether item `id` waits for background transfers (handed over, with no run of its own).
    func isHandedOver(_ id: String) -> Bool {
        loadIfNeeded()
        guard jobs[id] == nil, entries[id]?.inBackground == true, case .downloading? = entries[id]?.state else {
            return false
        }
        return true
    }

    /// Pauses each of `running` and hands what it has not written to the background transfers.
    ///
    /// - Returns: The items handed over.
    private func handOver(_ running: [(key: String, value: DownloadJob)]) async -> [String] {
        guard let background else { return [] }
        startBackgroundIfNeeded()
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
                submittingHandOver.insert(id)
                defer { submittingHandOver.remove(id) }
                // An earlier hand-over of this item (settled, or taken back) gives way.
                await background.withdraw(id)
                try await background.handOver(
                    id, destination: remainder.destination, parts: parts, network: entries[id]?.network ?? .any)
                switch entries[id]?.state {
                case .downloading? where jobs[id] == nil:
                    entries[id]?.inBackground = true
                    try? save()
                    handed.append(id)
                    announceWaits()
                case .paused?, .downloading?:
                    // Paused while its tasks were being submitted (``pause(_:)``), or started
                    // again: its tasks are cancelled, and what they staged is kept to resume.
                    await background.withdraw(id)
                default:
                    // Cancelled or deleted meanwhile: nothing of the hand-over is kept.
                    await background.finish(id)
                }
            } catch {
                set(id, Self.state(refusedBy: error))
                try? save()
            }
        }
        return handed
    }

    /// Takes every download handed to background transfers back into the foreground: their
    /// tasks still running are cancelled, and each download runs again at once, reading what
    /// the tasks brought and fetching the rest itself.
    ///
    /// Call it when the app becomes active again (`scenePhase` becoming `.active`), for the
    /// foreground's speed and progress; without it, a download handed over stays with the
    /// background session until its tasks have ended. A task cancelled this way loses the bytes
    /// it had of its part: the run fetches that part again. With
    /// ``BackgroundTransferOptions/HandOver/always`` nothing is taken back.
    ///
    /// - Returns: The items taken back.
    /// - Complexity: O(*n*) for the library's *n* items, plus one cancellation per item.
    public func continueInForeground() async -> [String] {
        loadIfNeeded()
        guard let background, backgroundOptions?.handOver != .always else { return [] }
        var taken: [String] = []
        for (id, entry) in entries.sorted(by: { $0.key < $1.key }) where entry.inBackground == true {
            guard jobs[id] == nil, case .downloading = entry.state else { continue }
            await background.withdraw(id)
            // Paused, cancelled or run again meanwhile: nothing to take back.
            guard jobs[id] == nil, case .downloading? = entries[id]?.state else { continue }
            restartAfterBackground(id)
            taken.append(id)
        }
        return taken
    }

    /// Pauses item `id`, handed to background transfers: their tasks are cancelled, and what
    /// they staged is kept for the resume.
    func takeBackFromBackground(_ id: String) async {
        entries[id]?.inBackground = nil
        set(id, .paused)
        try? save()
        announceWaits()
        await background?.withdraw(id)
    }

    /// Gives the library the completion handler the system passed the app for the background
    /// session's events, and returns at once; the library calls it on the main actor once the
    /// events of this wake-up are recorded and saved.
    ///
    /// Call it from `application(_:handleEventsForBackgroundURLSession:completionHandler:)`
    /// (or SwiftUI's `.backgroundTask(.urlSession(_:))`) when the identifier is the library's.
    /// Without background transfers the handler is called at once. So it is when the library's
    /// state file cannot be read yet (a damaged folder, or on iOS a file protected until the
    /// first unlock): the events the session could land in the library's folder, each with its
    /// record, are recorded at the next start that reads the state. One it could not land there
    /// (that folder protected too) is lost, and its part waits for a later hand-over.
    public func handleBackgroundEvents(completion: @escaping @MainActor @Sendable () -> Void) async {
        loadIfNeeded()
        guard let background, isLoaded else {
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
        if let paths = network?.paths() {
            Task { [weak self] in
                for await path in paths {
                    guard let self else { return }
                    await self.networkChanged(to: path)
                }
            }
        }
        // Both ways: a hand-over of an item the library no longer waits for (a kill between
        // forgetting it here and there) is given up before its tasks can be submitted again.
        var owners: [String: BackgroundTransfers.HandoverOwner] = [:]
        for (id, entry) in entries {
            switch entry.state {
            case .downloading: owners[id] = .waiting
            case .paused, .failed: owners[id] = .paused
            default: break
            }
        }
        Task {
            await background.start(reconciling: owners)
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
    ///
    /// The item stays marked as handed over until its download ends: a process that ends
    /// during this run (the wake-up's time is up) leaves it to run again by itself at the next
    /// launch, rather than paused.
    func restartAfterBackground(_ id: String) {
        guard let entry = entries[id], jobs[id] == nil, case .downloading = entry.state else { return }
        // Announced by the download below, which starts from the fraction kept, and saves the
        // item still marked as handed over.
        entries[id]?.state = .paused
        runsAfterBackground.insert(id)
        defer { runsAfterBackground.remove(id) }
        do {
            try download(id, from: entry.remoteURL, network: nil)
            // Still marked, so that a process ending during the run leaves it to run again.
            if jobs[id] != nil {
                entries[id]?.inBackground = true
                try? save()
            }
        } catch {
            // Its state could not be saved (a full disk): shown with why, kept to resume.
            set(id, .failed(DownloadFailure(error)))
        }
        announceWaits()
    }

    /// Forgets item `id`'s hand-over, with what it staged (its download has finished, or was
    /// removed).
    func forgetBackground(_ id: String) {
        entries[id]?.inBackground = nil
        announceWaits()
        guard let background else { return }
        Task { await background.finish(id) }
    }

    // MARK: Waiting for a network

    /// Why item `id`, handed to background transfers, is not downloading now: the network the
    /// device has is not one the background options allow
    /// (``WaitReason/network(required:)``), or there is none. `nil` while its transfers can run,
    /// and for an item not handed over. The item's state stays
    /// ``ItemState/downloading(fraction:)``: waiting for Wi-Fi is not a failure.
    ///
    /// The system's session does not say why a task waits: the library reads the device's
    /// network (the `network` monitor given at its creation) and the options, as the system
    /// does. Discretionary transfers may wait longer, for power and a good moment.
    public func waitReason(of id: String) -> WaitReason? {
        loadIfNeeded()
        return waits[id]
    }

    /// Every change of an item's ``waitReason(of:)``: `nil` when it no longer waits. Each
    /// reading is a subscriber of its own, starting with each item's latest reason; it keeps
    /// every change until read, so read it for as long as it is held (a view's `.task`).
    public nonisolated var waitUpdates: AsyncStream<(id: String, reason: WaitReason?)> {
        waitBroadcast.subscribe(keepingEvery: true)
    }

    /// Why transfers under `options`, made with a download queue's `rule`, wait on `path`, or
    /// `nil` if they may run: the stricter of the two decides, as the system applies the
    /// session's settings and each request's own (`allowsExpensiveNetworkAccess`,
    /// `allowsConstrainedNetworkAccess`).
    static func waitReason(
        on path: NetworkPath, options: BackgroundTransferOptions, rule: DownloadRequirements.Network
    ) -> WaitReason? {
        let session = waitReason(on: path, options: options)
        guard path.isAvailable else { return session }
        let strictness: [DownloadRequirements.Network] = [.any, .notExpensive, .notConstrained]
        let sessionRule: DownloadRequirements.Network
        if case .network(let required)? = session { sessionRule = required } else { sessionRule = .any }
        let required = max(
            strictness.firstIndex(of: sessionRule) ?? 0, strictness.firstIndex(of: rule) ?? 0)
        let combined = strictness[required]
        if session == nil, combined.allows(path) { return nil }
        return .network(required: combined)
    }

    /// Why transfers under `options` wait on `path`, or `nil` if they may run (as the system
    /// applies `allowsCellularAccess`, `allowsExpensiveNetworkAccess` and
    /// `allowsConstrainedNetworkAccess`).
    static func waitReason(on path: NetworkPath, options: BackgroundTransferOptions) -> WaitReason? {
        guard path.isAvailable else { return .network(required: .any) }
        if path.isConstrained && !options.allowsConstrainedNetworkAccess {
            return .network(required: .notConstrained)
        }
        if (path.isExpensive && !options.allowsExpensiveNetworkAccess)
            || (path.isCellular && !options.allowsCellularAccess)
        {
            return .network(required: options.allowsConstrainedNetworkAccess ? .notExpensive : .notConstrained)
        }
        return nil
    }

    /// Where the device's network is read, by default: `NWPathMonitor` where there is one.
    static var deviceNetwork: (any NetworkPathMonitor)? {
        #if canImport(Network)
            SystemNetworkPathMonitor()
        #else
            nil
        #endif
    }

    private func networkChanged(to path: NetworkPath) {
        networkPath = path
        announceWaits()
    }

    /// Works out why each handed-over item waits, and announces each change.
    ///
    /// - Complexity: O(*n*) for the library's *n* items.
    func announceWaits() {
        guard let options = backgroundOptions, let path = networkPath else { return }
        var now: [String: WaitReason] = [:]
        // Those whose transfers are the background session's: no run of their own.
        for (id, entry) in entries where entry.inBackground == true && jobs[id] == nil {
            guard case .downloading = entry.state,
                let reason = Self.waitReason(on: path, options: options, rule: entry.network ?? .any)
            else { continue }
            now[id] = reason
        }
        for id in Set(waits.keys).union(now.keys).sorted() where waits[id] != now[id] {
            waitBroadcast.yield((id, now[id]))
        }
        waits = now
    }

    /// The state of an item whose hand-over `error` refused.
    private static func state(refusedBy error: BackgroundTransfers.HandoverError) -> ItemState {
        switch error {
        case .insufficientStorage(let needed, let available):
            .failed(
                DownloadFailure(
                    category: .storageFull,
                    message:
                        "The download needs \(needed) bytes of free space to go on in the background, with the downloads handed over before it; \(available) are free."
                ))
        case .saveFailed(let reason, let code):
            // Its journal could not be written: the volume is full or not writable, which
            // the learner is told, as a state file that cannot be saved is.
            .failed(
                DownloadFailure(
                    category: code.map(DownloadError.category(of:)) ?? .other,
                    message:
                        "The download could not go on in the background: its journal could not be written: \(reason)"))
        case .duplicate:
            .paused
        }
    }
}
