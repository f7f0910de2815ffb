public import Foundation
import Locking

#if canImport(FoundationNetworking)
    public import FoundationNetworking
#endif

/// The body of a response as it arrives from a transport: chunks of bytes, in order, ending when
/// the body is complete or throwing when the transfer fails.
///
/// Ending the iteration early, or dropping the stream, cancels the transfer.
public typealias HTTPBodyChunks = AsyncThrowingStream<Data, any Error>

extension HTTPBodyChunks {
    /// A body that has already arrived whole: `data` as one chunk (none when it is empty).
    package static func whole(_ data: Data) -> HTTPBodyChunks {
        let (chunks, continuation) = makeStream()
        if !data.isEmpty { continuation.yield(data) }
        continuation.finish()
        return chunks
    }
}

extension HTTPTransport {
    /// Sends `request` whole with ``send(_:)`` and yields its body as one chunk: the streaming
    /// behaviour of a transport that has no better one.
    ///
    /// A transport that can deliver bytes as they arrive (``URLSessionTransport`` does)
    /// implements ``stream(_:)`` itself.
    public func stream(_ request: URLRequest) async throws -> (URLResponse, HTTPBodyChunks) {
        let (data, response) = try await send(request)
        return (response, .whole(data))
    }

    /// Sends `request` and returns as soon as the response's headers arrive, with its body
    /// still arriving; the wait for each next chunk is bounded by `idleTimeout` on `clock`.
    ///
    /// This is the streaming counterpart of ``send(_:timeout:on:allowing:)``: the same scheme
    /// allow-list, the same refusal of a non-HTTP answer to an `http` request, the same typed
    /// errors. Its timeout is an *idle* timeout: the headers must arrive within it, and then no
    /// more than `idleTimeout` may pass without a byte, however long the whole transfer takes. A
    /// slow but steady server finishes; a server that stops sending fails with
    /// ``HTTPTransportError/Kind/stalled(after:)`` and its transfer is cancelled.
    ///
    /// Cancelling the calling task, ending the body's iteration early or dropping the body
    /// cancels the transfer, down to the transport (a `URLSession` task is cancelled and its
    /// connection closed).
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - idleTimeout: The longest wait for the headers and then between two chunks; `nil`
    ///     leaves timing to the transport.
    ///   - clock: The clock the idle timeout is measured on.
    ///   - schemes: The schemes that may be fetched, lowercased: `http` and `https` by default.
    /// - Throws: ``HTTPTransportError``: ``HTTPTransportError/Kind/stalled(after:)`` when the
    ///   headers do not arrive in time, ``HTTPTransportError/Kind/cancelled``,
    ///   ``HTTPTransportError/Kind/disallowedScheme(_:)``, ``HTTPTransportError/Kind/notHTTP``,
    ///   or the transport's own failure.
    public func stream<C: Clock>(
        _ request: URLRequest, idleTimeout: Duration?, on clock: C, allowing schemes: Set<String> = ["http", "https"]
    ) async throws(HTTPTransportError) -> HTTPStreamedResponse where C.Duration == Duration {
        let url = request.url
        let scheme = url?.scheme?.lowercased() ?? ""
        guard schemes.contains(scheme) else { throw HTTPTransportError(.disallowedScheme(scheme), url: url) }
        let idle = idleTimeout.map { max($0, .zero) }
        let head = try await typedDeadline(
            idle, on: clock, url: url, expired: HTTPTransportError.Kind.stalled(after:)
        ) {
            try await self.stream(request)
        }
        if httpSchemes.contains(scheme), !(head.0 is HTTPURLResponse) {
            throw HTTPTransportError(.notHTTP, url: url)
        }
        return HTTPStreamedResponse(
            response: head.0, body: HTTPResponseBody(pumping: head.1, idle: idle, on: clock, url: url))
    }
}

/// A response whose body is still arriving, from
/// ``HTTPTransport/stream(_:idleTimeout:on:allowing:)``.
public struct HTTPStreamedResponse: Sendable {
    /// The response: status and headers.
    public let response: URLResponse
    /// The body, read chunk by chunk.
    public let body: HTTPResponseBody

    /// The HTTP status, or `nil` for a response that is not an HTTP response (a `file:` URL the
    /// caller opted in to).
    public var statusCode: Int? { (response as? HTTPURLResponse)?.statusCode }

    /// Creates a streamed response.
    public init(response: URLResponse, body: HTTPResponseBody) {
        self.response = response
        self.body = body
    }

    /// The body of a `2xx` response (or of one that is not an HTTP response), read up to
    /// `limit` bytes with ``HTTPResponseBody/collect(upTo:)``; for any other status the body is
    /// not read, its transfer is stopped, and the result is empty: the status is what the
    /// caller acts on.
    ///
    /// - Throws: ``HTTPTransportError``; of kind ``HTTPTransportError/Kind/bodyTooLarge(limit:)``
    ///   past the limit.
    public func successfulBody(upTo limit: Int) async throws(HTTPTransportError) -> Data {
        if let statusCode, !(200..<300).contains(statusCode) {
            body.cancel()
            return Data()
        }
        return try await body.collect(upTo: limit)
    }
}

/// A response body read as it arrives, whose failures are ``HTTPTransportError``s.
///
/// Iterate it with `for try await chunk in body`, or gather it with ``collect(upTo:)``. A body
/// is read once. Ending the iteration early cancels the transfer; a calling task cancelled while
/// it waits for a chunk gets ``HTTPTransportError/Kind/cancelled``, never a silently short body.
///
/// Reading starts with the first iterator: until then the transport holds what arrives. A body
/// dropped or cancelled unread stops its transfer.
public struct HTTPResponseBody: AsyncSequence, Sendable {
    /// A chunk of the body.
    public typealias Element = Data

    private let source: BodySource
    private let url: URL?

    /// A body that forwards `upstream`, failing with ``HTTPTransportError/Kind/stalled(after:)``
    /// (and cancelling the transfer) once `idle` passes on `clock` without a chunk.
    ///
    /// Iterated, a pump task forwards the chunks and notes when each arrived; with an `idle`
    /// timeout, a watchdog sleeps until the last arrival plus `idle` and fails the body if
    /// nothing came meanwhile. The body's end (finished, failed, abandoned, stopped or
    /// cancelled) stops both, and stopping the pump cancels `upstream`, whose transport then
    /// cancels the transfer. Read with `deliver(_:)`, the pump hands each chunk to its reader
    /// itself, and the idle time counts only while the pump waits for the transport.
    init<C: Clock>(pumping upstream: HTTPBodyChunks, idle: Duration?, on clock: C, url: URL?)
    where C.Duration == Duration {
        source = BodySource(upstream: upstream, idle: idle, clock: clock, url: url)
        self.url = url
    }

    /// Stops the transfer: the body ends here, and the transport's task is cancelled.
    ///
    /// Reading stops the same way when an iteration ends early (a `break` out of
    /// `for try await`), when the body is dropped, or when the reading task is cancelled.
    public func cancel() {
        source.stop()
    }

    /// Reads the chunks in order.
    public struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate var base: HTTPBodyChunks.AsyncIterator
        fileprivate let url: URL?
        /// Stops the transfer when the last copy of the iterator goes away.
        fileprivate let release: StopOnRelease

        /// The next chunk, or `nil` at the end of the body.
        ///
        /// - Throws: ``HTTPTransportError``: the transfer failed, stalled or was cancelled.
        public mutating func next() async throws(HTTPTransportError) -> Data? {
            let chunk: Data?
            do {
                chunk = try await base.next()
            } catch {
                throw HTTPResponseBody.typed(error, url: url)
            }
            // A stream whose reader is cancelled ends quietly: say so instead.
            if chunk == nil, Task.isCancelled { throw HTTPTransportError(.cancelled, url: url) }
            return chunk
        }
    }

    /// A transport's failure as a body reports it.
    fileprivate static func typed(_ error: any Error, url: URL?) -> HTTPTransportError {
        #if canImport(FoundationNetworking)
            // After the headers, a transfer that fails with no code of its own ended before its
            // body did: FoundationNetworking reports libcurl's partial transfer ("transfer closed
            // with N bytes remaining") as -1. The connection was lost.
            if let error = error as? URLError, error.code == .unknown {
                return HTTPTransportError(
                    .network(URLError(.networkConnectionLost, userInfo: error.userInfo)), url: url)
            }
        #endif
        return .from(error, url: url)
    }

    /// An iterator over the chunks.
    public func makeAsyncIterator() -> AsyncIterator {
        let source = source
        return AsyncIterator(
            base: source.chunks().makeAsyncIterator(), url: url, release: StopOnRelease { source.stop() })
    }

    /// Reads the body to its end, handing each chunk to `handle` on the task that receives it
    /// from the transport: no task of the caller's is woken per chunk. `handle` returns `false`
    /// to stop reading early (the transfer is then cancelled).
    ///
    /// The idle timeout counts only while the body waits for the transport, not while `handle`
    /// works (a reader that holds back to let a slower consumer catch up is not a stalled
    /// server). Cancelling the calling task stops the transfer.
    ///
    /// - Throws: What `handle` throws, unchanged; otherwise ``HTTPTransportError``: the transfer
    ///   failed, stalled or was cancelled.
    package func deliver(_ handle: @escaping @Sendable (Data) async throws -> Bool) async throws {
        try await source.deliver(handle)
    }

    /// The whole body, refusing one longer than `limit` bytes as soon as it passes the limit
    /// (the transfer is then cancelled, and at most `limit` bytes plus one chunk were held).
    ///
    /// - Complexity: O(*n*) for an *n*-byte body.
    /// - Throws: ``HTTPTransportError``; of kind ``HTTPTransportError/Kind/bodyTooLarge(limit:)``
    ///   past the limit.
    public func collect(upTo limit: Int) async throws(HTTPTransportError) -> Data {
        var data = Data()
        var iterator = makeAsyncIterator()
        while let chunk = try await iterator.next() {
            guard chunk.count <= limit - data.count else {
                cancel()
                throw HTTPTransportError(.bodyTooLarge(limit: limit), url: url)
            }
            data.append(chunk)
        }
        return data
    }
}

/// What a body reads from, and how: the transport's chunks until a reader takes them, then the
/// pump (and watchdog) that reading started.
private final class BodySource: Sendable {
    private enum Phase {
        /// Not read yet: the transport's chunks, held.
        case unread(HTTPBodyChunks)
        /// Iterated: the pumped chunks, for this and any later iterator, and their stream's
        /// continuation (finishing it stops the pump, and the transfer).
        case iterated(HTTPBodyChunks, HTTPBodyChunks.Continuation)
        /// Delivering to a reader: stopping it cancels its pump.
        case delivering(stop: @Sendable () -> Void)
        /// Delivered, or stopped before anything read it.
        case done
    }

    private let phase: Locked<Phase>
    /// Starts the pump and watchdog that forward the chunks to a stream of their own.
    private let startPump: @Sendable (HTTPBodyChunks) -> (HTTPBodyChunks, HTTPBodyChunks.Continuation)
    /// Starts the pump (and watchdog) that hand the chunks to a reader.
    private let startDelivery: @Sendable (HTTPBodyChunks, @escaping @Sendable (Data) async throws -> Bool) -> Delivery

    init<C: Clock>(upstream: HTTPBodyChunks, idle: Duration?, clock: C, url: URL?) where C.Duration == Duration {
        phase = Locked(.unread(upstream))
        startPump = { upstream in Self.pump(upstream, idle: idle, clock: clock, url: url) }
        startDelivery = { upstream, handle in
            Self.delivery(upstream, to: handle, idle: idle, clock: clock, url: url)
        }
    }

    /// The stream an iterator reads: the pump's, started by the first call.
    func chunks() -> HTTPBodyChunks {
        phase.withLock { phase in
            switch phase {
            case .unread(let upstream):
                let (pumped, continuation) = startPump(upstream)
                phase = .iterated(pumped, continuation)
                return pumped
            case .iterated(let pumped, _):
                return pumped
            case .delivering, .done:
                return .whole(Data())
            }
        }
    }

    /// Stops the transfer: the pump's stream ends, the delivery's pump is cancelled, or the
    /// unread chunks are let go (which cancels the transport's task).
    func stop() {
        let (unread, action) = phase.withLock { phase -> (HTTPBodyChunks?, (@Sendable () -> Void)?) in
            switch phase {
            case .unread(let upstream):
                phase = .done
                return (upstream, nil)
            case .iterated(_, let continuation):
                return (nil, { continuation.finish() })
            case .delivering(let stop):
                return (nil, stop)
            case .done:
                return (nil, nil)
            }
        }
        action?()
        // The unread stream's last copy goes here, outside the lock: its transport's termination
        // handler cancels the transfer.
        withExtendedLifetime(unread) {}
    }

    /// Reads the chunks into `handle` on a pump of their own (see
    /// ``HTTPResponseBody/deliver(_:)``).
    func deliver(_ handle: @escaping @Sendable (Data) async throws -> Bool) async throws {
        let delivery = phase.withLock { phase -> Delivery? in
            guard case .unread(let upstream) = phase else { return nil }
            let delivery = startDelivery(upstream, handle)
            phase = .delivering(stop: { delivery.cancel() })
            return delivery
        }
        guard let delivery else {
            // Already iterated or stopped: what is left is read the ordinary way.
            var iterator = chunks().makeAsyncIterator()
            while let chunk = try await iterator.next(), try await handle(chunk) {}
            return
        }
        defer {
            delivery.cancel()
            phase.withLock { $0 = .done }
        }
        try await withTaskCancellationHandler {
            try await delivery.pump.value
        } onCancel: {
            delivery.cancel()
        }
    }

    // MARK: Pumping

    private static func pump<C: Clock>(_ upstream: HTTPBodyChunks, idle: Duration?, clock: C, url: URL?)
        -> (HTTPBodyChunks, HTTPBodyChunks.Continuation) where C.Duration == Duration
    {
        let (output, continuation) = HTTPBodyChunks.makeStream()
        // When the last chunk arrived, for the watchdog.
        let lastArrival = Locked(clock.now)
        let pump = Task {
            do {
                for try await chunk in upstream {
                    let now = clock.now
                    lastArrival.withLock { $0 = now }
                    continuation.yield(chunk)
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        let watchdog = idle.map { idle in
            Task {
                var deadline = lastArrival.current.advanced(by: idle)
                while true {
                    do {
                        try await clock.sleep(until: deadline, tolerance: nil)
                    } catch {
                        return
                    }
                    let next = lastArrival.current.advanced(by: idle)
                    if next <= clock.now {
                        continuation.finish(throwing: HTTPTransportError(.stalled(after: idle), url: url))
                        pump.cancel()
                        return
                    }
                    deadline = next
                }
            }
        }
        continuation.onTermination = { _ in
            pump.cancel()
            watchdog?.cancel()
        }
        return (output, continuation)
    }

    /// A failure of `handle`'s, carried through the pump unchanged.
    private struct HandlerFailure: Error {
        var error: any Error
    }

    /// The pump of a delivery: reads `upstream` and hands each chunk to `handle`, with a
    /// watchdog that counts only the time spent waiting for the transport.
    private static func delivery<C: Clock>(
        _ upstream: HTTPBodyChunks, to handle: @escaping @Sendable (Data) async throws -> Bool, idle: Duration?,
        clock: C, url: URL?
    ) -> Delivery where C.Duration == Duration {
        // Since when the pump has waited for the transport; `nil` while `handle` works.
        let waitingSince = Locked<C.Instant?>(clock.now)
        let stalled = Locked(false)
        let pump = Task<Void, any Error> {
            var iterator = upstream.makeAsyncIterator()
            do {
                while true {
                    let now = clock.now
                    waitingSince.withLock { $0 = now }
                    guard let chunk = try await iterator.next() else { break }
                    waitingSince.withLock { $0 = nil }
                    let goOn: Bool
                    do {
                        goOn = try await handle(chunk)
                    } catch {
                        throw HandlerFailure(error: error)
                    }
                    guard goOn else { return }
                }
            } catch let failure as HandlerFailure {
                throw failure.error
            } catch {
                if let idle, stalled.current { throw HTTPTransportError(.stalled(after: idle), url: url) }
                throw HTTPResponseBody.typed(error, url: url)
            }
            // A stream whose reader is cancelled ends quietly: say why instead.
            if let idle, stalled.current { throw HTTPTransportError(.stalled(after: idle), url: url) }
            if Task.isCancelled { throw HTTPTransportError(.cancelled, url: url) }
        }
        let watchdog = idle.map { idle in
            Task {
                var deadline = (waitingSince.current ?? clock.now).advanced(by: idle)
                while true {
                    do {
                        try await clock.sleep(until: deadline, tolerance: nil)
                    } catch {
                        return
                    }
                    guard let since = waitingSince.current else {
                        // Handing a chunk on, not waiting: looked at again a whole bound later.
                        deadline = clock.now.advanced(by: idle)
                        continue
                    }
                    let next = since.advanced(by: idle)
                    if next <= clock.now {
                        stalled.withLock { $0 = true }
                        pump.cancel()
                        return
                    }
                    deadline = next
                }
            }
        }
        return Delivery(pump: pump, watchdog: watchdog)
    }

    /// A delivery's tasks.
    private struct Delivery: Sendable {
        var pump: Task<Void, any Error>
        var watchdog: Task<Void, Never>?

        func cancel() {
            pump.cancel()
            watchdog?.cancel()
        }
    }
}

/// Calls its closure when released: an iteration that ends early stops its transfer.
private final class StopOnRelease: Sendable {
    private let stop: @Sendable () -> Void

    init(_ stop: @escaping @Sendable () -> Void) {
        self.stop = stop
    }

    deinit {
        stop()
    }
}

extension HTTPTransport {
    /// Sends `request` and reads a successful body of at most `limit` bytes as it streams,
    /// within `timeout` for the whole exchange: ``send(_:timeout:on:allowing:)`` with a cap
    /// on the body that is enforced before the bytes past it are held.
    ///
    /// The body of a response whose status is not 2xx is not read (its transfer is stopped)
    /// and comes back empty: the status is what the caller acts on.
    ///
    /// - Throws: ``HTTPTransportError``; of kind ``HTTPTransportError/Kind/bodyTooLarge(limit:)``
    ///   past the limit, ``HTTPTransportError/Kind/timedOut(after:)`` past the timeout.
    public func send<C: Clock>(
        _ request: URLRequest, timeout: Duration?, limit: Int, on clock: C,
        allowing schemes: Set<String> = ["http", "https"]
    ) async throws(HTTPTransportError) -> (Data, URLResponse) where C.Duration == Duration {
        try await typedDeadline(
            timeout, on: clock, url: request.url, expired: HTTPTransportError.Kind.timedOut(after:)
        ) {
            let streamed = try await self.stream(request, idleTimeout: nil, on: clock, allowing: schemes)
            return (try await streamed.successfulBody(upTo: limit), streamed.response)
        }
    }
}
