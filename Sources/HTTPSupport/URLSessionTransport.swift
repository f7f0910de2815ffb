public import Foundation

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
/// (its timeouts, headers, cookies and cache), created on the first streamed request and
/// invalidated when the last copy of the transport goes away.
public struct URLSessionTransport: HTTPTransport {
    /// The session the requests go through.
    public let session: URLSession
    private let streaming: StreamingSession

    /// Creates a transport over `session` (the shared session by default).
    public init(session: URLSession = .shared) {
        self.session = session
        streaming = StreamingSession(configuration: session.configuration)
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
final class TaskBox: @unchecked Sendable {
    private let lock = NSLock()
    private var task: URLSessionDataTask?
    private var cancelled = false

    var wasCancelled: Bool {
        lock.lock()
        defer { lock.unlock() }
        return cancelled
    }

    func start(_ task: URLSessionDataTask) {
        lock.lock()
        self.task = task
        let cancelled = self.cancelled
        lock.unlock()
        if cancelled {
            task.cancel()
        }
        task.resume()
    }

    func cancel() {
        lock.lock()
        cancelled = true
        let task = self.task
        lock.unlock()
        task?.cancel()
    }
}

/// The delegate session behind ``URLSessionTransport/stream(_:)``: it routes each task's
/// response and chunks to the caller that started it.
final class StreamingSession: @unchecked Sendable {
    private let lock = NSLock()
    private let configuration: URLSessionConfiguration
    private var session: URLSession?
    private let router = ChunkRouter()

    init(configuration: URLSessionConfiguration) {
        self.configuration = configuration
    }

    deinit {
        // The session holds its delegate until it is invalidated.
        session?.finishTasksAndInvalidate()
    }

    private func currentSession() -> URLSession {
        lock.lock()
        defer { lock.unlock() }
        if let session { return session }
        let created = URLSession(configuration: configuration, delegate: router, delegateQueue: nil)
        session = created
        return created
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
        let response = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (head: CheckedContinuation<URLResponse, any Error>) in
                router.register(task.taskIdentifier, head: head, body: body)
                box.start(task)
            }
        } onCancel: {
            box.cancel()
        }
        if Task.isCancelled {
            box.cancel()
            throw CancellationError()
        }
        return (response, chunks)
    }
}

/// Hands a session's delegate callbacks to the waiting callers, by task.
private final class ChunkRouter: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private struct Waiter {
        var head: CheckedContinuation<URLResponse, any Error>?
        let body: HTTPBodyChunks.Continuation
    }

    private let lock = NSLock()
    private var waiters: [Int: Waiter] = [:]

    func register(_ task: Int, head: CheckedContinuation<URLResponse, any Error>, body: HTTPBodyChunks.Continuation) {
        lock.lock()
        waiters[task] = Waiter(head: head, body: body)
        lock.unlock()
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        lock.lock()
        let head = waiters[dataTask.taskIdentifier]?.head
        waiters[dataTask.taskIdentifier]?.head = nil
        lock.unlock()
        head?.resume(returning: response)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        lock.lock()
        let body = waiters[dataTask.taskIdentifier]?.body
        lock.unlock()
        body?.yield(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        lock.lock()
        let waiter = waiters.removeValue(forKey: task.taskIdentifier)
        lock.unlock()
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
