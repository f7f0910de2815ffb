public import Foundation
public import HTTPSupport

#if canImport(FoundationNetworking)
    public import FoundationNetworking
#endif

/// The slider session's REST API over HTTP.
///
/// `POST {base}/test_start` with `{"choice":"start"}` starts a session; `POST {base}/test_next`
/// with `{"session_id":…,"choice":"…"}` submits a choice. Bodies may come back as JSON or as a
/// JSON string containing JSON (see ``SliderWireFormat``).
///
/// Every request has a timeout measured on the injected clock. Starting a session is safe to
/// repeat, so a transient failure of `test_start` is retried with exponential backoff and jitter;
/// a choice is never retried automatically, because the server may have applied it already.
public struct HTTPSliderService<C: Clock>: SliderService where C.Duration == Duration {
    /// The server's base URL; the endpoints are appended to it.
    public let baseURL: URL
    /// How long one request may take.
    public let timeout: Duration
    /// How `test_start` is retried after a transient failure.
    public let startRetry: RetryPolicy
    private let transport: any HTTPTransport
    private let clock: C
    private let randomUnit: @Sendable () -> Double

    /// Creates a service that sends through `transport` and measures time on `clock`.
    ///
    /// - Parameters:
    ///   - baseURL: The server; `test_start` and `test_next` are appended to it.
    ///   - timeout: The longest one request may take.
    ///   - startRetry: How `test_start` is retried; choices are never retried.
    ///   - clock: Measures timeouts and backoff delays.
    ///   - transport: Sends the requests (`URLSessionTransport` in the convenience initializer).
    public init(
        baseURL: URL,
        timeout: Duration = .seconds(15),
        startRetry: RetryPolicy = RetryPolicy(),
        clock: C,
        transport: any HTTPTransport
    ) {
        self.init(
            baseURL: baseURL, timeout: timeout, startRetry: startRetry, clock: clock,
            randomUnit: { Double.random(in: 0..<1) }, transport: transport)
    }

    /// Creates a service whose backoff jitter comes from `randomUnit` (a number in `0..<1`), so
    /// that the package's tests know every delay.
    package init(
        baseURL: URL,
        timeout: Duration = .seconds(15),
        startRetry: RetryPolicy = RetryPolicy(),
        clock: C,
        randomUnit: @escaping @Sendable () -> Double,
        transport: any HTTPTransport
    ) {
        self.baseURL = baseURL
        self.timeout = timeout
        self.startRetry = startRetry
        self.clock = clock
        self.randomUnit = randomUnit
        self.transport = transport
    }

    /// Starts a session, retrying transient failures as ``startRetry`` says (a `Retry-After`
    /// from the server lengthens the wait).
    public func start() async throws(SliderServiceError) -> SliderReply {
        do {
            return try await startRetry.run(
                on: clock, randomUnit: randomUnit,
                isTransient: { ($0 as? SliderServiceError)?.isTransient == true },
                serverDelay: { ($0 as? SliderServiceError)?.retryAfter },
                operation: { _ in try await send(path: "test_start", body: SliderWireFormat.startRequestBody()) })
        } catch let error as SliderServiceError {
            throw error
        } catch {
            // The only other failure is the backoff sleep, which throws only when cancelled.
            throw SliderServiceError(.cancelled, url: baseURL.appendingPathComponent("test_start"))
        }
    }

    /// Submits a choice once; a failure is reported, never retried behind the caller's back.
    /// A negative choice is refused before any request (``next(after:choice:)`` also checks
    /// it against the step's ticks).
    public func next(sessionID: Int, choice: Int) async throws(SliderServiceError) -> SliderReply {
        guard choice >= 0 else {
            throw SliderServiceError(
                .invalidChoice(choice, tickCount: nil), url: baseURL.appendingPathComponent("test_next"))
        }
        return try await send(
            path: "test_next", body: SliderWireFormat.nextRequestBody(sessionID: sessionID, choice: choice))
    }

    /// Builds the request the service sends to `path` with `body`.
    func request(path: String, body: Data) -> URLRequest {
        var request = URLRequest(url: baseURL.appendingPathComponent(path))
        request.httpMethod = "POST"
        request.httpBody = body
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.timeoutInterval = timeout.secondsValue
        return request
    }

    private func send(path: String, body: Data) async throws(SliderServiceError) -> SliderReply {
        let request = request(path: path, body: body)
        let url = request.url
        let (data, response): (Data, URLResponse)
        do {
            (data, response) = try await transport.send(request, timeout: timeout, on: clock)
        } catch {
            throw SliderServiceError(Self.map(error), url: url)
        }
        if let http = response as? HTTPURLResponse, !(200..<300).contains(http.statusCode) {
            let status = http.statusCode
            // A 4xx (but a timeout or a rate limit) is the client's mistake, not the server's.
            let kind: SliderServiceError.Kind =
                (400..<500).contains(status) && status != 408 && status != 429
                ? .requestRejected(status, bodyPreview: bodyPreview(data))
                : .httpStatus(status, bodyPreview: bodyPreview(data))
            var error = SliderServiceError(kind, url: url)
            error.retryAfter = http.retryAfter
            throw error
        }
        let decoded: SliderBody
        do {
            decoded = try SliderWireFormat.decode(data)
        } catch {
            throw SliderServiceError(.decoding(error), url: url)
        }
        switch decoded {
        case .reply(let reply): return reply
        case .error(let message): throw SliderServiceError(.server(message: message), url: url)
        }
    }

    /// Maps a transport failure to the kind of the service's error.
    static func map(_ error: HTTPTransportError) -> SliderServiceError.Kind {
        switch error.kind {
        case .cancelled: .cancelled
        case .timedOut, .stalled: .timedOut
        case .network(let underlying) where underlying.code == .timedOut: .timedOut
        case .network, .other, .disallowedScheme, .notHTTP, .bodyTooLarge: .transport(error)
        }
    }
}

extension HTTPSliderService where C == ContinuousClock {
    /// Creates a service over `URLSession` that measures time on the continuous clock.
    ///
    /// - Parameters:
    ///   - baseURL: The server; `test_start` and `test_next` are appended to it.
    ///   - timeout: The longest one request may take.
    ///   - startRetry: How `test_start` is retried; choices are never retried.
    ///   - session: The session requests go through.
    public init(
        baseURL: URL,
        timeout: Duration = .seconds(15),
        startRetry: RetryPolicy = RetryPolicy(),
        session: URLSession = .shared
    ) {
        self.init(
            baseURL: baseURL, timeout: timeout, startRetry: startRetry, clock: ContinuousClock(),
            transport: URLSessionTransport(session: session))
    }
}
