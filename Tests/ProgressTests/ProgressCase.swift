import Foundation
import Progress
import TestSupport
import Testing

/// One vector of `Fixtures/cases.json` (copied from `shared/fixtures/progress/cases.json`,
/// re-derived there by an independent reference model, `cases_gen.py`).
struct ProgressCase: Sendable, CustomTestStringConvertible {
    struct Configuration: Decodable, Sendable {
        var duration: FlexibleDouble?
        var tolerance: Double
        var completionThreshold: Double
        var maxJump: Double?
    }

    struct Expected: Decodable, Sendable {
        var fraction: Double?
        var watchedSeconds: Double
        var resume: Double?
        var completed: Bool
        var segments: [[Double]]
        var reportedProgress: Double?
    }

    enum Event: Sendable {
        case playback(String, Double)
        case segment(Double, Double)
        case xapi(String)
        case merge(segments: [[Double]], resume: Double?, wallClock: Double?)
        case localResumeAt(Double)
    }

    var id: String
    var title: String
    var configuration: Configuration
    var events: [Event]
    var expected: Expected

    var testDescription: String { "\(id): \(title)" }

    static func all() throws -> [ProgressCase] {
        let data = try FixtureLoader(bundle: .module).data("cases.json")
        guard let root = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let cases = root["cases"] as? [[String: Any]]
        else { throw FixtureError.shape("cases.json has no 'cases' array") }
        return try cases.map(ProgressCase.init(json:))
    }

    enum FixtureError: Error {
        case shape(String)
    }

    init(json: [String: Any]) throws {
        func decode<T: Decodable>(_ type: T.Type, _ value: Any?) throws -> T {
            let data = try JSONSerialization.data(withJSONObject: value ?? NSNull(), options: [.fragmentsAllowed])
            return try JSONDecoder().decode(T.self, from: data)
        }
        id = try decode(String.self, json["id"])
        title = try decode(String.self, json["title"])
        configuration = try decode(Configuration.self, json["config"])
        expected = try decode(Expected.self, json["expected"])
        let caseID = id
        guard let rawEvents = json["events"] as? [[Any]] else { throw FixtureError.shape("\(caseID): events") }
        events = try rawEvents.map { raw in
            guard let name = raw.first as? String else { throw FixtureError.shape("\(caseID): event name") }
            func number(_ index: Int) throws -> Double {
                try decode(FlexibleDouble.self, raw.count > index ? raw[index] : nil).value
            }
            switch name {
            case "segment": return .segment(try number(1), try number(2))
            case "xapi": return .xapi(try decode(String.self, raw.count > 1 ? raw[1] : nil))
            case "local_resume_at": return .localResumeAt(try number(1))
            case "merge":
                return .merge(
                    segments: try decode([[Double]].self, raw[1]),
                    resume: try decode(FlexibleDouble?.self, raw[2])?.value,
                    wallClock: try decode(FlexibleDouble?.self, raw[3])?.value)
            default: return .playback(name, try number(1))
            }
        }
    }
}

/// A number that the fixture may also write as "NaN", "+Infinity" or "-Infinity".
struct FlexibleDouble: Decodable, Sendable {
    var value: Double

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Double.self) {
            value = number
            return
        }
        switch try container.decode(String.self) {
        case "NaN": value = .nan
        case "+Infinity", "Infinity": value = .infinity
        case "-Infinity": value = -.infinity
        case let other:
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a number: \(other)")
        }
    }
}
