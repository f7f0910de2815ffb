import Foundation
import HTTPSupport
import SliderFlow
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("HTTPSliderService")
struct HTTPSliderServiceTests {
    let base = URL(literal: "https://slider.example/api")
    let clock = ManualClock()
    let transport: InMemoryHTTPTransport<ManualClock>

    init() {
        transport = InMemoryHTTPTransport(clock: clock)
    }

    func service(retry: RetryPolicy = RetryPolicy(jitter: 0)) -> HTTPSliderService<ManualClock> {
        let transport = transport
        return HTTPSliderService(
            baseURL: base, timeout: .seconds(10), startRetry: retry, clock: clock, randomUnit: { 0.5 },
            transport: transport)
    }

    var startURL: URL { base.appendingPathComponent("test_start") }
    var nextURL: URL { base.appendingPathComponent("test_next") }
    static let stepBody = Data(#"{"ticks": [1.5, 2.5], "session_id": 9, "step_count": 1}"#.utf8)

    @Test(
        "a choice outside the step's ticks is a typed error before any request",
        arguments: [-1, 2, 99, Int.min])
    func invalidChoice(choice: Int) async throws {
        let step = SliderStep(sessionID: 9, stepCount: 1, ticks: [1.5, 2.5])
        await #expect(throws: SliderServiceError(.invalidChoice(choice, tickCount: 2))) {
            try await service().next(after: step, choice: choice)
        }
        if choice < 0 {
            let error = await #expect(throws: SliderServiceError.self) {
                try await service().next(sessionID: 9, choice: choice)
            }
            #expect(error?.kind == .invalidChoice(choice, tickCount: nil))
        }
        #expect(transport.requests.isEmpty)
    }

    @Test("RFC 9110 §15.5.1: a 400 from the server is the client's error, not retried, and not the server's")
    func badRequestIsTheClients() async throws {
        let server = SliderReferenceServer(stepsPerSession: 3)
        let service = HTTPSliderService(
            baseURL: URL(literal: "https://slider.example/api"), timeout: .seconds(5),
            startRetry: RetryPolicy(jitter: 0),
            clock: clock, randomUnit: { 0.5 }, transport: server)
        guard case .step(let step) = try await service.start() else {
            Issue.record("no step")
            return
        }
        // Past the ticks, sent anyway: the reference server answers 400.
        let error = await #expect(throws: SliderServiceError.self) {
            try await service.next(sessionID: step.sessionID, choice: step.ticks.count)
        }
        guard case .requestRejected(400, _)? = error?.kind else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(error?.isTransient == false)
        #expect(error?.description.contains("refused the request as malformed") == true)
        // Checked against the step, nothing is sent.
        await #expect(throws: SliderServiceError(.invalidChoice(step.ticks.count, tickCount: step.ticks.count))) {
            try await service.next(after: step, choice: step.ticks.count)
        }
        #expect(await server.requests(to: .next) == 1)
    }

    @Test("sends POSTs with the brief's JSON bodies and decodes the reply")
    func requests() async throws {
        transport.stub(startURL, method: "POST", reply: .response(status: 200, body: Self.stepBody))
        transport.stub(
            nextURL, method: "POST",
            reply: .response(status: 200, body: Data(#"{"session_id": 9, "complete": true}"#.utf8)))
        let service = service()
        #expect(try await service.start() == .step(SliderStep(sessionID: 9, stepCount: 1, ticks: [1.5, 2.5])))
        #expect(try await service.next(sessionID: 9, choice: 1) == .complete(sessionID: 9))
        let sent = transport.requests
        #expect(sent.map(\.httpMethod) == ["POST", "POST"])
        #expect(
            sent.map { $0.httpBody.map { String(decoding: $0, as: UTF8.self) } } == [
                #"{"choice":"start"}"#, #"{"session_id":9,"choice":"1"}"#,
            ])
        #expect(sent.allSatisfy { $0.value(forHTTPHeaderField: "Content-Type") == "application/json" })
        #expect(sent.first?.timeoutInterval == 10)
    }

    @Test(
        "maps statuses, transport failures and bodies to typed errors",
        arguments: [
            (
                InMemoryHTTPTransport<ManualClock>.Reply.response(status: 404, body: Data("gone".utf8)),
                SliderServiceError.Kind.requestRejected(404, bodyPreview: "gone")
            ),
            (.response(status: 400, body: Data("bad".utf8)), .requestRejected(400, bodyPreview: "bad")),
            (.response(status: 429, body: Data()), .httpStatus(429, bodyPreview: "")),
            (.response(status: 500, body: Data()), .httpStatus(500, bodyPreview: "")),
            (.response(status: 200, body: Data(#"{"error": "no"}"#.utf8)), .server(message: "no")),
            (
                .response(status: 200, body: Data("oops".utf8)),
                .decoding(SliderDecodingError(.notJSON, preview: "oops"))
            ),
            (.failure(URLError(.timedOut)), .timedOut),
            // Cancelled by the session or the system, not by the caller: a transport failure.
            (
                .failure(URLError(.cancelled)),
                .transport(
                    HTTPTransportError(
                        .network(URLError(.cancelled)), url: URL(literal: "https://slider.example/api/test_next")))
            ),
        ]
    )
    func errorMapping(reply: InMemoryHTTPTransport<ManualClock>.Reply, expected: SliderServiceError.Kind) async {
        transport.stub(nextURL, method: "POST", reply: reply)
        await #expect(throws: SliderServiceError(expected, url: nextURL)) {
            try await service().next(sessionID: 1, choice: 0)
        }
    }

    @Test("a network failure keeps its URLError code")
    func transportFailure() async {
        transport.stub(nextURL, method: "POST", reply: .failure(URLError(.notConnectedToInternet)))
        do {
            _ = try await service().next(sessionID: 1, choice: 0)
            Issue.record("no error")
        } catch {
            guard case .transport(let failure) = error.kind else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(failure.code == .notConnectedToInternet)
            #expect(failure.url == nextURL)
            #expect(error.isTransient)
        }
    }

    @Test("a request slower than the timeout fails as timed out, on the injected clock")
    func timeout() async {
        transport.stub(
            nextURL, method: "POST", reply: .response(status: 200, body: Self.stepBody, latency: .seconds(60)))
        let service = service()
        let request = Task { try await service.next(sessionID: 9, choice: 0) }
        // The transport's latency and the deadline both sleep on the clock.
        await clock.waitForSleepers(count: 2)
        clock.advance(by: .seconds(10))
        await #expect(throws: SliderServiceError(.timedOut, url: nextURL)) { try await request.value }
    }

    @Test("starting retries transient failures with backoff, then succeeds")
    func startRetries() async throws {
        transport.stub(
            startURL, method: "POST",
            replies: [
                .response(status: 503), .failure(URLError(.networkConnectionLost)),
                .response(status: 200, body: Self.stepBody),
            ])
        let service = service()
        let start = Task { try await service.start() }
        // Backoff before retry 1 is 0.5 s, before retry 2 is 1 s (no jitter).
        for delay in [Duration.milliseconds(500), .seconds(1)] {
            // Each attempt's 10-second deadline timer also sleeps; wait for the backoff itself.
            await clock.waitForSleeper(until: clock.now.advanced(by: delay))
            clock.advance(by: delay)
        }
        #expect(try await start.value == .step(SliderStep(sessionID: 9, stepCount: 1, ticks: [1.5, 2.5])))
        #expect(transport.requests.count == 3)
    }

    @Test("RFC 9110 §10.2.3: starting waits as long as a 503's Retry-After asks, or gives up when it asks too much")
    func startRetryAfter() async throws {
        transport.stub(
            startURL, method: "POST",
            replies: [
                .response(status: 503, headers: ["Retry-After": "4"]),
                .response(status: 200, body: Self.stepBody),
            ])
        let service = service()
        let start = Task { try await service.start() }
        await clock.waitForSleeper(until: clock.now.advanced(by: .seconds(4)))
        clock.advance(by: .seconds(4))
        #expect(try await start.value == .step(SliderStep(sessionID: 9, stepCount: 1, ticks: [1.5, 2.5])))
        #expect(transport.requests.count == 2)
        transport.stub(startURL, method: "POST", reply: .response(status: 503, headers: ["Retry-After": "86400"]))
        var expected = SliderServiceError(.httpStatus(503, bodyPreview: ""), url: startURL)
        expected.retryAfter = .seconds(86_400)
        await #expect(throws: expected) { try await service.start() }
        #expect(transport.requests.count == 3)
    }

    @Test("starting gives up after the last attempt, and never retries a 4xx")
    func startGivesUp() async {
        transport.stub(startURL, method: "POST", reply: .response(status: 400))
        await #expect(throws: SliderServiceError(.requestRejected(400, bodyPreview: ""), url: startURL)) {
            try await service().start()
        }
        #expect(transport.requests.count == 1)
        transport.stub(startURL, method: "POST", reply: .response(status: 502))
        let patient = service(retry: RetryPolicy(maximumAttempts: 2, initialDelay: .seconds(1), jitter: 0))
        let start = Task { try await patient.start() }
        await clock.waitForSleeper(until: clock.now.advanced(by: .seconds(1)))
        clock.advance(by: .seconds(1))
        await #expect(throws: SliderServiceError(.httpStatus(502, bodyPreview: ""), url: startURL)) {
            try await start.value
        }
        #expect(transport.requests.count == 3)
    }

    @Test("a choice is never retried: the server may have applied it")
    func nextNotRetried() async {
        transport.stub(nextURL, method: "POST", reply: .response(status: 503))
        await #expect(throws: SliderServiceError(.httpStatus(503, bodyPreview: ""), url: nextURL)) {
            try await service().next(sessionID: 1, choice: 2)
        }
        #expect(transport.requests.count == 1)
    }

    @Test("cancelling the calling task cancels the request")
    func cancellation() async {
        transport.stub(
            startURL, method: "POST", reply: .response(status: 200, body: Self.stepBody, latency: .seconds(5)))
        let service = service()
        let start = Task { try await service.start() }
        await clock.waitForSleepers(count: 2)
        start.cancel()
        await #expect(throws: SliderServiceError(.cancelled, url: startURL)) { try await start.value }
    }
}

/// The words a slider screen shows for each refusal: an unknown session is no malformed request.
@Suite("Slider failures in words a screen can show")
struct SliderFailureWordsTests {
    @Test(
        "RFC 9110 §15.5: each 4xx the API sends says what it means",
        arguments: [
            (404, "does not know what was asked for", "no longer on the server"),
            (410, "does not know what was asked for", "no longer on the server"),
            (401, "refused access", "Sign in again"),
            (403, "refused access", "Sign in again"),
            (400, "refused the request as malformed", "could not accept this answer"),
            (422, "refused the request as malformed", "could not accept this answer"),
        ])
    @MainActor
    func refusals(status: Int, logWords: String, screenWords: String) async {
        let error = SliderServiceError(.requestRejected(status, bodyPreview: ""))
        #expect(error.description.contains(logWords))
        // A session started on the in-process server, whose next step the API refuses.
        let model = SliderSessionModel(service: RefusingNext(error: error))
        model.start()
        await model.waitUntilSettled()
        model.submit()
        await model.waitUntilSettled()
        #expect(model.errorMessage?.contains(screenWords) == true, "\(model.errorMessage ?? "no message")")
    }

    @Test("a 404 to the first request is no session to start, not an expired one")
    @MainActor
    func refusedStart() async {
        let model = SliderSessionModel(
            service: RefusingNext(error: SliderServiceError(.requestRejected(404, bodyPreview: "")), refusesStart: true)
        )
        model.start()
        await model.waitUntilSettled()
        #expect(model.errorMessage?.contains("could not start a session") == true, "\(model.errorMessage ?? "")")
    }

    /// The reference server's session, whose next steps (or start) are refused with `error`.
    struct RefusingNext: SliderService {
        let error: SliderServiceError
        var refusesStart = false
        let server = SliderReferenceServer(stepsPerSession: 3)
        func start() async throws(SliderServiceError) -> SliderReply {
            if refusesStart { throw error }
            return try await HTTPSliderService(
                baseURL: SliderReferenceServer.baseURL, timeout: loopbackDeadline, clock: ContinuousClock(),
                transport: server
            ).start()
        }
        func next(sessionID: Int, choice: Int) async throws(SliderServiceError) -> SliderReply { throw error }
    }
}
