import Foundation
import HTTPSupport
import SliderFlow
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A `URLProtocol` that answers from a handler the test installs, so a real `URLSession` runs
/// the whole request: the service's request building, the session, and the decoding.
final class StubURLProtocol: URLProtocol {
    enum Answer: Sendable {
        case respond(status: Int, body: Data)
        case fail(URLError.Code)
        /// Never answer; only a cancellation ends the request.
        case hang
    }

    private static let handlers = LockedBox<[String: @Sendable (URLRequest) -> Answer]>([:])
    private static let started = LockedBox<[String: Int]>([:])

    static func install(host: String, _ handler: @escaping @Sendable (URLRequest) -> Answer) {
        handlers.update { $0[host] = handler }
    }

    static func startedRequests(host: String) -> Int {
        started.update { $0[host, default: 0] }
    }

    override class func canInit(with request: URLRequest) -> Bool { true }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        let host = request.url?.host ?? ""
        Self.started.update { $0[host, default: 0] += 1 }
        guard let handler = Self.handlers.update({ $0[host] }) else {
            client?.urlProtocol(self, didFailWithError: URLError(.unsupportedURL))
            return
        }
        // URLSession hands URLProtocol the body as a stream on some platforms.
        var request = request
        if request.httpBody == nil, let stream = request.httpBodyStream {
            request.httpBody = Self.read(stream)
        }
        switch handler(request) {
        case .respond(let status, let body):
            let url = request.url ?? URL(fileURLWithPath: "/")
            if let response = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: nil)
            {
                client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
            }
            client?.urlProtocol(self, didLoad: body)
            client?.urlProtocolDidFinishLoading(self)
        case .fail(let code):
            client?.urlProtocol(self, didFailWithError: URLError(code))
        case .hang:
            break
        }
    }

    override func stopLoading() {}

    private static func read(_ stream: InputStream) -> Data {
        stream.open()
        defer { stream.close() }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 1_024)
        while stream.hasBytesAvailable {
            let count = stream.read(&buffer, maxLength: buffer.count)
            guard count > 0 else { break }
            data.append(buffer, count: count)
        }
        return data
    }
}

/// A value behind a lock, for the stub's shared tables.
final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func update<Result>(_ body: (inout Value) -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}

@Suite("HTTPSliderService over URLSession")
struct URLSessionSliderServiceTests {
    /// Each test uses its own host, so tests running in parallel never share a handler.
    func service(host: String, handler: @escaping @Sendable (URLRequest) -> StubURLProtocol.Answer)
        -> HTTPSliderService<ContinuousClock>
    {
        StubURLProtocol.install(host: host, handler)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [StubURLProtocol.self]
        return HTTPSliderService(
            baseURL: URL(string: "https://\(host)") ?? URL(fileURLWithPath: "/"), startRetry: .none,
            session: URLSession(configuration: configuration))
    }

    @Test("a whole session through a real URLSession, with either body encoding", arguments: [false, true])
    func session(doubleEncoded: Bool) async throws {
        let fixtures = FixtureLoader(bundle: .module)
        let suffix = doubleEncoded ? ".double-encoded.json" : ".json"
        let start = try fixtures.data("test_start-response" + suffix)
        let next = try fixtures.data("test_next-complete" + suffix)
        let seen = LockedBox<[String]>([])
        let service = service(host: "session-\(doubleEncoded).test") { request in
            let body = request.httpBody.map { String(decoding: $0, as: UTF8.self) } ?? ""
            seen.update { $0.append("\(request.httpMethod ?? "") \(request.url?.path ?? "") \(body)") }
            return .respond(status: 200, body: request.url?.lastPathComponent == "test_start" ? start : next)
        }
        guard case .step(let step) = try await service.start() else {
            Issue.record("no step")
            return
        }
        #expect(step.ticks.count == 15)
        #expect(try await service.next(sessionID: step.sessionID, choice: 8) == .complete(sessionID: 3448))
        #expect(
            seen.update { $0 } == [
                #"POST /test_start {"choice":"start"}"#, #"POST /test_next {"session_id":3448,"choice":"8"}"#,
            ])
    }

    @Test(
        "maps every failure to its typed error",
        arguments: [
            (
                StubURLProtocol.Answer.respond(status: 500, body: Data("down".utf8)),
                SliderServiceError.httpStatus(500, bodyPreview: "down")
            ),
            (.respond(status: 200, body: Data(#"{"error":"nope"}"#.utf8)), .server(message: "nope")),
            (.respond(status: 200, body: Data("{".utf8)), .decoding(.notJSON(preview: "{"))),
            (.fail(.timedOut), .timedOut),
        ]
    )
    func errors(answer: StubURLProtocol.Answer, expected: SliderServiceError) async {
        let host = "errors-\(UUID().uuidString.prefix(8).lowercased()).test"
        let service = service(host: host) { _ in answer }
        await #expect(throws: expected) { try await service.next(sessionID: 1, choice: 1) }
    }

    @Test("a network failure maps to a transport error with its code")
    func networkFailure() async {
        let service = service(host: "offline.test") { _ in .fail(.notConnectedToInternet) }
        do {
            _ = try await service.start()
            Issue.record("no error")
        } catch {
            guard case .transport(let code, _) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(code == URLError.Code.notConnectedToInternet.rawValue)
        }
    }

    @Test("cancelling the calling task cancels the URLSession task")
    func cancellation() async throws {
        let host = "hang.test"
        let service = service(host: host) { _ in .hang }
        let request = Task { try await service.start() }
        // Wait (by yielding, not sleeping) until the session has really started the request.
        while StubURLProtocol.startedRequests(host: host) == 0 {
            await Task.yield()
        }
        request.cancel()
        await #expect(throws: SliderServiceError.cancelled) { try await request.value }
    }
}
