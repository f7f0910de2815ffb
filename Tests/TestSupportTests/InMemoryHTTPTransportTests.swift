import Foundation
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("InMemoryHTTPTransport")
struct InMemoryHTTPTransportTests {
    let url = URL(literal: "https://media.example/catalog.json")

    private func status(_ response: URLResponse) -> Int? {
        (response as? HTTPURLResponse)?.statusCode
    }

    @Test("serves the scripted replies in order, then repeats the last")
    func scriptedSequence() async throws {
        let transport = InMemoryHTTPTransport(clock: ManualClock())
        transport.stub(
            url,
            replies: [
                .failure(URLError(.timedOut)),
                .response(status: 503),
                .response(status: 200, headers: ["ETag": "v1"], body: Data("ok".utf8)),
            ])
        let request = URLRequest(url: url)
        await #expect(throws: URLError.self) { try await transport.send(request) }
        let (_, unavailable) = try await transport.send(request)
        #expect(status(unavailable) == 503)
        for _ in 0..<2 {
            let (body, response) = try await transport.send(request)
            #expect(body == Data("ok".utf8))
            #expect(status(response) == 200)
            #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "ETag") == "v1")
        }
        #expect(transport.requests.count == 4)
    }

    @Test("an unknown route or method is a typed error that names it")
    func noRoute() async {
        let transport = InMemoryHTTPTransport(clock: ManualClock())
        transport.stub(url, method: "GET", reply: .response(status: 200))
        var post = URLRequest(url: url)
        post.httpMethod = "POST"
        await #expect(
            throws: InMemoryHTTPTransport<ManualClock>.TransportError.noRoute(method: "POST", url: url.absoluteString)
        ) {
            try await transport.send(post)
        }
    }

    @Test("latency is slept on the injected clock")
    func latencyOnClock() async throws {
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        transport.stub(url, reply: .response(status: 200, body: Data("late".utf8), latency: .seconds(2)))
        let request = Task { try await transport.send(URLRequest(url: url)) }
        await clock.waitForSleepers(count: 1)
        #expect(transport.requestsInFlight == 1)
        clock.advance(by: .seconds(2))
        let (body, _) = try await request.value
        #expect(body == Data("late".utf8))
        #expect(transport.requestsInFlight == 0)
    }

    @Test("cancelling a request during its latency throws CancellationError")
    func cancellation() async {
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        transport.stub(url, reply: .response(status: 200, latency: .seconds(30)))
        let request = Task { try await transport.send(URLRequest(url: url)) }
        await clock.waitForSleepers(count: 1)
        request.cancel()
        await #expect(throws: CancellationError.self) { try await request.value }
        #expect(transport.requestsInFlight == 0)
    }

    @Test("counts the most requests in flight at once")
    func concurrency() async throws {
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        transport.stub(url, reply: .response(status: 200, latency: .seconds(1)))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<3 {
                group.addTask { _ = try await transport.send(URLRequest(url: self.url)) }
            }
            await clock.waitForSleepers(count: 3)
            clock.advance(by: .seconds(1))
            try await group.waitForAll()
        }
        #expect(transport.maximumConcurrentRequests == 3)
    }

    @Test(
        "a resource honours single byte ranges",
        arguments: [
            ("bytes=0-3", 206, "0123", "bytes 0-3/10"),
            ("bytes=8-", 206, "89", "bytes 8-9/10"),
            ("bytes=-3", 206, "789", "bytes 7-9/10"),
            ("bytes=5-100", 206, "56789", "bytes 5-9/10"),
            ("bytes=10-12", 416, "", "bytes */10"),
            ("bytes=4-2", 416, "", "bytes */10"),
            ("items=0-1", 416, "", "bytes */10"),
        ]
    )
    func byteRanges(header: String, expectedStatus: Int, expectedBody: String, contentRange: String) async throws {
        let transport = InMemoryHTTPTransport(clock: ManualClock())
        transport.stub(url, reply: .resource(Data("0123456789".utf8)))
        var request = URLRequest(url: url)
        request.setValue(header, forHTTPHeaderField: "Range")
        let (body, response) = try await transport.send(request)
        let http = try #require(response as? HTTPURLResponse)
        #expect(http.statusCode == expectedStatus)
        #expect(String(decoding: body, as: UTF8.self) == expectedBody)
        #expect(http.value(forHTTPHeaderField: "Content-Range") == contentRange)
    }

    @Test("a resource without a Range header is the whole body")
    func wholeResource() async throws {
        let transport = InMemoryHTTPTransport(clock: ManualClock())
        transport.stub(url, reply: .resource(Data("0123456789".utf8)))
        let (body, response) = try await transport.send(URLRequest(url: url))
        #expect(status(response) == 200)
        #expect(body.count == 10)
    }

    @Test("a handler sees the request it answers")
    func handler() async throws {
        let transport = InMemoryHTTPTransport(clock: ManualClock())
        transport.stub(
            url, method: "POST",
            reply: .handler { request in
                .response(status: 201, body: request.httpBody ?? Data())
            })
        var request = URLRequest(url: url)
        request.httpMethod = "post"
        request.httpBody = Data("echo".utf8)
        let (body, response) = try await transport.send(request)
        #expect(status(response) == 201)
        #expect(body == Data("echo".utf8))
    }
}
