import Downloads
import Foundation

/// The library's machine and the background transfers: the hand-over and the take-back, the
/// submission's end, the launch's reconciliation, the runs after a hand-over, and the starts
/// held behind an item's background work.
extension LibraryMachine {
    /// Counts the background work `actions` ask for, and holds back each start that would
    /// come before an item's work has ended. A learner's stop (or a removal) of a run whose
    /// start is held ends that run at once, as its job would have: it never starts.
    mutating func holdingStarts(_ actions: [Action]) -> [Action] {
        var kept: [Action] = []
        var pending = actions[...]
        while true {
            while let action = pending.popFirst() {
                switch action {
                case .withdraw(let id, _), .finishHandOver(let id, _), .submit(let id, _, _, _):
                    backgroundWork[id, default: 0] += 1
                case .start(let id, _, _, _) where backgroundWork[id, default: 0] > 0:
                    heldStarts[id] = action
                    continue
                default:
                    break
                }
                kept.append(action)
            }
            // A held run the learner stopped, or a removal waits for, ends now.
            var stopped: (String, UInt64, Outcome)?
            for id in heldStarts.keys.sorted() {
                if case .start(_, let generation, _, _)? = heldStarts[id], let outcome = heldOutcome(of: id) {
                    stopped = (id, generation, outcome)
                    break
                }
            }
            guard let (id, generation, outcome) = stopped else { return kept }
            heldStarts[id] = nil
            pending = ended(id, generation: generation, outcome)[...]
        }
    }

    /// How a run whose start is held ends when it is stopped: as the learner asked, or
    /// cancelled for a removal; `nil` for a run pausing to be handed over (it starts, and
    /// pauses then).
    func heldOutcome(of id: String) -> Outcome? {
        switch items[id]?.activity {
        case .running(let run)?:
            switch run.stop {
            case .pause?: .paused
            case .cancel?: .cancelled
            case nil: nil
            }
        case .removing?: .cancelled
        default: nil
        }
    }

    /// Hands `id`'s run to the background transfers: it pauses, then its parts are submitted.
    /// A hand-over taken back before it was made stands again.
    mutating func handOver(_ id: String) -> [Action] {
        if case .submitting(var submission)? = items[id]?.activity, submission.isTakenBack {
            submission.isTakenBack = false
            items[id]?.activity = .submitting(submission)
            return []
        }
        guard hasBackground, var run = run(of: id), run.stop == nil else { return [] }
        if run.isHandingOver {
            guard run.isTakenBack else { return [] }
            run.isTakenBack = false  // the pause asked for it is under way still
            items[id]?.activity = .running(run)
            return []
        }
        run.isHandingOver = true
        items[id]?.activity = .running(run)
        return [.pauseRun(id, generation: run.generation)]
    }

    /// The app is back in the foreground: `id`'s hand-over is withdrawn and its download runs
    /// here, reading what was staged; a hand-over still being made is marked so, and undone
    /// once it returns (a run pausing for it runs again, a submission is withdrawn).
    mutating func takeBack(_ id: String) -> [Action] {
        switch items[id]?.activity {
        case .running(var run)? where run.isHandingOver && run.stop == nil:
            run.isTakenBack = true
            items[id]?.activity = .running(run)
            return []
        case .submitting(var submission)? where submission.stop == nil:
            submission.isTakenBack = true
            items[id]?.activity = .submitting(submission)
            return []
        default:
            guard let handedOver = handOver(of: id) else { return [] }
            return [.withdraw(id, generation: handedOver.generation)] + runAfterBackground(id)
        }
    }

    mutating func submitted(_ id: String, generation: UInt64, _ result: Submitted) -> [Action] {
        switch items[id]?.activity {
        case .submitting(let submission)? where submission.generation == generation:
            items[id]?.activity = .idle
            switch (submission.stop, result) {
            case (.cancel?, _):
                // Cancelled meanwhile (what it kept is gone already): the hand-over goes too,
                // and a Download asked after the cancel starts over.
                var actions = Self.giveUp(result, of: id, keepingStaged: false)
                if let restart = submission.restart { actions += start(id, restart: restart, staged: nil) }
                return actions
            case (.pause?, _):
                var actions = Self.giveUp(result, of: id, keepingStaged: true)
                if let restart = submission.restart { actions += start(id, restart: restart, staged: nil) }
                return actions
            case (nil, .handedOver(let handOver)) where submission.isTakenBack:
                // The app came back as it was made: withdrawn at once, what its tasks staged
                // kept for the run that goes on here.
                items[id]?.activity = .handedOver(HandedOver(generation: handOver))
                return [.save, .withdraw(id, generation: handOver)] + runAfterBackground(id)
            case (nil, .handedOver(let handOver)):
                items[id]?.activity = .handedOver(HandedOver(generation: handOver))
                return [.save]
            case (nil, .nothingLeft):
                // Every part is written: the run that finishes the file runs now, reading what
                // the hand-over its run read staged, or none in particular.
                return runReadingStaged(id, submission.staged ?? HandedOver(generation: nil))
            case (nil, .unknownRemainder), (nil, .refused):
                if submission.isTakenBack, let remote = items[id]?.record.remoteURL {
                    // Not handed over, and the app is back: the download goes on here.
                    items[id]?.record.state = .paused
                    return start(id, restart: Restart(remote: remote, network: nil), staged: submission.staged)
                }
                if case .refused(let state) = result {
                    items[id]?.record.state = state
                    return [.announce(id, state), .save]
                }
                items[id]?.record.state = .paused
                return [.announce(id, .paused), .save]
            }
        case .removing(let removal)? where removal.generation == nil:
            // Deleted or discarded while its parts were submitted.
            return Self.giveUp(result, of: id, keepingStaged: false) + finishRemoval(id)
        default:
            // A submission no longer waited for: its own hand-over goes, and no other.
            return Self.giveUp(result, of: id, keepingStaged: true)
        }
    }

    /// Gives up the hand-over a submission made, if it made one: by its generation, so that no
    /// other hand-over of `id` is touched.
    static func giveUp(_ result: Submitted, of id: String, keepingStaged: Bool) -> [Action] {
        guard case .handedOver(let generation) = result else { return [] }
        return [keepingStaged ? .withdraw(id, generation: generation) : .finishHandOver(id, generation: generation)]
    }

    /// Keeps the fraction `id` shows while it downloads (its background tasks' progress) as
    /// the share done, which its next run starts from.
    mutating func keepShownFraction(of id: String) {
        guard case .downloading(let shown)? = items[id]?.record.state else { return }
        let kept = items[id]?.record.fractionDone ?? 0
        items[id]?.record.fractionDone = max(kept, shown)
    }

    /// Gives up `handOver`, if there is one: by its generation.
    static func givingUp(_ handOver: HandedOver?, of id: String) -> [Action] {
        handOver.map { [.finishHandOver(id, generation: $0.generation)] } ?? []
    }

    /// A launch's reconciliation with the background transfers: an item waiting for a hand-over
    /// they do not know runs again; one they know that no item waits for is given up, its
    /// staged bodies kept for an item paused or failed (they resume from them), removed
    /// otherwise (an item cancelled, deleted or downloaded since).
    mutating func launched(knowing known: [String: UInt64?]) -> [Action] {
        var actions: [Action] = []
        for (id, generation) in known.sorted(by: { $0.key < $1.key }) {
            if let handedOver = handOver(of: id),
                handedOver.generation == nil || generation == nil || handedOver.generation == generation
            {
                continue
            }
            // The generation of a hand-over the item waits for as another is that other's.
            switch items[id]?.record.state {
            case .paused?, .failed?, .downloading?: actions.append(.withdraw(id, generation: generation))
            default: actions.append(.finishHandOver(id, generation: generation))
            }
        }
        for id in items.keys.sorted() where isHandedOver(id) {
            let handedOver = handOver(of: id)
            let matches = known[id].map { known in
                handedOver?.generation == nil || known == nil || known == handedOver?.generation
            }
            if matches != true { actions += runAfterBackground(id) }
        }
        return actions
    }

    /// Runs `id` again once its hand-over's tasks have ended, or it was taken back: the run
    /// reads what they staged and fetches the rest.
    mutating func runAfterBackground(_ id: String) -> [Action] {
        guard let handedOver = handOver(of: id) else { return [] }
        return runReadingStaged(id, handedOver)
    }

    /// Starts `id`'s run that reads what `handOver` staged.
    mutating func runReadingStaged(_ id: String, _ handOver: HandedOver) -> [Action] {
        guard let record = items[id]?.record else { return [] }
        // Announced by the start, which shows the fraction kept: what the tasks brought too.
        keepShownFraction(of: id)
        items[id]?.activity = .idle
        items[id]?.record.state = .paused
        return start(id, restart: Restart(remote: record.remoteURL, network: nil), staged: handOver)
    }
}
