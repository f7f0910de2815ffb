public import Foundation
public import HTTPSupport

#if canImport(FoundationNetworking)
    public import FoundationNetworking
#endif

/// An HTTP server in memory: canned responses, scripted latency and failures, no network.
///
/// Register a script of replies per route with ``stub(_:method:replies:)``; each request to that
/// route takes the next reply, and the last one repeats. Pass ``send(_:)`` wherever MediaCore
/// takes an HTTP transport function. Latency is slept on the injected clock, so a test drives
/// it with a ``ManualClock``; a cancelled request stops waiting at once.
///
/// The transport records every request and the highest number of requests it served at once,
/// so a test can check what a client sent and how many transfers it ran in parallel.
public final class InMemoryHTTPTransport<C: Clock>: HTTPTransport where C.Duration == Duration {
    /// One scripted answer to a request.
    public enum Reply: Sendable {
        /// A complete HTTP response after `latency`.
        case response(status: Int, headers: [String: String] = [:], body: Data = Data(), latency: Duration = .zero)
        /// A resource that honours single `Range: bytes=a-b` headers with `206 Partial Content`,
        /// answers `416` to an unsatisfiable range, and `200` with the whole body otherwise.
        case resource(Data, headers: [String: String] = [:], latency: Duration = .zero)
        /// A transport failure (for example `URLError(.timedOut)`) after `latency`.
        case failure(any Error & Sendable, latency: Duration = .zero)
        /// A reply computed from the request, for tests that check what was sent.
        case handler(@Sendable (URLRequest) throws -> Reply)
        /// A response whose headers arrive at once and whose body arrives as `chunks`, each
        /// after `gap` on the clock; with `stallsAtEnd`, the body then never ends (until the
        /// reader cancels). Through ``send(_:)`` the chunks are gathered into one body.
        case chunked(
            status: Int, headers: [String: String] = [:], chunks: [Data], gap: Duration, stallsAtEnd: Bool = false)
    }

    /// Why the transport could not answer a request.
    public enum TransportError: Error, Equatable, Sendable, CustomStringConvertible {
        /// No route matches the request's method and URL.
        case noRoute(method: String, url: String)
        /// The request has no URL.
        case missingURL

        /// A sentence naming the request that had no route.
        public var description: String {
            switch self {
            case .noRoute(let method, let url): "No in-memory route for \(method) \(url)"
            case .missingURL: "The request has no URL"
            }
        }
    }

    private struct RouteKey: Hashable {
        let method: String
        let url: String
    }

    private struct State {
        var scripts: [RouteKey: [Reply]] = [:]
        var requests: [URLRequest] = []
        var inFlight = 0
        var maximumInFlight = 0
        var abandonedStreams = 0
        var abandonWaiters: [(id: UUID, count: Int, continuation: CheckedContinuation<Bool, Never>)] = []
    }

    private let clock: C
    private let state = LockedState(State())

    /// Creates a transport that sleeps its scripted latencies on `clock`.
    public init(clock: C) {
        self.clock = clock
    }

    /// Sets the replies for requests with `method` to `url`, replacing any earlier script.
    ///
    /// Requests take the replies in order; once one is left, it answers every later request.
    /// The URL must match exactly, query included.
    public func stub(_ url: URL, method: String = "GET", replies: [Reply]) {
        state.withLock { $0.scripts[RouteKey(method: method.uppercased(), url: url.absoluteString)] = replies }
    }

    /// Sets one reply for every request with `method` to `url`.
    public func stub(_ url: URL, method: String = "GET", reply: Reply) {
        stub(url, method: method, replies: [reply])
    }

    /// Every request received so far, in arrival order.
    public var requests: [URLRequest] {
        state.withLock { $0.requests }
    }

    /// The largest number of requests that were in progress at the same time.
    public var maximumConcurrentRequests: Int {
        state.withLock { $0.maximumInFlight }
    }

    /// The number of streamed bodies whose reader stopped (ended early, dropped or cancelled)
    /// before their last chunk: transfers the client cancelled.
    public var abandonedStreams: Int {
        state.withLock { $0.abandonedStreams }
    }

    /// Suspends until `count` streamed bodies have been abandoned (see ``abandonedStreams``):
    /// an event, not a poll.
    ///
    /// - Returns: `false` only when the whole test process stood still first
    ///   (``ProcessStandstill``): a cancel that never comes fails the test instead of hanging
    ///   the run.
    @discardableResult
    public func waitForAbandonedStreams(count: Int = 1) async -> Bool {
        let id = UUID()
        let watch = ProcessStandstill.shared.watch { [state] in
            let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
                guard let index = state.abandonWaiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.abandonWaiters.remove(at: index).continuation
            }
            waiter?.resume(returning: false)
        }
        defer { ProcessStandstill.shared.end(watch) }
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let ready = state.withLock { state -> Bool in
                guard state.abandonedStreams < count else { return true }
                state.abandonWaiters.append((id, count, continuation))
                return false
            }
            if ready { continuation.resume(returning: true) }
        }
    }

    /// The number of requests in progress now.
    public var requestsInFlight: Int {
        state.withLock { $0.inFlight }
    }

    /// Answers `request` from its route's script.
    ///
    /// - Throws: ``TransportError`` when no route matches, the scripted failure, or
    ///   `CancellationError` when the calling task is cancelled during the latency.
    public func send(_ request: URLRequest) async throws -> (Data, URLResponse) {
        let (url, reply) = try take(request)
        defer { state.withLock { $0.inFlight -= 1 } }
        return try await answer(request, url: url, with: reply)
    }

    /// Answers `request` from its route's script, its body as it arrives: a
    /// ``Reply/chunked(status:headers:chunks:gap:stallsAtEnd:)`` reply chunk by chunk on the
    /// clock, any other reply as one chunk.
    ///
    /// - Throws: as ``send(_:)`` does, before the headers.
    public func stream(_ request: URLRequest) async throws -> (URLResponse, HTTPBodyChunks) {
        let (url, reply) = try take(request)
        var resolved = reply
        while case .handler(let handler) = resolved { resolved = try handler(request) }
        guard case .chunked(let status, let headers, let chunks, let gap, let stallsAtEnd) = resolved else {
            defer { state.withLock { $0.inFlight -= 1 } }
            let (data, response) = try await answer(request, url: url, with: resolved)
            return (response, .whole(data))
        }
        let response: HTTPURLResponse
        do {
            response = try Self.response(url: url, status: status, headers: headers)
        } catch {
            state.withLock { $0.inFlight -= 1 }
            throw error
        }
        let (body, continuation) = HTTPBodyChunks.makeStream()
        let clock = clock
        let state = state
        let producer = Task {
            defer { state.withLock { $0.inFlight -= 1 } }
            do {
                for chunk in chunks {
                    try await clock.sleep(for: gap)
                    continuation.yield(chunk)
                }
                if stallsAtEnd { try await clock.sleep(for: .seconds(1_000_000_000)) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { termination in
            if case .cancelled = termination {
                let ready = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
                    state.abandonedStreams += 1
                    let count = state.abandonedStreams
                    defer { state.abandonWaiters.removeAll { $0.count <= count } }
                    return state.abandonWaiters.filter { $0.count <= count }.map(\.continuation)
                }
                for waiter in ready { waiter.resume(returning: true) }
            }
            producer.cancel()
        }
        return (response, body)
    }

    /// Records `request` and takes its route's next reply.
    private func take(_ request: URLRequest) throws -> (URL, Reply) {
        guard let url = request.url else { throw TransportError.missingURL }
        let method = (request.httpMethod ?? "GET").uppercased()
        let reply = try state.withLock { state -> Reply in
            state.requests.append(request)
            let key = RouteKey(method: method, url: url.absoluteString)
            guard var script = state.scripts[key], let first = script.first else {
                throw TransportError.noRoute(method: method, url: url.absoluteString)
            }
            if script.count > 1 {
                script.removeFirst()
                state.scripts[key] = script
            }
            state.inFlight += 1
            state.maximumInFlight = max(state.maximumInFlight, state.inFlight)
            return first
        }
        return (url, reply)
    }

    private func answer(_ request: URLRequest, url: URL, with reply: Reply) async throws -> (Data, URLResponse) {
        switch reply {
        case .response(let status, let headers, let body, let latency):
            try await wait(latency)
            return (body, try Self.response(url: url, status: status, headers: headers))
        case .resource(let body, let headers, let latency):
            try await wait(latency)
            return try Self.serve(body, headers: headers, for: request, url: url)
        case .failure(let error, let latency):
            try await wait(latency)
            throw error
        case .handler(let handler):
            return try await answer(request, url: url, with: handler(request))
        case .chunked(let status, let headers, let chunks, let gap, let stallsAtEnd):
            var body = Data()
            for chunk in chunks {
                try await wait(gap)
                body.append(chunk)
            }
            if stallsAtEnd { try await clock.sleep(for: .seconds(1_000_000_000)) }
            return (body, try Self.response(url: url, status: status, headers: headers))
        }
    }

    private func wait(_ latency: Duration) async throws {
        if latency > .zero {
            try await clock.sleep(for: latency)
        } else {
            try Task.checkCancellation()
        }
    }

    private static func response(url: URL, status: Int, headers: [String: String]) throws -> HTTPURLResponse {
        guard
            let response = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)
        else {
            throw URLError(.badServerResponse)
        }
        return response
    }

    private static func serve(_ body: Data, headers: [String: String], for request: URLRequest, url: URL) throws -> (
        Data, URLResponse
    ) {
        guard let header = request.value(forHTTPHeaderField: "Range") else {
            var headers = headers
            headers["Content-Length"] = String(body.count)
            return (body, try response(url: url, status: 200, headers: headers))
        }
        guard let range = ByteRangeHeader(header), let bounds = range.bounds(forLength: body.count) else {
            var headers = headers
            headers["Content-Range"] = "bytes */\(body.count)"
            return (Data(), try response(url: url, status: 416, headers: headers))
        }
        var headers = headers
        headers["Content-Range"] = "bytes \(bounds.lowerBound)-\(bounds.upperBound - 1)/\(body.count)"
        headers["Content-Length"] = String(bounds.count)
        let start = body.startIndex
        return (
            body[(start + bounds.lowerBound)..<(start + bounds.upperBound)],
            try response(url: url, status: 206, headers: headers)
        )
    }
}

/// A single-range `Range: bytes=…` header (RFC 9110 §14.1.2): `a-b`, `a-` or `-suffix`.
struct ByteRangeHeader: Equatable {
    var first: Int?
    var last: Int?

    init?(_ header: String) {
        let trimmed = header.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix("bytes=") else { return nil }
        let spec = trimmed.dropFirst("bytes=".count)
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return nil }
        let firstText = spec[..<dash]
        let lastText = spec[spec.index(after: dash)...]
        first = firstText.isEmpty ? nil : Int(firstText)
        last = lastText.isEmpty ? nil : Int(lastText)
        if first == nil && last == nil { return nil }
        if !firstText.isEmpty && first == nil { return nil }
        if !lastText.isEmpty && last == nil { return nil }
    }

    /// The half-open byte offsets the header selects in a body of `length` bytes, or `nil` when
    /// the range cannot be satisfied.
    func bounds(forLength length: Int) -> Range<Int>? {
        switch (first, last) {
        case (let first?, let last?):
            guard first <= last, first < length else { return nil }
            return first..<min(last + 1, length)
        case (let first?, nil):
            guard first < length else { return nil }
            return first..<length
        case (nil, let suffix?):
            guard suffix > 0, length > 0 else { return nil }
            return max(0, length - suffix)..<length
        case (nil, nil):
            return nil
        }
    }
}
