public import Foundation
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

extension SliderService {
    /// Submits `choice`, an index into `step`'s ticks, checking it first: a choice outside the
    /// ticks is a ``SliderServiceError/Kind/invalidChoice(_:tickCount:)`` and no request is made.
    ///
    /// - Throws: ``SliderServiceError`` saying what failed.
    public func next(after step: SliderStep, choice: Int) async throws(SliderServiceError) -> SliderReply {
        guard step.ticks.indices.contains(choice) else {
            throw SliderServiceError(.invalidChoice(choice, tickCount: step.ticks.count))
        }
        return try await next(sessionID: step.sessionID, choice: choice)
    }
}

/// Why a slider request failed, in terms an app can act on, and which endpoint it was.
public struct SliderServiceError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Hashable, Sendable {
        /// The request did not finish within the configured timeout.
        case timedOut
        /// The network failed (no connection, connection lost, DNS…), with the transport's own
        /// error.
        case transport(HTTPTransportError)
        /// The server answered with a status other than 2xx that is not the client's mistake (5xx,
        /// 408, 429, and any other not below); the body's first bytes.
        case httpStatus(Int, bodyPreview: String)
        /// The server refused the request as the client's mistake (a 4xx other than 408 and 429,
        /// RFC 9110 §15.5): sending it again will not help. The body's first bytes.
        case requestRejected(Int, bodyPreview: String)
        /// A choice that is not an index of the step's ticks (`tickCount` 0 for a step without
        /// ticks, `nil` when the ticks are not known); no request was made.
        case invalidChoice(Int, tickCount: Int?)
        /// The server answered 2xx with its own error body.
        case server(message: String)
        /// The body could not be decoded.
        case decoding(SliderDecodingError)
        /// The request was cancelled.
        case cancelled
    }

    /// What went wrong.
    public var kind: Kind
    /// The endpoint's URL, when a request was made.
    public var url: URL?
    /// The wait the server asked for with `Retry-After` (RFC 9110 §10.2.3), when it did.
    public var retryAfter: Duration?

    /// Creates an error.
    public init(_ kind: Kind, url: URL? = nil) {
        self.kind = kind
        self.url = url
    }

    /// A sentence for logs, saying what failed.
    public var description: String {
        let place = url.map { "\($0.absoluteString): " } ?? ""
        return switch kind {
        case .timedOut: place + "the server did not answer in time"
        case .transport(let error): place + "the network failed: \(error)"
        case .httpStatus(let status, let preview): place + "the server answered HTTP \(status): \(preview)"
        case .requestRejected(let status, let preview) where status == 404 || status == 410:
            place
                + "the server does not know what was asked for, such as an expired session (HTTP \(status)): \(preview)"
        case .requestRejected(let status, let preview) where status == 401 || status == 403:
            place + "the server refused access (HTTP \(status)): \(preview)"
        case .requestRejected(let status, let preview):
            place + "the server refused the request as malformed (HTTP \(status)): \(preview)"
        case .invalidChoice(let choice, let count?):
            place + "choice \(choice) is not one of the step's \(count) ticks; nothing was sent"
        case .invalidChoice(let choice, nil): place + "choice \(choice) is not a tick index; nothing was sent"
        case .server(let message): place + "the server reported an error: \(message)"
        case .decoding(let error): place + error.description
        case .cancelled: place + "the request was cancelled"
        }
    }

    /// Whether retrying the same request may succeed: timeouts, network failures, 5xx and 429.
    public var isTransient: Bool {
        switch kind {
        case .timedOut, .transport: true
        case .httpStatus(let status, _): status >= 500 || status == 429 || status == 408
        case .server, .decoding, .cancelled, .requestRejected, .invalidChoice: false
        }
    }
}
