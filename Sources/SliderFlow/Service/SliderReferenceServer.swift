public import Foundation
public import HTTPSupport

#if canImport(FoundationNetworking)
    public import FoundationNetworking
#endif

/// An in-process implementation of the slider REST API, as the API's documentation describes it.
///
/// Pass the server as the transport of an ``HTTPSliderService`` and the whole client runs:
/// request building, body encodings, status handling and decoding, with no network. It keeps
/// sessions, validates requests as the real server should (`choice` must be a string of an
/// index into the step's ticks), answers with JSON objects or double-encoded strings, and
/// injects faults on demand. Tests use it; so can a SwiftUI preview.
public actor SliderReferenceServer: HTTPTransport {
    /// How bodies are written.
    public enum BodyEncoding: Sendable, Hashable {
        /// A JSON object: `{"session_id": 3448, …}`.
        case object
        /// A JSON string containing the object, as the API's documentation prints it: `"{\"session_id\": …}"`.
        case doubleEncoded
    }

    /// A failure to inject into the next request to an endpoint.
    public enum Fault: Sendable, Hashable {
        /// Answer with this HTTP status and an `{"error": …}` body.
        case httpStatus(Int)
        /// Answer 200 with an `{"error": message}` body.
        case errorBody(String)
        /// Fail the transfer with this `URLError` code.
        case transport(URLError.Code)
        /// Answer 200 with these bytes.
        case rawBody(Data)
        /// Answer for another session than the one asked about.
        case wrongSessionID
        /// Wait this long before answering normally (on the server's clock).
        case delay(Duration)
    }

    /// The API's endpoints.
    public enum Endpoint: String, Sendable, Hashable {
        /// `POST /test_start`.
        case start = "test_start"
        /// `POST /test_next`.
        case next = "test_next"
    }

    /// A base URL for an ``HTTPSliderService`` whose transport is a reference server: the server
    /// answers whatever the host, so this one only names it (`.invalid` never resolves, RFC 6761).
    public static let baseURL = URL(string: "https://slider-reference.invalid") ?? URL(fileURLWithPath: "/")

    /// A function returning the ticks for a session's step (counting steps from 1).
    public typealias TickGenerator = @Sendable (_ sessionID: Int, _ step: Int) -> [Double]

    /// Sample ticks like the real API's: fifteen values from -96.33 to -40.31, with a duplicate
    /// and the float noise a server's JSON encoder leaves (`-89.03999999999999`).
    public static let sampleTicks: [Double] = [
        -96.33, -96.33, -93.47, -89.03999999999999, -84.61, -80.18, -75.75, -71.32, -66.89, -62.46, -58.03,
        -53.6, -49.17, -44.74, -40.31,
    ]

    private struct Session {
        var step: Int
        var ticks: [Double]
        var choices: [Int]
        var isComplete: Bool
    }

    private let stepsPerSession: Int
    private let encoding: BodyEncoding
    private let ticks: TickGenerator
    private let sleep: @Sendable (Duration) async throws -> Void
    private var nextSessionID: Int
    private var sessions: [Int: Session] = [:]
    private var faults: [Endpoint: [Fault]] = [:]
    private var requestCount: [Endpoint: Int] = [:]

    /// Creates a server.
    ///
    /// - Parameters:
    ///   - stepsPerSession: How many choices complete a session.
    ///   - firstSessionID: The id of the first session started; later ones count up.
    ///   - encoding: How bodies are written.
    ///   - clock: The clock that ``Fault/delay(_:)`` sleeps on.
    ///   - ticks: The ticks of each step (``sampleTicks`` by default).
    public init(
        stepsPerSession: Int = 3,
        firstSessionID: Int = 3448,
        encoding: BodyEncoding = .doubleEncoded,
        clock: some Clock<Duration> = ContinuousClock(),
        ticks: @escaping TickGenerator = { _, _ in SliderReferenceServer.sampleTicks }
    ) {
        self.stepsPerSession = max(1, stepsPerSession)
        self.nextSessionID = firstSessionID
        self.encoding = encoding
        self.ticks = ticks
        self.sleep = { try await clock.sleep(for: $0) }
    }

    /// Queues `fault` for the next request to `endpoint`; faults apply in the order queued.
    public func inject(_ fault: Fault, on endpoint: Endpoint) {
        faults[endpoint, default: []].append(fault)
    }

    /// The choices a session received so far, as indices.
    public func choices(ofSession sessionID: Int) -> [Int]? {
        sessions[sessionID]?.choices
    }

    /// How many requests reached `endpoint`.
    public func requests(to endpoint: Endpoint) -> Int {
        requestCount[endpoint, default: 0]
    }

    /// Answers an HTTP request as the slider server would.
    ///
    /// - Throws: A `URLError` for an injected transport fault, or `CancellationError` when
    ///   cancelled during an injected delay.
    public func send(_ request: URLRequest) async throws -> (Data, URLResponse) {
        let url = request.url ?? URL(fileURLWithPath: "/")
        guard request.httpMethod == "POST", let endpoint = Endpoint(rawValue: url.lastPathComponent) else {
            return reply(url: url, status: 404, fields: ["error": "No such endpoint"])
        }
        requestCount[endpoint, default: 0] += 1
        var fault = faults[endpoint]?.first
        if fault != nil { faults[endpoint]?.removeFirst() }
        if case .delay(let duration) = fault {
            try await sleep(duration)
            fault = nil
        }
        switch fault {
        case .httpStatus(let status)?:
            return reply(url: url, status: status, fields: ["error": "Injected HTTP \(status)"])
        case .errorBody(let message)?:
            return reply(url: url, status: 200, fields: ["error": message])
        case .transport(let code)?:
            throw URLError(code)
        case .rawBody(let body)?:
            return (body, response(url: url, status: 200))
        case .wrongSessionID?, .delay?, nil:
            break
        }
        let wrongSession = fault == .wrongSessionID
        let body = Self.fields(of: request.httpBody ?? Data())
        switch endpoint {
        case .start: return start(url: url, body: body, wrongSession: wrongSession)
        case .next: return next(url: url, body: body, wrongSession: wrongSession)
        }
    }

    private func start(url: URL, body: [String: JSONValue]?, wrongSession: Bool) -> (Data, URLResponse) {
        guard body?["choice"] == .string("start") else {
            return reply(url: url, status: 400, fields: ["error": #"The body must be {"choice": "start"}"#])
        }
        let sessionID = nextSessionID
        nextSessionID += 1
        let firstTicks = ticks(sessionID, 1)
        sessions[sessionID] = Session(step: 1, ticks: firstTicks, choices: [], isComplete: false)
        return stepReply(url: url, sessionID: wrongSession ? sessionID + 1 : sessionID, step: 1, ticks: firstTicks)
    }

    private func next(url: URL, body: [String: JSONValue]?, wrongSession: Bool) -> (Data, URLResponse) {
        guard let body, let sessionID = body["session_id"].flatMap({ $0.integer }) else {
            return reply(url: url, status: 400, fields: ["error": "The body must carry a session_id"])
        }
        guard var session = sessions[sessionID], !session.isComplete else {
            return reply(url: url, status: 404, fields: ["error": "Unknown or finished session \(sessionID)"])
        }
        guard case .string(let text)? = body["choice"], let choice = Int(text),
            session.ticks.indices.contains(choice)
        else {
            let range = "\"0\"…\"\(session.ticks.count - 1)\""
            return reply(url: url, status: 400, fields: ["error": "choice must be a string in \(range)"])
        }
        session.choices.append(choice)
        let answeredID = wrongSession ? sessionID + 1 : sessionID
        if session.step >= stepsPerSession {
            session.isComplete = true
            sessions[sessionID] = session
            return reply(url: url, status: 200, fields: ["session_id": answeredID, "complete": "true"])
        }
        session.step += 1
        session.ticks = ticks(sessionID, session.step)
        sessions[sessionID] = session
        return stepReply(url: url, sessionID: answeredID, step: session.step, ticks: session.ticks)
    }

    private func stepReply(url: URL, sessionID: Int, step: Int, ticks: [Double]) -> (Data, URLResponse) {
        reply(url: url, status: 200, fields: ["ticks": ticks, "session_id": sessionID, "step_count": step])
    }

    private func reply(url: URL, status: Int, fields: [String: any Sendable]) -> (Data, URLResponse) {
        let object = Self.json(fields)
        let body: String
        switch encoding {
        case .object: body = object
        case .doubleEncoded: body = Self.quoted(object)
        }
        return (Data(body.utf8), response(url: url, status: status))
    }

    private func response(url: URL, status: Int) -> URLResponse {
        HTTPURLResponse(
            url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: ["Content-Type": "application/json"])
            ?? URLResponse(url: url, mimeType: "application/json", expectedContentLength: -1, textEncodingName: nil)
    }

    /// Writes the few value types the server sends as JSON, keys sorted, Python-style spacing
    /// like the real server (`{"a": 1, "b": [1.5, 2]}`).
    static func json(_ fields: [String: any Sendable]) -> String {
        func value(_ value: any Sendable) -> String {
            switch value {
            case let text as String: quoted(text)
            case let number as Int: String(number)
            case let number as Double: String(number)
            case let list as [Double]: "[" + list.map { String($0) }.joined(separator: ", ") + "]"
            default: "null"
            }
        }
        return "{" + fields.keys.sorted().map { "\(quoted($0)): \(value(fields[$0] ?? ""))" }.joined(separator: ", ")
            + "}"
    }

    /// `text` as a JSON string literal.
    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20: result += String(format: "\\u%04x", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    static func fields(of body: Data) -> [String: JSONValue]? {
        guard case .object(let fields)? = try? JSONDecoder().decode(JSONValue.self, from: body) else { return nil }
        return fields
    }
}
