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
    /// The brief's server.
    public static var defaultBaseURL: URL {
        URL(string: "https://iostestserver-su6iqkb5pq-uc.a.run.app") ?? URL(fileURLWithPath: "/")
    }

    /// A function that sends a request and returns the body and response.
    public typealias Transport = @Sendable (URLRequest) async throws -> (Data, URLResponse)

    /// The server's base URL; the endpoints are appended to it.
    public let baseURL: URL
    /// How long one request may take.
    public let timeout: Duration
    /// How `test_start` is retried after a transient failure.
    public let startRetry: RetryPolicy
    private let transport: Transport
    private let clock: C
    private let randomUnit: @Sendable () -> Double

    /// Creates a service that sends through `transport` and measures time on `clock`.
    ///
    /// - Parameters:
    ///   - baseURL: The server (the brief's by default).
    ///   - timeout: The longest one request may take.
    ///   - startRetry: How `test_start` is retried; choices are never retried.
    ///   - clock: Measures timeouts and backoff delays.
    ///   - randomUnit: A random number in `0..<1` for backoff jitter.
    ///   - transport: Sends a request; `URLSession` in the convenience initializer.
    public init(
        baseURL: URL = Self.defaultBaseURL,
        timeout: Duration = .seconds(15),
        startRetry: RetryPolicy = RetryPolicy(),
        clock: C,
        randomUnit: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        transport: @escaping Transport
    ) {
        self.baseURL = baseURL
        self.timeout = timeout
        self.startRetry = startRetry
        self.clock = clock
        self.randomUnit = randomUnit
        self.transport = transport
    }

    /// Starts a session, retrying transient failures as ``startRetry`` says.
    public func start() async throws(SliderServiceError) -> SliderReply {
        var attempt = 1
        while true {
            do {
                return try await send(path: "test_start", body: SliderWireFormat.startRequestBody())
            } catch {
                guard error.isTransient, attempt < startRetry.maximumAttempts else { throw error }
                let delay = startRetry.delay(beforeRetry: attempt, unit: randomUnit())
                do {
                    try await clock.sleep(for: delay)
                } catch {
                    throw .cancelled
                }
                attempt += 1
            }
        }
    }

    /// Submits a choice once; a failure is reported, never retried behind the caller's back.
    public func next(sessionID: Int, choice: Int) async throws(SliderServiceError) -> SliderReply {
        try await send(path: "test_next", body: SliderWireFormat.nextRequestBody(sessionID: sessionID, choice: choice))
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
        let transport = transport
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await withDeadline(timeout, on: clock) { try await transport(request) }
        } catch {
            throw Self.map(error)
        }
        if let http = response as? HTTPURLResponse, !(200..<300).contains(http.statusCode) {
            throw .httpStatus(http.statusCode, bodyPreview: bodyPreview(data))
        }
        let decoded: SliderBody
        do {
            decoded = try SliderWireFormat.decode(data)
        } catch {
            throw .decoding(error)
        }
        switch decoded {
        case .reply(let reply): return reply
        case .error(let message): throw .server(message: message)
        }
    }

    /// Maps whatever the transport threw to the service's error.
    static func map(_ error: any Error) -> SliderServiceError {
        switch error {
        case is CancellationError: return .cancelled
        case is DeadlineError: return .timedOut
        case let error as URLError:
            switch error.code {
            case .cancelled: return .cancelled
            case .timedOut: return .timedOut
            default: return .transport(code: error.code.rawValue, message: error.localizedDescription)
            }
        default:
            return .transport(code: nil, message: String(describing: error))
        }
    }
}

extension HTTPSliderService where C == ContinuousClock {
    /// Creates a service over `URLSession` that measures time on the continuous clock.
    public init(
        baseURL: URL = Self.defaultBaseURL,
        timeout: Duration = .seconds(15),
        startRetry: RetryPolicy = RetryPolicy(),
        session: URLSession = .shared
    ) {
        let transport = URLSessionTransport(session: session)
        self.init(baseURL: baseURL, timeout: timeout, startRetry: startRetry, clock: ContinuousClock()) {
            try await transport.send($0)
        }
    }
}
