import Foundation
import HTTPSupport
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("RetryPolicy")
struct RetryPolicyTests {
    @Test(
        "delays grow exponentially up to the cap",
        arguments: [
            (1, Duration.milliseconds(500)), (2, .seconds(1)), (3, .seconds(2)), (6, .seconds(10)), (60, .seconds(10)),
        ]
    )
    func exponential(retry: Int, expected: Duration) {
        let policy = RetryPolicy(initialDelay: .milliseconds(500), multiplier: 2, maximumDelay: .seconds(10), jitter: 0)
        #expect(policy.delay(beforeRetry: retry, unit: 0.7) == expected)
    }

    @Test("jitter takes away up to its share of the delay")
    func jitter() {
        let policy = RetryPolicy(initialDelay: .seconds(1), jitter: 0.25)
        #expect(policy.delay(beforeRetry: 1, unit: 0) == .seconds(1))
        #expect(policy.delay(beforeRetry: 1, unit: 1) == .milliseconds(750))
        #expect(policy.delay(beforeRetry: 1, unit: .nan) == .seconds(1))
    }

    @Test("nonsense settings are clamped to something that works")
    func clamping() {
        let policy = RetryPolicy(maximumAttempts: -3, multiplier: .nan, jitter: 7)
        #expect(policy.maximumAttempts == 1)
        #expect(policy.multiplier == 1)
        #expect(policy.jitter == 1)
        #expect(RetryPolicy.none.maximumAttempts == 1)
    }
}

@Suite("withDeadline")
struct DeadlineTests {
    @Test("returns the value when the operation is faster than the deadline")
    func fastEnough() async throws {
        let clock = ManualClock()
        let value = try await withDeadline(.seconds(5), on: clock) { 42 }
        #expect(value == 42)
    }

    @Test("times out on the injected clock, cancelling the operation")
    func timesOut() async {
        let clock = ManualClock()
        let operation = Task {
            try await withDeadline(.seconds(5), on: clock) {
                try await clock.sleep(for: .seconds(60))
                return 1
            }
        }
        await clock.waitForSleepers(count: 2)
        clock.advance(by: .seconds(5))
        await #expect(throws: DeadlineError(timeout: .seconds(5))) { try await operation.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test("passes the operation's own error through")
    func operationError() async {
        await #expect(throws: URLError(.badURL)) {
            try await withDeadline(.seconds(5), on: ManualClock()) { () async throws -> Int in throw URLError(.badURL) }
        }
    }

    @Test("a cancelled caller gets CancellationError, not a timeout")
    func callerCancelled() async {
        let clock = ManualClock()
        let operation = Task {
            try await withDeadline(.seconds(5), on: clock) {
                try await clock.sleep(for: .seconds(60))
                return 1
            }
        }
        await clock.waitForSleepers(count: 2)
        operation.cancel()
        await #expect(throws: CancellationError.self) { try await operation.value }
    }
}

@Suite("RetryPolicy.run")
struct RetryLoopTests {
    struct Flaky: Error, Equatable {
        var transient: Bool
    }

    /// Runs an operation that fails `failures` times (transient or not) and then returns its
    /// attempt, advancing the manual clock through every backoff.
    func run(policy: RetryPolicy, failures: Int, transient: Bool, clock: ManualClock) async throws -> Int {
        let task = Task {
            try await policy.run(
                on: clock, randomUnit: { 0 }, isTransient: { ($0 as? Flaky)?.transient == true },
                operation: { attempt in
                    if attempt <= failures { throw Flaky(transient: transient) }
                    return attempt
                })
        }
        for retry in 1..<policy.maximumAttempts where retry <= failures && transient {
            await clock.waitForSleepers(count: 1)
            clock.advance(by: policy.delay(beforeRetry: retry, unit: 0))
        }
        return try await task.value
    }

    @Test("transient failures are retried after the policy's delays until one attempt succeeds")
    func retriesUntilSuccess() async throws {
        let clock = ManualClock()
        let attempt = try await run(
            policy: RetryPolicy(maximumAttempts: 4, jitter: 0), failures: 3, transient: true, clock: clock)
        #expect(attempt == 4)
        #expect(clock.now.offset == .milliseconds(500 + 1_000 + 2_000))
    }

    @Test("the last failure is rethrown when the attempts run out", arguments: [1, 2, 5])
    func attemptsRunOut(attempts: Int) async {
        let clock = ManualClock()
        await #expect(throws: Flaky(transient: true)) {
            try await run(
                policy: RetryPolicy(maximumAttempts: attempts, jitter: 0), failures: attempts, transient: true,
                clock: clock)
        }
    }

    @Test("a failure that is not transient is thrown at once, with no delay")
    func permanentFailure() async {
        let clock = ManualClock()
        await #expect(throws: Flaky(transient: false)) {
            try await run(policy: RetryPolicy(maximumAttempts: 5), failures: 1, transient: false, clock: clock)
        }
        #expect(clock.now.offset == .zero)
    }

    @Test("cancelling the caller during a backoff delay ends the loop with CancellationError")
    func cancelledDuringBackoff() async {
        let clock = ManualClock()
        let task = Task {
            try await RetryPolicy(maximumAttempts: 5).run(
                on: clock, isTransient: { _ in true }, operation: { _ -> Int in throw Flaky(transient: true) })
        }
        await clock.waitForSleepers(count: 1)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }
}

@Suite("Retry-After")
struct RetryAfterTests {
    @Test(
        "RFC 9110 §5.6.7: the three HTTP-date forms name the same instant; anything else is not a date",
        arguments: [
            ("Sun, 06 Nov 1994 08:49:37 GMT", Int64?.some(784_111_777)),
            ("Sunday, 06-Nov-94 08:49:37 GMT", 784_111_777),
            ("Sun Nov  6 08:49:37 1994", 784_111_777),
            ("Thu, 01 Jan 1970 00:00:00 GMT", 0),
            ("Tue, 29 Feb 2028 23:59:60 GMT", 1_835_481_600),
            ("Sun, 06 Nov 1994 08:49:37 UTC", nil),
            ("Sun, 06 Foo 1994 08:49:37 GMT", nil),
            ("Sun, 06 Nov 1994 24:00:00 GMT", nil),
            ("06 Nov 1994 08:49:37 GMT", nil),
            ("", nil),
        ])
    func httpDates(text: String, seconds: Int64?) {
        #expect(httpDateSeconds(text) == seconds)
    }

    @Test(
        "RFC 9110 §10.2.3: Retry-After is delay-seconds or an HTTP-date measured against the response's Date",
        arguments: [
            ("120", String?.none, Duration?.some(.seconds(120))),
            (" 5 ", nil, .seconds(5)),
            ("99999999999999999999999", nil, .seconds(Int64.max)),
            ("Fri, 31 Dec 1999 23:59:59 GMT", "Fri, 31 Dec 1999 23:58:59 GMT", .seconds(60)),
            ("Fri, 31 Dec 1999 23:58:59 GMT", "Fri, 31 Dec 1999 23:59:59 GMT", .zero),
            ("Fri, 31 Dec 1999 23:59:59 GMT", nil, nil),
            ("-5", nil, nil),
            ("1.5", nil, nil),
            ("later", nil, nil),
        ])
    func delays(value: String, date: String?, expected: Duration?) throws {
        #expect(retryAfterDelay(value, date: date) == expected)
        var fields = ["Retry-After": value]
        if let date { fields["Date"] = date }
        let response = try #require(
            HTTPURLResponse(
                url: URL(literal: "https://a.example/"), statusCode: 503, httpVersion: nil, headerFields: fields))
        #expect(response.retryAfter == expected)
    }

    struct Busy: Error, Equatable {
        var wait: Duration?
    }

    @Test("the retry loop waits the longer of its backoff and the server's wait, and gives up on a wait past its limit")
    func serverDelay() async throws {
        let clock = ManualClock()
        let policy = RetryPolicy(
            maximumAttempts: 3, initialDelay: .seconds(1), jitter: 0, longestServerDelay: .seconds(30))
        let asked: [Duration?] = [.seconds(20), .zero]
        let task = Task {
            try await policy.run(
                on: clock, randomUnit: { 0 }, isTransient: { _ in true }, serverDelay: { ($0 as? Busy)?.wait },
                operation: { attempt -> Int in
                    if attempt < 3 { throw Busy(wait: asked[attempt - 1]) }
                    return attempt
                })
        }
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(20))
        // The second failure asks for no wait: the policy's own 2 s backoff applies.
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(2))
        #expect(try await task.value == 3)
        #expect(clock.now.offset == .seconds(22))
        await #expect(throws: Busy(wait: .seconds(31))) {
            try await policy.run(
                on: clock, isTransient: { _ in true }, serverDelay: { ($0 as? Busy)?.wait },
                operation: { _ -> Int in throw Busy(wait: .seconds(31)) })
        }
        #expect(clock.now.offset == .seconds(22))
    }
}

@Suite("HTTPTransport.send(_:timeout:on:)")
struct TimedSendTests {
    let url = URL(literal: "https://api.example/x")

    @Test("returns the transport's answer within the deadline")
    func answers() async throws {
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        transport.stub(url, reply: .response(status: 200, body: Data("ok".utf8)))
        let (data, response) = try await transport.send(URLRequest(url: url), timeout: .seconds(5), on: clock)
        #expect(data == Data("ok".utf8))
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
    }

    @Test("a transport slower than the deadline fails as timedOut, naming the URL, on the injected clock")
    func timesOut() async {
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        transport.stub(url, reply: .response(status: 200, latency: .seconds(60)))
        let request = URLRequest(url: url)
        let task = Task { () throws(HTTPTransportError) -> Int in
            _ = try await transport.send(request, timeout: .seconds(5), on: clock)
            return 1
        }
        await clock.waitForSleepers(count: 2)
        clock.advance(by: .seconds(5))
        let result = await task.result
        #expect(throws: HTTPTransportError(.timedOut(after: .seconds(5)), url: url)) { try result.get() }
    }

    @Test(
        "every failure is typed, keeping the URLError",
        arguments: [
            (
                URLError(.notConnectedToInternet) as any Error & Sendable,
                HTTPTransportError.Kind.network(URLError(.notConnectedToInternet))
            ),
            // Cancelled while the caller goes on (an invalidated session): a network failure.
            (URLError(.cancelled), .network(URLError(.cancelled))),
            (CancellationError(), .network(URLError(.cancelled))),
        ]
    )
    func typedFailures(thrown: any Error & Sendable, expected: HTTPTransportError.Kind) async {
        let clock = ManualClock()
        let transport = AnyHTTPTransport { _ in throw thrown }
        let url = url
        await #expect(throws: HTTPTransportError(expected, url: url)) {
            try await transport.send(URLRequest(url: url), timeout: nil, on: clock)
        }
    }

    @Test(
        "only the caller's own cancellation is a cancel: the same URLError while the caller is cancelled is cancelled, and not transient"
    )
    func callerCancellation() async {
        let transport = AnyHTTPTransport { _ in
            while !Task.isCancelled { await Task.yield() }
            throw URLError(.cancelled)
        }
        let url = url
        let task = Task { try await transport.send(URLRequest(url: url), timeout: nil, on: ManualClock()) }
        task.cancel()
        let result = await task.result
        #expect(throws: HTTPTransportError(.cancelled, url: url)) { try result.get() }
        #expect(!HTTPTransportError(.cancelled, url: url).isTransient)
        #expect(HTTPTransportError(.network(URLError(.cancelled)), url: url).isTransient)
    }

    @Test("a custom transport's own error is kept as its description")
    func otherError() async {
        let transport = AnyHTTPTransport { _ in throw InMemoryHTTPTransport<ManualClock>.TransportError.missingURL }
        let url = url
        await #expect(throws: HTTPTransportError(.other("The request has no URL"), url: url)) {
            try await transport.send(URLRequest(url: url), timeout: .seconds(1), on: ManualClock())
        }
    }

    @Test(
        "only http and https are fetched unless the caller opts in: file and data URLs never reach the transport",
        arguments: ["file:///etc/passwd", "data:,hello", "ftp://files.example/a", "FILE:///private/var/mobile"])
    func schemes(address: String) async throws {
        let url = try #require(URL(string: address))
        let counter = RequestCounter()
        let transport = AnyHTTPTransport { request in
            counter.increment()
            return (
                Data("secret".utf8),
                URLResponse(url: url, mimeType: nil, expectedContentLength: 6, textEncodingName: nil)
            )
        }
        let scheme = url.scheme?.lowercased() ?? ""
        await #expect(throws: HTTPTransportError(.disallowedScheme(scheme), url: url)) {
            try await transport.send(URLRequest(url: url), timeout: nil, on: ManualClock())
        }
        #expect(counter.count == 0)
        // Opted in, the scheme is fetched, and its non-HTTP answer is accepted as the resource.
        let (data, _) = try await transport.send(
            URLRequest(url: url), timeout: nil, on: ManualClock(), allowing: [scheme])
        #expect(data == Data("secret".utf8))
        #expect(counter.count == 1)
    }

    @Test("an http request answered by a response that is not an HTTP response is an error, never a 200")
    func notHTTP() async {
        let url = url
        let transport = AnyHTTPTransport { _ in
            (Data("x".utf8), URLResponse(url: url, mimeType: nil, expectedContentLength: 1, textEncodingName: nil))
        }
        await #expect(throws: HTTPTransportError(.notHTTP, url: url)) {
            try await transport.send(URLRequest(url: url), timeout: nil, on: ManualClock())
        }
    }

    @Test("transient: timeouts and network failures; a cancellation is not")
    func transience() {
        #expect(HTTPTransportError(.timedOut(after: .seconds(1)), url: url).isTransient)
        #expect(HTTPTransportError(.network(URLError(.networkConnectionLost)), url: url).isTransient)
        #expect(!HTTPTransportError(.cancelled, url: url).isTransient)
        #expect(HTTPTransportError(.timedOut(after: .seconds(1)), url: url).code == .timedOut)
    }
}

@Suite("bodyPreview")
struct BodyPreviewTests {
    @Test(
        "shows the first bytes readably",
        arguments: [
            (Data("short".utf8), 80, "short"),
            (Data("abcdef".utf8), 3, "abc…"),
            (Data("a\nb\tc\r".utf8), 80, "a\\nb\\tc\\r"),
            (Data([0x61, 0x00, 0xFF, 0x62]), 80, "a\\u{0}\u{FFFD}b"),
            (Data(), 80, ""),
        ]
    )
    func preview(body: Data, limit: Int, expected: String) {
        #expect(bodyPreview(body, limit: limit) == expected)
    }
}

/// Counts calls from a transport closure.
final class RequestCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0

    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return value
    }

    func increment() {
        lock.lock()
        value += 1
        lock.unlock()
    }
}
