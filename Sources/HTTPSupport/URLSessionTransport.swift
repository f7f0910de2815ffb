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
/// task, so pieces that arrive close together are gathered and handed on together, up to 256 KiB
/// or 5 ms after the last hand-over, whichever comes first. A slow body still reaches its reader
/// piece by piece, as it arrives.
private final class ChunkRouter: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private struct Waiter {
        var head: CheckedContinuation<URLResponse, any Error>?
        let body: HTTPBodyChunks.Continuation
        /// Bytes gathered and not yet handed on: a buffer of the router's, and how much of it is used.
        var gathered: UnsafeMutableRawPointer?
        var used = 0
        var handedOver: UInt64
        /// Counts gathering buffers, so a timer set for one does not hand on the next.
        var generation = 0
    }

    /// The most bytes gathered before they are handed on.
    static let gatherLimit = 256 << 10
    /// The size of a gathering buffer: the limit and one more piece of the session's.
    static let bufferSize = gatherLimit + (64 << 10)
    /// The longest bytes wait to be handed on while more arrive, in nanoseconds.
    static let gatherWindow: UInt64 = 5_000_000

    /// Guards the waiters; pieces are handed on under it, so they reach each reader in order.
    private let lock = NSLock()
    /// Guards the spare buffers (a released piece returns its buffer from any thread, even while
    /// `lock` is held).
    private let spareLock = NSLock()
    private let timers = DispatchQueue(label: "MediaCore.HTTPSupport.gathering")
    private var waiters: [Int: Waiter] = [:]
    /// Gathering buffers back from their readers, reused so that gathering allocates nothing new.
    private var spare: [UnsafeMutableRawPointer] = []

    deinit {
        // Every piece handed on holds the router, so no buffer is out when it goes.
        for buffer in spare { buffer.deallocate() }
        for waiter in waiters.values { waiter.gathered?.deallocate() }
    }

    func register(_ task: Int, head: CheckedContinuation<URLResponse, any Error>, body: HTTPBodyChunks.Continuation) {
        lock.lock()
        waiters[task] = Waiter(head: head, body: body, handedOver: DispatchTime.now().uptimeNanoseconds)
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

    /// The bytes of a gathering buffer as a `Data` that returns the buffer when released.
    /// Call with the lock held.
    private func handOver(_ buffer: UnsafeMutableRawPointer, count: Int) -> Data {
        Data(
            bytesNoCopy: buffer, count: count,
            deallocator: .custom { [self] pointer, _ in
                spareLock.lock()
                if spare.count < 16 {
                    spare.append(pointer)
                    spareLock.unlock()
                } else {
                    spareLock.unlock()
                    pointer.deallocate()
                }
            })
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let now = DispatchTime.now().uptimeNanoseconds
        var pieces: [Data] = []
        lock.lock()
        guard var waiter = waiters[dataTask.taskIdentifier] else {
            lock.unlock()
            return
        }
        if waiter.gathered == nil, now &- waiter.handedOver >= Self.gatherWindow || data.count > Self.gatherLimit {
            // After a pause (or a large piece), hand it on at once: a slow body is never held back.
            pieces.append(data)
            waiter.handedOver = now
        } else {
            if let buffer = waiter.gathered, waiter.used + data.count > Self.bufferSize {
                pieces.append(handOver(buffer, count: waiter.used))
                waiter.gathered = nil
                waiter.used = 0
            }
            if data.count > Self.bufferSize {
                pieces.append(data)
            } else {
                let starting = waiter.gathered == nil
                let buffer = waiter.gathered ?? takeSpare()
                if starting {
                    // Whatever is gathered is handed on within the window, more bytes or not.
                    waiter.generation += 1
                    let task = dataTask.taskIdentifier
                    let generation = waiter.generation
                    timers.asyncAfter(deadline: .now() + .nanoseconds(Int(Self.gatherWindow))) { [weak self] in
                        self?.handOverIfStill(task: task, generation: generation)
                    }
                }
                data.withUnsafeBytes { bytes in
                    if let base = bytes.baseAddress {
                        (buffer + waiter.used).copyMemory(from: base, byteCount: bytes.count)
                    }
                }
                waiter.gathered = buffer
                waiter.used += data.count
                if waiter.used >= Self.gatherLimit || now &- waiter.handedOver >= Self.gatherWindow {
                    pieces.append(handOver(buffer, count: waiter.used))
                    waiter.gathered = nil
                    waiter.used = 0
                    waiter.handedOver = now
                }
            }
        }
        waiters[dataTask.taskIdentifier] = waiter
        for piece in pieces { waiter.body.yield(piece) }
        lock.unlock()
    }

    /// A spare gathering buffer, or a new one.
    private func takeSpare() -> UnsafeMutableRawPointer {
        spareLock.lock()
        defer { spareLock.unlock() }
        return spare.popLast() ?? .allocate(byteCount: Self.bufferSize, alignment: 16)
    }

    /// Hands on what a task gathered, when it is still the same gathering buffer.
    private func handOverIfStill(task: Int, generation: Int) {
        lock.lock()
        guard var waiter = waiters[task], waiter.generation == generation, let buffer = waiter.gathered else {
            lock.unlock()
            return
        }
        let piece = handOver(buffer, count: waiter.used)
        waiter.gathered = nil
        waiter.used = 0
        waiter.handedOver = DispatchTime.now().uptimeNanoseconds
        waiters[task] = waiter
        waiter.body.yield(piece)
        lock.unlock()
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        lock.lock()
        let waiter = waiters.removeValue(forKey: task.taskIdentifier)
        let rest = waiter.flatMap { waiter in waiter.gathered.map { handOver($0, count: waiter.used) } }
        if let waiter, let rest { waiter.body.yield(rest) }
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
