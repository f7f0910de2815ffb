import Downloads
import Foundation

/// Every item of an offline library and what its download is doing, as one value.
///
/// The learner's calls, the runs' ends, the hand-overs to background transfers and what a
/// launch finds come in as ``Event``s; what the library must do goes out as ``Action``s, which
/// ``OfflineLibrary`` performs in order, feeding each await's result back as an event. The
/// machine performs nothing itself and reads no clock, file or network, so that every order of
/// events can be checked (`LibraryMachineTests`).
///
/// An item is its ``Record`` (what the state file keeps) and its ``Activity`` (what runs now,
/// lost with the process). Whether it is handed over (and which hand-over, by its generation),
/// and so why it waits for a network, is derived from the two and the device's network, in one
/// place (``handOver(of:)``, ``waitReason(of:)``).
///
/// The rules:
/// - **One run at a time.** An item has at most one run (a ``Run``'s generation names it); an
///   event of another generation changes nothing.
/// - **The learner's last word wins.** A pause, a cancel, a delete or a Download asked while a
///   run stops (or while its parts are being handed over) is kept and applied once it has
///   stopped.
/// - **Saved before announced.** A change of a record is saved (``Action/save``) before it is
///   announced; the driver makes the transition that starts a download only once its save
///   succeeded.
struct LibraryMachine: Sendable, Hashable {
    // The transitions live in this file and its extensions (`+Background`): the stored state
    // is set by them only, never by the driver, which reads it.

    /// The items, by id.
    var items: [String: Item] = [:]
    /// The generation the next run gets.
    private(set) var nextGeneration: UInt64 = 1
    /// Whether background transfers exist, and whether every download goes to them at its start.
    let hasBackground: Bool
    let handsOverAlways: Bool
    /// The background options whose network rules an item handed over waits under.
    let waitOptions: BackgroundTransferOptions?
    /// The device's network, once known (``Event/network(_:)``).
    private(set) var networkPath: NetworkPath?
    /// The failure of the latest save, if it failed (``Event/saved(_:)``): what the machine
    /// holds is not on disk yet, and the next transition saves again, whatever it changes.
    private(set) var saveFailure: OfflineLibrary.LibraryError?
    /// The background work asked for each item (by id, whether or not the item is still
    /// known: a delete's work outlives it) and not yet ended (``Event/backgroundWorkEnded(_:)``).
    var backgroundWork: [String: Int] = [:]
    /// The start of each item's run held until its background work has ended (a take-back's
    /// cancellation of the tasks comes before the run that reads what they staged; a delete's
    /// before the Download asked after it).
    var heldStarts: [String: Action] = [:]

    /// A machine with no items, for a library with (or without) background transfers, whose
    /// items handed over wait for the networks `waitOptions` allow.
    init(hasBackground: Bool, handsOverAlways: Bool = false, waitOptions: BackgroundTransferOptions? = nil) {
        self.hasBackground = hasBackground
        self.handsOverAlways = hasBackground && handsOverAlways
        self.waitOptions = hasBackground ? waitOptions : nil
    }

    // MARK: Loading

    /// Takes in the records a launch read, reconciled with the files: a run interrupted by the
    /// app being killed is paused, one handed over still waits for its tasks (with background
    /// transfers), and `downloaded` lists items whose finished file was found for a record that
    /// did not say downloaded (a kill after the file was in place and before its end was saved:
    /// it is downloaded, as it would have been had the process lived). A record saved as being
    /// removed is a delete or discard that a kill interrupted: its files go, and so does it.
    ///
    /// - Returns: The announcements of the loaded states and the removals (the driver saves
    ///   afterwards).
    mutating func load(
        _ records: [String: Record], downloaded: [String: (fileName: String, byteCount: UInt64)],
        missingFiles: Set<String>, badFileNames: [String: String]
    ) -> [Action] {
        var actions: [Action] = []
        for (id, loaded) in records.sorted(by: { $0.key < $1.key }) where items[id] == nil {
            var record = loaded
            if record.isBeingRemoved == true {
                if let found = downloaded[id] { actions.append(.removeDownloaded(id, fileName: found.fileName)) }
                actions += [.removeFiles(id, remote: record.remoteURL), .announce(id, .notDownloaded)]
                continue
            }
            // The mark is the activity's from here on (``records``).
            let mark = record.background
            record.background = nil
            if record.state.isUnfinished, let found = downloaded[id] {
                record.state = .downloaded(fileName: found.fileName, byteCount: found.byteCount)
                record.fractionDone = nil
                items[id] = Item(record: record)
                actions += [
                    .keepDownloaded(id, fileName: found.fileName, remote: record.remoteURL),
                    .announce(id, record.state),
                ]
                continue
            }
            switch record.state {
            case .downloaded where badFileNames[id] != nil:
                record.state = .failed(
                    DownloadFailure(
                        category: .other,
                        message:
                            "The saved file name \"\(badFileNames[id] ?? "")\" is not a file in the library folder."))
            case .downloaded where missingFiles.contains(id):
                record.state = .notDownloaded
            case .downloading where mark != nil && hasBackground:
                // Its parts are the background session's: it runs again once they have ended.
                items[id] = Item(record: record, activity: .handedOver(HandedOver(generation: mark?.generation)))
                actions.append(.announce(id, record.state))
                continue
            case .downloading:
                record.state = .paused
            default:
                break
            }
            items[id] = Item(record: record)
            actions.append(.announce(id, record.state))
        }
        return actions + records.keys.sorted().compactMap { id in waitReason(of: id).map { .announceWait(id, $0) } }
    }

    // MARK: Transitions

    /// Handles `event` and returns what to do, in order, ending with the changes of the items'
    /// wait reasons it made.
    ///
    /// - Complexity: O(1) for an event of one item, O(*n*) for ``Event/handOver(_:)``,
    ///   ``Event/takeBack``, ``Event/launched(handOvers:)`` and ``Event/network(_:)``, for the
    ///   *n* items the library holds.
    mutating func handle(_ event: Event) -> [Action] {
        if case .saved(let failure) = event {
            saveFailure = failure
            return []
        }
        let watched = event.item.map { [$0] } ?? items.keys.sorted()
        let before = watched.map(waitReason(of:))
        var actions = holdingStarts(transition(event))
        for (id, was) in zip(watched, before) {
            let now = waitReason(of: id)
            if now != was { actions.append(.announceWait(id, now)) }
        }
        // A save that failed is made again with the next change (a progress report is none).
        let saves = actions.contains { action in
            switch action {
            case .save, .saveRemoving: true
            default: false
            }
        }
        if saveFailure != nil, !saves {
            switch event {
            case .progress, .backgroundProgress: break
            default: actions.append(.save)
            }
        }
        return actions
    }

    mutating func transition(_ event: Event) -> [Action] {
        switch event {
        case .backgroundProgress(let id, let generation, let share):
            guard let handedOver = handOver(of: id),
                handedOver.generation == nil || generation == nil || handedOver.generation == generation,
                case .downloading(let shown)? = items[id]?.record.state
            else { return [] }
            // From the fraction the download had when it was handed over (kept in the record).
            let base = items[id]?.record.fractionDone ?? 0
            // Below 1 until the file is written: the run after the tasks builds it.
            let now = max(shown, base + (1 - base) * min(max(share, 0), 0.99))
            guard now > shown else { return [] }
            items[id]?.record.state = .downloading(fraction: now)
            return [.announce(id, .downloading(fraction: now))]
        case .backgroundWorkEnded(let id):
            let left = max(backgroundWork[id, default: 0] - 1, 0)
            backgroundWork[id] = left == 0 ? nil : left
            // The job of a run held meanwhile starts now; a stop asked of it since comes with
            // its ``Event/jobStarted(_:generation:)``.
            guard left == 0, let held = heldStarts.removeValue(forKey: id) else { return [] }
            return [held]
        case .download(let id, let remote, let network):
            return download(id, remote: remote, network: network)
        case .pause(let id):
            return pause(id)
        case .cancel(let id):
            return cancel(id)
        case .remove(let id, let keepsDownloaded):
            return remove(id, keepsDownloaded: keepsDownloaded)
        case .handOver(let ids):
            return ids.flatMap { handOver($0) }
        case .planned(let id, let generation):
            guard var run = run(of: id), run.generation == generation else { return [] }
            run.hasPlanned = true
            items[id]?.activity = .running(run)
            guard run.stop == nil, !run.isHandingOver, !run.readsStaged else { return [] }
            return handOver(id)
        case .progress(let id, let generation, let fraction):
            guard run(of: id)?.generation == generation, case .downloading(let shown)? = items[id]?.record.state
            else { return [] }
            let shownNow = max(shown, fraction)
            items[id]?.record.fractionDone = shownNow
            items[id]?.record.state = .downloading(fraction: shownNow)
            return [.announce(id, .downloading(fraction: shownNow))]
        case .ended(let id, let generation, let outcome):
            return ended(id, generation: generation, outcome)
        case .submitted(let id, let generation, let result):
            return submitted(id, generation: generation, result)
        case .jobStarted(let id, let generation):
            // A stop asked before its job existed (it waited in the item's chain).
            switch items[id]?.activity {
            case .running(let run)? where run.generation == generation:
                switch run.stop {
                case .cancel?: return [.cancelRun(id, generation: generation)]
                case .pause?: return [.pauseRun(id, generation: generation)]
                case nil: return run.isHandingOver ? [.pauseRun(id, generation: generation)] : []
                }
            case .removing(let removal)? where removal.generation == generation:
                // A delete or discard asked meanwhile: the run it waits for stops now.
                return [.cancelRun(id, generation: generation)]
            default:
                return []
            }
        case .tasksEnded(let id, let generation):
            guard let handedOver = handOver(of: id),
                handedOver.generation == nil || generation == nil || handedOver.generation == generation
            else { return [] }
            return runAfterBackground(id)
        case .takeBack:
            return items.keys.sorted().flatMap { id in takeBack(id) }
        case .launched(let known):
            return launched(knowing: known)
        case .network(let path):
            networkPath = path
            return []
        case .saved:
            return []  // handled above
        case .fileMissing(let id):
            guard case .downloaded? = items[id]?.record.state, items[id]?.activity == .idle,
                let remote = items[id]?.record.remoteURL
            else { return [] }
            items[id]?.record.state = .notDownloaded
            return [.save, .removeFiles(id, remote: remote), .announce(id, .notDownloaded)]
        }
    }

    /// Starts (or resumes) `id`, or notes the request for when what runs now has stopped.
    mutating func download(_ id: String, remote: URL, network: DownloadRequirements.Network?) -> [Action] {
        let restart = Restart(remote: remote, network: network)
        switch items[id]?.activity {
        case .running(var run)?:
            // Running: nothing to do, unless it stops, in which case it starts again after
            // (saved, so that a kill meanwhile does not keep the stop).
            guard run.stop != nil else { return [] }
            run.restart = restart
            items[id]?.activity = .running(run)
            return [.save]
        case .submitting(var submission)?:
            guard submission.stop != nil else { return [] }
            submission.restart = restart
            items[id]?.activity = .submitting(submission)
            return [.save]
        case .removing(var removal)?:
            removal.restart = restart
            items[id]?.activity = .removing(removal)
            return [.save]
        case .idle?, .handedOver?, nil:
            break
        }
        switch items[id]?.record.state {
        case .downloading?, .downloaded?: return []
        default: return start(id, restart: restart, staged: nil)
        }
    }

    /// A new run of `id`: saved as downloading (from the fraction kept), announced, started;
    /// with `staged`, it reads what that hand-over staged.
    mutating func start(_ id: String, restart: Restart, staged: HandedOver?) -> [Action] {
        let before = items[id]?.record
        let kept = before?.remoteURL == restart.remote ? before?.fractionDone ?? 0 : 0
        let rule = restart.network ?? before?.network
        let generation = nextGeneration
        nextGeneration += 1
        let record = Record(
            remoteURL: restart.remote, state: .downloading(fraction: kept), fractionDone: kept,
            network: rule == .any ? nil : rule)
        // The run after a hand-over stays marked in this very save (``records``).
        items[id] = Item(record: record, activity: .running(Run(generation: generation, staged: staged)))
        return [
            .save, .announce(id, record.state),
            .start(
                id, generation: generation, remote: restart.remote, reportsPlan: handsOverAlways
            ),
        ]
    }

    mutating func pause(_ id: String) -> [Action] {
        switch items[id]?.activity {
        case .running(var run)?:
            let hadRestart = run.restart != nil
            run.restart = nil
            guard run.stop == nil else {
                items[id]?.activity = .running(run)
                return hadRestart ? [.save] : []
            }
            run.stop = .pause
            items[id]?.activity = .running(run)
            // Saved at once, as paused: a kill before the run stops keeps the pause. Pausing for
            // a hand-over already, the pause is the learner's now.
            return [.save] + (run.isHandingOver ? [] : [.pauseRun(id, generation: run.generation)])
        case .submitting(var submission)?:
            let hadRestart = submission.restart != nil
            submission.restart = nil
            guard submission.stop == nil else {
                items[id]?.activity = .submitting(submission)
                return hadRestart ? [.save] : []
            }
            submission.stop = .pause
            items[id]?.activity = .submitting(submission)
            items[id]?.record.state = .paused
            return [.save, .announce(id, .paused)]
        case .removing(var removal)?:
            // A Download asked meanwhile is withdrawn: the item stays removed.
            let hadRestart = removal.restart != nil
            removal.restart = nil
            items[id]?.activity = .removing(removal)
            return hadRestart ? [.save] : []
        case .handedOver(let handedOver)?:
            // Taken back from the background: its tasks cancelled, what they staged kept.
            keepShownFraction(of: id)
            items[id]?.activity = .idle
            items[id]?.record.state = .paused
            return [.save, .announce(id, .paused), .withdraw(id, generation: handedOver.generation)]
        case .idle?, nil:
            return []
        }
    }

    mutating func cancel(_ id: String) -> [Action] {
        switch items[id]?.activity {
        case .running(var run)?:
            run.restart = nil
            run.stop = .cancel
            items[id]?.activity = .running(run)
            return [.save, .cancelRun(id, generation: run.generation)]
        case .submitting(var submission)?:
            submission.restart = nil
            submission.stop = .cancel
            items[id]?.activity = .submitting(submission)
            return cancelled(id, givingUp: submission.staged)
        case .removing(var removal)?:
            let hadRestart = removal.restart != nil
            removal.restart = nil
            items[id]?.activity = .removing(removal)
            return hadRestart ? [.save] : []
        case nil:
            return []
        case .handedOver(let handedOver)?:
            items[id]?.activity = .idle
            return cancelled(id, givingUp: handedOver)
        case .idle?:
            switch items[id]?.record.state {
            case .paused?, .failed?, .downloading?: return cancelled(id, givingUp: nil)
            default: return []
            }
        }
    }

    /// `id` cancelled with nothing running: what it kept goes now, as does the hand-over
    /// `handOver` it belonged to.
    mutating func cancelled(_ id: String, givingUp handOver: HandedOver?) -> [Action] {
        guard let record = items[id]?.record else { return [] }
        items[id]?.record.fractionDone = nil
        items[id]?.record.state = .cancelled
        // Saved first: a kill after it leaves the next launch to give up the hand-over and
        // sweep what the download kept.
        return [.save] + Self.givingUp(handOver, of: id) + [
            .removeFiles(id, remote: record.remoteURL), .announce(id, .cancelled),
        ]
    }

    mutating func remove(_ id: String, keepsDownloaded: Bool) -> [Action] {
        switch items[id]?.activity {
        case .running(let run)?:
            items[id]?.activity = .removing(
                Removal(generation: run.generation, keepsDownloaded: keepsDownloaded, handOver: run.staged))
            // Saved at once without the item: a kill before the run stops keeps the delete.
            return [.save, .cancelRun(id, generation: run.generation)]
        case .submitting(let submission)?:
            items[id]?.activity = .removing(
                Removal(generation: nil, keepsDownloaded: keepsDownloaded, handOver: submission.staged))
            // The submission's end finishes the removal.
            return [.save]
        case .removing(var removal)?:
            removal.keepsDownloaded = removal.keepsDownloaded && keepsDownloaded
            removal.restart = nil
            items[id]?.activity = .removing(removal)
            return [.save]
        case .idle?:
            items[id]?.activity = .removing(Removal(generation: nil, keepsDownloaded: keepsDownloaded))
            return finishRemoval(id)
        case .handedOver(let handedOver)?:
            items[id]?.activity = .removing(
                Removal(generation: nil, keepsDownloaded: keepsDownloaded, handOver: handedOver))
            return finishRemoval(id)
        case nil:
            // Nothing known: a delete still says so; a discard has nothing to do.
            return keepsDownloaded ? [.removed(id)] : [.save, .announce(id, .notDownloaded), .removed(id)]
        }
    }

    /// Removes `id`'s files (and, for a delete, the item), then starts a download asked meanwhile.
    mutating func finishRemoval(_ id: String) -> [Action] {
        guard case .removing(let removal)? = items[id]?.activity, let record = items[id]?.record else { return [] }
        if case .downloaded = record.state, removal.keepsDownloaded {
            items[id]?.activity = .idle
            return Self.givingUp(removal.handOver, of: id) + [.removed(id)]
        }
        // Saved first as being removed: a kill before the item is saved gone leaves the next
        // launch to remove its files and give up its hand-over. A Download asked meanwhile is
        // saved as its new run, which a kill leaves paused.
        items[id] = nil
        var actions: [Action] = [removal.restart == nil ? .saveRemoving(id, remote: record.remoteURL) : .save]
        actions += Self.givingUp(removal.handOver, of: id)
        if case .downloaded(let fileName, _) = record.state {
            actions.append(.removeDownloaded(id, fileName: fileName))
        }
        actions += [.removeFiles(id, remote: record.remoteURL), .announce(id, .notDownloaded)]
        actions += [.save, .removed(id)]
        if let restart = removal.restart { actions += start(id, restart: restart, staged: nil) }
        return actions
    }

    mutating func ended(_ id: String, generation: UInt64, _ outcome: Outcome) -> [Action] {
        switch items[id]?.activity {
        case .running(let run)? where run.generation == generation:
            return runEnded(id, run: run, outcome)
        case .removing(var removal)? where removal.generation == generation:
            removal.generation = nil
            items[id]?.activity = .removing(removal)
            var actions: [Action] = [.forgetProgress(id)]
            if case .downloaded(let fileName, let byteCount) = outcome, let remote = items[id]?.record.remoteURL {
                items[id]?.record.state = .downloaded(fileName: fileName, byteCount: byteCount)
                items[id]?.record.fractionDone = nil
                actions.append(.keepDownloaded(id, fileName: fileName, remote: remote))
            }
            return actions + finishRemoval(id)
        default:
            return []
        }
    }

    mutating func runEnded(_ id: String, run: Run, _ outcome: Outcome) -> [Action] {
        guard let remote = items[id]?.record.remoteURL else { return [] }
        var actions: [Action] = [.forgetProgress(id)]
        if case .paused = outcome, run.isHandingOver, run.stop == nil, run.isTakenBack {
            // Paused for a hand-over the app took back meanwhile: it goes on here.
            items[id]?.activity = .idle
            items[id]?.record.state = .paused
            let restart = run.restart ?? Restart(remote: remote, network: nil)
            return actions + start(id, restart: restart, staged: restart.remote == remote ? run.staged : nil)
        }
        if case .paused = outcome, run.isHandingOver, run.stop == nil {
            // Paused to go on in the background: its parts are submitted now. A Download
            // asked meanwhile is this same download, going on there.
            items[id]?.activity = .submitting(Submission(generation: run.generation, staged: run.staged))
            return actions + [
                .submit(
                    id, generation: run.generation, network: items[id]?.record.network ?? .any,
                    replacing: run.staged?.generation ?? nil)
            ]
        }
        items[id]?.activity = .idle
        var state: OfflineLibrary.ItemState
        switch outcome {
        case .downloaded(let fileName, let byteCount):
            state = .downloaded(fileName: fileName, byteCount: byteCount)
        case .paused: state = .paused
        case .cancelled: state = .cancelled
        case .failed(let failure): state = .failed(failure)
        }
        if run.stop == .cancel {
            switch state {
            case .paused, .failed:
                // Cancelled while a pause was stopping the run, or as it failed: the cancel is
                // the learner's last word, so what it kept goes.
                actions.append(.removeFiles(id, remote: remote))
                state = .cancelled
            default: break
            }
        }
        switch state {
        case .paused, .failed: break
        default: items[id]?.record.fractionDone = nil
        }
        // Idle now, it is marked with no hand-over: one its run read is given up when it is
        // downloaded or cancelled, kept (with what it staged) for the resume of a pause or a
        // failure.
        if case .downloaded(let fileName, _) = state {
            actions += Self.givingUp(run.staged, of: id)
            actions.append(.keepDownloaded(id, fileName: fileName, remote: remote))
        } else if case .cancelled = state {
            actions += Self.givingUp(run.staged, of: id)
        }
        items[id]?.record.state = state
        actions += [.announce(id, state), .save]
        if let restart = run.restart {
            switch state {
            case .downloaded: break
            default: actions += start(id, restart: restart, staged: nil)
            }
        }
        return actions
    }

}

extension OfflineLibrary.ItemState {
    /// Whether it is a download begun and not finished: downloading, paused, failed or cancelled.
    fileprivate var isUnfinished: Bool {
        switch self {
        case .downloading, .paused, .failed, .cancelled: true
        case .notDownloaded, .downloaded: false
        }
    }
}
