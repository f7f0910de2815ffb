import Downloads
import Foundation

/// The background transfers' journal, the tasks withdrawn, and the app's wake-ups, as one value.
///
/// The session's events, the submissions' ends, the withdrawals and what a launch finds come in
/// as ``Event``s; what ``BackgroundTransfers`` must do (save the journal, submit or cancel tasks,
/// stage a body, remove a landed file, announce a settled hand-over, call the system's
/// completion handlers) goes out as ``Effect``s, performed in order. The machine reads no file,
/// clock or session, so that every order of events, kills included, can be checked
/// (`HandoverMachineTests`).
///
/// The rules:
/// - **One state per request** (``BackgroundTransfers/Handed/State``), saved in the journal
///   before the effect that depends on it: a kill leaves every request submitted once or due
///   for a submission.
/// - **Each body staged once.** A body is staged only for a request the journal still lists,
///   and the request goes from the journal as it is staged.
/// - **Each completion handler called once**, after the wake-up's events are recorded
///   (``BackgroundWakeUp``).
/// - **Generations.** A withdrawal names the hand-over it takes back; a later hand-over of the
///   same download is left alone.
struct HandoverMachine<Handler: Sendable>: Sendable {
    /// The journal, as saved.
    private(set) var journal = BackgroundTransfers.Journal()
    /// The labels of tasks withdrawn whose events have not arrived yet (lost with the process):
    /// each such event is dropped.
    private(set) var withdrawnLabels: [String: Int] = [:]
    /// The system's completion handlers and the end of its events.
    private(set) var wakeUp = BackgroundWakeUp<Handler>()
    /// The labels this process submitted tasks for (lost with it): a force-quit's event for one
    /// of them is an earlier process's task, stopped, whose request runs again already.
    private(set) var submittedHere: Set<String> = []
    /// How many tasks a request may take in all.
    let maximumAttempts: Int

    /// A machine with `journal` (empty by default), whose requests take at most
    /// `maximumAttempts` tasks.
    init(journal: BackgroundTransfers.Journal = BackgroundTransfers.Journal(), maximumAttempts: Int) {
        self.journal = journal
        self.maximumAttempts = maximumAttempts
    }

    /// What happened.
    enum Event: Sendable {
        /// The session's `submit` returned for `labels` of the download `key`.
        case submitted(key: String, labels: [String])
        /// A task ended with a response; `bodyLength` is its file's size, `nil` when the file
        /// is gone (recorded already: found left over at the start, then received again).
        case finished(
            label: String, status: Int, contentRange: String?, headers: [String: String], file: URL,
            bodyLength: UInt64?)
        /// The body of `label` was staged (or could not be: the volume is full or not writable).
        case staged(label: String, succeeded: Bool)
        /// A task failed, with the resume data the failure brought.
        case failed(label: String, BackgroundTransferFailure, resumeData: Data?)
        /// The session's events of this wake-up ended (`urlSessionDidFinishEvents`).
        case eventsDelivered
        /// The system gave the app a completion handler for the session's events.
        case handlerGiven(Handler)
        /// Take back the hand-over of `key` of `generation` (`nil`: whichever it has). Its
        /// tasks the system may still run are cancelled: those marked submitted, and those of
        /// `running` not yet marked (a kill during their submission). With `removingStaged`,
        /// what it staged goes too.
        case withdraw(key: String, generation: UInt64?, running: Set<String>, removingStaged: Bool)
        /// Submit again what the system stopped and what a kill kept from being submitted; the
        /// system runs `running` still.
        case resubmit(running: Set<String>)
    }

    /// What to do, in order.
    enum Effect: Sendable {
        /// Save the journal.
        case save
        /// Submit tasks for `requests` of the download `key`, then report ``Event/submitted(key:labels:)``.
        case submit(key: String, [BackgroundTransfers.Handed])
        /// Cancel the tasks with these descriptions.
        case cancel(Set<String>)
        /// Stage the body in `file` beside `destination` as `url`'s bytes `range`, then report
        /// ``Event/staged(label:succeeded:)``.
        case stage(label: String, file: URL, url: URL, range: ByteRange?, headers: [String: String], destination: URL)
        /// Remove a landed file (its event is recorded, or dropped).
        case removeLanded(URL)
        /// Remove the landing folder's record of `label`'s failure.
        case removeFailureRecord(String)
        /// Remove what was staged beside `destination`.
        case removeStaged(URL)
        /// Announce that a hand-over's requests have all ended.
        case settled(BackgroundTransfers.Settled)
        /// Call the system's completion handlers, on the main actor.
        case callHandlers([Handler])
    }

    // MARK: Handing over

    /// Adds the hand-over of `requests` of the download `key` to `destination` to the journal
    /// (replacing one of `key` whose requests have all ended), and returns its generation; the
    /// caller saves the journal, then submits ``tasksToSubmit(of:)``. With `available` free
    /// bytes, refused unless they cover its bodies, those the other hand-overs still have to
    /// bring, and `reserve`. A journal that never gave a generation (of an earlier version, or
    /// lost) starts from `fallbackGeneration`.
    ///
    /// - Throws: ``BackgroundTransfers/HandoverError``; the journal is then unchanged.
    /// - Complexity: O(*r*) for the *r* requests of every hand-over.
    mutating func handOver(
        _ key: String, destination: URL, requests: [BackgroundTransferRequest], network: DownloadRequirements.Network,
        available: UInt64?, reserve: UInt64, generation fallbackGeneration: UInt64
    ) throws(BackgroundTransfers.HandoverError) -> UInt64 {
        var handovers = journal.handovers
        handovers.removeAll { $0.key == key && $0.isSettled }
        guard !handovers.contains(where: { $0.key == key }) else { throw .duplicate(key: key) }
        let outstanding = handovers.flatMap(\.requests).filter { $0.failure == nil }
            .reduce(UInt64(0)) { $0 &+ ($1.expectedBytes ?? 0) }
        let needed = requests.reduce(UInt64(0)) { $0 &+ ($1.expectedBodyBytes ?? 0) } &+ outstanding &+ reserve
        if let available, available < needed { throw .insufficientStorage(needed: needed, available: available) }
        let generation = journal.nextGeneration ?? fallbackGeneration
        let handed = requests.map { request in
            BackgroundTransfers.Handed(
                label: request.label.description, url: request.url, range: request.byteRange,
                expectedBytes: request.expectedBodyBytes, attempts: 1, network: network == .any ? nil : network)
        }
        handovers.append(
            BackgroundTransfers.Handover(key: key, generation: generation, destination: destination, requests: handed))
        journal.handovers = handovers
        journal.nextGeneration = generation + 1
        return generation
    }

    /// Takes in the journal a launch read; what only the process knew (the wake-up's handlers,
    /// the tasks withdrawn) stays.
    mutating func load(_ saved: BackgroundTransfers.Journal) {
        journal = saved
    }

    /// Forgets the hand-over of `key` whose journal could not be saved: nothing was submitted.
    mutating func dropUnsaved(_ key: String, generation: UInt64) {
        journal.handovers.removeAll { $0.key == key && $0.generation == generation }
    }

    /// The requests of `key` due for a submission, which the caller submits now.
    mutating func tasksToSubmit(of key: String) -> [BackgroundTransfers.Handed] {
        let due = journal.handovers.first { $0.key == key }?.requests.filter(\.needsSubmission) ?? []
        submittedHere.formUnion(due.map(\.label))
        return due
    }

    /// Whether the hand-over of `key` (of `generation`, unless `nil`) has requests that a task
    /// may run for without being marked submitted (a kill during their submission): a
    /// withdrawal then asks the session which tasks run.
    func hasUnmarkedRequests(_ key: String, generation: UInt64?) -> Bool {
        guard let handover = handover(key, generation: generation) else { return false }
        return handover.requests.contains(where: \.needsSubmission)
    }

    private func handover(_ key: String, generation: UInt64?) -> BackgroundTransfers.Handover? {
        guard let handover = journal.handovers.first(where: { $0.key == key }),
            generation == nil || handover.generation == nil || handover.generation == generation
        else { return nil }
        return handover
    }

    /// The hand-overs whose requests have all ended (at a launch: announced again).
    var settled: [BackgroundTransfers.Settled] {
        journal.handovers.filter(\.isSettled).map {
            BackgroundTransfers.Settled(key: $0.key, generation: $0.generation)
        }
    }

    // MARK: Transitions

    /// Handles `event` and returns what to do, in order.
    ///
    /// - Complexity: O(*r*) for the *r* requests the journal lists.
    mutating func handle(_ event: Event) -> [Effect] {
        switch event {
        case .submitted(let key, let labels):
            return submitted(key, labels: labels)
        case .finished(let label, let status, let contentRange, let headers, let file, let bodyLength):
            wakeUp.eventReceived()
            if dropWithdrawn(label) { return [.removeLanded(file)] }
            guard let bodyLength else { return [] }
            return finished(
                label, status: status, contentRange: contentRange, headers: headers, file: file, bodyLength: bodyLength)
        case .staged(let label, let succeeded):
            guard let (handover, index) = locate(label) else { return [] }
            guard succeeded else { return giveUp(handover, index, .storageFull) }
            journal.handovers[handover].requests.remove(at: index)
            return [.save] + announceIfSettled(handover)
        case .failed(let label, let failure, let resumeData):
            wakeUp.eventReceived()
            // Its record in the landing folder goes once the journal holds the event.
            guard !dropWithdrawn(label), let (handover, index) = locate(label) else {
                return [.removeFailureRecord(label)]
            }
            return Self.recorded(failed(handover, index, failure, resumeData: resumeData), .removeFailureRecord(label))
        case .eventsDelivered:
            let handlers = wakeUp.eventsEnded()
            return handlers.isEmpty ? [] : [.callHandlers(handlers)]
        case .handlerGiven(let handler):
            let handlers = wakeUp.handlerGiven(handler)
            return handlers.isEmpty ? [] : [.callHandlers(handlers)]
        case .withdraw(let key, let generation, let running, let removingStaged):
            return withdraw(key, generation: generation, running: running, removingStaged: removingStaged)
        case .resubmit(let running):
            return resubmit(running: running)
        }
    }

    /// Marks the requests whose tasks were submitted; a task whose request was withdrawn (or
    /// staged) meanwhile is cancelled at once: nothing else would, and it would run on in the
    /// system. A request marked already (an earlier submission of it returned after this one
    /// was made, for a retry) stays as it is.
    private mutating func submitted(_ key: String, labels: [String]) -> [Effect] {
        var orphaned: Set<String> = []
        let handover = journal.handovers.firstIndex { $0.key == key }
        for label in labels {
            guard let handover,
                let index = journal.handovers[handover].requests.firstIndex(where: { $0.label == label })
            else {
                orphaned.insert(label)
                continue
            }
            submittedHere.insert(label)
            if journal.handovers[handover].requests[index].needsSubmission {
                journal.handovers[handover].requests[index].state = .submitted
            }
        }
        guard !orphaned.isEmpty else { return [.save] }
        for label in orphaned { withdrawnLabels[label, default: 0] += 1 }
        return [.save, .cancel(orphaned)]
    }

    /// Whether an event of `label` is the end of a task withdrawn: it is dropped.
    private mutating func dropWithdrawn(_ label: String) -> Bool {
        guard let count = withdrawnLabels[label] else { return false }
        withdrawnLabels[label] = count > 1 ? count - 1 : nil
        return true
    }

    private mutating func finished(
        _ label: String, status: Int, contentRange: String?, headers: [String: String], file: URL, bodyLength: UInt64
    ) -> [Effect] {
        guard let (handover, index) = locate(label) else { return [.removeLanded(file)] }
        let handed = journal.handovers[handover].requests[index]
        let request = BackgroundTransferRequest(
            url: handed.url, byteRange: handed.range,
            label: BackgroundTaskLabel(parsing: label) ?? BackgroundTaskLabel(download: "", parts: [0]),
            partRanges: [handed.range], expectedBodyBytes: handed.expectedBytes)
        // What the body holds, judged by what was asked and the length received: a task resumed
        // from its resume data may answer a 206 for the rest with the whole part.
        let range: ByteRange?
        do throws(BackgroundBatch.SplitError) {
            range = try BackgroundBatch.heldRange(
                of: request, status: status, contentRange: contentRange, bodyLength: bodyLength)
        } catch {
            let effects: [Effect]
            if case .unexpectedStatus(let status) = error {
                // RFC 9110 §15.5.9, RFC 6585 §4: a timeout and "too many requests" pass too.
                let transient = status >= 500 || status == 408 || status == 429
                effects = retryOrGiveUp(handover, index, Self.category(ofStatus: status), transient: transient)
            } else {
                effects = retryOrGiveUp(handover, index, .server, transient: true)
            }
            return Self.recorded(effects, .removeLanded(file))
        }
        // A 200 to a range request is the whole resource (RFC 9110 §14.2): staged as such; a
        // remainder is staged as the bytes it holds, and the download's next run fetches the
        // parts before it.
        return [
            .stage(
                label: label, file: file, url: handed.url, range: range, headers: headers,
                destination: journal.handovers[handover].destination),
            .removeLanded(file),
        ]
    }

    private mutating func failed(
        _ handover: Int, _ index: Int, _ failure: BackgroundTransferFailure, resumeData: Data?
    ) -> [Effect] {
        switch failure {
        case .forceQuit:
            // The event reaches the launch after the force-quit: the task goes on from where it
            // was, now (a force-quit is no failure of the request). Unless this process
            // submitted the request again already (a kill during its first submission left it
            // unmarked): its task runs, and another would fetch the part twice.
            guard !submittedHere.contains(journal.handovers[handover].requests[index].label) else { return [] }
            journal.handovers[handover].requests[index].state = .stopped(resumeData: resumeData)
            return submitAgain(handover, index)
        case .cancelled:
            // Cancelled by the system for another reason: submitted again while the request has
            // attempts left, from where it was.
            guard journal.handovers[handover].requests[index].attempts < maximumAttempts else {
                return giveUp(handover, index, .cancelled)
            }
            journal.handovers[handover].requests[index].attempts += 1
            journal.handovers[handover].requests[index].state = .stopped(resumeData: resumeData)
            return submitAgain(handover, index)
        case .network(let code):
            let (category, transient) = BackgroundTransfers.failure(ofNetworkCode: code)
            return retryOrGiveUp(handover, index, category, transient: transient, resumeData: resumeData)
        }
    }

    /// Submits the request again while it has attempts left, from the resume data the failure
    /// left (Apple's *Pausing and resuming downloads*: a transfer that failed for lost
    /// connectivity goes on from there); otherwise gives it up with `category` (its parts are
    /// then the download's next run's to fetch).
    private mutating func retryOrGiveUp(
        _ handover: Int, _ index: Int, _ category: DownloadError.Category, transient: Bool, resumeData: Data? = nil
    ) -> [Effect] {
        guard transient, journal.handovers[handover].requests[index].attempts < maximumAttempts else {
            return giveUp(handover, index, category)
        }
        journal.handovers[handover].requests[index].attempts += 1
        journal.handovers[handover].requests[index].state = .unsubmitted(resumeData: resumeData)
        return submitAgain(handover, index)
    }

    /// `effects` with `cleanup` (the removal of the event's landed file or record) right after
    /// their save: a kill before the save leaves the event to be handled again at the next
    /// launch, and one after it does not (which would retry the request once more, beside the
    /// task submitted for it).
    private static func recorded(_ effects: [Effect], _ cleanup: Effect) -> [Effect] {
        var effects = effects
        let saved = effects.firstIndex { if case .save = $0 { true } else { false } }
        effects.insert(cleanup, at: saved.map { $0 + 1 } ?? 0)
        return effects
    }

    /// Saved as due for a submission first: a kill before it leaves the request to the next
    /// launch's resubmission.
    private mutating func submitAgain(_ handover: Int, _ index: Int) -> [Effect] {
        let request = journal.handovers[handover].requests[index]
        submittedHere.insert(request.label)
        return [.save, .submit(key: journal.handovers[handover].key, [request])]
    }

    private mutating func giveUp(_ handover: Int, _ index: Int, _ category: DownloadError.Category) -> [Effect] {
        journal.handovers[handover].requests[index].state = .givenUp(category)
        return [.save] + announceIfSettled(handover)
    }

    private func announceIfSettled(_ handover: Int) -> [Effect] {
        let entry = journal.handovers[handover]
        guard entry.isSettled else { return [] }
        return [.settled(BackgroundTransfers.Settled(key: entry.key, generation: entry.generation))]
    }

    private mutating func withdraw(
        _ key: String, generation: UInt64?, running: Set<String>, removingStaged: Bool
    ) -> [Effect] {
        guard let handover = handover(key, generation: generation) else { return [] }
        journal.handovers.removeAll { $0.key == key }
        // The tasks that will still report: submitted, and neither ended nor stopped; and those
        // a kill during their submission left the system running, not yet marked submitted.
        let outstanding = Set(
            handover.requests.filter { $0.state == .submitted || ($0.needsSubmission && running.contains($0.label)) }
                .map(\.label))
        for label in outstanding { withdrawnLabels[label, default: 0] += 1 }
        return [.save] + (outstanding.isEmpty ? [] : [.cancel(outstanding)])
            + (removingStaged ? [.removeStaged(handover.destination)] : [])
    }

    /// A task submitted and not reported stopped is left to the system: it runs, or it ended
    /// and its events are still to come (`getAllTasks` no longer lists it), and submitting it
    /// again would fetch it twice.
    private mutating func resubmit(running: Set<String>) -> [Effect] {
        // A task running now was made after any force-quit: the force-quit's event of its label
        // is an older task's.
        submittedHere.formUnion(running)
        var effects: [Effect] = []
        for handover in journal.handovers {
            // Not an attempt more: a force-quit or a kill is no failure of the request.
            let due = handover.requests.filter { $0.needsSubmission && !running.contains($0.label) }
            submittedHere.formUnion(due.map(\.label))
            if !due.isEmpty { effects.append(.submit(key: handover.key, due)) }
        }
        return effects.isEmpty ? [] : [.save] + effects
    }

    static func category(ofStatus status: Int) -> DownloadError.Category {
        switch status {
        case 404, 410: .notFound
        case 401, 403: .accessDenied
        default: .server
        }
    }

    /// Where the request of `label` is in the journal, unless it was given up: an event of
    /// its task then is dropped (another task of the same label outlived a kill), since its
    /// parts are the download's next run's to fetch, which may be reading what was staged.
    private func locate(_ label: String) -> (Int, Int)? {
        for (handover, entry) in journal.handovers.enumerated() {
            if let index = entry.requests.firstIndex(where: { $0.label == label }) {
                return entry.requests[index].failure == nil ? (handover, index) : nil
            }
        }
        return nil
    }
}

extension HandoverMachine.Effect: Equatable where Handler: Equatable {}
extension HandoverMachine.Effect: Hashable where Handler: Hashable {}
extension HandoverMachine: Equatable where Handler: Equatable {}
extension HandoverMachine: Hashable where Handler: Hashable {}

extension BackgroundTransfers.Handover {
    /// Whether every request has ended: staged (and so no longer listed) or given up.
    var isSettled: Bool { requests.allSatisfy { $0.failure != nil } }
}
