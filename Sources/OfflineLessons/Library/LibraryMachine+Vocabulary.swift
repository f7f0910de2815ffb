import Downloads
import Foundation

/// What the library's machine keeps of an item, what happens to it, and what it asks for.
extension LibraryMachine {
    /// What the state file keeps of an item.
    struct Record: Codable, Hashable, Sendable {
        var remoteURL: URL
        var state: OfflineLibrary.ItemState
        /// The share of an unfinished download done when it stopped, so that starting it again
        /// shows that much at once and never less (absent in files of earlier versions).
        var fractionDone: Double?
        /// The background hand-over its download belongs to: the one it waits for, or the one
        /// whose staged bodies its run reads (absent: none). Only the state file holds it: the
        /// machine derives it from the item's ``LibraryMachine/Activity`` (``LibraryMachine/records``),
        /// and a launch turns it back into one. Saved as the keys `inBackground` and `handOver`
        /// of earlier versions.
        var background: BackgroundMark?
        /// The networks its download may use, when a download queue's rule narrowed them (absent:
        /// any): its background transfers are made with the same rule.
        var network: DownloadRequirements.Network?
        /// Whether a delete or discard was removing it when the file was saved: a launch that
        /// reads it removes its files and forgets it (absent in files of earlier versions).
        var isBeingRemoved: Bool?

        init(
            remoteURL: URL, state: OfflineLibrary.ItemState, fractionDone: Double? = nil,
            background: BackgroundMark? = nil, network: DownloadRequirements.Network? = nil,
            isBeingRemoved: Bool? = nil
        ) {
            self.remoteURL = remoteURL
            self.state = state
            self.fractionDone = fractionDone
            self.background = background
            self.network = network
            self.isBeingRemoved = isBeingRemoved
        }

        private enum CodingKeys: String, CodingKey {
            case remoteURL, state, fractionDone, inBackground, handOver, network, isBeingRemoved
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            remoteURL = try container.decode(URL.self, forKey: .remoteURL)
            state = try container.decode(OfflineLibrary.ItemState.self, forKey: .state)
            fractionDone = try container.decodeIfPresent(Double.self, forKey: .fractionDone)
            let inBackground = try container.decodeIfPresent(Bool.self, forKey: .inBackground) == true
            let generation = try container.decodeIfPresent(UInt64.self, forKey: .handOver)
            background = inBackground ? BackgroundMark(generation: generation) : nil
            network = try container.decodeIfPresent(DownloadRequirements.Network.self, forKey: .network)
            isBeingRemoved = try container.decodeIfPresent(Bool.self, forKey: .isBeingRemoved)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(remoteURL, forKey: .remoteURL)
            try container.encode(state, forKey: .state)
            try container.encodeIfPresent(fractionDone, forKey: .fractionDone)
            if let background {
                try container.encode(true, forKey: .inBackground)
                try container.encodeIfPresent(background.generation, forKey: .handOver)
            }
            try container.encodeIfPresent(network, forKey: .network)
            try container.encodeIfPresent(isBeingRemoved, forKey: .isBeingRemoved)
        }
    }

    /// The mark of an item's download in its background phase.
    struct BackgroundMark: Hashable, Sendable {
        /// The hand-over's generation, as the background transfers named it (`nil`: a file of
        /// an earlier version, whose hand-over any generation is, or every part written before
        /// one was made).
        var generation: UInt64?
    }

    /// A download asked for while the item's run stops: started once it has.
    struct Restart: Sendable, Hashable {
        var remote: URL
        var network: DownloadRequirements.Network?
    }

    /// What the learner asked of a run that has not stopped yet.
    enum Stop: Sendable, Hashable {
        /// Keep what it wrote.
        case pause
        /// Remove what it wrote.
        case cancel
    }

    /// One run of an item's download.
    struct Run: Sendable, Hashable {
        /// Its number: events of another run are ignored.
        var generation: UInt64
        /// The learner's stop, once asked.
        var stop: Stop?
        /// Whether it pauses to be handed to background transfers (``OfflineLibrary/continueInBackground()``).
        var isHandingOver = false
        /// Whether the app came back (``OfflineLibrary/continueInForeground()``) after it was
        /// asked to pause for a hand-over: paused so, it runs again in the foreground.
        var isTakenBack = false
        /// A download asked while it stops.
        var restart: Restart?
        /// The hand-over whose staged bodies it reads (its generation `nil` when it is none in
        /// particular: every part was written before one was made). Such a run is never handed
        /// over at its start, and is saved marked, so that a process ending during it leaves it
        /// to run again by itself at the next launch.
        var staged: HandedOver?
        /// Whether it reads what a hand-over staged.
        var readsStaged: Bool { staged != nil }
        /// Whether it has planned its parts, so that it can say what remains (known with
        /// hand-over always, whose runs report it).
        var hasPlanned = false
    }

    /// A hand-over whose parts are being submitted to background transfers, and what the learner
    /// asked meanwhile.
    struct Submission: Sendable, Hashable {
        /// The run it comes from.
        var generation: UInt64
        /// Asked meanwhile: a pause (its tasks then cancelled, what they stage kept), a cancel
        /// (its tasks cancelled, everything removed).
        var stop: Stop?
        /// A download asked after that pause.
        var restart: Restart?
        /// The hand-over whose staged bodies the run read, which this one replaces.
        var staged: HandedOver?
        /// Whether the app came back meanwhile: what the submission handed over is withdrawn
        /// once it returns, and the download goes on in the foreground.
        var isTakenBack = false
    }

    /// A delete or a discard, waiting for the item's run to stop.
    struct Removal: Sendable, Hashable {
        /// The run stopping, if one ran.
        var generation: UInt64?
        /// A discard keeps a downloaded file; a delete removes it and forgets the item.
        var keepsDownloaded: Bool
        /// A download asked meanwhile: started once the removal is done.
        var restart: Restart?
        /// The hand-over the item waited for, or whose staged bodies its run read: given up
        /// once the removal is done.
        var handOver: HandedOver?
    }

    /// What an item's download is doing.
    enum Activity: Sendable, Hashable {
        /// Nothing runs.
        case idle
        /// Its download goes on in the background transfers' tasks, as this hand-over; the
        /// item shows downloading, and runs again once they have ended or are taken back.
        case handedOver(HandedOver)
        /// A run.
        case running(Run)
        /// A run ended paused for a hand-over; its remaining parts are being submitted.
        case submitting(Submission)
        /// A delete or discard waits for the run to stop.
        case removing(Removal)
    }

    /// One item.
    struct Item: Sendable, Hashable {
        var record: Record
        var activity: Activity = .idle
    }

    /// How a run ended.
    enum Outcome: Sendable, Hashable {
        /// Its file is in place, under `fileName` in the library's folder.
        case downloaded(fileName: String, byteCount: UInt64)
        /// Paused: what it wrote is kept.
        case paused
        /// Cancelled: what it wrote is removed.
        case cancelled
        /// Failed: what it wrote is kept for a resume.
        case failed(DownloadFailure)
    }

    /// How a hand-over's submission ended.
    enum Submitted: Sendable, Hashable {
        /// Its tasks run in the background session, as its hand-over `generation`.
        case handedOver(generation: UInt64)
        /// Every part was written already: the run that finishes the file runs now.
        case nothingLeft
        /// The run could not say what remains (it was still planning).
        case unknownRemainder
        /// The transfers refused it (too little space, a journal that cannot be written).
        case refused(OfflineLibrary.ItemState)
    }

    /// What happened.
    enum Event: Sendable, Hashable {
        /// The learner (or a queue, with its network rule) asks to download `id` from `remote`.
        case download(String, remote: URL, network: DownloadRequirements.Network?)
        /// The learner pauses it.
        case pause(String)
        /// The learner cancels it.
        case cancel(String)
        /// A delete (or with `keepsDownloaded`, a discard) begins.
        case remove(String, keepsDownloaded: Bool)
        /// The app leaves the foreground: these runs go to the background transfers.
        case handOver([String])
        /// A run has planned its parts: with ``BackgroundTransferOptions/HandOver/always`` it is
        /// handed over at once, unless it reads what a hand-over staged.
        case planned(String, generation: UInt64)
        /// A run's progress: its share done.
        case progress(String, generation: UInt64, fraction: Double)
        /// A run ended.
        case ended(String, generation: UInt64, Outcome)
        /// A hand-over's submission ended.
        case submitted(String, generation: UInt64, Submitted)
        /// The job of run `generation` exists now: a stop asked before is applied to it.
        case jobStarted(String, generation: UInt64)
        /// Every task of the item's hand-over `generation` has ended: the run after them reads
        /// what they staged and fetches the rest. One of another hand-over changes nothing.
        case tasksEnded(String, generation: UInt64?)
        /// At a launch, the hand-overs the background transfers know, by item, with their
        /// generations: an item waiting for one they do not know runs again (nothing else would
        /// start it), and one they know for an item that no longer waits is given up.
        case launched(handOvers: [String: UInt64?])
        /// The device's network is now `path`.
        case network(NetworkPath)
        /// A save of the state file ended: with the failure, if it failed.
        case saved(OfflineLibrary.LibraryError?)
        /// The app is back in the foreground: the items handed over run again now.
        case takeBack
        /// The downloaded file of `id` is gone (removed behind the library's back).
        case fileMissing(String)
        /// The system's tasks of `id`'s hand-over `generation` have done `share` (0…1) of what
        /// was handed over, as they report while the app runs: the fraction shown moves from
        /// where the download was when it was handed over, and never back.
        case backgroundProgress(String, generation: UInt64?, share: Double)
        /// One piece of `id`'s background work (a ``Action/withdraw(_:generation:)``, a
        /// ``Action/finishHandOver(_:generation:)`` or a ``Action/submit(_:generation:network:replacing:)``,
        /// performed one after the other in the order asked) has ended: a run held behind
        /// them starts once the last has.
        case backgroundWorkEnded(String)
    }

    /// What to do, in order.
    enum Action: Sendable, Hashable {
        /// Save every record.
        case save
        /// Save every record, and `id`, from `remote`, as being removed: a launch that reads it
        /// removes the item's files and forgets it.
        case saveRemoving(String, remote: URL)
        /// Announce `id`'s state (on ``OfflineLibrary/updates``).
        case announce(String, OfflineLibrary.ItemState)
        /// Start run `generation` of `id` from `remote`; `reportsPlan` asks for a
        /// ``Event/planned(_:generation:)`` once it has planned its parts.
        case start(String, generation: UInt64, remote: URL, reportsPlan: Bool)
        /// Pause the run (it keeps what it wrote).
        case pauseRun(String, generation: UInt64)
        /// Cancel the run (it removes what it wrote).
        case cancelRun(String, generation: UInt64)
        /// Hand run `generation`'s remaining parts to the background transfers, then report
        /// ``Event/submitted(_:generation:_:)``. The item's earlier hand-over `replacing` (whose
        /// tasks have ended: the run read what they staged) gives way first.
        case submit(String, generation: UInt64, network: DownloadRequirements.Network, replacing: UInt64?)
        /// Cancel the tasks of `id`'s hand-over `generation` (`nil`: whichever it has); what
        /// they staged stays for a resume. Another hand-over of `id` is left as it is.
        case withdraw(String, generation: UInt64?)
        /// Cancel the tasks of `id`'s hand-over `generation` (`nil`: whichever it has) and
        /// remove what they staged.
        case finishHandOver(String, generation: UInt64?)
        /// Remove the hidden files a download of `id` from `remote` made (partial file, journal,
        /// validators, lock, staged bodies) and its sidecar subtitles.
        case removeFiles(String, remote: URL)
        /// Remove the downloaded file `fileName` of `id`.
        case removeDownloaded(String, fileName: String)
        /// Keep the downloaded file `fileName` of `id` from `remote`: its file options, the
        /// record beside it, and the staged bodies gone.
        case keepDownloaded(String, fileName: String, remote: URL)
        /// Forget the run's progress reports.
        case forgetProgress(String)
        /// Announce why `id` waits for a network (on ``OfflineLibrary/waitUpdates``), or that
        /// it no longer does.
        case announceWait(String, WaitReason?)
        /// The removal of `id` is done: the delete or discard that asked for it returns.
        case removed(String)
    }
}

extension LibraryMachine.Event {
    /// The one item the event is about; `nil` for one about every item (or the items it names).
    var item: String? {
        switch self {
        case .download(let id, _, _), .pause(let id), .cancel(let id), .remove(let id, _), .planned(let id, _),
            .progress(let id, _, _), .ended(let id, _, _), .submitted(let id, _, _), .jobStarted(let id, _),
            .tasksEnded(let id, _), .fileMissing(let id), .backgroundWorkEnded(let id),
            .backgroundProgress(let id, _, _):
            id
        case .handOver, .takeBack, .launched, .network, .saved:
            nil
        }
    }
}
