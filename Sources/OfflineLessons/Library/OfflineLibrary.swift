public import Downloads
public import Foundation

/// Downloads kept for offline viewing, by item id, remembered across launches.
///
/// State is kept per *item* (a lesson, a video), never per URL: every video of the photography
/// school's API shares one URL, yet each needs its own download button. The library persists its
/// states atomically and reads them back on first use (any method or property; ``load()`` does
/// it up front and reports a damaged state file), reconciling them with the files (a missing file
/// means not downloaded; a download interrupted by the app being killed becomes paused, and
/// resumes from its partial file when started again). It deletes downloads with every file they
/// made, and adds up their sizes.
///
/// One meaning of each stop, here, in `DownloadJob` and in ``LessonDownloadModel``: a *pause*
/// keeps what was downloaded and starting again resumes it; a *cancel* discards it, and starting
/// again starts over.
public actor OfflineLibrary {
    /// Where an item's download stands.
    public enum ItemState: Hashable, Sendable {
        /// Nothing downloaded.
        case notDownloaded
        /// Downloading; `fraction` is 0…1.
        case downloading(fraction: Double)
        /// Downloaded into the library's folder.
        case downloaded(fileName: String, byteCount: UInt64)
        /// The last attempt failed: its category (for the screen's words and action), sentence
        /// and typed error. Its partial files are kept: starting again resumes what can be, and
        /// ``OfflineLibrary/discard(_:)`` removes them.
        case failed(DownloadFailure)
        /// The download was cancelled (``OfflineLibrary/cancel(_:)``): its partial files were
        /// removed, and starting again starts over.
        case cancelled
        /// The download was paused (``OfflineLibrary/pause(_:)``), or interrupted by the app
        /// being killed: its partial files are kept and starting again resumes it.
        case paused
    }

    /// Why the library could not load or save its states, naming the state file.
    public struct LibraryError: Error, Hashable, Sendable, CustomStringConvertible {
        /// What went wrong.
        public enum Kind: Hashable, Sendable {
            /// The state file exists but is not a library file of a known version, and could not
            /// be moved aside (see ``OfflineLibrary/Notice/stateFileRecovered(reason:movedTo:recovered:unclaimed:)``);
            /// the reason says what the decoder found.
            case corruptedStateFile(reason: String)
            /// The state file could not be written: the file system's message, and the `errno`
            /// it failed with when the system gave one (`ENOSPC`, `EROFS`, `EACCES`…).
            case saveFailed(reason: String, code: Int32? = nil)
            /// The state file exists but could not be read just now (on iOS, a file protected
            /// until the device is unlocked, read by an app launched in the background): the
            /// library reads it again on its next use, and saves nothing over it meanwhile.
            case readFailed(reason: String, code: Int32? = nil)
            /// The state file was written by a newer version of the library (its format
            /// `version`): it is left as it is, and downloads refuse to start (they would save
            /// over it) until the app is updated.
            case newerVersion(Int)
        }

        /// What went wrong.
        public var kind: Kind
        /// The state file's path.
        public var path: String

        /// Creates an error.
        public init(_ kind: Kind, path: String) {
            self.kind = kind
            self.path = path
        }

        /// A sentence naming the file.
        public var description: String {
            let file =
                path.hasSuffix("background-transfers.json")
                ? "The background transfers' journal \(path)" : "The offline library's state file \(path)"
            return switch kind {
            case .corruptedStateFile(let reason): "\(file) is unreadable: \(reason)"
            case .saveFailed(let reason, _): "\(file) could not be written: \(reason)"
            case .readFailed(let reason, _): "\(file) could not be read: \(reason)"
            case .newerVersion(let version): "\(file) is of version \(version), newer than this app reads"
            }
        }
    }

    /// Starts a download of `remote` into `destination`: usually
    /// `{ downloader.downloadLesson(from: $0, to: $1) }`, which ends with a playable file whatever
    /// the URL serves (a file, or an HLS playlist remuxed into an `.mp4` whose name the library
    /// records).
    public typealias Starter = @Sendable (_ remote: URL, _ destination: URL) -> DownloadJob

    /// What the state file keeps of an item (``LibraryMachine/Record``).
    typealias Entry = LibraryMachine.Record

    /// The folder holding the downloads and the state file.
    public nonisolated let directory: URL
    let start: Starter
    /// Every item and what its download is doing: the one place the library keeps them.
    var machine: LibraryMachine
    /// The running jobs, by their run's generation.
    var jobs: [UInt64: DownloadJob] = [:]
    /// The tasks the library started: each run's readers of its progress and its outcome, each
    /// item's chain of background work (submissions, withdrawals). Each removes itself when
    /// done; the library's end cancels the rest.
    var tasks: [UInt64: Task<Void, Never>] = [:]
    var nextTask: UInt64 = 0
    /// The end of each run's outcome task, by generation, for ``waitForDownload(_:)``.
    var outcomes: [UInt64: Task<Void, Never>] = [:]
    /// Each item's background work in order (a withdrawal before the submission after it): the
    /// last task of its chain, and that task's number.
    var chains: [String: Task<Void, Never>] = [:]
    var chainLinks: [String: UInt64] = [:]
    var nextLink: UInt64 = 0
    /// The callers waiting for an item's removal (``delete(_:)``, ``discard(_:)``) to be done,
    /// told the failure of the save that ended it, if it failed.
    var removalWaiters: [String: [CheckedContinuation<LibraryError?, Never>]] = [:]
    /// The callers of ``continueInBackground()`` waiting to hear whether an item was handed over.
    var handOverWaiters: [String: [@Sendable (Bool) -> Void]] = [:]
    /// The background transfers downloads continue in while the app is suspended, when the app
    /// chose them.
    nonisolated let background: BackgroundTransfers?
    /// Whether the background transfers' events are read.
    var isBackgroundStarted = false
    /// Whether the launch's reconciliation with the background transfers is made or under way.
    var isBackgroundReconciling = false
    /// The app's choices for the background transfers: when downloads go there, and the
    /// networks they may use (for ``waitReason(of:)``).
    nonisolated let backgroundOptions: BackgroundTransferOptions?
    /// Where the device's network is read, for ``waitReason(of:)``.
    nonisolated let network: (any NetworkPathMonitor)?
    nonisolated let waitBroadcast = Broadcast<(id: String, reason: WaitReason?)>(key: { $0.id })
    nonisolated let broadcast = Broadcast<(id: String, state: ItemState)>(key: { $0.id })
    /// Every change of any item's state, as it happens.
    ///
    /// Every reading of this property is a subscriber of its own: it starts with the current
    /// state of each item (loaded, or changed since the library was created), then
    /// sees every later change, so a list and a detail screen can both follow the library. A
    /// subscriber that stops reading holds only the newest changes (a bounded number): one that
    /// falls that far behind can miss an item's last change, so read ``state(of:)`` again when
    /// it resumes (``LessonDownloadModel`` and ``DownloadQueue`` follow every change).
    public nonisolated var updates: AsyncStream<(id: String, state: ItemState)> { broadcast.subscribe() }
    /// Every change of any item's state, none dropped however far the reader falls behind: for
    /// the download queue, whose decisions need each item's last state and which always reads.
    nonisolated var everyUpdate: AsyncStream<(id: String, state: ItemState)> {
        broadcast.subscribe(keepingEvery: true)
    }
    nonisolated let progressBroadcast = Broadcast<(id: String, progress: DownloadProgress)>(key: { $0.id })
    /// The latest report of each download in progress (bytes, parts), as it happens, for a
    /// screen that shows more than the fraction. Each reading is a subscriber of its own, as
    /// with ``updates``; reports are not persisted.
    public nonisolated var progressUpdates: AsyncStream<(id: String, progress: DownloadProgress)> {
        progressBroadcast.subscribe()
    }

    /// How the library's files are kept on the device.
    public nonisolated let fileOptions: OfflineFileOptions
    /// The state file, the records beside the downloads and the names of their files.
    nonisolated let store: LibraryStore
    /// Whether the file options were applied to the folder.
    var isFolderPrepared = false
    /// The file system the state file, the records and the downloads are written in.
    package nonisolated let fileSystem: any DownloadFileSystem

    /// Creates a library in `directory` that starts downloads with `start`, keeping its files as
    /// `fileOptions` says (excluded from backup, readable after the first unlock, by default).
    public init(directory: URL, fileOptions: OfflineFileOptions = OfflineFileOptions(), start: @escaping Starter) {
        self.init(
            directory: directory, fileOptions: fileOptions, fileSystem: LocalFileSystem(), background: nil, start: start
        )
    }

    /// Creates a library whose state file and records are written in `fileSystem`, as its
    /// downloads are (the package's tests kill or fill it).
    package init(
        directory: URL, fileOptions: OfflineFileOptions, fileSystem: any DownloadFileSystem,
        start: @escaping Starter
    ) {
        self.init(directory: directory, fileOptions: fileOptions, fileSystem: fileSystem, background: nil, start: start)
    }

    /// Creates a library whose downloads continue in `background` when the app asks
    /// (``continueInBackground()``).
    init(
        directory: URL, fileOptions: OfflineFileOptions, fileSystem: any DownloadFileSystem,
        background: BackgroundTransfers?, backgroundOptions: BackgroundTransferOptions? = nil,
        network: (any NetworkPathMonitor)? = nil, start: @escaping Starter
    ) {
        self.directory = directory
        self.fileOptions = fileOptions
        self.fileSystem = fileSystem
        store = LibraryStore(directory: directory, fileSystem: fileSystem)
        self.background = background
        self.backgroundOptions = background == nil ? nil : backgroundOptions
        self.network = background == nil ? nil : network
        self.start = start
        machine = LibraryMachine(
            hasBackground: background != nil,
            handsOverAlways: background != nil && backgroundOptions?.handOver == .always,
            waitOptions: backgroundOptions)
    }

    deinit {
        for task in tasks.values { task.cancel() }
    }

    /// Creates a library in `directory` that downloads every item with
    /// `downloader.downloadLesson(from:to:preferredLanguages:…)`: a file as it is, an HLS lesson
    /// remuxed into one file, its audio and subtitles chosen for `preferredLanguages` (the
    /// device's, by default), read as each download starts, so a learner who changes the
    /// device's language gets the new one for the next download. (A paused download resumed in
    /// another language starts over: its choice of audio is part of what it resumes.)
    ///
    /// With `background` options, ``continueInBackground()`` hands the remaining parts of every
    /// running download to the system's background `URLSession` of that identifier, which
    /// fetches them while the app is suspended or not running (Apple platforms; elsewhere the
    /// options are ignored and downloads run in the foreground only). `network` tells the library
    /// which network the device has (`SystemNetworkPathMonitor()` on Apple platforms), so that
    /// ``waitReason(of:)`` says when those transfers wait for a network the options allow.
    /// `backgroundService` is where they run: the system's session, unless a test passes the
    /// simulated one of `OfflineLessonsTesting`. See <doc:DownloadingInTheBackground>.
    public init<C: Clock>(
        directory: URL, downloader: MediaDownloader<C>,
        preferredLanguages: @autoclosure @escaping @Sendable () -> [String] = Locale.preferredLanguages,
        audioRenditions: AudioRenditionSelection = .best, subtitles: SubtitleHandling = .embedded,
        fileOptions: OfflineFileOptions = OfflineFileOptions(), background: BackgroundTransferOptions? = nil,
        backgroundService: BackgroundTransferService = .system, network: (any NetworkPathMonitor)? = nil
    ) where C.Duration == Duration {
        self.init(
            directory: directory, fileOptions: fileOptions, fileSystem: downloader.engine.fileSystem,
            background: background.flatMap {
                BackgroundTransfers.make(
                    backgroundService, options: $0, folder: directory, retry: downloader.engine.retry,
                    fileSystem: downloader.engine.fileSystem)
            },
            backgroundOptions: background, network: network ?? Self.deviceNetwork
        ) { remote, destination in
            downloader.downloadLesson(
                from: remote, to: destination, preferredLanguages: preferredLanguages(),
                audioRenditions: audioRenditions, subtitles: subtitles)
        }
    }

    /// Whether the saved states were read (or there were none).
    var isLoaded = false
    /// Why the saved states could not be read nor moved aside: every save refuses with it, so a
    /// damaged state file that could not be kept elsewhere is never overwritten.
    var loadFailure: LibraryError?

    /// Something the library did by itself that the app should know about.
    public enum Notice: Hashable, Sendable {
        /// The state file could not be read (`reason` says what the decoder found): it was moved
        /// to `movedTo`, kept for a report, and the library rebuilt its states from the files in
        /// its folder. `recovered` lists the items found downloaded again (their files are
        /// usable as before); `unclaimed` lists media files no record names (downloaded before
        /// records were kept), which the app may delete.
        case stateFileRecovered(reason: String, movedTo: URL, recovered: [String], unclaimed: [String])
    }

    /// What the library did by itself since it was created (a state file it recovered from).
    public internal(set) var notices: [Notice] = []

    /// Why the latest save of the state file failed, if it did (a full disk, a folder not
    /// writable): the states shown, a ``pause(_:)`` or a ``cancel(_:)`` among them, are not on
    /// disk yet, and a process ended now would show the saved ones at the next launch. The
    /// library saves again with every change until a save succeeds; `nil` then. The calls that
    /// throw (``download(_:from:)``, ``delete(_:)``) report their own save's failure instead.
    public var saveFailure: LibraryError? {
        machine.saveFailure
    }

    /// Why the latest save of the background transfers' journal (`background-transfers.json`)
    /// failed, if it did (a full disk): the transfers go on as this process knows them, and
    /// every change saves again until a save succeeds (`nil` then). A process ended meanwhile
    /// loses nothing the system delivered (its files are recorded again at the next launch),
    /// but may fetch a part once more. `nil` without background transfers.
    ///
    /// A journal that cannot be read just now (kind `readFailed`, read again at the next use)
    /// or that a newer version of the app wrote (`newerVersion`) is reported here as well: it
    /// is never saved over, and downloads are not handed over meanwhile (they fail with the
    /// reason when the app leaves the foreground). A damaged journal is moved aside, beside
    /// it, as `background-transfers.json.damaged-N`, and the downloads it held start again
    /// from what they kept.
    public var backgroundSaveFailure: LibraryError? {
        get async { await background?.saveFailure }
    }

    /// The state of item `id` (not downloaded when unknown).
    ///
    /// A downloaded item whose file was removed behind the library's back (by the learner, the
    /// system, or another part of the app) is noticed here: it becomes
    /// ``ItemState/notDownloaded``, saved and announced on ``updates``.
    public func state(of id: String) -> ItemState {
        loadIfNeeded()
        checkFile(of: id)
        return machine.state(of: id)
    }

    /// Every known item's state, each downloaded file checked as ``state(of:)`` does.
    ///
    /// - Complexity: O(*n*) file checks for *n* items.
    public var states: [String: ItemState] {
        loadIfNeeded()
        for id in Array(machine.records.keys) { checkFile(of: id) }
        return machine.records.mapValues(\.state)
    }

    /// The local file of a downloaded item; `nil` when it is not downloaded, or when its file
    /// was removed behind the library's back (the item then becomes not downloaded).
    public func localFile(of id: String) -> URL? {
        loadIfNeeded()
        checkFile(of: id)
        guard case .downloaded(let fileName, _) = machine.state(of: id), LibraryStore.isPlainFileName(fileName) else {
            return nil
        }
        return file(named: fileName)
    }

    /// Whether item `id`'s downloaded file is still there; an item whose file is gone becomes
    /// not downloaded (saved, best effort, and announced).
    private func checkFile(of id: String) {
        guard case .downloaded(let fileName, _) = machine.state(of: id), LibraryStore.isPlainFileName(fileName),
            !FileManager.default.fileExists(atPath: file(named: fileName).path)
        else { return }
        send(.fileMissing(id))
    }

    /// The bytes all downloaded items take, counting only files that are still there.
    ///
    /// - Complexity: O(*n*) file checks for *n* items.
    public var totalBytes: UInt64 {
        loadIfNeeded()
        for id in Array(machine.records.keys) { checkFile(of: id) }
        return machine.records.values.reduce(0) { total, entry in
            // Saturating: byte counts come from a file on disk.
            if case .downloaded(_, let bytes) = entry.state {
                let (sum, overflow) = total.addingReportingOverflow(bytes)
                return overflow ? .max : sum
            }
            return total
        }
    }

    /// Starts (or resumes) downloading item `id` from `remote`; does nothing if it is already
    /// downloading or downloaded.
    ///
    /// Asked while a ``pause(_:)`` or ``cancel(_:)`` of the item is still stopping its download
    /// (a learner's tap on Download right after Pause), the download starts again once that one
    /// has stopped: the last request wins. (Should saving the new state then fail, the item
    /// stays paused or cancelled, and a later call tries again.)
    ///
    /// The downloading state is saved before it is announced: when it cannot be saved, the item
    /// stays as it was (failed, paused, not downloaded…), nothing starts, and the error is
    /// thrown, so calling this again later tries again.
    ///
    /// - Throws: ``LibraryError`` of kind ``LibraryError/Kind/saveFailed(reason:code:)`` when the
    ///   state cannot be saved (its code says why: a full disk, a read-only folder), or
    ///   ``LibraryError/Kind/corruptedStateFile(reason:)`` when a damaged state file could not be
    ///   moved aside.
    public func download(_ id: String, from remote: URL) throws(LibraryError) {
        try download(id, from: remote, network: .any)
    }

    /// Starts (or resumes) downloading item `id` from `remote`, as ``download(_:from:)`` does,
    /// on the networks `network` allows (a download queue's rule), which its background
    /// transfers then keep to; `nil` keeps the rule the item had.
    func download(_ id: String, from remote: URL, network: DownloadRequirements.Network?) throws(LibraryError) {
        loadIfNeeded()
        checkFile(of: id)
        // The transition is made only once its save succeeds: otherwise the item stays as it
        // was and nothing starts.
        var next = machine
        let actions = next.handle(.download(id, remote: remote, network: network))
        if actions.first == .save {
            try save(next.savedRecords)
            _ = next.handle(.saved(nil))
        }
        machine = next
        perform(actions.first == .save ? Array(actions.dropFirst()) : actions)
    }

    /// Cancels item `id`'s download: its partial files are removed, and its state becomes
    /// ``ItemState/cancelled`` once the job has stopped (``waitForDownload(_:)``); starting again
    /// starts over. A cancel while a ``pause(_:)`` is still stopping the download wins too, and a
    /// cancel of a paused or failed download removes what it kept at once.
    public func cancel(_ id: String) {
        loadIfNeeded()
        send(.cancel(id))
    }

    /// Pauses item `id`'s download; its partial file is kept, and ``download(_:from:)`` resumes it.
    /// A download handed to background transfers is taken back from them: their tasks are
    /// cancelled, and what they staged is kept for the resume.
    public func pause(_ id: String) async {
        loadIfNeeded()
        // While its parts are being submitted, the pause is kept and returns at once: the tasks
        // are cancelled once the system has taken them.
        let isSubmitting = if case .submitting? = machine.items[id]?.activity { true } else { false }
        send(.pause(id))
        if !isSubmitting { await chains[id]?.value }
    }

    /// The latest progress report of item `id`'s download in progress, if any.
    public func progress(of id: String) -> DownloadProgress? {
        progressBroadcast.latest(for: id)?.progress
    }

    /// Waits until item `id`'s current download (if any) has ended and its state is recorded
    /// (downloaded, failed, paused or cancelled), and what its end removes is gone.
    ///
    /// For tests and previews, which then check the state without polling or sleeping:
    ///
    /// <!-- example: wait-for-download -->
    /// ```swift
    /// try await library.download("950", from: lessonURL)
    /// await library.waitForDownload("950")
    /// #expect(await library.localFile(of: "950") != nil)
    /// ```
    public func waitForDownload(_ id: String) async {
        while true {
            if let generation = currentRun(of: id), let outcome = outcomes[generation] {
                await outcome.value
            } else if let chain = chains[id] {
                // What its end asked of background transfers (their staged bodies removed), or
                // a run waiting there to start.
                await chain.value
            } else {
                return
            }
        }
    }

    /// The generation of the run item `id` waits for: its own, or the one its removal stops.
    private func currentRun(of id: String) -> UInt64? {
        switch machine.items[id]?.activity {
        case .running(let run)?: run.generation
        case .removing(let removal)?: removal.generation
        default: nil
        }
    }

    /// Deletes item `id` with every file its downloads made: the downloaded file, the subtitle
    /// files saved beside it, and the hidden files of a paused, failed or interrupted download
    /// (the partial file, its journal, validators, lock); a download in progress is cancelled
    /// and waited for first. The item is forgotten. A Download asked meanwhile starts once the
    /// item is gone: the learner's last word wins.
    public func delete(_ id: String) async throws(LibraryError) {
        try await remove(id, keepsDownloaded: false)
    }

    /// Discards what a download of item `id` that did not finish left (a failed, paused,
    /// cancelled or interrupted one: the partial file, its journal, validators, lock, subtitle
    /// files), keeping a downloaded file; a download in progress is cancelled and waited for
    /// first. A downloaded item stays downloaded; any other becomes ``ItemState/notDownloaded``.
    public func discard(_ id: String) async throws(LibraryError) {
        try await remove(id, keepsDownloaded: true)
    }

    /// Removes item `id` as ``delete(_:)`` or ``discard(_:)`` does, and waits until it is done.
    private func remove(_ id: String, keepsDownloaded: Bool) async throws(LibraryError) {
        loadIfNeeded()
        let failure = await withCheckedContinuation { (done: CheckedContinuation<LibraryError?, Never>) in
            removalWaiters[id, default: []].append(done)
            send(.remove(id, keepsDownloaded: keepsDownloaded))
        }
        await chains[id]?.value
        // The failure of this removal's own save, not another item's.
        if let failure { throw failure }
    }

    /// What the library is waiting for, for a test that stalls: each item's activity and the
    /// jobs running.
    package var diagnosis: String {
        let activities = machine.items.filter { $0.value.activity != .idle }.sorted { $0.key < $1.key }
            .map { "\($0.key): \($0.value.activity)" }
        let running = jobs.sorted { $0.key < $1.key }.map { "run \($0.key) (\($0.value.diagnosis))" }
        return "activities: \(activities), jobs: \(running), chains: \(chains.keys.sorted())"
    }

    /// The items whose job is pausing to be handed to background transfers, for tests.
    package var itemsHandingOver: Set<String> {
        Set(
            machine.items.compactMap { id, item in
                if case .running(let run) = item.activity, run.isHandingOver { id } else { nil }
            })
    }

    /// The items a delete or discard is removing, for tests.
    package var itemsBeingRemoved: Set<String> {
        Set(machine.items.compactMap { id, item in if case .removing = item.activity { id } else { nil } })
    }

    func file(named name: String) -> URL {
        store.file(named: name)
    }

    /// The name of item `id`'s file (``LibraryStore/fileName(for:remote:)``), for tests.
    package static func fileName(for id: String, remote: URL) -> String {
        LibraryStore.fileName(for: id, remote: remote)
    }

}
