import Downloads
import Foundation
import HTTPSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Hands the remaining parts of downloads to a background session, and stages what its tasks
/// bring beside each download, so that the download's next run reads them through the one
/// journal and remux (``StagedBodies``, ``StagedBodyTransport``).
///
/// Its journal (`background-transfers.json` in its folder) names every request handed over
/// and not yet staged, by the label its task carries, so a process relaunched in the background
/// ties each finished task to its download, and a force-quit's cancelled tasks are submitted
/// again, with their resume data, at the next launch (``resubmit()``). The journal is saved
/// before every hand-over is submitted and after every event, and the system's completion
/// handler is called only once the events of a wake-up are all recorded.
actor BackgroundTransfers {
    /// Why a hand-over was refused.
    enum HandoverError: Error, Hashable, Sendable {
        /// The volume has less free space than the parts need (with the reserve): nothing was submitted.
        case insufficientStorage(needed: UInt64, available: UInt64)
        /// The journal could not be saved (its `errno`, when the system said): nothing was submitted.
        case saveFailed(reason: String, code: Int32?)
        /// A download of this key is handed over already.
        case duplicate(key: String)
    }

    /// One request handed over, as the journal keeps it.
    struct Handed: Hashable, Sendable {
        /// The label's text (the task's description).
        var label: String
        /// The resource.
        var url: URL
        /// The bytes asked for; `nil` for the whole resource.
        var range: ByteRange?
        /// The body's expected size, when known.
        var expectedBytes: UInt64?
        /// How many tasks were submitted for it.
        var attempts: Int
        /// Where it is.
        var state: State = .unsubmitted(resumeData: nil)
        /// The networks its task may use (absent: any, as in files of earlier versions).
        var network: DownloadRequirements.Network?

        /// Where a request handed over is: one state, saved in the journal.
        enum State: Hashable, Sendable {
            /// No task of it is the system's: never submitted (a kill came before its
            /// submission was saved), or to be submitted again after a failure a retry can mend,
            /// from the resume data the failure brought.
            case unsubmitted(resumeData: Data?)
            /// Its task is the system's: running, or ended with its events still to come. It is
            /// never submitted twice.
            case submitted
            /// The system stopped its task (a force-quit, or a cancel of its own): submitted
            /// again, from its resume data.
            case stopped(resumeData: Data?)
            /// Given up: its parts are the download's next run's to fetch.
            case givenUp(DownloadError.Category)
        }

        /// Whether a task of it is to be submitted: unsubmitted or stopped.
        var needsSubmission: Bool {
            switch state {
            case .unsubmitted, .stopped: true
            case .submitted, .givenUp: false
            }
        }

        /// What its next task goes on from.
        var resumeData: Data? {
            switch state {
            case .unsubmitted(let data), .stopped(let data): data
            case .submitted, .givenUp: nil
            }
        }

        /// Why it was given up, when it was.
        var failure: DownloadError.Category? {
            if case .givenUp(let category) = state { category } else { nil }
        }
    }

    /// One download handed over.
    struct Handover: Codable, Hashable, Sendable {
        /// The download's key (its tasks' labels name it).
        var key: String
        /// The hand-over's generation, in its tasks' labels (absent in journals of earlier
        /// versions, whose labels have none).
        var generation: UInt64?
        /// The download's destination: its staged bodies are kept beside it.
        var destination: URL
        /// The requests not staged yet.
        var requests: [Handed]
    }

    private struct Journal: Codable {
        var version = 1
        var handovers: [Handover] = []
        /// The generation the next hand-over gets (absent in journals of earlier versions): the
        /// journal never gives one twice, so a task of an earlier hand-over, whose events may
        /// come after a later one of the same parts, is never taken for the later one's.
        var nextGeneration: UInt64?
    }

    /// The session the parts go to.
    let session: any BackgroundTransferSession
    /// Where the journal is kept.
    let folder: URL
    private let retry: RetryPolicy
    private let reserveBytes: UInt64
    private let freeSpace: @Sendable (URL) -> UInt64?
    private var journal = Journal()
    private var isLoaded = false
    /// The system's completion handlers and the end of its events, in whatever order they come.
    private var wakeUp = BackgroundWakeUp<@Sendable () -> Void>()
    private var reader: Task<Void, Never>?
    /// The labels of tasks cancelled by ``withdraw(_:)`` whose events have not arrived yet (a
    /// label may be given again to a later hand-over's task): each such event is dropped.
    private var withdrawnLabels: [String: Int] = [:]
    /// Cancellations under way, by download: a hand-over of the same download waits for them,
    /// so that they never reach its new tasks.
    private var withdrawals: [String: Task<Void, Never>] = [:]
    private let settledKeys = AsyncStream<Settled>.makeStream()

    /// A hand-over whose requests have all ended.
    struct Settled: Hashable, Sendable {
        /// Its download's key.
        var key: String
        /// Its generation (`nil` in journals of earlier versions).
        var generation: UInt64?
    }

    /// Each hand-over whose requests have all ended, staged or given up, as it happens (and at
    /// ``start()``, those that had before): its download's next run reads what was staged and
    /// fetches what was given up.
    nonisolated var settled: AsyncStream<Settled> { settledKeys.stream }

    private var journalFile: URL { folder.appendingPathComponent("background-transfers.json") }

    /// A coordinator of `session` keeping its journal in `folder`.
    ///
    /// - Parameters:
    ///   - retry: How many tasks a request may take in all (a 5xx or a network failure is
    ///     submitted again until then; a 4xx is given up at once).
    ///   - reserveBytes: The free space a hand-over leaves.
    ///   - freeSpace: The free bytes of a folder's volume (the system's figure by default).
    init(
        session: any BackgroundTransferSession, folder: URL, retry: RetryPolicy = RetryPolicy(),
        reserveBytes: UInt64 = 0, freeSpace: (@Sendable (URL) -> UInt64?)? = nil
    ) {
        self.session = session
        self.folder = folder
        self.retry = retry
        self.reserveBytes = reserveBytes
        self.freeSpace = freeSpace ?? { LocalFileSystem().availableCapacity(in: $0) }
    }

    /// The downloads handed over and what each still waits for.
    var handovers: [Handover] {
        loadIfNeeded()
        return journal.handovers
    }

    /// The staged bodies of the download to `destination`.
    nonisolated static func stagedBodies(for destination: URL) -> StagedBodies {
        StagedBodies.beside(destination)
    }

    /// Starts reading the session's events (call it once the session exists, at every launch).
    ///
    /// It first removes what a kill left half-staged, then records the events an earlier
    /// process received and did not record (``BackgroundLanding``) and calls ``resubmit()``.
    func start() {
        start(reconciling: nil)
    }

    /// Starts reading the session's events as ``start()`` does, first giving up the hand-overs
    /// of downloads the library no longer waits for (a kill between its forgetting one and
    /// this journal's: a deleted, cancelled or finished item, whose tasks must not be submitted
    /// again). `owners` says, for each download key, whether it still waits for its tasks
    /// (`.waiting`), was paused (`.paused`: its tasks are cancelled, what they staged kept for
    /// the resume) or is gone (absent: its tasks are cancelled and what they staged removed).
    func start(reconciling owners: [String: HandoverOwner]?) {
        loadIfNeeded()
        guard reader == nil else { return }
        for handover in journal.handovers { Self.stagedBodies(for: handover.destination).removeIncomplete() }
        for handover in journal.handovers where Self.isSettled(handover) {
            settledKeys.continuation.yield(Settled(key: handover.key, generation: handover.generation))
        }
        // Events an earlier process received and died before recording (their files and
        // records were still in the landing folder when the session was created), then what
        // the system stopped or a kill kept from being submitted, then this process's events:
        // one after the other, so no event is handled while a resubmission is deciding.
        let leftovers = session.leftovers
        let events = session.events
        reader = Task { [weak self] in
            if let owners { await self?.reconcile(with: owners) }
            await self?.handleLeftovers(leftovers)
            await self?.resubmit()
            for await event in events { await self?.handle(event) }
        }
    }

    /// What the library says of a download handed over, at a launch.
    enum HandoverOwner: Hashable, Sendable {
        /// The item still waits for its tasks.
        case waiting
        /// The item was paused: its tasks are cancelled and what they staged is kept.
        case paused
    }

    /// Gives up the hand-overs whose downloads `owners` no longer waits for (see
    /// ``start(reconciling:)``).
    private func reconcile(with owners: [String: HandoverOwner]) async {
        for handover in journal.handovers where owners[handover.key] != .waiting {
            if owners[handover.key] == .paused {
                await withdraw(handover.key)
            } else {
                await finish(handover.key)
            }
        }
    }

    /// Records the events an earlier process received and died before recording. A failure
    /// whose task is running again was recorded already (the process died as it removed the
    /// record): it is not handled twice.
    private func handleLeftovers(_ leftovers: [BackgroundTransferEvent]) async {
        let hasFailures = leftovers.contains { if case .failed = $0 { true } else { false } }
        let running = hasFailures ? Set(await session.runningTaskDescriptions()) : []
        for event in leftovers {
            if case .failed(let label, _, _) = event, running.contains(label) {
                BackgroundLanding.removeFailure(of: label, in: session.landing)
                continue
            }
            await handle(event)
        }
    }

    /// Hands `parts` (each with its index in the download's plan) of the download `key` to the
    /// session as one batch, adjacent ranges of one resource merged into one task.
    ///
    /// - Returns: The hand-over's generation, which its tasks' labels carry.
    /// - Throws: ``HandoverError``, before anything is submitted.
    @discardableResult
    func handOver(
        _ key: String, destination: URL, parts: [BackgroundBatch.Part], network: DownloadRequirements.Network = .any
    ) async throws(HandoverError) -> UInt64 {
        loadIfNeeded()
        while let pending = withdrawals[key] {
            await pending.value
            if withdrawals[key] == pending { withdrawals[key] = nil }
        }
        // A hand-over whose requests have all ended (its run failed or was stopped since) is
        // replaced: what it staged stays beside the download for the runs to come.
        journal.handovers.removeAll { $0.key == key && Self.isSettled($0) }
        guard !journal.handovers.contains(where: { $0.key == key }) else { throw .duplicate(key: key) }
        // An empty range has no bytes to fetch (and `bytes=o-o` would ask for one).
        // A journal of an earlier version, or a lost one, starts from a random number: tasks of
        // a journal that was lost may still report, and must not match the new ones.
        let generation = journal.nextGeneration ?? UInt64.random(in: 1...(1 << 32))
        let requests = BackgroundBatch.requests(
            download: key, parts: parts.filter { $0.part.byteRange?.length != 0 }, generation: generation)
        // Beside what the other hand-overs still have to bring: the free space is shared.
        let outstanding = journal.handovers.flatMap(\.requests).filter { $0.failure == nil }
            .reduce(UInt64(0)) { $0 &+ ($1.expectedBytes ?? 0) }
        let needed = requests.reduce(UInt64(0)) { $0 &+ ($1.expectedBodyBytes ?? 0) } &+ outstanding &+ reserveBytes
        if let available = freeSpace(destination.deletingLastPathComponent()), available < needed {
            throw .insufficientStorage(needed: needed, available: available)
        }
        let handed = requests.map { request in
            Handed(
                label: request.label.description, url: request.url, range: request.byteRange,
                expectedBytes: request.expectedBodyBytes, attempts: 1, network: network == .any ? nil : network)
        }
        journal.handovers.append(Handover(key: key, generation: generation, destination: destination, requests: handed))
        journal.nextGeneration = generation + 1
        do {
            try save()
        } catch {
            journal.handovers.removeAll { $0.key == key }
            throw .saveFailed(reason: error.localizedDescription, code: DownloadError.fileErrorCode(of: error))
        }
        await submit(handed.map(task(for:)), of: key)
        return generation
    }

    /// Submits `tasks` of the download `key` and marks their requests submitted, their resume
    /// data used. A request withdrawn while the submission was awaited (the download paused,
    /// cancelled or taken back meanwhile) has its new task cancelled at once: nothing else
    /// would, and it would run on in the system for a download no longer handed over.
    private func submit(_ tasks: [BackgroundTransferTask], of key: String) async {
        guard !tasks.isEmpty else { return }
        await session.submit(tasks)
        var orphaned: Set<String> = []
        let handover = journal.handovers.firstIndex { $0.key == key }
        for task in tasks {
            guard let handover,
                let index = journal.handovers[handover].requests.firstIndex(where: {
                    $0.label == task.taskDescription && $0.needsSubmission
                })
            else {
                orphaned.insert(task.taskDescription)
                continue
            }
            journal.handovers[handover].requests[index].state = .submitted
        }
        try? save()
        guard !orphaned.isEmpty else { return }
        for label in orphaned { withdrawnLabels[label, default: 0] += 1 }
        await session.cancel(taskDescriptions: orphaned)
    }

    /// Submits again what the system stopped (the tasks a force-quit cancelled, with their
    /// resume data) and what a kill kept from being submitted. A task submitted and not
    /// reported stopped is left to the system: it runs, or it ended and its events are still to
    /// come (`getAllTasks` no longer lists it), and submitting it again would fetch it twice.
    func resubmit() async {
        loadIfNeeded()
        let running = Set(await session.runningTaskDescriptions())
        var tasks: [String: [BackgroundTransferTask]] = [:]
        for handover in journal.handovers.indices {
            for index in journal.handovers[handover].requests.indices {
                let handed = journal.handovers[handover].requests[index]
                guard handed.needsSubmission, !running.contains(handed.label) else { continue }
                // Not an attempt more: a force-quit or a kill is no failure of the request.
                tasks[journal.handovers[handover].key, default: []].append(task(for: handed))
            }
        }
        guard !tasks.isEmpty else { return }
        try? save()
        for (key, tasks) in tasks.sorted(by: { $0.key < $1.key }) { await submit(tasks, of: key) }
    }

    /// Keeps the completion handler the system gave the app for this session's events
    /// (`application(_:handleEventsForBackgroundURLSession:completionHandler:)`), and calls it
    /// once the events are all recorded.
    func handleEvents(completion: @escaping @Sendable () -> Void) async {
        let handlers = wakeUp.handlerGiven(completion)
        guard !handlers.isEmpty else { return }
        // UIKit's handler, called on the main thread as Apple asks.
        await MainActor.run { for handler in handlers { handler() } }
    }

    /// Forgets the hand-over of `key` (its download has run and read what was staged, or was
    /// given up), with its staged bodies. With a `generation`, only the hand-over of that
    /// generation (or of a journal of an earlier version, which has none) is forgotten.
    func finish(_ key: String, generation: UInt64? = nil) async {
        guard let destination = await withdraw(key, generation: generation) else { return }
        Self.stagedBodies(for: destination).removeAll()
    }

    /// Takes the download `key` back from the background session: cancels its tasks still
    /// running and forgets its hand-over, keeping what it staged for the download's next run.
    /// The cancelled tasks' events are dropped as they arrive (in this process; a later
    /// hand-over of the same download waits until the cancellations are made). With a
    /// `generation`, only the hand-over of that generation (or of a journal of an earlier
    /// version, which has none) is taken back: a later one of the same download is left alone.
    ///
    /// - Returns: The download's destination, or `nil` if it was not handed over.
    @discardableResult
    func withdraw(_ key: String, generation: UInt64? = nil) async -> URL? {
        loadIfNeeded()
        guard let handover = journal.handovers.first(where: { $0.key == key }),
            generation == nil || handover.generation == nil || handover.generation == generation
        else { return nil }
        journal.handovers.removeAll { $0.key == key }
        try? save()
        // The tasks that will still report: submitted, and neither ended nor stopped; and those
        // a kill during their submission left the system running, not yet marked submitted.
        var outstanding = handover.requests.filter { $0.state == .submitted }.map(\.label)
        let unmarked = handover.requests.filter(\.needsSubmission).map(\.label)
        if !unmarked.isEmpty {
            let running = Set(await session.runningTaskDescriptions())
            outstanding += unmarked.filter(running.contains)
        }
        guard !outstanding.isEmpty else { return handover.destination }
        for label in outstanding { withdrawnLabels[label, default: 0] += 1 }
        let session = session
        let cancelling = Task { await session.cancel(taskDescriptions: Set(outstanding)) }
        withdrawals[key] = cancelling
        await cancelling.value
        if withdrawals[key] == cancelling { withdrawals[key] = nil }
        return handover.destination
    }

    /// Whether `event` is the end of a task ``withdraw(_:)`` cancelled; if so, what it landed is
    /// removed and it counts as received.
    private func dropWithdrawn(_ event: BackgroundTransferEvent) -> Bool {
        let label: String
        switch event {
        case .finished(let description, _, _), .failed(let description, _, _): label = description
        case .eventsDelivered: return false
        }
        guard let count = withdrawnLabels[label] else { return false }
        withdrawnLabels[label] = count > 1 ? count - 1 : nil
        switch event {
        case .finished(_, _, let file): BackgroundLanding.remove(file)
        default: BackgroundLanding.removeFailure(of: label, in: session.landing)
        }
        return true
    }

    /// Whether every request of `handover` has ended: staged (and so no longer listed) or given up.
    private static func isSettled(_ handover: Handover) -> Bool {
        handover.requests.allSatisfy { $0.failure != nil }
    }

    /// Announces on ``settled`` the download of the request at `handover` once it has ended.
    private func announceIfSettled(_ handover: Int) {
        guard journal.handovers.indices.contains(handover), Self.isSettled(journal.handovers[handover]) else { return }
        let settled = journal.handovers[handover]
        settledKeys.continuation.yield(Settled(key: settled.key, generation: settled.generation))
    }

    private func task(for handed: Handed) -> BackgroundTransferTask {
        var request = URLRequest(url: handed.url)
        if let range = handed.range { request.setValue(range.httpRangeHeader, forHTTPHeaderField: "Range") }
        let expected = handed.expectedBytes.map { Int64(clamping: $0 &+ BackgroundTransferRequest.headerAllowance) }
        return BackgroundTransferTask(
            request: request, taskDescription: handed.label, expectedBytesToReceive: expected,
            resumeData: handed.resumeData, network: handed.network ?? .any)
    }

    /// Records one event: a body staged beside its download, a failure retried or given up.
    func handle(_ event: BackgroundTransferEvent) async {
        loadIfNeeded()
        if event != .eventsDelivered { wakeUp.eventReceived() }
        if dropWithdrawn(event) { return }
        switch event {
        case .finished(let label, let response, let file):
            // Recorded already (found left over at the start, then received again): its file is gone.
            guard FileManager.default.fileExists(atPath: file.path) else { return }
            defer { BackgroundLanding.remove(file) }
            guard let (handover, index) = locate(label) else { return }
            let handed = journal.handovers[handover].requests[index]
            let request = BackgroundTransferRequest(
                url: handed.url, byteRange: handed.range,
                label: BackgroundTaskLabel(parsing: label) ?? BackgroundTaskLabel(download: "", parts: [0]),
                partRanges: [handed.range], expectedBodyBytes: handed.expectedBytes)
            let size =
                ((try? FileManager.default.attributesOfItem(atPath: file.path))?[.size] as? NSNumber)?.uint64Value ?? 0
            // What the body holds, judged by what was asked and the length received: a task
            // resumed from its resume data may answer a 206 for the rest with the whole part.
            let range: ByteRange?
            do throws(BackgroundBatch.SplitError) {
                range = try BackgroundBatch.heldRange(
                    of: request, status: response.statusCode, contentRange: response.value(of: "Content-Range"),
                    bodyLength: size)
            } catch {
                if case .unexpectedStatus(let status) = error {
                    // RFC 9110 §15.5.9, RFC 6585 §4: a timeout and "too many requests" pass too.
                    let transient = status >= 500 || status == 408 || status == 429
                    await failed(handover, index, category: Self.category(ofStatus: status), transient: transient)
                } else {
                    await failed(handover, index, category: .server, transient: true)
                }
                return
            }
            // A 200 to a range request is the whole resource (RFC 9110 §14.2): staged as such;
            // a remainder is staged as the bytes it holds, and the download's next run fetches
            // the parts before it.
            let staged = Self.stagedBodies(for: journal.handovers[handover].destination)
            var headers: [String: String] = [:]
            for name in StagedBodies.keptHeaders + ["Content-Range"] { headers[name] = response.value(of: name) }
            do {
                try staged.stage(file, url: handed.url, range: range, headers: headers)
            } catch {
                await failed(handover, index, category: .storageFull, transient: false)
                return
            }
            journal.handovers[handover].requests.remove(at: index)
            try? save()
            announceIfSettled(handover)
        case .failed(let label, let failure, let resumeData):
            // Its record in the landing folder goes once the journal holds the event.
            defer { BackgroundLanding.removeFailure(of: label, in: session.landing) }
            guard let (handover, index) = locate(label) else { return }
            switch failure {
            case .forceQuit:
                // The event reaches the launch after the force-quit: the task goes on from
                // where it was, now (a force-quit is no failure of the request).
                journal.handovers[handover].requests[index].state = .stopped(resumeData: resumeData)
                await submitStopped(handover, index)
            case .cancelled:
                // Cancelled by the system for another reason: submitted again while the
                // request has attempts left, from where it was.
                if journal.handovers[handover].requests[index].attempts < retry.maximumAttempts {
                    journal.handovers[handover].requests[index].attempts += 1
                    journal.handovers[handover].requests[index].state = .stopped(resumeData: resumeData)
                    await submitStopped(handover, index)
                } else {
                    journal.handovers[handover].requests[index].state = .givenUp(.cancelled)
                    try? save()
                    announceIfSettled(handover)
                }
            case .network(let code):
                let (category, transient) = Self.failure(ofNetworkCode: code)
                await failed(handover, index, category: category, transient: transient, resumeData: resumeData)
            }
        case .eventsDelivered:
            let handlers = wakeUp.eventsEnded()
            guard !handlers.isEmpty else { return }
            // UIKit's handler, called on the main thread as Apple asks.
            await MainActor.run { for handler in handlers { handler() } }
        }
    }

    /// Submits the stopped request at `index` of `handover` again, with its resume data (saved
    /// as stopped first: a kill before the submission leaves it for ``resubmit()``).
    private func submitStopped(_ handover: Int, _ index: Int) async {
        try? save()
        await submit([task(for: journal.handovers[handover].requests[index])], of: journal.handovers[handover].key)
    }

    /// Submits the request again while it has attempts left, from its resume data when the
    /// failure left some (Apple's *Pausing and resuming downloads*: a transfer that failed for
    /// lost connectivity goes on from there); otherwise gives it up with `category` (its parts
    /// are then the download's next run's to fetch).
    private func failed(
        _ handover: Int, _ index: Int, category: DownloadError.Category, transient: Bool, resumeData: Data? = nil
    ) async {
        let handed = journal.handovers[handover].requests[index]
        if transient, handed.attempts < retry.maximumAttempts {
            journal.handovers[handover].requests[index].attempts += 1
            // Saved as not submitted first: a kill before the submission leaves it for the
            // next launch's ``resubmit()``.
            journal.handovers[handover].requests[index].state = .unsubmitted(resumeData: resumeData)
            try? save()
            // The key is read now: the journal may change while the submission is awaited.
            await submit([task(for: journal.handovers[handover].requests[index])], of: journal.handovers[handover].key)
            return
        }
        journal.handovers[handover].requests[index].state = .givenUp(category)
        try? save()
        announceIfSettled(handover)
    }

    /// What a task that failed with `URLError` code `code` stands for, and whether submitting
    /// it again can mend it: a lost connection is offline and goes on later; a file the
    /// delegate could not move (a full or protected volume) cannot be written and is left to
    /// the download's next run; a certificate refused, a TLS failure or a request the system
    /// will not make again is the server's or the access's, for good; a bad answer is the
    /// server's, for now.
    static func failure(ofNetworkCode code: Int) -> (category: DownloadError.Category, transient: Bool) {
        // Failable on Linux, not on Apple platforms: typed so that both read it the same way.
        let known: URLError.Code? = URLError.Code(rawValue: code)
        let error = URLError(known ?? .unknown)
        let localFileCodes: Set<URLError.Code> = [
            .cannotMoveFile, .cannotCreateFile, .cannotWriteToFile, .cannotOpenFile, .cannotCloseFile,
            .cannotRemoveFile,
        ]
        if localFileCodes.contains(error.code) { return (.notWritable, false) }
        let transport = HTTPTransportError(.network(error), url: nil)
        return (DownloadError(.transport(transport)).category, transport.isTransient)
    }

    private static func category(ofStatus status: Int) -> DownloadError.Category {
        switch status {
        case 404, 410: .notFound
        case 401, 403: .accessDenied
        default: .server
        }
    }

    private func locate(_ label: String) -> (Int, Int)? {
        for (handover, entry) in journal.handovers.enumerated() {
            if let index = entry.requests.firstIndex(where: { $0.label == label }) { return (handover, index) }
        }
        return nil
    }

    private func loadIfNeeded() {
        guard !isLoaded else { return }
        isLoaded = true
        guard let data = try? Data(contentsOf: journalFile),
            var saved = try? JSONDecoder().decode(Journal.self, from: data), saved.version == 1
        else { return }
        // A kill between staging a body and saving the journal: the body is there, so the
        // request is done (fetching it again would stage it twice).
        for handover in saved.handovers.indices {
            let staged = Self.stagedBodies(for: saved.handovers[handover].destination).entries
            saved.handovers[handover].requests.removeAll { handed in
                staged.contains { $0.url == handed.url && ($0.range == handed.range || $0.range == nil) }
            }
        }
        journal = saved
    }

    private func save() throws {
        try StateFileWriting.write(JSONEncoder().encode(journal), to: journalFile)
    }
}
