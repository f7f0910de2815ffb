import Foundation
import HTTPSupport
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `HTTPResponseBody.deliver(_:)`: the body read on the transport's own pump, each chunk handed
/// to the reader there (the download engine's way of reading, with no hop per chunk).
@Suite("HTTPResponseBody.deliver(_:)")
struct DeliveryTests {
    let url = URL(literal: "https://media.example/segment.ts")
    let clock = ManualClock()
    let transport: InMemoryHTTPTransport<ManualClock>

    init() {
        transport = InMemoryHTTPTransport(clock: clock)
    }

    /// The chunks handed to a reader so far.
    final class Received: Sendable {
        private let chunks = LockedState<[Data]>([])
        var all: [Data] { chunks.withLock { $0 } }
        func add(_ chunk: Data) { chunks.withLock { $0.append(chunk) } }
    }

    @Test("RFC 9110 §6.4: every chunk reaches the reader in order, and a steady body within the idle bound finishes")
    func steady() async throws {
        let expected = StreamingTests.chunks(5)
        transport.stub(url, reply: .chunked(status: 200, chunks: expected, gap: .seconds(4)))
        let streamed = try await transport.stream(URLRequest(url: url), idleTimeout: .seconds(5), on: clock)
        let received = Received()
        let (handed, handedSignal) = AsyncStream<Void>.makeStream()
        let reader = Task {
            try await streamed.body.deliver { chunk in
                received.add(chunk)
                handedSignal.yield()
                return true
            }
        }
        var arrivals = handed.makeAsyncIterator()
        for _ in 0..<5 {
            // Time moves only once the last chunk reached the reader: four seconds after it,
            // the pump has waited four at most.
            await clock.waitForSleepers(count: 2)
            clock.advance(by: .seconds(4))
            await arrivals.next()
        }
        try await reader.value
        #expect(received.all == expected)
        // Twenty seconds in all, four times the idle bound.
        #expect(clock.now.offset == .seconds(20))
        #expect(await clock.waitForNoSleepers())
    }

    @Test("a body that sends nothing fails as stalled after the idle bound, and its transfer is cancelled")
    func stalls() async throws {
        transport.stub(url, reply: .chunked(status: 200, chunks: [], gap: .zero, stallsAtEnd: true))
        let streamed = try await transport.stream(URLRequest(url: url), idleTimeout: .seconds(5), on: clock)
        let received = Received()
        let reader = Task {
            try await streamed.body.deliver { chunk in
                received.add(chunk)
                return true
            }
        }
        await clock.waitForSleepers(count: 2)
        clock.advance(by: .seconds(5))
        await #expect(throws: HTTPTransportError(.stalled(after: .seconds(5)), url: url)) { try await reader.value }
        #expect(received.all.isEmpty)
        await transport.waitForAbandonedStreams()
        #expect(transport.abandonedStreams == 1)
    }

    @Test("a reader holding a chunk past the idle bound is no stalled server: only waits for bytes count")
    func slowReaderIsNoStall() async throws {
        let expected = StreamingTests.chunks(2)
        transport.stub(url, reply: .chunked(status: 200, chunks: expected, gap: .seconds(1)))
        let streamed = try await transport.stream(URLRequest(url: url), idleTimeout: .seconds(5), on: clock)
        let (entered, enteredSignal) = AsyncStream<Void>.makeStream()
        let (release, releaseSignal) = AsyncStream<Void>.makeStream()
        let received = Received()
        let reader = Task {
            try await streamed.body.deliver { chunk in
                if received.all.isEmpty {
                    enteredSignal.yield()
                    for await _ in release { break }
                }
                received.add(chunk)
                return true
            }
        }
        await clock.waitForSleepers(count: 2)
        clock.advance(by: .seconds(1))
        for await _ in entered { break }
        // A minute while the reader works: the watchdog wakes at its deadline, finds the pump
        // handing a chunk on, and looks again a whole bound later instead of failing the body.
        clock.advance(by: .seconds(60))
        await clock.waitForSleeper(until: clock.now.advanced(by: .seconds(5)))
        releaseSignal.yield()
        try await reader.value
        #expect(received.all == expected)
        #expect(transport.abandonedStreams == 0)
    }

    struct ReaderFailure: Error, Equatable {}

    @Test("what the reader throws comes out unchanged, and the transfer is cancelled")
    func readerError() async throws {
        transport.stub(
            url, reply: .chunked(status: 200, chunks: StreamingTests.chunks(3), gap: .zero, stallsAtEnd: true))
        let streamed = try await transport.stream(URLRequest(url: url), idleTimeout: .seconds(5), on: clock)
        await #expect(throws: ReaderFailure()) {
            try await streamed.body.deliver { _ in throw ReaderFailure() }
        }
        await transport.waitForAbandonedStreams()
        #expect(transport.abandonedStreams == 1)
    }

    @Test("a reader that says stop ends the delivery there, and the transfer is cancelled", arguments: [1, 2, 3])
    func stopEarly(after count: Int) async throws {
        let chunks = StreamingTests.chunks(3)
        transport.stub(url, reply: .chunked(status: 200, chunks: chunks, gap: .zero, stallsAtEnd: true))
        let streamed = try await transport.stream(URLRequest(url: url), idleTimeout: nil, on: clock)
        let received = Received()
        try await streamed.body.deliver { chunk in
            received.add(chunk)
            return received.all.count < count
        }
        #expect(received.all == Array(chunks.prefix(count)))
        await transport.waitForAbandonedStreams()
        #expect(transport.abandonedStreams == 1)
    }

    @Test("cancelling the reading task reaches the transfer: cancelled, never a short body")
    func cancelled() async throws {
        transport.stub(url, reply: .chunked(status: 200, chunks: StreamingTests.chunks(4), gap: .seconds(1)))
        let streamed = try await transport.stream(URLRequest(url: url), idleTimeout: .seconds(30), on: clock)
        let reader = Task { try await streamed.body.deliver { _ in true } }
        await clock.waitForSleepers(count: 2)
        reader.cancel()
        await #expect(throws: HTTPTransportError(.cancelled, url: url)) { try await reader.value }
        await transport.waitForAbandonedStreams()
        #expect(transport.abandonedStreams == 1)
        #expect(await clock.waitForNoSleepers())
    }

    @Test("a body already iterated delivers the rest the ordinary way")
    func afterIteration() async throws {
        let chunks = StreamingTests.chunks(3)
        transport.stub(url, reply: .chunked(status: 200, chunks: chunks, gap: .zero))
        let streamed = try await transport.stream(URLRequest(url: url), idleTimeout: nil, on: clock)
        var iterator = streamed.body.makeAsyncIterator()
        let first = try await iterator.next()
        let received = Received()
        try await streamed.body.deliver { chunk in
            received.add(chunk)
            return true
        }
        #expect(first == chunks[0])
        #expect(received.all == Array(chunks.dropFirst()))
        withExtendedLifetime(iterator) {}
    }
}
