import Foundation
import HTTPSupport
import Locking
import TestSupport

@testable import Downloads

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The system's background transfer daemon, as Apple documents it, for tests on Linux: it runs
/// tasks out of the app's process, so they go on while the app is suspended, killed or not
/// running; it fetches a task's request whole into a file of its own, which it moves to the
/// app's folder as it tells the app (the delegate must move it before returning); events that
/// happen while the app is not running wait, and reach the next launch in one batch followed by
/// "events delivered"; a force-quit cancels every task, each with its resume data.
///
/// The test decides when each task ends (``complete(_:)``, in any order) and when the app dies
/// or launches. Every fetch goes through `transport`, so a test counts the requests.
final class SimulatedBackgroundDaemon: Sendable {
    private struct State {
        var running: [BackgroundTransferTask] = []
        var waiting: [BackgroundTransferEvent] = []
        var app: (continuation: AsyncStream<BackgroundTransferEvent>.Continuation, landing: URL)?
        var resumedWith: [Data] = []
        var submitted = 0
    }

    private let state = Locked(State())
    private let transport: any HTTPTransport
    private let scratch: URL

    /// A daemon that fetches through `transport`, keeping its files in `scratch`.
    init(transport: any HTTPTransport, scratch: URL) {
        self.transport = transport
        self.scratch = scratch
    }

    /// The app launches (or relaunches) and recreates its session: the events that waited reach
    /// it in one batch, followed by "events delivered".
    func launch(landing: URL) -> SimulatedBackgroundSession {
        let leftovers = BackgroundLanding.leftovers(in: landing)
        let (events, continuation) = AsyncStream<BackgroundTransferEvent>.makeStream()
        let waiting = state.withLock { state in
            state.app = (continuation, landing)
            defer { state.waiting = [] }
            return state.waiting
        }
        for event in waiting { continuation.yield(moved(event, to: landing)) }
        if !waiting.isEmpty { continuation.yield(.eventsDelivered) }
        return SimulatedBackgroundSession(daemon: self, events: events, leftovers: leftovers, landing: landing)
    }

    /// The app's process ends (killed, or suspended and reclaimed): its tasks go on.
    func killApp() {
        let app = state.withLock { state in
            defer { state.app = nil }
            return state.app
        }
        app?.continuation.finish()
    }

    /// The learner force-quits the app: every task is cancelled, each with resume data, and the
    /// app hears of it at its next launch.
    func forceQuit() {
        killApp()
        state.withLock { state in
            for task in state.running {
                state.waiting.append(
                    .failed(
                        taskDescription: task.taskDescription, failure: .forceQuit,
                        resumeData: Data("resume \(task.taskDescription)".utf8)))
            }
            state.running = []
        }
    }

    /// The descriptions of the running tasks, in the order they were submitted.
    var running: [String] { state.withLock { $0.running.map(\.taskDescription) } }
    /// The request of the running task `description`.
    func request(of description: String) -> URLRequest? {
        state.withLock { $0.running.first { $0.taskDescription == description }?.request }
    }
    /// The resume data tasks were submitted with.
    var resumedWith: [Data] { state.withLock { $0.resumedWith } }
    /// Whether events wait for the app's next launch.
    var hasWaitingEvents: Bool { state.withLock { !$0.waiting.isEmpty } }
    /// How many tasks were submitted in all.
    var submitted: Int { state.withLock { $0.submitted } }

    func submit(_ tasks: [BackgroundTransferTask]) {
        state.withLock { state in
            state.running.append(contentsOf: tasks)
            state.submitted += tasks.count
            state.resumedWith.append(contentsOf: tasks.compactMap(\.resumeData))
        }
    }

    /// Ends the running task `description`: fetches its request whole and tells the app (now,
    /// or at its next launch).
    func complete(_ description: String) async throws {
        guard let task = state.withLock({ $0.running.first { $0.taskDescription == description } }) else { return }
        let (file, response) = try await fetch(task)
        deliver(.finished(taskDescription: description, response: response, file: file))
    }

    /// Fetches `task`'s request whole into a file of the daemon's own.
    private func fetch(_ task: BackgroundTransferTask) async throws -> (URL, BackgroundTransferResponse) {
        let (data, response) = try await transport.send(task.request)
        let http = response as? HTTPURLResponse
        let file = scratch.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        try data.write(to: file)
        let headers = (http?.allHeaderFields as? [String: String]) ?? [:]
        return (file, BackgroundTransferResponse(statusCode: http?.statusCode ?? 200, headers: headers))
    }

    /// Ends the running task `description` with `failure`.
    func fail(_ description: String, _ failure: BackgroundTransferFailure, resumeData: Data? = nil) {
        deliver(.failed(taskDescription: description, failure: failure, resumeData: resumeData))
    }

    private func deliver(_ event: BackgroundTransferEvent) {
        let label: String
        switch event {
        case .finished(let description, _, _), .failed(let description, _, _): label = description
        case .eventsDelivered: return
        }
        let app = state.withLock { state -> (AsyncStream<BackgroundTransferEvent>.Continuation, URL)? in
            if let index = state.running.firstIndex(where: { $0.taskDescription == label }) {
                state.running.remove(at: index)
            }
            guard let app = state.app else {
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
    func failAsTheAppDies(_ description: String, _ failure: BackgroundTransferFailure, resumeData: Data? = nil) {
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
    func completeAsTheAppDies(_ description: String) async throws {
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
struct SimulatedBackgroundSession: BackgroundTransferSession {
    let daemon: SimulatedBackgroundDaemon
    let events: AsyncStream<BackgroundTransferEvent>
    let leftovers: [BackgroundTransferEvent]
    let landing: URL

    func submit(_ tasks: [BackgroundTransferTask]) async {
        daemon.submit(tasks)
    }

    func runningTaskDescriptions() async -> [String] {
        daemon.running
    }

    func cancel(taskDescriptions descriptions: Set<String>) async {
        for description in daemon.running where descriptions.contains(description) {
            daemon.fail(description, .cancelled)
        }
    }
}
