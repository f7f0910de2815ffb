import Foundation
import SliderFlow
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("SliderReferenceServer")
struct SliderReferenceServerTests {
    let base = URL(literal: "https://slider.example")

    func post(_ server: SliderReferenceServer, _ path: String, _ body: String) async throws -> (Int, SliderBody?) {
        var request = URLRequest(url: base.appendingPathComponent(path))
        request.httpMethod = "POST"
        request.httpBody = Data(body.utf8)
        let (data, response) = try await server.send(request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, try? SliderWireFormat.decode(data))
    }

    @Test("writes bodies like the brief's server, in both encodings")
    func encodings() async throws {
        let object = SliderReferenceServer(encoding: .object)
        var request = URLRequest(url: base.appendingPathComponent("test_start"))
        request.httpMethod = "POST"
        request.httpBody = SliderWireFormat.startRequestBody()
        let (data, _) = try await object.send(request)
        let expected = try FixtureLoader(bundle: .module).data("test_start-response.json")
        // Same fields and values as the recorded body (key order aside).
        #expect(try SliderWireFormat.decode(data) == SliderWireFormat.decode(expected))
        let doubled = SliderReferenceServer(encoding: .doubleEncoded)
        let (quoted, _) = try await doubled.send(request)
        #expect(quoted.first == UInt8(ascii: "\""))
        #expect(try SliderWireFormat.decode(quoted) == SliderWireFormat.decode(expected))
    }

    @Test(
        "validates requests as the protocol documents",
        arguments: [
            ("test_next", #"{"session_id": 3448, "choice": 8}"#, 400),
            ("test_next", #"{"session_id": 3448, "choice": "15"}"#, 400),
            ("test_next", #"{"session_id": 3448, "choice": "-1"}"#, 400),
            ("test_next", #"{"session_id": 9999, "choice": "1"}"#, 404),
            ("test_next", #"{"choice": "1"}"#, 400),
            ("test_start", #"{"choice": "begin"}"#, 400),
            ("elsewhere", #"{}"#, 404),
            ("test_next", #"{"session_id": 3448, "choice": "14"}"#, 200),
        ]
    )
    func validation(path: String, body: String, status: Int) async throws {
        let server = SliderReferenceServer()
        _ = try await post(server, "test_start", #"{"choice": "start"}"#)
        let (code, decoded) = try await post(server, path, body)
        #expect(code == status)
        if status != 200, case .error(let message)? = decoded {
            #expect(!message.isEmpty)
        } else if status != 200 {
            Issue.record("no error body for \(body)")
        }
    }

    @Test("a session completes after its configured number of steps and records the choices")
    func completes() async throws {
        let server = SliderReferenceServer(stepsPerSession: 2, firstSessionID: 70)
        _ = try await post(server, "test_start", #"{"choice":"start"}"#)
        let (_, second) = try await post(server, "test_next", #"{"session_id":70,"choice":"3"}"#)
        guard case .reply(.step(let step))? = second else {
            Issue.record("no second step")
            return
        }
        #expect(step.stepCount == 2)
        let (_, done) = try await post(server, "test_next", #"{"session_id":70,"choice":"0"}"#)
        #expect(done == .reply(.complete(sessionID: 70)))
        #expect(await server.choices(ofSession: 70) == [3, 0])
        let (status, _) = try await post(server, "test_next", #"{"session_id":70,"choice":"0"}"#)
        #expect(status == 404)
    }
}
