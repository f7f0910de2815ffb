import Foundation
import HTTPSupport
import SliderFlow
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

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
            baseURL: URL(string: "https://\(host)") ?? URL(fileURLWithPath: "/"), timeout: loopbackDeadline,
            startRetry: .none,
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
                SliderServiceError.Kind.httpStatus(500, bodyPreview: "down")
            ),
            (.respond(status: 200, body: Data(#"{"error":"nope"}"#.utf8)), .server(message: "nope")),
            (.respond(status: 200, body: Data("{".utf8)), .decoding(SliderDecodingError(.notJSON, preview: "{"))),
            (.fail(.timedOut), .timedOut),
        ]
    )
    func errors(answer: StubURLProtocol.Answer, expected: SliderServiceError.Kind) async {
        let host = "errors-\(UUID().uuidString.prefix(8).lowercased()).test"
        let service = service(host: host) { _ in answer }
        let url = URL(string: "https://\(host)/test_next")
        await #expect(throws: SliderServiceError(expected, url: url)) {
            try await service.next(sessionID: 1, choice: 1)
        }
    }

    @Test("a network failure maps to a transport error with its code")
    func networkFailure() async {
        let service = service(host: "offline.test") { _ in .fail(.notConnectedToInternet) }
        do {
            _ = try await service.start()
            Issue.record("no error")
        } catch {
            guard case .transport(let failure) = error.kind else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(failure.code == .notConnectedToInternet)
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
        await #expect(throws: SliderServiceError(.cancelled, url: URL(string: "https://hang.test/test_start"))) {
            try await request.value
        }
    }
}
