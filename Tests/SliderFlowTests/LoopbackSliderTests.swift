import Foundation
import HTTPSupport
import SliderFlow
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The slider brief end to end: a real URLSession against the reference server on 127.0.0.1.
@Suite("Slider session over loopback HTTP")
struct LoopbackSliderTests {
    let server: LoopbackHTTPServer

    init() throws {
        server = try LoopbackHTTPServer()
    }

    /// Routes both endpoints to a reference server behind the loopback socket.
    func serve(_ reference: SliderReferenceServer) {
        let base = server.baseURL
        for endpoint in ["/test_start", "/test_next"] {
            server.route(
                endpoint,
                .handler { request in
                    var forwarded = URLRequest(url: base.appendingPathComponent(request.path))
                    forwarded.httpMethod = request.method
                    forwarded.httpBody = request.body
                    guard let (data, response) = try? await reference.send(forwarded),
                        let http = response as? HTTPURLResponse
                    else { return (500, [:], Data()) }
                    return (http.statusCode, ["Content-Type": "application/json"], data)
                })
        }
    }

    func service() -> HTTPSliderService<ContinuousClock> {
        HTTPSliderService(
            baseURL: server.baseURL, timeout: loopbackDeadline, startRetry: .none,
            session: URLSession(configuration: .ephemeral))
    }

    @Test(
        "start, next with the choice as a string, complete, start over, with either body form",
        arguments: [SliderReferenceServer.BodyEncoding.doubleEncoded, .object])
    func wholeSession(encoding: SliderReferenceServer.BodyEncoding) async throws {
        defer { server.stop() }
        let reference = SliderReferenceServer(stepsPerSession: 2, encoding: encoding)
        serve(reference)
        let service = service()
        let first = try await service.start()
        guard case .step(let step) = first else {
            Issue.record("no step: \(first)")
            return
        }
        #expect(step.ticks == SliderReferenceServer.sampleTicks)
        let second = try await service.next(sessionID: step.sessionID, choice: 8)
        #expect(try await service.next(sessionID: second.sessionID, choice: 3) == .complete(sessionID: step.sessionID))
        // The wire carries the choice as a string, in snake_case.
        let bodies = server.requests.map { String(decoding: $0.body, as: UTF8.self) }
        #expect(bodies.first == #"{"choice":"start"}"#)
        #expect(bodies.dropFirst().first == #"{"session_id":\#(step.sessionID),"choice":"8"}"#)
        #expect(await reference.choices(ofSession: step.sessionID) == [8, 3])
        // Starting over is a new session.
        #expect(try await service.start().sessionID != step.sessionID)
    }

    @Test("a 500 and a malformed body are typed errors, and the next attempt succeeds")
    func failures() async throws {
        defer { server.stop() }
        let reference = SliderReferenceServer(stepsPerSession: 3)
        serve(reference)
        let service = service()
        server.script("/test_start", [.status(500)])
        await #expect(throws: SliderServiceError(.httpStatus(500, bodyPreview: ""), url: server.url("/test_start"))) {
            try await service.start()
        }
        let step = try await service.start()
        server.route("/test_next", .response(status: 200, body: Data("<html>oops</html>".utf8)))
        do {
            _ = try await service.next(sessionID: step.sessionID, choice: 1)
            Issue.record("decoded")
        } catch {
            guard case .decoding = error.kind else {
                Issue.record("\(error)")
                return
            }
        }
        serve(reference)
        #expect(try await service.next(sessionID: step.sessionID, choice: 1).sessionID == step.sessionID)
    }
}
