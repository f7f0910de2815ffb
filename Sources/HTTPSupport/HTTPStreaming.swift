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
public struct HTTPResponseBody: AsyncSequence, Sendable {
    /// A chunk of the body.
    public typealias Element = Data

    private let chunks: HTTPBodyChunks
    private let url: URL?
    private let stop: @Sendable () -> Void

    /// A body that forwards `upstream`, failing with ``HTTPTransportError/Kind/stalled(after:)``
    /// (and cancelling the transfer) once `idle` passes on `clock` without a chunk.
    ///
    /// A pump task forwards the chunks and notes when each arrived; with an `idle` timeout, a
    /// watchdog sleeps until the last arrival plus `idle` and fails the body if nothing came
    /// meanwhile. The body's end (finished, failed, abandoned, stopped or cancelled) stops both,
    /// and stopping the pump cancels `upstream`, whose transport then cancels the transfer.
    init<C: Clock>(pumping upstream: HTTPBodyChunks, idle: Duration?, on clock: C, url: URL?)
    where C.Duration == Duration {
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
        chunks = output
        self.url = url
        stop = { continuation.finish() }
    }

    /// Stops the transfer: the body ends here, and the transport's task is cancelled.
    ///
    /// Reading stops the same way when an iteration ends early (a `break` out of
    /// `for try await`), when the body is dropped, or when the reading task is cancelled.
    public func cancel() {
        stop()
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
                #if canImport(FoundationNetworking)
                    // After the headers, a transfer that fails with no code of its own ended
                    // before its body did: FoundationNetworking reports libcurl's partial transfer
                    // ("transfer closed with N bytes remaining") as -1. The connection was lost.
                    if let error = error as? URLError, error.code == .unknown {
                        throw HTTPTransportError(
                            .network(URLError(.networkConnectionLost, userInfo: error.userInfo)), url: url)
                    }
                #endif
                throw .from(error, url: url)
            }
            // A stream whose reader is cancelled ends quietly: say so instead.
            if chunk == nil, Task.isCancelled { throw HTTPTransportError(.cancelled, url: url) }
            return chunk
        }
    }

    /// An iterator over the chunks.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: chunks.makeAsyncIterator(), url: url, release: StopOnRelease(stop))
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
