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
        /// The journal on disk is not to be written over: it cannot be read now, or a newer
        /// version of the app wrote it (``BackgroundTransfers/saveFailure`` says which).
        case journalUnavailable(OfflineLibrary.LibraryError)
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

    /// What `background-transfers.json` holds.
    struct Journal: Codable, Hashable, Sendable {
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
    /// The file system the journal is written in (so that a test can fail its saves).
    private let fileSystem: any DownloadFileSystem
    /// Why the latest save of the journal failed, if it did (a full disk): the transfers go on
    /// as the process knows them, and every change saves again until a save succeeds (`nil`
    /// then). Meanwhile the files of the events it recorded stay in the landing folder, so that
    /// a launch after a kill records them again from there.
    ///
    /// A journal that could not be read (`readFailed`, tried again at every use) or that a
    /// newer version wrote (`newerVersion`) is reported here too: it is never written over, and
    /// hand-overs are refused meanwhile.
    var saveFailure: OfflineLibrary.LibraryError? { journalRefusal ?? lastSaveFailure }
    private var lastSaveFailure: OfflineLibrary.LibraryError?
    /// Why the journal on disk must not be written over, while it must not.
    private var journalRefusal: OfflineLibrary.LibraryError?
    /// The journal, the tasks withdrawn and the wake-ups: every request's state, in one value.
    private var machine: HandoverMachine<@MainActor @Sendable () -> Void>
    private var isLoaded = false
    private var reader: Task<Void, Never>?
    /// Cancellations under way, by download: a hand-over of the same download waits for them,
    /// so that they never reach its new tasks.
    private var withdrawals: [String: Task<Void, Never>] = [:]
    private let settledKeys = AsyncStream<Settled>.makeStream()
    /// How many requests each hand-over had when this process first knew it.
    private var requestCounts: [Settled: Int] = [:]
    /// What each running request's task has written, of what it expects, as it last said.
    private var written: [String: (bytes: UInt64, expected: UInt64?)] = [:]
    private let progressReports = AsyncStream<Progress>.makeStream()

    /// How far a hand-over's tasks have come, as the system reports them while the app runs.
    struct Progress: Hashable, Sendable {
        /// Its download's key.
        var key: String
        /// Its generation (`nil` in journals of earlier versions).
        var generation: UInt64?
        /// The share of its requests done, 0…1: those ended count whole, those running by the
        /// bytes their tasks have written of what they expect.
        var share: Double
    }

    /// Each hand-over's progress, as its tasks report their bytes (at most every hundredth of a
    /// body) and end.
    nonisolated var progress: AsyncStream<Progress> { progressReports.stream }

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
    ///   - fileSystem: The file system the journal is written in.
    init(
        session: any BackgroundTransferSession, folder: URL, retry: RetryPolicy = RetryPolicy(),
        reserveBytes: UInt64 = 0, freeSpace: (@Sendable (URL) -> UInt64?)? = nil,
        fileSystem: any DownloadFileSystem = LocalFileSystem()
    ) {
        self.session = session
        self.folder = folder
        self.fileSystem = fileSystem
        self.retry = retry
        machine = HandoverMachine(maximumAttempts: retry.maximumAttempts)
        self.reserveBytes = reserveBytes
        self.freeSpace = freeSpace ?? { LocalFileSystem().availableCapacity(in: $0) }
    }

    deinit {
        // Its events stream does not end with the coordinator: the reader would wait on.
        reader?.cancel()
    }

    /// The downloads handed over and what each still waits for.
    var handovers: [Handover] {
        loadIfNeeded()
        return machine.journal.handovers
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
        loadIfNeeded()
        // A journal that cannot be read now says nothing of what the tasks are for: started
        // again once it can be (the session's events wait in its stream meanwhile).
        if case .readFailed? = journalRefusal?.kind { return }
        guard reader == nil else { return }
        for handover in machine.journal.handovers {
            Self.stagedBodies(for: handover.destination).removeIncomplete()
        }
        for settled in machine.settled { settledKeys.continuation.yield(settled) }
        // Events an earlier process received and died before recording (their files and
        // records were still in the landing folder when the session was created), then what
        // the system stopped or a kill kept from being submitted, then this process's events:
        // one after the other, so no event is handled while a resubmission is deciding.
        let leftovers = session.leftovers
        let events = session.events
        reader = Task { [weak self] in
            await self?.handleLeftovers(leftovers)
            await self?.resubmit()
            await self?.cancelUnknownTasks()
            for await event in events { await self?.handle(event) }
        }
    }

    /// The hand-overs the journal holds, or `nil` while it cannot be read (a launch then
    /// decides nothing from it).
    var readableHandovers: [Handover]? {
        loadIfNeeded()
        if case .readFailed? = journalRefusal?.kind { return nil }
        return machine.journal.handovers
    }

    /// Cancels the tasks of this library's labels that no hand-over of the journal names (a
    /// damaged journal moved aside, or one lost): nothing would stage what they bring, and
    /// they would run on in the system.
    private func cancelUnknownTasks() async {
        let known = Set(machine.journal.handovers.flatMap { $0.requests.map(\.label) })
        let unknown = Set(
            await session.runningTaskDescriptions().filter { label in
                BackgroundTaskLabel(parsing: label) != nil && !known.contains(label)
            })
        if !unknown.isEmpty { await session.cancel(taskDescriptions: unknown) }
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
        if let journalRefusal { throw .journalUnavailable(journalRefusal) }
        while let pending = withdrawals[key] {
            await pending.value
            if withdrawals[key] == pending { withdrawals[key] = nil }
        }
        // A journal of an earlier version, or a lost one, starts from a random number: tasks of
        // a journal that was lost may still report, and must not match the new ones.
        let generation = machine.journal.nextGeneration ?? UInt64.random(in: 1...(1 << 32))
        // An empty range has no bytes to fetch (and `bytes=o-o` would ask for one).
        let requests = BackgroundBatch.requests(
            download: key, parts: parts.filter { $0.part.byteRange?.length != 0 }, generation: generation)
        let given = try machine.handOver(
            key, destination: destination, requests: requests, network: network,
            available: freeSpace(destination.deletingLastPathComponent()), reserve: reserveBytes,
            generation: generation)
        do {
            try save()
        } catch {
            machine.dropUnsaved(key, generation: given)
            throw .saveFailed(reason: error.localizedDescription, code: DownloadError.fileErrorCode(of: error))
        }
        if let handover = machine.journal.handovers.first(where: { $0.key == key }) {
            requestCounts[Settled(key: key, generation: handover.generation)] = handover.requests.count
        }
        await submit(machine.tasksToSubmit(of: key), of: key)
        return given
    }

    /// Submits tasks for `requests` of the download `key`, then tells the machine, which marks
    /// them submitted (or has a task cancelled whose request was withdrawn meanwhile).
    private func submit(_ requests: [Handed], of key: String) async {
        guard !requests.isEmpty else { return }
        let tasks = requests.map(task(for:))
        await session.submit(tasks)
        await perform(machine.handle(.submitted(key: key, labels: tasks.map(\.taskDescription))))
    }

    /// Submits again what the system stopped (the tasks a force-quit cancelled, with their
    /// resume data) and what a kill kept from being submitted (``HandoverMachine``).
    func resubmit() async {
        loadIfNeeded()
        let running = Set(await session.runningTaskDescriptions())
        await perform(machine.handle(.resubmit(running: running)))
    }

    /// Keeps the completion handler the system gave the app for this session's events
    /// (`application(_:handleEventsForBackgroundURLSession:completionHandler:)`), and calls it
    /// once the events are all recorded.
    func handleEvents(completion: @escaping @MainActor @Sendable () -> Void) async {
        loadIfNeeded()
        await perform(machine.handle(.handlerGiven(completion)))
    }

    /// Forgets the hand-over of `key` (its download has run and read what was staged, or was
    /// given up), with its staged bodies. With a `generation`, only the hand-over of that
    /// generation (or of a journal of an earlier version, which has none) is forgotten.
    func finish(_ key: String, generation: UInt64? = nil) async {
        await withdraw(key, generation: generation, removingStaged: true)
    }

    /// Takes the download `key` back from the background session: cancels its tasks still
    /// running and forgets its hand-over, keeping what it staged for the download's next run.
    /// The cancelled tasks' events are dropped as they arrive (in this process; a later
    /// hand-over of the same download waits until the cancellations are made). With a
    /// `generation`, only the hand-over of that generation (or of a journal of an earlier
    /// version, which has none) is taken back: a later one of the same download is left alone.
    func withdraw(_ key: String, generation: UInt64? = nil) async {
        await withdraw(key, generation: generation, removingStaged: false)
    }

    private func withdraw(_ key: String, generation: UInt64?, removingStaged: Bool) async {
        loadIfNeeded()
        let running: Set<String> =
            machine.hasUnmarkedRequests(key, generation: generation)
            ? Set(await session.runningTaskDescriptions()) : []
        let effects = machine.handle(
            .withdraw(key: key, generation: generation, running: running, removingStaged: removingStaged))
        guard effects.contains(where: { if case .cancel = $0 { true } else { false } }) else {
            await perform(effects)
            return
        }
        let cancelling = Task { await self.perform(effects) }
        withdrawals[key] = cancelling
        await cancelling.value
        if withdrawals[key] == cancelling { withdrawals[key] = nil }
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
        switch event {
        case .finished(let label, let response, let file):
            let size: UInt64? =
                FileManager.default.fileExists(atPath: file.path)
                ? ((try? FileManager.default.attributesOfItem(atPath: file.path))?[.size] as? NSNumber)?.uint64Value
                    ?? 0 : nil
            var headers: [String: String] = [:]
            for name in StagedBodies.keptHeaders + ["Content-Range"] { headers[name] = response.value(of: name) }
            await perform(
                machine.handle(
                    .finished(
                        label: label, status: response.statusCode, contentRange: response.value(of: "Content-Range"),
                        headers: headers, file: file, bodyLength: size)))
        case .failed(let label, let failure, let resumeData):
            await perform(machine.handle(.failed(label: label, failure, resumeData: resumeData)))
        case .eventsDelivered:
            await perform(machine.handle(.eventsDelivered))
        case .progressed(let label, let bytes, let expected):
            written[label] = (bytes, expected)
            reportProgress(of: label)
            return
        }
        if case .finished(let label, _, _) = event {
            written[label] = nil
            reportProgress(of: label)
        } else if case .failed(let label, _, _) = event {
            written[label] = nil
        }
    }

    /// Reports the progress of the hand-over request `label` belongs to, if it is one.
    ///
    /// - Complexity: O(*r*) for the hand-over's *r* requests.
    private func reportProgress(of label: String) {
        guard let download = BackgroundTaskLabel(parsing: label)?.download,
            let handover = machine.journal.handovers.first(where: { $0.key == download })
        else { return }
        let id = Settled(key: handover.key, generation: handover.generation)
        let total = max(requestCounts[id] ?? 0, handover.requests.count, 1)
        requestCounts[id] = total
        var done = Double(total - handover.requests.count)
        for request in handover.requests {
            guard let (bytes, expected) = written[request.label], let size = expected ?? request.expectedBytes, size > 0
            else { continue }
            // A task is done only once its body is staged.
            done += min(Double(bytes) / Double(size), 0.99)
        }
        progressReports.continuation.yield(
            Progress(key: handover.key, generation: handover.generation, share: min(done / Double(total), 1)))
    }

    /// Performs `effects` in order, feeding what a stage and a submission report back to the
    /// machine.
    ///
    /// After a save that failed, the removal of an event's landed file or failure record is
    /// left undone: the journal on disk does not hold the event, and the next launch records it
    /// again from the file.
    private func perform(_ effects: [HandoverMachine<@MainActor @Sendable () -> Void>.Effect]) async {
        for effect in effects {
            switch effect {
            case .save:
                do {
                    try save()
                    lastSaveFailure = nil
                } catch let refusal as OfflineLibrary.LibraryError {
                    lastSaveFailure = refusal
                } catch {
                    lastSaveFailure = OfflineLibrary.LibraryError(
                        .saveFailed(reason: error.localizedDescription, code: DownloadError.fileErrorCode(of: error)),
                        path: journalFile.path)
                }
            case .removeLanded, .removeFailureRecord:
                guard saveFailure == nil else { continue }
                if case .removeLanded(let file) = effect { BackgroundLanding.remove(file) }
                if case .removeFailureRecord(let label) = effect {
                    BackgroundLanding.removeFailure(of: label, in: session.landing)
                }
            case .submit(let key, let requests):
                await submit(requests, of: key)
            case .cancel(let labels):
                await session.cancel(taskDescriptions: labels)
            case .stage(let label, let file, let url, let range, let headers, let destination):
                let succeeded =
                    (try? Self.stagedBodies(for: destination).stage(file, url: url, range: range, headers: headers))
                    != nil
                await perform(machine.handle(.staged(label: label, succeeded: succeeded)))
            case .removeStaged(let destination):
                Self.stagedBodies(for: destination).removeAll()
            case .settled(let settled):
                settledKeys.continuation.yield(settled)
            case .callHandlers(let handlers):
                // UIKit's handler, called on the main thread as Apple asks.
                await MainActor.run { for handler in handlers { handler() } }
            }
        }
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

    /// Reads the journal once: a missing file is an empty journal; a damaged one (or one of an
    /// unknown earlier version) is moved aside, kept for a report, and the coordinator starts
    /// empty (the library restarts what it had handed over); one that cannot be read now (a
    /// protected file while the device is locked) is tried again at the next use; one that a
    /// newer version wrote is left as it is. Until then nothing is saved over either.
    private func loadIfNeeded() {
        guard !isLoaded else { return }
        let data: Data
        do {
            data = try Data(contentsOf: journalFile)
        } catch {
            guard FileManager.default.fileExists(atPath: journalFile.path) else {
                journalRefusal = nil
                isLoaded = true
                return
            }
            journalRefusal = OfflineLibrary.LibraryError(
                .readFailed(reason: error.localizedDescription, code: DownloadError.fileErrorCode(of: error)),
                path: journalFile.path)
            return
        }
        isLoaded = true
        if let refusal = journalRefusal, lastSaveFailure == refusal { lastSaveFailure = nil }
        journalRefusal = nil
        struct Versioned: Decodable { var version: Int }
        if let version = try? JSONDecoder().decode(Versioned.self, from: data).version, version > 1 {
            journalRefusal = OfflineLibrary.LibraryError(.newerVersion(version), path: journalFile.path)
            return
        }
        guard var saved = try? JSONDecoder().decode(Journal.self, from: data), saved.version == 1 else {
            if StateFileWriting.moveAside(journalFile) == nil {
                journalRefusal = OfflineLibrary.LibraryError(
                    .corruptedStateFile(reason: "not a journal of a known version, and it could not be moved aside"),
                    path: journalFile.path)
            }
            return
        }
        // A kill between staging a body and saving the journal: the body is there, so the
        // request is done (fetching it again would stage it twice).
        for handover in saved.handovers.indices {
            let staged = Self.stagedBodies(for: saved.handovers[handover].destination).entries
            saved.handovers[handover].requests.removeAll { handed in
                staged.contains { $0.url == handed.url && ($0.range == handed.range || $0.range == nil) }
            }
        }
        machine.load(saved)
    }

    private func save() throws {
        if let journalRefusal { throw journalRefusal }
        try fileSystem.willPerform(.write, on: journalFile)
        try StateFileWriting.write(JSONEncoder().encode(machine.journal), to: journalFile)
        fileSystem.didPerform(.write, on: journalFile)
    }
}
