import Foundation
import HTTPSupport
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Typed throws must not make ordinary Swift awkward: the timed `send` in the shapes apps write.
@Suite("HTTPSupport call shapes")
struct HTTPCallShapeTests {
    let url = URL(literal: "https://api.example/ping")
    let transport = AnyHTTPTransport { request in
        guard request.url?.path == "/ping", let url = request.url,
            let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: nil, headerFields: nil)
        else { throw URLError(.badURL) }
        return (Data("pong".utf8), response)
    }

    /// An untyped context: the typed error converts to `any Error` with no ceremony.
    func untyped(_ request: URLRequest) async throws -> Data {
        try await transport.send(request, timeout: loopbackDeadline, on: ContinuousClock()).0
    }

    @Test("send(_:timeout:on:allowing:): async let, untyped try, typed catch, try?, Task")
    func send() async throws {
        let transport = transport
        let request = URLRequest(url: url)
        async let answer = transport.send(request, timeout: loopbackDeadline, on: ContinuousClock())
        #expect(try await answer.0 == Data("pong".utf8))
        #expect(try await untyped(request) == Data("pong".utf8))
        do {
            _ = try await transport.send(
                URLRequest(url: URL(literal: "ftp://api.example/ping")), timeout: nil, on: ContinuousClock())
            Issue.record("sent over ftp")
        } catch {
            // `error` is an HTTPTransportError here: no cast.
            #expect(error.kind == .disallowedScheme("ftp"))
        }
        #expect(
            (try? await transport.send(
                URLRequest(url: URL(literal: "https://api.example/other")), timeout: nil, on: ContinuousClock())) == nil
        )
        let task = Task { try await transport.send(request, timeout: loopbackDeadline, on: ContinuousClock()).0 }
        #expect(try await task.value == Data("pong".utf8))
    }
}
