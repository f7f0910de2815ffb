public import Foundation
import Locking

#if canImport(FoundationNetworking)
    public import FoundationNetworking
#endif

/// Sends requests through a `URLSession`, bridging Swift task cancellation to the session task.
///
/// `URLSession.data(for:)` is not available with the same behaviour on every platform MediaCore
/// supports, so the adapter starts a data task itself and cancels it when the calling task is
/// cancelled; the caller then sees `CancellationError`, not a `URLError`.
///
/// Streamed requests (``stream(_:)``) need a session delegate, which a session is given only
/// when it is created: they go through a second session made from `session`'s configuration
/// (its timeouts, headers and cookies), created on the first streamed request and invalidated
/// when the last copy of the transport goes away. That session has no `URLCache`: a streamed
/// body (a media file, a byte range of one) is read once and should not fill a cache, and on
/// Linux a cancel that lands while FoundationNetworking reads the cache, before the task's
/// protocol exists, later traps the process ("Trying to access a behaviour for a task that in
/// not in the registry").
public struct URLSessionTransport: HTTPTransport {
    /// The session the requests go through.
    public let session: URLSession
    private let streaming: StreamingSession

    /// Creates a transport over `session` (the shared session by default).
    public init(session: URLSession = .shared) {
        self.session = session
        let configuration = session.configuration.copy() as? URLSessionConfiguration ?? session.configuration
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        streaming = StreamingSession(configuration: configuration)
    }

    /// Sends `request` and returns when its headers arrive; the body's chunks follow as the
    /// session receives them.
    ///
    /// Cancelling the calling task, ending the iteration of the chunks early or dropping them
    /// cancels the session task, which closes its connection.
    ///
    /// - Throws: `CancellationError` when the calling task is cancelled before the headers
    ///   arrive, otherwise the session's error (usually a `URLError`).
    public func stream(_ request: URLRequest) async throws -> (URLResponse, HTTPBodyChunks) {
        try await streaming.start(request)
    }

    /// Sends `request` and returns the body and response.
    ///
    /// - Throws: `CancellationError` when the calling task is cancelled, otherwise the session's
    ///   error (usually a `URLError`).
    public func send(_ request: URLRequest) async throws -> (Data, URLResponse) {
        try Task.checkCancellation()
        let box = TaskBox()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = session.dataTask(with: request) { data, response, error in
                    if box.wasCancelled {
                        continuation.resume(throwing: CancellationError())
                    } else if let error {
                        continuation.resume(throwing: error)
                    } else if let response {
                        continuation.resume(returning: (data ?? Data(), response))
                    } else {
                        continuation.resume(throwing: URLError(.badServerResponse))
                    }
                }
                box.start(task)
            }
        } onCancel: {
            box.cancel()
        }
    }
}

/// Holds a data task so that a cancellation arriving before or after it starts cancels it.
final class TaskBox: Sendable {
    private let state = Locked<(task: URLSessionDataTask?, cancelled: Bool)>((nil, false))

    var wasCancelled: Bool { state.withLock { $0.cancelled } }

    func start(_ task: URLSessionDataTask) {
        let cancelled = state.withLock { state in
            state.task = task
            return state.cancelled
        }
        if cancelled {
            task.cancel()
        }
        task.resume()
    }

    func cancel() {
        let task = state.withLock { state in
            state.cancelled = true
            return state.task
        }
        task?.cancel()
    }
}

/// The delegate session behind ``URLSessionTransport/stream(_:)``: it routes each task's
/// response and chunks to the caller that started it.
final class StreamingSession: Sendable {
    /// The configuration the session is made from, and the session once made.
    private let state: Locked<(configuration: URLSessionConfiguration, session: URLSession?)>
    private let router = ChunkRouter()

    init(configuration: URLSessionConfiguration) {
        state = Locked((configuration, nil))
    }

    deinit {
        // The session holds its delegate until it is invalidated.
        state.withLock { $0.session }?.finishTasksAndInvalidate()
    }

    private func currentSession() -> URLSession {
        state.withLock { state in
            if let session = state.session { return session }
            let created = URLSession(configuration: state.configuration, delegate: router, delegateQueue: nil)
            state.session = created
            return created
        }
    }

    func start(_ request: URLRequest) async throws -> (URLResponse, HTTPBodyChunks) {
        try Task.checkCancellation()
        let task = currentSession().dataTask(with: request)
        let box = TaskBox()
        let (chunks, body) = HTTPBodyChunks.makeStream()
        // A body abandoned by its reader stops the task; one that finished needs nothing.
        body.onTermination = { termination in
            if case .cancelled = termination { box.cancel() }
        }
        let response: URLResponse
        do {
            response = try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (head: CheckedContinuation<URLResponse, any Error>) in
                    router.register(task.taskIdentifier, head: head, body: body)
                    box.start(task)
                }
            } onCancel: {
                box.cancel()
            }
        } catch {
            // The session reports the task it cancelled for us as `URLError.cancelled`.
            if box.wasCancelled { throw CancellationError() }
            throw error
        }
        if Task.isCancelled {
            box.cancel()
            throw CancellationError()
        }
        return (response, chunks)
    }
}

/// Hands a session's delegate callbacks to the waiting callers, by task.
///
/// The session delivers a body in pieces of about 16 KiB; each piece handed on wakes the reading
/// task, so pieces are gathered and handed on in batches sized by bytes: 256 KiB, or whatever
/// has gathered 100 ms after a batch began, whichever comes first. A batch sets one timer, not
/// one per piece, so a slow network costs the reader a wake-up per 256 KiB, as a fast one does.
/// The first piece after a pause of 100 ms goes on at once, so a slow body is never held back
/// by more than 100 ms, far below any idle bound. ``BodyGathering`` holds these rules; the router
/// gives it buffers, timers and a lock.
private final class ChunkRouter: NSObject, URLSessionDataDelegate, Sendable {
    private struct Waiter {
        var head: CheckedContinuation<URLResponse, any Error>?
        let body: HTTPBodyChunks.Continuation
        /// The body's batching (``BodyGathering``): the buffer being filled, and its timer's
        /// generation.
        var gathering: BodyGathering
    }

    /// The waiters by task; pieces are handed on under its lock, so they reach each reader in
    /// order.
    private let waiters = Locked<[Int: Waiter]>([:])
    /// Gathering buffers back from their readers, reused so that gathering allocates nothing
    /// new. A box of its own: a released piece returns its buffer from any thread, even while
    /// `waiters` is locked.
    private let spare = Locked<[UnsafeMutableRawPointer]>([])
    private let timers = DispatchQueue(label: "MediaCore.HTTPSupport.gathering")

    deinit {
        // Every piece handed on holds the router, so no buffer is out when it goes.
        spare.withLock { buffers in for buffer in buffers { buffer.deallocate() } }
        waiters.withLock { waiters in for waiter in waiters.values { waiter.gathering.gathered?.deallocate() } }
    }

    func register(_ task: Int, head: CheckedContinuation<URLResponse, any Error>, body: HTTPBodyChunks.Continuation) {
        waiters.withLock {
            $0[task] = Waiter(
                head: head, body: body, gathering: BodyGathering(now: DispatchTime.now().uptimeNanoseconds))
        }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let head = waiters.withLock { waiters in
            defer { waiters[dataTask.taskIdentifier]?.head = nil }
            return waiters[dataTask.taskIdentifier]?.head
        }
        head?.resume(returning: response)
        completionHandler(.allow)
    }

    /// The bytes of a gathering buffer as a `Data` that returns the buffer when released.
    private func handOver(_ buffer: UnsafeMutableRawPointer, count: Int) -> Data {
        Data(
            bytesNoCopy: buffer, count: count,
            deallocator: .custom { [self] pointer, _ in
                let kept = spare.withLock { buffers in
                    guard buffers.count < 16 else { return false }
                    buffers.append(pointer)
                    return true
                }
                if !kept { pointer.deallocate() }
            })
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let now = DispatchTime.now().uptimeNanoseconds
        let task = dataTask.taskIdentifier
        waiters.withLock { waiters in
            guard var waiter = waiters[task] else { return }
            let chunks = waiter.gathering.add(
                data, now: now, take: takeSpare, handOver: handOver,
                startTimer: { generation in
                    timers.asyncAfter(deadline: .now() + .nanoseconds(Int(BodyGathering.window))) { [weak self] in
                        self?.handOverIfStill(task: task, generation: generation)
                    }
                })
            waiters[task] = waiter
            for chunk in chunks { waiter.body.yield(chunk) }
        }
    }

    /// A spare gathering buffer, or a new one.
    private func takeSpare() -> UnsafeMutableRawPointer {
        spare.withLock { $0.popLast() } ?? .allocate(byteCount: BodyGathering.limit, alignment: 16)
    }

    /// Hands on what a task gathered, when it is still the same gathering buffer.
    private func handOverIfStill(task: Int, generation: Int) {
        waiters.withLock { waiters in
            guard var waiter = waiters[task],
                let chunk = waiter.gathering.flush(
                    generation: generation, now: DispatchTime.now().uptimeNanoseconds, handOver: handOver)
            else { return }
            waiters[task] = waiter
            waiter.body.yield(chunk)
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let waiter = waiters.withLock { waiters -> Waiter? in
            guard var waiter = waiters.removeValue(forKey: task.taskIdentifier) else { return nil }
            if let chunk = waiter.gathering.flush(generation: nil, now: 0, handOver: handOver) {
                waiter.body.yield(chunk)
            }
            return waiter
        }
        guard let waiter else { return }
        if let head = waiter.head {
            head.resume(throwing: error ?? URLError(.badServerResponse))
        }
        if let error {
            waiter.body.finish(throwing: error)
        } else {
            waiter.body.finish()
        }
    }
}
