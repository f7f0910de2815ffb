import Downloads
public import Foundation
public import HTTPSupport
import Locking
public import OfflineLessons

#if canImport(FoundationNetworking)
    public import FoundationNetworking
#endif

/// The system's background transfer daemon, as Apple documents it, for tests on any machine: it
/// runs an app's background tasks out of the app's process, so they go on while the app is
/// suspended, killed or not running.
///
/// It behaves as Apple's *Downloading files in the background* describes the system's
/// background `URLSession`:
/// - It fetches each task's request whole into a file of its own, which it moves to the app's
///   folder as it tells the app (the delegate must move it before returning).
/// - Events that happen while the app is not running wait, and reach the next launch in one
///   batch, followed by "events delivered" (`urlSessionDidFinishEvents`).
/// - A force-quit cancels every task, each with its resume data, and the next launch hears of it.
/// - A task made from resume data asks only for the rest of its body (`Range` with `If-Range`).
///
/// A test decides when each task ends (``complete(_:)``, in any order) and when the app dies
/// (``killApp()``, ``forceQuit()``). Each `OfflineLibrary` created with
/// `BackgroundTransferService.simulated(by:)` is one launch of the app: create
/// another with the same daemon for the next one. Every fetch goes through `transport`, so a
/// test serves the lesson and counts the requests.
///
/// <!-- example: simulated-background -->
/// ```swift
/// let daemon = SimulatedBackgroundDaemon(transport: server)
/// @Sendable func launch() -> OfflineLibrary {
///     OfflineLibrary(
///         directory: folder,
///         downloader: MediaDownloader(
///             engine: DownloadEngine(clock: ContinuousClock(), transport: server)),
///         background: BackgroundTransferOptions(identifier: "app.lessons"),
///         backgroundService: .simulated(by: daemon), network: FixedNetworkPathMonitor(.unmetered))
/// }
/// let library = launch()
/// try await library.download("lesson", from: lessonURL)
/// // The app leaves the foreground mid-download, and the system ends it.
/// await lessonIsDownloading()
/// _ = await library.continueInBackground()
/// daemon.killApp()
/// try await daemon.completeAll()
/// // Relaunched for the session's events: the app delegate passes the handler on.
/// let relaunched = launch()
/// await relaunched.handleBackgroundEvents()
/// for await (id, state) in relaunched.updates where id == "lesson" {
///     if case .downloaded = state { break }
/// }
/// ```
public final class SimulatedBackgroundDaemon: Sendable {
    private struct State {
        var running: [BackgroundTransferTask] = []
        var waiting: [BackgroundTransferEvent] = []
        var app: (continuation: AsyncStream<BackgroundTransferEvent>.Continuation, landing: URL)?
        var resumedWith: [Data] = []
        var submitted = 0
        /// What each resume data stands for: the request its task was made from, the bytes
        /// received before it stopped, and the validator they came with.
        var partials: [Data: Partial] = [:]
        /// Whether submissions wait for ``releaseSubmissions()``, and those waiting.
        /// Whether events wait for the app's next launch even while it runs (``holdEvents()``).
        var holdsEvents = false
        var holdsSubmissions = false
        var heldSubmissions: [CheckedContinuation<Void, Never>] = []
        var submissionWaiters: [CheckedContinuation<Void, Never>] = []
    }

    /// The bytes a stopped task had received, which its resume data lets the next task go on from.
    private struct Partial {
        var request: URLRequest
        /// The first and last byte of what `request` asks for.
        var first: UInt64
        var last: UInt64
        var received: Data
        var validator: String?
    }

    private let state = Locked(State())
    private let transport: any HTTPTransport
    private let scratch: URL

    /// A daemon that fetches through `transport`, keeping its files in `scratch` (a new
    /// temporary folder by default).
    public init(
        transport: any HTTPTransport,
        scratch: URL = FileManager.default.temporaryDirectory.appendingPathComponent(
            "simulated-background-\(UUID().uuidString)")
    ) {
        self.transport = transport
        self.scratch = scratch
    }

    /// The app launches (or relaunches) and recreates its session: the events that waited reach
    /// it in one batch, followed by "events delivered".
    package func launch(landing: URL) -> SimulatedBackgroundSession {
        let leftovers = BackgroundLanding.leftovers(in: landing)
        let (events, continuation) = AsyncStream<BackgroundTransferEvent>.makeStream()
        let waiting = state.withLock { state in
            state.app = (continuation, landing)
            state.holdsEvents = false
            defer { state.waiting = [] }
            return state.waiting
        }
        for event in waiting { continuation.yield(moved(event, to: landing)) }
        if !waiting.isEmpty { continuation.yield(.eventsDelivered) }
        return SimulatedBackgroundSession(daemon: self, events: events, leftovers: leftovers, landing: landing)
    }

    /// The app's process ends (killed, or suspended and reclaimed): its tasks go on, and their
    /// events wait for its next launch.
    public func killApp() {
        let app = state.withLock { state in
            defer { state.app = nil }
            return state.app
        }
        app?.continuation.finish()
    }

    /// The learner force-quits the app: every task is cancelled, each with resume data, and the
    /// app hears of it at its next launch. Each had received the first half of its body, which
    /// a task made from its resume data does not fetch again.
    ///
    /// - Throws: The transport's error, fetching the halves.
    public func forceQuit() async throws {
        killApp()
        let running = state.withLock { $0.running }
        var stopped: [(BackgroundTransferTask, Data)] = []
        for task in running { stopped.append((task, try await receiveHalf(of: task))) }
        state.withLock { state in
            for (task, resumeData) in stopped {
                state.waiting.append(
                    .failed(taskDescription: task.taskDescription, failure: .forceQuit, resumeData: resumeData))
            }
            state.running.removeAll { task in stopped.contains { $0.0.taskDescription == task.taskDescription } }
        }
    }

    /// The running task `description` loses its connection after the first half of its body
    /// (`NSURLErrorNetworkConnectionLost`), with resume data to go on from there.
    ///
    /// - Throws: The transport's error, fetching the half.
    public func loseConnection(_ description: String) async throws {
        guard let task = state.withLock({ $0.running.first { $0.taskDescription == description } }) else { return }
        let resumeData = try await receiveHalf(of: task)
        deliver(
            .failed(
                taskDescription: description, failure: .network(code: URLError.Code.networkConnectionLost.rawValue),
                resumeData: resumeData))
    }

    /// Fetches the first half of `task`'s body, as a transfer cut short would have received it,
    /// and returns the resume data that stands for it (`resume <description>`).
    private func receiveHalf(of task: BackgroundTransferTask) async throws -> Data {
        let resumeData = Data("resume \(task.taskDescription)".utf8)
        var request = task.request
        let (first, last) = try await bounds(of: request)
        let half = (last - first + 1) / 2
        guard half > 0 else { return resumeData }
        request.setValue("bytes=\(first)-\(first + half - 1)", forHTTPHeaderField: "Range")
        let (data, response) = try await transport.send(request)
        let validator = (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "ETag")
        state.withLock {
            $0.partials[resumeData] = Partial(
                request: task.request, first: first, last: last, received: data, validator: validator)
        }
        return resumeData
    }

    /// The first and last byte `request` asks for: its range, or the whole resource (its size
    /// read with a one-byte request).
    private func bounds(of request: URLRequest) async throws -> (UInt64, UInt64) {
        if let range = request.value(forHTTPHeaderField: "Range").flatMap(StagedBodies.parseRange) {
            return (range.first, range.last)
        }
        var probe = request
        probe.setValue("bytes=0-0", forHTTPHeaderField: "Range")
        let (_, response) = try await transport.send(probe)
        let total =
            (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Range")
            .flatMap { $0.split(separator: "/").last }.flatMap { UInt64($0) } ?? 1
        return (0, total - 1)
    }

    private func partial(of resumeData: Data?) -> Partial? {
        resumeData.flatMap { data in state.withLock { $0.partials[data] } }
    }

    /// Keeps every later event from the app until its next launch, as if its process were
    /// suspended and then killed before the system told it.
    public func holdEvents() {
        state.withLock { $0.holdsEvents = true }
    }

    /// Makes every later submission wait, as if the system were slow to take it, until
    /// ``releaseSubmissions()``.
    package func holdSubmissions() {
        state.withLock { $0.holdsSubmissions = true }
    }

    /// Lets the held submissions (and every later one) through.
    package func releaseSubmissions() {
        let held = state.withLock { state in
            state.holdsSubmissions = false
            defer { state.heldSubmissions = [] }
            return state.heldSubmissions
        }
        for submission in held { submission.resume() }
    }

    /// Suspends until a submission waits at the hold.
    package func waitForHeldSubmission() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                guard state.heldSubmissions.isEmpty else { return true }
                state.submissionWaiters.append(waiter)
                return false
            }
            if ready { waiter.resume() }
        }
    }

    /// Waits at the hold, when submissions are held.
    fileprivate func waitIfHeld() async {
        await withCheckedContinuation { (submission: CheckedContinuation<Void, Never>) in
            let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>]? in
                guard state.holdsSubmissions else { return nil }
                state.heldSubmissions.append(submission)
                defer { state.submissionWaiters = [] }
                return state.submissionWaiters
            }
            guard let waiters else {
                submission.resume()
                return
            }
            for waiter in waiters { waiter.resume() }
        }
    }

    /// The descriptions of the running tasks, in the order they were submitted.
    public var running: [String] { state.withLock { $0.running.map(\.taskDescription) } }
    /// The request of the running task `description`.
    public func request(of description: String) -> URLRequest? {
        state.withLock { $0.running.first { $0.taskDescription == description }?.request }
    }
    /// The networks the running task `description` may use.
    public func network(of description: String) -> DownloadRequirements.Network? {
        state.withLock { $0.running.first { $0.taskDescription == description }?.network }
    }
    /// The resume data tasks were submitted with.
    public var resumedWith: [Data] { state.withLock { $0.resumedWith } }
    /// Whether events wait for the app's next launch.
    public var hasWaitingEvents: Bool { state.withLock { !$0.waiting.isEmpty } }
    /// How many tasks were submitted in all.
    public var submitted: Int { state.withLock { $0.submitted } }

    package func submit(_ tasks: [BackgroundTransferTask]) {
        state.withLock { state in
            state.running.append(contentsOf: tasks)
            state.submitted += tasks.count
            state.resumedWith.append(contentsOf: tasks.compactMap(\.resumeData))
        }
    }

    /// Ends the running task `description`: fetches its request whole and tells the app (now,
    /// or at its next launch).
    ///
    /// - Throws: The transport's error (the task then still runs).
    public func complete(_ description: String) async throws {
        guard let task = state.withLock({ $0.running.first { $0.taskDescription == description } }) else { return }
        let (file, response) = try await fetch(task)
        deliver(.finished(taskDescription: description, response: response, file: file))
    }

    /// Ends every running task as ``complete(_:)`` does, in the order they were submitted, and
    /// those submitted meanwhile too.
    ///
    /// - Throws: The transport's error.
    public func completeAll() async throws {
        while let next = running.first { try await complete(next) }
    }

    /// Fetches `task`'s request into a file of the daemon's own. A task made from resume data
    /// asks only for the rest (`Range` from the first byte not received, with `If-Range`), as
    /// `URLSession` does, and its file holds the bytes received before and the rest; its
    /// response is the resumed request's: a `206` whose `Content-Range` is the rest.
    private func fetch(_ task: BackgroundTransferTask) async throws -> (URL, BackgroundTransferResponse) {
        var request = task.request
        let earlier = partial(of: task.resumeData)
        if let earlier {
            let next = earlier.first + UInt64(earlier.received.count)
            request.setValue("bytes=\(next)-\(earlier.last)", forHTTPHeaderField: "Range")
            if let validator = earlier.validator { request.setValue(validator, forHTTPHeaderField: "If-Range") }
        }
        var (data, response) = try await transport.send(request)
        if let earlier, (response as? HTTPURLResponse)?.statusCode == 206 { data = earlier.received + data }
        let http = response as? HTTPURLResponse
        let file = scratch.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        try data.write(to: file)
        let headers = (http?.allHeaderFields as? [String: String]) ?? [:]
        return (file, BackgroundTransferResponse(statusCode: http?.statusCode ?? 200, headers: headers))
    }

    /// Ends the running task `description` with `failure`.
    package func fail(_ description: String, _ failure: BackgroundTransferFailure, resumeData: Data? = nil) {
        deliver(.failed(taskDescription: description, failure: failure, resumeData: resumeData))
    }

    /// Reports that the running task `description` has written `bytesWritten` bytes of its
    /// body, of `bytesExpected` when known, as the system's delegate calls say while the app
    /// runs (nothing is kept for an app that is not running).
    public func reportProgress(_ description: String, bytesWritten: UInt64, of bytesExpected: UInt64?) {
        let continuation = state.withLock { state -> AsyncStream<BackgroundTransferEvent>.Continuation? in
            guard state.running.contains(where: { $0.taskDescription == description }), !state.holdsEvents else {
                return nil
            }
            return state.app?.continuation
        }
        continuation?.yield(
            .progressed(taskDescription: description, bytesWritten: bytesWritten, bytesExpected: bytesExpected))
    }

    private func deliver(_ event: BackgroundTransferEvent) {
        let label: String
        switch event {
        case .finished(let description, _, _), .failed(let description, _, _): label = description
        case .eventsDelivered, .progressed: return
        }
        let app = state.withLock { state -> (AsyncStream<BackgroundTransferEvent>.Continuation, URL)? in
            if let index = state.running.firstIndex(where: { $0.taskDescription == label }) {
                state.running.remove(at: index)
            }
            guard let app = state.app, !state.holdsEvents else {
                state.waiting.append(event)
                return nil
            }
            return (app.continuation, app.landing)
        }
        guard let (continuation, landing) = app else { return }
        continuation.yield(moved(event, to: landing))
    }

    /// The event with its file moved into the app's folder, as the delegate does before it
    /// returns (``BackgroundLanding``, as the system session's delegate lands it).
    private func moved(_ event: BackgroundTransferEvent, to landing: URL) -> BackgroundTransferEvent {
        if case .failed(let description, let failure, let resumeData) = event {
            // Its record, written before the delegate hears of it, as the system session does.
            try? BackgroundLanding.landFailure(of: description, failure, resumeData: resumeData, in: landing)
        }
        guard case .finished(let description, let response, let file) = event else { return event }
        return (try? BackgroundLanding.land(file, in: landing, taskDescription: description, response: response))
            ?? event
    }

    /// Ends the running task `description` with `failure`, and the app's process dies as the
    /// delegate returns: the failure's record is written, the event counts as delivered, and the
    /// app never records it.
    package func failAsTheAppDies(_ description: String, _ failure: BackgroundTransferFailure, resumeData: Data? = nil)
    {
        let landing = state.withLock { state -> URL? in
            state.running.removeAll { $0.taskDescription == description }
            return state.app?.landing
        }
        guard let landing else { return }
        try? BackgroundLanding.landFailure(of: description, failure, resumeData: resumeData, in: landing)
        killApp()
    }

    /// Ends the running task `description` as ``complete(_:)`` does, and the app's process dies
    /// as the delegate returns: the file is landed, the event counts as delivered, and the app
    /// never records it.
    package func completeAsTheAppDies(_ description: String) async throws {
        guard let task = state.withLock({ $0.running.first { $0.taskDescription == description } }) else { return }
        let (file, response) = try await fetch(task)
        let landing = state.withLock { state -> URL? in
            state.running.removeAll { $0.taskDescription == description }
            return state.app?.landing
        }
        guard let landing else { return }
        _ = try BackgroundLanding.land(file, in: landing, taskDescription: description, response: response)
        killApp()
    }
}

/// The app's side of ``SimulatedBackgroundDaemon``: the session it recreates at each launch.
package struct SimulatedBackgroundSession: BackgroundTransferSession {
    package let daemon: SimulatedBackgroundDaemon
    package let events: AsyncStream<BackgroundTransferEvent>
    package let leftovers: [BackgroundTransferEvent]
    package let landing: URL

    package init(
        daemon: SimulatedBackgroundDaemon, events: AsyncStream<BackgroundTransferEvent>,
        leftovers: [BackgroundTransferEvent], landing: URL
    ) {
        self.daemon = daemon
        self.events = events
        self.leftovers = leftovers
        self.landing = landing
    }

    package func submit(_ tasks: [BackgroundTransferTask]) async {
        await daemon.waitIfHeld()
        daemon.submit(tasks)
    }

    package func runningTaskDescriptions() async -> [String] {
        daemon.running
    }

    package func cancel(taskDescriptions descriptions: Set<String>) async {
        for description in daemon.running where descriptions.contains(description) {
            daemon.fail(description, .cancelled)
        }
    }
}

extension BackgroundTransferService {
    /// Background transfers that `daemon` runs, out of the library's process, as the system's
    /// background `URLSession` does: each library created with it is one launch of the app.
    public static func simulated(by daemon: SimulatedBackgroundDaemon) -> BackgroundTransferService {
        BackgroundTransferService { _, landing in daemon.launch(landing: landing) }
    }
}
