import Foundation
import HTTPSupport
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// HTTPSupport's doc-comment examples, compiled and run. The architecture tests check that each
/// doc comment shows exactly the lines between its `example` markers.
@Suite("Documentation examples")
struct DocumentationExampleTests {
    struct MyError: Error {
        var isTransient: Bool
    }

    /// Fails twice with a transient error, then answers.
    actor FlakyServer {
        var calls = 0

        func send() throws -> String {
            calls += 1
            if calls < 3 { throw MyError(isTransient: true) }
            return "reply \(calls)"
        }
    }

    @Test("RetryPolicy.run's doc comment: two transient failures, then the reply, after two backoffs on the clock")
    func retryLoop() async throws {
        let clock = ManualClock()
        let policy = RetryPolicy(maximumAttempts: 4, jitter: 0)
        let server = FlakyServer()
        func send() async throws -> String { try await server.send() }
        let task = Task {
            // example: begin retry-policy-run
            let reply = try await policy.run(
                on: clock, isTransient: { ($0 as? MyError)?.isTransient == true },
                operation: { attempt in try await send() })
            // example: end retry-policy-run
            return reply
        }
        for _ in 1...2 {
            await clock.waitForSleepers(count: 1)
            _ = clock.advanceToNextDeadline()
        }
        #expect(try await task.value == "reply 3")
        #expect(await server.calls == 3)
    }

    @Test("AnyHTTPTransport's doc comment: a URLSession's data(for:) as a transport, against a server on 127.0.0.1")
    func anyTransport() async throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        server.route("/hello", .response(status: 200, body: Data("hello".utf8)))
        let myClient = URLSession(configuration: .ephemeral)
        // example: begin any-transport
        let transport = AnyHTTPTransport { request in try await myClient.data(for: request) }
        // example: end any-transport
        let (data, response) = try await transport.send(URLRequest(url: server.url("/hello")))
        #expect(String(decoding: data, as: UTF8.self) == "hello")
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
    }
}
