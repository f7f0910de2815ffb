import Foundation
import HTTPSupport
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("HTTPTransport.stream(_:idleTimeout:on:)")
struct StreamingTests {
    let url = URL(literal: "https://media.example/segment.ts")

    static func chunks(_ count: Int, size: Int = 1_024) -> [Data] {
        (0..<count).map { Data(repeating: UInt8($0), count: size) }
    }

    @Test("a transport without streaming yields its whole body as one chunk")
    func defaultStreaming() async throws {
        let transport = AnyHTTPTransport { request in
            let url = try #require(request.url)
            return (
                Data("whole".utf8),
                try #require(HTTPURLResponse(url: url, statusCode: 200, httpVersion: nil, headerFields: nil))
            )
        }
        let streamed = try await transport.stream(URLRequest(url: url), idleTimeout: nil, on: ManualClock())
        #expect(streamed.statusCode == 200)
        var received: [Data] = []
        for try await chunk in streamed.body { received.append(chunk) }
        #expect(received == [Data("whole".utf8)])
    }

    @Test("RFC 9110 §6.4: a slow but steady body finishes: the idle timeout bounds each wait, not the transfer")
    func slowButSteady() async throws {
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        transport.stub(url, reply: .chunked(status: 200, chunks: Self.chunks(5), gap: .seconds(4)))
        let streamed = try await transport.stream(URLRequest(url: url), idleTimeout: .seconds(5), on: clock)
        var iterator = streamed.body.makeAsyncIterator()
        for index in 0..<5 {
            // The producer and the watchdog are both asleep before time moves.
            await clock.waitForSleepers(count: 2)
            clock.advance(by: .seconds(4))
            let chunk = try await iterator.next()
            #expect(chunk == Self.chunks(5)[index])
        }
        #expect(try await iterator.next() == nil)
        // Twenty seconds in all, four times the idle timeout; the watchdog stopped with the body.
        #expect(clock.now.offset == .seconds(20))
        await clock.waitForNoSleepers()
    }

    @Test("a body that stops arriving fails as stalled after the idle timeout, and its transfer is cancelled")
    func stalls() async throws {
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        transport.stub(url, reply: .chunked(status: 200, chunks: Self.chunks(1), gap: .seconds(1), stallsAtEnd: true))
        let streamed = try await transport.stream(URLRequest(url: url), idleTimeout: .seconds(5), on: clock)
        var iterator = streamed.body.makeAsyncIterator()
        await clock.waitForSleepers(count: 2)
        clock.advance(by: .seconds(1))
        #expect(try await iterator.next()?.count == 1_024)
        await clock.waitForSleepers(count: 2)
        clock.advance(by: .seconds(5))
        await #expect(throws: HTTPTransportError(.stalled(after: .seconds(5)), url: url)) { try await iterator.next() }
        await transport.waitForAbandonedStreams()
        #expect(transport.abandonedStreams == 1)
        await clock.waitForNoSleepers()
    }

    @Test("headers that do not arrive within the idle timeout fail as stalled")
    func headersLate() async {
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        transport.stub(url, reply: .response(status: 200, latency: .seconds(60)))
        let request = URLRequest(url: url)
        let task = Task { () throws(HTTPTransportError) -> Int? in
            try await transport.stream(request, idleTimeout: .seconds(5), on: clock).statusCode
        }
        await clock.waitForSleepers(count: 2)
        clock.advance(by: .seconds(5))
        let result = await task.result
        #expect(throws: HTTPTransportError(.stalled(after: .seconds(5)), url: url)) { try result.get() }
        #expect(HTTPTransportError(.stalled(after: .seconds(5)), url: url).isTransient)
    }

    @Test(
        "collect(upTo:) stops at the limit with bodyTooLarge and cancels the transfer",
        arguments: [2_047, 2_048, 4_096])
    func collectLimit(limit: Int) async throws {
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        transport.stub(url, reply: .chunked(status: 200, chunks: Self.chunks(3), gap: .zero, stallsAtEnd: true))
        let streamed = try await transport.stream(URLRequest(url: url), idleTimeout: nil, on: clock)
        if limit < 3_072 {
            await #expect(throws: HTTPTransportError(.bodyTooLarge(limit: limit), url: url)) {
                try await streamed.body.collect(upTo: limit)
            }
            await transport.waitForAbandonedStreams()
            #expect(transport.abandonedStreams == 1)
        } else {
            // Under the limit, the stall at the end is what stops it: cancel the reader.
            let reader = Task { try await streamed.body.collect(upTo: limit) }
            await clock.waitForSleepers(count: 1)
            reader.cancel()
            await #expect(throws: HTTPTransportError(.cancelled, url: url)) { try await reader.value }
            await transport.waitForAbandonedStreams()
            #expect(transport.abandonedStreams == 1)
        }
    }

    @Test("a reader cancelled while it waits gets cancelled, never a short body")
    func readerCancelled() async throws {
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        transport.stub(url, reply: .chunked(status: 200, chunks: Self.chunks(4), gap: .seconds(1)))
        let streamed = try await transport.stream(URLRequest(url: url), idleTimeout: .seconds(30), on: clock)
        let reader = Task { try await streamed.body.collect(upTo: 1 << 20) }
        await clock.waitForSleepers(count: 2)
        reader.cancel()
        await #expect(throws: HTTPTransportError(.cancelled, url: url)) { try await reader.value }
        await transport.waitForAbandonedStreams()
        #expect(transport.abandonedStreams == 1)
        await clock.waitForNoSleepers()
    }

    @Test("a disallowed scheme is refused before anything is sent")
    func scheme() async {
        let transport = InMemoryHTTPTransport(clock: ManualClock())
        let file = URL(fileURLWithPath: "/etc/passwd")
        await #expect(throws: HTTPTransportError(.disallowedScheme("file"), url: file)) {
            try await transport.stream(URLRequest(url: file), idleTimeout: nil, on: ManualClock())
        }
        #expect(transport.requests.isEmpty)
    }
}

@Suite("URLSessionTransport.stream over loopback")
struct URLSessionStreamingTests {
    @Test("a large body arrives in several chunks, byte for byte, none larger than a batch")
    func chunks() async throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        let body = Data((0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        server.route("/big.bin", .file(body))
        let streamed = try await URLSessionTransport().stream(
            URLRequest(url: server.url("/big.bin")), idleTimeout: nil, on: ContinuousClock())
        #expect(streamed.statusCode == 200)
        var received = Data()
        var count = 0
        var largest = 0
        for try await chunk in streamed.body {
            received.append(chunk)
            count += 1
            largest = max(largest, chunk.count)
        }
        #expect(received == body)
        #expect(count > 1)
        // Batches are at most 256 KiB (BodyGatheringTests holds their rules); only a piece the
        // session delivers at 256 KiB or more goes on larger, and libcurl's are 16 KiB at most.
        #if canImport(FoundationNetworking)
            #expect(largest <= BodyGathering.limit)
        #endif
    }

    @Test("ending the iteration early cancels the session task: the server sees the connection close")
    func endingEarlyCloses() async throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        server.route("/stuck.bin", .file(Data(repeating: 9, count: 1_000_000)))
        server.script("/stuck.bin", [.stallAfter(bytes: 50_000)])
        let streamed = try await URLSessionTransport().stream(
            URLRequest(url: server.url("/stuck.bin")), idleTimeout: nil, on: ContinuousClock())
        var received = 0
        for try await chunk in streamed.body {
            received += chunk.count
            if received >= 50_000 { break }
        }
        #expect(received == 50_000)
        await server.waitForStalledRequestsClosedByClient()
        #expect(server.stalledRequestsClosedByClient == 1)
    }

    @Test("cancelling a send before the headers arrive reaches the network: CancellationError, the connection closed")
    func cancelledSendCloses() async throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        server.route("/never.bin", .file(Data(repeating: 1, count: 10)))
        server.script("/never.bin", [.stall])
        let transport = URLSessionTransport()
        let sending = Task { try await transport.send(URLRequest(url: server.url("/never.bin"))) }
        await server.waitForRequests()
        sending.cancel()
        await #expect(throws: CancellationError.self) { try await sending.value }
        await server.waitForStalledRequestsClosedByClient()
        #expect(server.stalledRequestsClosedByClient == 1)
    }

    @Test("cancelling a stream before its headers arrive reaches the network: CancellationError, the connection closed")
    func cancelledStreamCloses() async throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        server.route("/never.bin", .file(Data(repeating: 1, count: 10)))
        server.script("/never.bin", [.stall])
        let transport = URLSessionTransport()
        let streaming = Task {
            _ = try await transport.stream(URLRequest(url: server.url("/never.bin")))
        }
        await server.waitForRequests()
        streaming.cancel()
        await #expect(throws: CancellationError.self) { try await streaming.value }
        await server.waitForStalledRequestsClosedByClient()
        #expect(server.stalledRequestsClosedByClient == 1)
    }
}
