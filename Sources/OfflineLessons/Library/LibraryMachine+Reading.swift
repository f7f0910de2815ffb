import Downloads
import Foundation

/// What the machine says of its items, derived in one place from their records, their
/// activities and the device's network.
extension LibraryMachine {
    // MARK: Reading

    /// Each item's record, as it stands, marked with the hand-over its activity belongs to.
    var records: [String: Record] { items.mapValues(Self.record(of:)) }

    /// `item`'s record, with the background mark its activity makes: the hand-over it waits
    /// for, or whose staged bodies its run (or that run's submission) reads. The one place the
    /// mark is made.
    static func record(of item: Item) -> Record {
        var record = item.record
        record.background =
            switch item.activity {
            case .handedOver(let handedOver): BackgroundMark(generation: handedOver.generation)
            case .running(let run): run.staged.map { BackgroundMark(generation: $0.generation) }
            case .submitting(let submission): submission.staged.map { BackgroundMark(generation: $0.generation) }
            case .idle, .removing: nil
            }
        return record
    }

    /// The records the state file keeps: each as it stands, with the learner's word applied to
    /// one whose run is still stopping (a pause saved paused, a cancel cancelled, a delete's item
    /// marked as being removed, a Download asked meanwhile paused to resume), so that a process
    /// killed before the run has stopped keeps that word at the next launch.
    ///
    /// - Complexity: O(*n*) for the *n* items.
    var savedRecords: [String: Record] {
        var saved: [String: Record] = [:]
        for (id, item) in items {
            var record = Self.record(of: item)
            switch item.activity {
            case .idle, .handedOver:
                break
            case .running(let run):
                if let restart = run.restart {
                    // A Download asked after the stop is the last word: paused, as a kill
                    // leaves every run, so that the next launch shows it ready to resume.
                    record = Self.restarting(record, restart)
                } else if let stop = run.stop {
                    Self.apply(stop, to: &record)
                }
            case .submitting(let submission):
                if let restart = submission.restart {
                    record = Self.restarting(record, restart)
                } else if let stop = submission.stop {
                    Self.apply(stop, to: &record)
                }
            case .removing(let removal):
                if let restart = removal.restart {
                    // Downloaded again once removed.
                    record = Self.restarting(record, restart)
                    record.fractionDone = nil
                    break
                }
                // Gone at the next launch with its files, unless a discard keeps its download.
                if removal.keepsDownloaded, case .downloaded = record.state { break }
                record.state = .notDownloaded
                record.isBeingRemoved = true
                record.fractionDone = nil
            }
            saved[id] = record
        }
        return saved
    }

    fileprivate static func restarting(_ record: Record, _ restart: Restart) -> Record {
        Record(
            remoteURL: restart.remote, state: .paused,
            fractionDone: restart.remote == record.remoteURL ? record.fractionDone : nil,
            network: restart.network ?? record.network)
    }

    fileprivate static func apply(_ stop: Stop, to record: inout Record) {
        record.background = nil
        switch stop {
        case .pause:
            record.state = .paused
        case .cancel:
            record.state = .cancelled
            record.fractionDone = nil
        }
    }

    /// Item `id`'s state (not downloaded when unknown).
    func state(of id: String) -> OfflineLibrary.ItemState {
        items[id]?.record.state ?? .notDownloaded
    }

    /// The generation of `id`'s run, if one runs.
    func run(of id: String) -> Run? {
        if case .running(let run)? = items[id]?.activity { return run }
        return nil
    }

    /// A hand-over an item waits for.
    struct HandedOver: Hashable, Sendable {
        /// Its generation, as the background transfers named it (`nil`: from a state file of an
        /// earlier version, which kept none).
        var generation: UInt64?
    }

    /// The hand-over `id` waits for: its activity's. The one place that says an item is
    /// handed over.
    func handOver(of id: String) -> HandedOver? {
        guard case .handedOver(let handedOver)? = items[id]?.activity else { return nil }
        return handedOver
    }

    /// Whether `id` waits for background transfers (``handOver(of:)``).
    func isHandedOver(_ id: String) -> Bool {
        handOver(of: id) != nil
    }

    /// Why `id`, handed over, does not download now: the device's network is not one its
    /// transfers may use. `nil` while they can run, and for an item not handed over.
    func waitReason(of id: String) -> WaitReason? {
        guard let options = waitOptions, let path = networkPath, isHandedOver(id) else { return nil }
        return OfflineLibrary.waitReason(on: path, options: options, rule: items[id]?.record.network ?? .any)
    }

    /// The runs ``OfflineLibrary/continueInBackground()`` hands over: running, neither stopping
    /// nor being handed over already. With hand-over always, only those that have planned their
    /// parts: the others go by themselves once they have, and a run that has not could not
    /// say what remains.
    var runsToHandOver: [String] {
        guard hasBackground else { return [] }
        return items.keys.sorted().filter { id in
            // One taken back as it was handed over is handed over again.
            if case .submitting(let submission)? = items[id]?.activity { return submission.isTakenBack }
            guard let run = run(of: id), run.stop == nil else { return false }
            if run.isHandingOver { return run.isTakenBack }
            return !handsOverAlways || run.hasPlanned
        }
    }

    /// The items ``OfflineLibrary/continueInForeground()`` takes back: those handed over, and
    /// those whose hand-over is being made (each goes on here once it returns).
    var itemsToTakeBack: [String] {
        items.keys.sorted().filter { id in
            switch items[id]?.activity {
            case .running(let run)?: run.isHandingOver && run.stop == nil
            case .submitting(let submission)?: submission.stop == nil
            default: isHandedOver(id)
            }
        }
    }

    /// Whether anything runs or stops for `id`.
    func isBusy(_ id: String) -> Bool {
        switch items[id]?.activity {
        case .running?, .submitting?, .removing?: true
        case .idle?, .handedOver?, nil: false
        }
    }
}
