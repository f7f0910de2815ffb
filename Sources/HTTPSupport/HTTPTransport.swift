public import Foundation

#if canImport(FoundationNetworking)
    public import FoundationNetworking
#endif

/// Sends an HTTP request and returns the body and response: the one seam between MediaCore and
/// the network.
///
/// Every networked module (catalogs, thumbnails, downloads, the slider service) takes an
/// `HTTPTransport`. ``URLSessionTransport`` is the default; a test passes a fake, and an app may
/// pass its own client.
///
/// It is a small `Sendable` protocol rather than a function type because a protocol can grow
/// without breaking its conformers (a requirement added later comes with a default
/// implementation, as a streaming variant would), because a conforming type can carry state that
/// a reader finds by name (a session, a log of requests), and because one spelling serves every
/// module's initializer. A closure still fits through ``AnyHTTPTransport``.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the body and the response.
    ///
    /// A conformer must stop promptly when the calling task is cancelled, and should then throw
    /// `CancellationError` (or `URLError(.cancelled)`).
    func send(_ request: URLRequest) async throws -> (Data, URLResponse)

    /// Sends `request` and returns when the response's headers arrive, with the body as chunks
    /// that arrive after it.
    ///
    /// Ending the iteration of the chunks early, dropping them, or cancelling the calling task
    /// must cancel the transfer. The default implementation sends the request with
    /// ``send(_:)`` and yields the whole body as one chunk.
    func stream(_ request: URLRequest) async throws -> (URLResponse, HTTPBodyChunks)
}

/// A transport made from a function shaped like `URLSession.data(for:)`.
///
/// <!-- example: any-transport -->
/// ```swift
/// let transport = AnyHTTPTransport { request in try await myClient.data(for: request) }
/// ```
public struct AnyHTTPTransport: HTTPTransport {
    private let body: @Sendable (URLRequest) async throws -> (Data, URLResponse)

    /// Creates a transport that sends every request through `send`.
    public init(_ send: @escaping @Sendable (URLRequest) async throws -> (Data, URLResponse)) {
        body = send
    }

    /// Sends `request` through the function this transport was made from.
    public func send(_ request: URLRequest) async throws -> (Data, URLResponse) {
        try await body(request)
    }
}

/// Why a request sent through ``HTTPTransport/send(_:timeout:on:allowing:)`` returned no response.
///
/// It keeps the transport's own `URLError` when there was one, so an app can tell "offline"
/// from "connection lost" without parsing a message.
public struct HTTPTransportError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Hashable, Sendable {
        /// The whole response had not arrived within the timeout.
        case timedOut(after: Duration)
        /// No byte arrived for this long (the headers, or the next chunk of a streamed body):
        /// the idle timeout of ``HTTPTransport/stream(_:idleTimeout:on:allowing:)``.
        case stalled(after: Duration)
        /// The body was longer than the `limit` in bytes that its reader accepts; the transfer
        /// was stopped there.
        case bodyTooLarge(limit: Int)
        /// The transport failed with this `URLError` (no connection, connection lost, DNS…).
        case network(URLError)
        /// A custom transport failed with an error that is not a `URLError`; its description.
        case other(String)
        /// The calling task was cancelled. A transfer that the transport or the system cancelled
        /// while the caller goes on (`URLError.cancelled` from an invalidated session, say) is
        /// ``network(_:)`` instead, and transient.
        case cancelled
        /// The request's URL has a scheme that is not allowed (only `http` and `https`, unless
        /// the caller opts in to others): the request was not sent.
        case disallowedScheme(String)
        /// An `http` or `https` request was answered with a response that is not an HTTP
        /// response, so it has no status to trust.
        case notHTTP
    }

    /// What went wrong.
    public var kind: Kind
    /// The request's URL.
    public var url: URL?

    /// Creates an error.
    public init(_ kind: Kind, url: URL?) {
        self.kind = kind
        self.url = url
    }

    /// The `URLError` code, when the transport reported one (`timedOut` for a deadline).
    public var code: URLError.Code? {
        switch kind {
        case .timedOut, .stalled: .timedOut
        case .network(let error): error.code
        case .other, .cancelled, .disallowedScheme, .notHTTP, .bodyTooLarge: nil
        }
    }

    /// Whether the same request may succeed if sent again: timeouts, stalls, and network
    /// failures that come and go (no connection, a lost connection, a host not found or not
    /// answering, a bad answer). A failure that sending again cannot change is not: a server
    /// certificate that is untrusted, expired or not yet valid, a client certificate refused or
    /// required, a TLS handshake that failed, App Transport Security, a malformed or unsupported
    /// URL, too many redirects, authentication required or cancelled, cellular data not allowed,
    /// a body that cannot be decoded.
    public var isTransient: Bool {
        switch kind {
        case .timedOut, .stalled, .other: true
        case .network(let error): !Self.permanentCodes.contains(error.code)
        case .cancelled, .disallowedScheme, .notHTTP, .bodyTooLarge: false
        }
    }

    /// Whether the failure says the device has no working connection (rather than that a server
    /// failed): not connected, the connection lost, no route to the host or its name, a
    /// deadline or a stall, cellular data or roaming not allowed. A screen shows it as
    /// "offline".
    public var isConnectivity: Bool {
        switch kind {
        case .timedOut, .stalled: true
        case .network(let error): Self.connectivityCodes.contains(error.code)
        case .other, .cancelled, .disallowedScheme, .notHTTP, .bodyTooLarge: false
        }
    }

    /// Whether the failure asks for credentials or a client certificate the request did not
    /// carry (or the learner refused): a screen shows it as "sign in again".
    public var isAuthenticationFailure: Bool {
        guard case .network(let error) = kind else { return false }
        return Self.authenticationCodes.contains(error.code)
    }

    /// `URLError` codes that ask for credentials or a client certificate.
    static let authenticationCodes: Set<URLError.Code> = [
        .userAuthenticationRequired, .userCancelledAuthentication, .clientCertificateRequired,
        .clientCertificateRejected,
    ]

    /// `URLError` codes that sending the request again cannot change.
    static let permanentCodes: Set<URLError.Code> = [
        .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateNotYetValid,
        .serverCertificateHasUnknownRoot, .clientCertificateRejected, .clientCertificateRequired,
        .secureConnectionFailed, .appTransportSecurityRequiresSecureConnection, .badURL, .unsupportedURL,
        .httpTooManyRedirects, .redirectToNonExistentLocation, .userAuthenticationRequired,
        .userCancelledAuthentication, .dataNotAllowed, .cannotDecodeContentData, .cannotDecodeRawData,
        .fileDoesNotExist, .fileIsDirectory, .noPermissionsToReadFile, .dataLengthExceedsMaximum,
    ]

    /// `URLError` codes that mean the device has no working connection.
    static let connectivityCodes: Set<URLError.Code> = [
        .notConnectedToInternet, .networkConnectionLost, .cannotFindHost, .cannotConnectToHost, .dnsLookupFailed,
        .timedOut, .dataNotAllowed, .internationalRoamingOff, .callIsActive, .cannotLoadFromNetwork,
    ]

    /// What went wrong, without the URL (for a caller that names the place itself).
    public var reason: String {
        switch kind {
        case .timedOut(let after): "no complete answer within \(after)"
        case .stalled(let after): "no bytes arrived for \(after)"
        case .bodyTooLarge(let limit): "the body is longer than the \(limit) bytes accepted"
        case .network(let error): "network failure \(error.code.rawValue): \(error.localizedDescription)"
        case .other(let message): message
        case .cancelled: "cancelled"
        case .disallowedScheme(let scheme): "the scheme '\(scheme)' is not fetched"
        case .notHTTP: "the answer is not an HTTP response"
        }
    }

    /// A sentence naming the URL and what went wrong.
    public var description: String {
        "\(url?.absoluteString ?? "a request without a URL"): \(reason)"
    }

    /// Types whatever a transport threw for `url`, in the task that was waiting for it.
    package static func from(_ error: any Error, url: URL?) -> HTTPTransportError {
        switch error {
        case let error as HTTPTransportError: error
        // Only the caller's own cancellation is a cancel. A transfer cancelled while the caller
        // goes on (the session invalidated, the system reclaiming it) is a network failure:
        // transient, so a download keeps its bytes and retries instead of deleting them.
        case is CancellationError where Task.isCancelled: HTTPTransportError(.cancelled, url: url)
        case let error as URLError where error.code == .cancelled && Task.isCancelled:
            HTTPTransportError(.cancelled, url: url)
        case is CancellationError: HTTPTransportError(.network(URLError(.cancelled)), url: url)
        case let error as URLError: HTTPTransportError(.network(error), url: url)
        default: HTTPTransportError(.other(String(describing: error)), url: url)
        }
    }
}

/// The URL schemes MediaCore fetches unless a caller opts in to more.
///
/// `URLSession` also serves `file:` URLs; a catalog or playlist from a server could name one and
/// have the app copy a local file into its own folders, so no other scheme is fetched by default.
let httpSchemes: Set<String> = ["http", "https"]

extension HTTPTransport {
    /// Sends `request`, giving up when the whole response has not arrived within `timeout` on
    /// `clock`, and types every failure.
    ///
    /// This is the one place MediaCore applies a request deadline and checks what it may fetch:
    /// the timeout is measured on the injected clock, so a test drives it with a manual clock
    /// and never waits for real time; a URL whose scheme is not in `schemes` is refused before
    /// it is sent; and an `http` or `https` request answered by anything but an
    /// `HTTPURLResponse` is an error, never taken for a `200 OK`.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - timeout: The longest the request may take, body included; `nil` leaves timing to the
    ///     transport.
    ///   - clock: The clock the timeout is measured on.
    ///   - schemes: The schemes that may be fetched, lowercased: `http` and `https` by default.
    ///     Other schemes (`file`, say) only when the caller opts in.
    /// - Throws: ``HTTPTransportError``: ``HTTPTransportError/Kind/timedOut(after:)`` when the
    ///   deadline passes, ``HTTPTransportError/Kind/cancelled`` when the calling task is
    ///   cancelled, ``HTTPTransportError/Kind/disallowedScheme(_:)`` or
    ///   ``HTTPTransportError/Kind/notHTTP`` as above, and the transport's own failure otherwise.
    public func send<C: Clock>(
        _ request: URLRequest, timeout: Duration?, on clock: C, allowing schemes: Set<String> = ["http", "https"]
    ) async throws(HTTPTransportError) -> (Data, URLResponse) where C.Duration == Duration {
        let scheme = request.url?.scheme?.lowercased() ?? ""
        guard schemes.contains(scheme) else { throw HTTPTransportError(.disallowedScheme(scheme), url: request.url) }
        let answer = try await typedDeadline(
            timeout, on: clock, url: request.url, expired: HTTPTransportError.Kind.timedOut(after:)
        ) {
            try await self.send(request)
        }
        if httpSchemes.contains(scheme), !(answer.1 is HTTPURLResponse) {
            throw HTTPTransportError(.notHTTP, url: request.url)
        }
        return answer
    }
}

/// Runs `operation`, cancelling it if it has not finished within `timeout` on `clock` (no limit
/// when `nil`), and types every failure for `url`: the deadline as `expired(timeout)`, the
/// calling task's cancellation as ``HTTPTransportError/Kind/cancelled``, anything else with
/// ``HTTPTransportError/from(_:url:)``.
func typedDeadline<C: Clock, Value: Sendable>(
    _ timeout: Duration?, on clock: C, url: URL?, expired: (Duration) -> HTTPTransportError.Kind,
    operation: @escaping @Sendable () async throws -> Value
) async throws(HTTPTransportError) -> Value where C.Duration == Duration {
    do {
        guard let timeout else { return try await operation() }
        return try await withDeadline(max(timeout, .zero), on: clock, operation: operation)
    } catch let error as DeadlineError {
        if Task.isCancelled { throw HTTPTransportError(.cancelled, url: url) }
        throw HTTPTransportError(expired(error.timeout), url: url)
    } catch {
        throw .from(error, url: url)
    }
}
