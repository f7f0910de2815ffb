public import HTTPSupport

/// The slider session's server, as the flow needs it: start a session, then submit choices.
///
/// ``HTTPSliderService`` talks to the real REST API; ``SliderReferenceServer`` simulates it in
/// process (for tests and SwiftUI previews); an app may supply its own.
public protocol SliderService: Sendable {
    /// Starts a new session and returns its first step.
    ///
    /// - Throws: ``SliderServiceError`` saying what failed.
    func start() async throws(SliderServiceError) -> SliderReply

    /// Submits the chosen tick index for the current step and returns the next step, or the end.
    ///
    /// - Parameters:
    ///   - sessionID: The session from the previous reply.
    ///   - choice: The index of the chosen tick, from 0.
    /// - Throws: ``SliderServiceError`` saying what failed.
    func next(sessionID: Int, choice: Int) async throws(SliderServiceError) -> SliderReply
}

/// Why a slider request failed, in terms an app can act on.
public enum SliderServiceError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The request did not finish within the configured timeout.
    case timedOut
    /// The network failed (no connection, connection lost, DNS…), with the transport's own error.
    case transport(HTTPTransportError)
    /// The server answered with a status other than 2xx.
    case httpStatus(Int, bodyPreview: String)
    /// The server answered 2xx with its own error body.
    case server(message: String)
    /// The body could not be decoded.
    case decoding(SliderDecodingError)
    /// The request was cancelled.
    case cancelled

    /// A sentence for logs, saying what failed.
    public var description: String {
        switch self {
        case .timedOut: "The server did not answer in time"
        case .transport(let error): "The network failed: \(error)"
        case .httpStatus(let status, let preview): "The server answered HTTP \(status): \(preview)"
        case .server(let message): "The server reported an error: \(message)"
        case .decoding(let error): error.description
        case .cancelled: "The request was cancelled"
        }
    }

    /// Whether retrying the same request may succeed: timeouts, network failures, 5xx and 429.
    public var isTransient: Bool {
        switch self {
        case .timedOut, .transport: true
        case .httpStatus(let status, _): status >= 500 || status == 429 || status == 408
        case .server, .decoding, .cancelled: false
        }
    }
}
