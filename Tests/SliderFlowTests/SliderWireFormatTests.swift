import Foundation
import SliderFlow
import TestSupport
import Testing

@Suite("Slider wire format")
struct SliderWireFormatTests {
    static let fixtures = FixtureLoader(bundle: .module)
    static let briefTicks = SliderReferenceServer.sampleTicks

    /// The brief's three bodies (shared/fixtures/slider, from the challenge-conchalabs-ios brief),
    /// each as a JSON object and as a double-encoded JSON string.
    @Test(
        "decodes every fixture body in both encodings",
        arguments: [
            (
                "test_start-response",
                SliderBody.reply(.step(SliderStep(sessionID: 3448, stepCount: 1, ticks: briefTicks)))
            ),
            ("test_next-response", .reply(.step(SliderStep(sessionID: 3448, stepCount: 2, ticks: briefTicks)))),
            ("test_next-complete", .reply(.complete(sessionID: 3448))),
        ],
        [".json", ".double-encoded.json"]
    )
    func fixtureBodies(fixture: (name: String, expected: SliderBody), suffix: String) throws {
        let body = try Self.fixtures.data(fixture.name + suffix)
        #expect(try SliderWireFormat.decode(body) == fixture.expected)
    }

    @Test("keeps float noise and duplicates exactly")
    func exactTicks() throws {
        let body = try Self.fixtures.data("test_start-response.json")
        guard case .reply(.step(let step)) = try SliderWireFormat.decode(body) else {
            Issue.record("not a step")
            return
        }
        #expect(step.ticks[3] == -89.03999999999999)
        #expect(step.ticks[0] == step.ticks[1])
        #expect(step.ticks.count == 15)
    }

    @Test(
        "accepts complete as a string or a Boolean, and session_id as a number or a string",
        arguments: [
            (#"{"session_id": 7, "complete": "true"}"#, SliderBody.reply(.complete(sessionID: 7))),
            (#"{"session_id": 7, "complete": true}"#, .reply(.complete(sessionID: 7))),
            (#"{"session_id": "7", "complete": "TRUE"}"#, .reply(.complete(sessionID: 7))),
            (
                #"{"session_id": 7, "complete": "false", "ticks": [1, 2], "step_count": 3}"#,
                .reply(.step(SliderStep(sessionID: 7, stepCount: 3, ticks: [1, 2])))
            ),
            (#"{"error": "session expired"}"#, .error(message: "session expired")),
            (#""{\"error\": \"bad choice\"}""#, .error(message: "bad choice")),
            (#"{"error": {"code": 12}}"#, .error(message: "{code:12.0}")),
        ]
    )
    func lenientFields(json: String, expected: SliderBody) throws {
        #expect(try SliderWireFormat.decode(Data(json.utf8)) == expected)
    }

    @Test(
        "anything else is a typed error that quotes the body",
        arguments: [
            ("", "notJSON"),
            ("<html>502 Bad Gateway</html>", "notJSON"),
            (#""not json inside""#, "notJSON"),
            ("[1, 2, 3]", "unexpectedShape"),
            (#"{"ticks": [1], "step_count": 1}"#, "unexpectedShape"),
            (#"{"session_id": 1.5, "ticks": [1], "step_count": 1}"#, "unexpectedShape"),
            (#"{"session_id": 1, "complete": "maybe"}"#, "unexpectedShape"),
            (#"{"session_id": 1, "complete": "false"}"#, "unexpectedShape"),
            (#"{"session_id": 1, "ticks": [], "step_count": 1}"#, "unexpectedShape"),
            (#"{"session_id": 1, "ticks": [1, "2"], "step_count": 1}"#, "unexpectedShape"),
            (#"{"session_id": 1, "ticks": [1, true], "step_count": 1}"#, "unexpectedShape"),
            (#"{"session_id": 1, "ticks": [1, 2]}"#, "unexpectedShape"),
            (#"{"session_id": 1, "ticks": [1, 2], "step_count": -1}"#, "unexpectedShape"),
            (#"{"session_id": true, "complete": true}"#, "unexpectedShape"),
        ]
    )
    func rejects(json: String, kind: String) {
        do {
            let decoded = try SliderWireFormat.decode(Data(json.utf8))
            Issue.record("decoded \(decoded) from \(json)")
        } catch {
            switch error.kind {
            case .notJSON:
                #expect(kind == "notJSON")
                #expect(error.preview == String(json.prefix(80)))
            case .unexpectedShape:
                #expect(kind == "unexpectedShape")
                #expect(error.preview == String(json.prefix(80)))
            case .bodyTooLarge:
                Issue.record("unexpected \(error)")
            }
            #expect(json.isEmpty || error.description.contains(String(json.prefix(20))))
        }
    }

    @Test("an oversized body is refused before parsing")
    func oversized() {
        let body = Data(repeating: 0x20, count: SliderWireFormat.maximumBodySize + 1)
        let tooLarge = SliderDecodingError(
            .bodyTooLarge(size: body.count, limit: SliderWireFormat.maximumBodySize), preview: "")
        #expect(throws: tooLarge) {
            try SliderWireFormat.decode(body)
        }
    }

    @Test("requests encode exactly what the brief says: choice as a string, snake_case keys")
    func requestBodies() {
        #expect(String(decoding: SliderWireFormat.startRequestBody(), as: UTF8.self) == #"{"choice":"start"}"#)
        #expect(
            String(decoding: SliderWireFormat.nextRequestBody(sessionID: 3448, choice: 8), as: UTF8.self)
                == #"{"session_id":3448,"choice":"8"}"#)
    }
}
