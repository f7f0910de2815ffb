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
        startBackgroundIfNeeded()
        // A run the learner is pausing or cancelling stops as asked, not in the background; one
        // being handed over is on its way, as is, with ``BackgroundTransferOptions/HandOver/always``,
        // one still reading its playlists (handed over once it has).
        let running = machine.runsToHandOver
        guard !running.isEmpty else { return [] }
        var handed: [String] = []
        await withTaskGroup(of: (String, Bool).self) { group in
            for id in running {
                // Registered before the hand-over begins: its answer cannot come first.
                let answers = expectHandOverAnswer(for: id)
                group.addTask {
                    for await answer in answers { return (id, answer) }
                    return (id, false)
                }
            }
            send(.handOver(running))
            for await (id, wasHanded) in group where wasHanded { handed.append(id) }
        }
        // What the learner asked meanwhile (a pause withdraws the tasks just submitted) is done
        // before this returns.
        for id in running { await chains[id]?.value }
        return handed.sorted()
    }

    /// Whether item `id` was handed over, said once its hand-over has ended.
    private func expectHandOverAnswer(for id: String) -> AsyncStream<Bool> {
        let (answers, continuation) = AsyncStream<Bool>.makeStream()
        handOverWaiters[id, default: []].append { answer in
            continuation.yield(answer)
            continuation.finish()
        }
        return answers
    }

    /// Whether item `id` continues in the system's background transfers: handed over by
    /// ``continueInBackground()``, its state ``ItemState/downloading(fraction:)``, and no run of
    /// its own in this process until its tasks have ended or ``continueInForeground()`` takes it
    /// back. A screen says so ("Continuing in the background") rather than show a fraction that
    /// does not move; ``waitReason(of:)`` says when it waits for a network.
    public func isHandedOver(_ id: String) -> Bool {
        loadIfNeeded()
        return machine.isHandedOver(id)
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
    /// A download whose hand-over ``continueInBackground()`` is still making (its run pausing,
    /// or its parts being submitted) is taken back too: once the hand-over returns, what it
    /// submitted is cancelled and the download goes on here.
    ///
    /// - Returns: The items taken back.
    /// - Complexity: O(*n*) for the library's *n* items, plus one cancellation per item.
    public func continueInForeground() async -> [String] {
        loadIfNeeded()
        guard background != nil, backgroundOptions?.handOver != .always else { return [] }
        startBackgroundIfNeeded()
        let taken = machine.itemsToTakeBack
        send(.takeBack)
        // Their tasks are cancelled before this returns.
        for id in taken { await chains[id]?.value }
        return taken
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
        await background.handleEvents(completion: completion)
    }

    /// Returns once the events of the background session's wake-up are recorded and saved:
    /// for SwiftUI's `.backgroundTask(.urlSession(_:))`, whose action ends the wake-up when it
    /// returns. Without background transfers it returns at once.
    public func handleBackgroundEvents() async {
        let (answered, answer) = AsyncStream<Void>.makeStream()
        await handleBackgroundEvents { answer.finish() }
        for await _ in answered {}
    }

    /// Starts reading the background session's events and resubmits what the system stopped
    /// (once per process, after the states are loaded).
    func startBackgroundIfNeeded() {
        guard let background, isLoaded else { return }
        if !isBackgroundStarted {
            isBackgroundStarted = true
            if let paths = network?.paths() {
                own(following: paths) { library, path in await library.send(.network(path)) }
            }
            own(following: background.settled) { library, settled in
                await library.send(.tasksEnded(settled.key, generation: settled.generation))
            }
            own(following: background.progress) { library, progress in
                await library.send(
                    .backgroundProgress(progress.key, generation: progress.generation, share: progress.share))
            }
        }
        guard !isBackgroundReconciling else { return }
        isBackgroundReconciling = true
        own { library in
            // Both ways, before the transfers read their events or submit anything again: a
            // hand-over of an item the library no longer waits for (a kill between forgetting
            // it here and there) is given up, and an item waiting for one the transfers no
            // longer know (their journal was lost) runs again. A journal that cannot be read
            // now decides nothing: tried again at the next call that needs the transfers.
            guard let handovers = await background.readableHandovers else {
                await library.backgroundReconcileDeferred()
                return
            }
            var known: [String: UInt64?] = [:]
            for handover in handovers { known[handover.key] = handover.generation }
            await library.launched(knowing: known)
            await background.start()
        }
    }

    /// The launch's reconciliation with the background transfers waits for a journal that can
    /// be read: the next call that needs the transfers tries again.
    private func backgroundReconcileDeferred() {
        isBackgroundReconciling = false
    }

    /// Tells the machine which hand-overs the transfers know, and returns once the give-ups
    /// that leads to are done.
    private func launched(knowing known: [String: UInt64?]) async {
        send(.launched(handOvers: known))
        for id in known.keys.sorted() { await chains[id]?.value }
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
        return machine.waitReason(of: id)
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

    /// The state of an item whose hand-over `error` refused.
    static func state(refusedBy error: BackgroundTransfers.HandoverError) -> ItemState {
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
        case .journalUnavailable(let error) where { if case .readFailed = error.kind { true } else { false } }():
            // For now only (a protected file before the first unlock): the download waits, and
            // goes on when the app next runs it.
            .paused
        case .journalUnavailable(let error):
            .failed(
                DownloadFailure(
                    category: .other, message: "The download could not go on in the background: \(error)"))
        case .duplicate:
            .paused
        }
    }
}
