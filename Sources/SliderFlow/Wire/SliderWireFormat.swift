public import Foundation
internal import HTTPSupport

/// Why a slider body could not be decoded, with the body's first bytes.
public struct SliderDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong.
    public enum Kind: Hashable, Sendable {
        /// The body is not JSON (nor a JSON string containing JSON).
        case notJSON
        /// The body is JSON but not an object of the slider protocol; the reason says which field.
        case unexpectedShape(reason: String)
        /// The body is larger than ``SliderWireFormat/maximumBodySize``.
        case bodyTooLarge(size: Int, limit: Int)
    }

    /// What was wrong.
    public var kind: Kind
    /// The body's first bytes, readable (see `bodyPreview`); empty for a body too large to read.
    public var preview: String

    /// Creates an error.
    public init(_ kind: Kind, preview: String) {
        self.kind = kind
        self.preview = preview
    }

    /// A sentence saying what was wrong, with the start of the body.
    public var description: String {
        switch kind {
        case .notJSON: "The body is not JSON: \(preview)"
        case .unexpectedShape(let reason): "The body is not a slider reply (\(reason)): \(preview)"
        case .bodyTooLarge(let size, let limit): "The body has \(size) bytes; at most \(limit) are read"
        }
    }
}

/// A decoded server body: a reply, or the server's own error.
public enum SliderBody: Sendable, Hashable {
    /// A step or the end of the session.
    case reply(SliderReply)
    /// An `{"error": …}` body; the message is the error's text (or its JSON when not a string).
    case error(message: String)
}

/// The slider protocol's JSON, as the API's documentation shows it and as its server really sends it.
///
/// The server may send a body either as a JSON object or as a JSON *string* that contains the
/// object (the documentation prints every body wrapped in quotes); both decode the same. `complete` may
/// be the string `"true"` or a Boolean. Requests encode the choice as a string and use
/// snake_case keys: `{"session_id": 3448, "choice": "8"}`.
public enum SliderWireFormat {
    /// The largest body decoded: a step of a few dozen ticks is well under a kilobyte.
    public static let maximumBodySize = 1 << 20
    /// The most ticks one step may offer.
    public static let maximumTickCount = 10_000

    /// Decodes a response body.
    ///
    /// - Throws: ``SliderDecodingError`` saying what was wrong, with the body's first bytes.
    /// - Complexity: O(*n*) in the body's size.
    public static func decode(_ body: Data) throws(SliderDecodingError) -> SliderBody {
        guard body.count <= maximumBodySize else {
            throw SliderDecodingError(.bodyTooLarge(size: body.count, limit: maximumBodySize), preview: "")
        }
        let preview = bodyPreview(body, limit: 80)
        var value: JSONValue
        do {
            value = try JSONDecoder().decode(JSONValue.self, from: body)
        } catch {
            throw SliderDecodingError(.notJSON, preview: preview)
        }
        if case .string(let inner) = value {
            // Double-encoded: the JSON value is a string holding the real JSON (one level only).
            do {
                value = try JSONDecoder().decode(JSONValue.self, from: Data(inner.utf8))
            } catch {
                throw SliderDecodingError(.notJSON, preview: preview)
            }
        }
        guard case .object(let fields) = value else {
            throw SliderDecodingError(.unexpectedShape(reason: "expected a JSON object"), preview: preview)
        }
        return try decode(fields: fields, preview: preview)
    }

    private static func decode(fields: [String: JSONValue], preview: String) throws(SliderDecodingError) -> SliderBody {
        func shape(_ reason: String) -> SliderDecodingError {
            SliderDecodingError(.unexpectedShape(reason: reason), preview: preview)
        }
        if let error = fields["error"] {
            return .error(message: error.text)
        }
        guard let rawSession = fields["session_id"] else { throw shape("no session_id") }
        guard let sessionID = rawSession.integer else { throw shape("session_id is not an integer") }
        if let rawComplete = fields["complete"] {
            guard let complete = rawComplete.boolean else { throw shape("complete is not true or false") }
            if complete { return .reply(.complete(sessionID: sessionID)) }
        }
        guard let rawTicks = fields["ticks"] else {
            throw shape(
                fields["complete"] == nil ? "no ticks and no complete" : "complete is false but there are no ticks")
        }
        guard case .array(let list) = rawTicks else { throw shape("ticks is not an array") }
        guard !list.isEmpty else { throw shape("ticks is empty") }
        guard list.count <= maximumTickCount else { throw shape("\(list.count) ticks; at most \(maximumTickCount)") }
        var ticks: [Double] = []
        ticks.reserveCapacity(list.count)
        for (index, value) in list.enumerated() {
            guard case .number(let number) = value, number.isFinite else {
                throw shape("tick \(index) is not a number")
            }
            ticks.append(number)
        }
        guard let rawStep = fields["step_count"] else { throw shape("no step_count") }
        guard let stepCount = rawStep.integer, stepCount >= 0 else { throw shape("step_count is not a whole number") }
        return .reply(.step(SliderStep(sessionID: sessionID, stepCount: stepCount, ticks: ticks)))
    }

    /// The start request's body: `{"choice":"start"}`.
    public static func startRequestBody() -> Data {
        Data(#"{"choice":"start"}"#.utf8)
    }

    /// A choice request's body: `{"session_id":3448,"choice":"8"}`, the index as a string.
    public static func nextRequestBody(sessionID: Int, choice: Int) -> Data {
        Data(#"{"session_id":\#(sessionID),"choice":"\#(choice)"}"#.utf8)
    }
}

/// Any JSON value, decoded the same way on every platform.
enum JSONValue: Decodable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        if var array = try? decoder.unkeyedContainer() {
            var values: [JSONValue] = []
            while !array.isAtEnd { values.append(try array.decode(JSONValue.self)) }
            self = .array(values)
            return
        }
        if let object = try? decoder.container(keyedBy: AnyKey.self) {
            var fields: [String: JSONValue] = [:]
            for key in object.allKeys { fields[key.stringValue] = try object.decode(JSONValue.self, forKey: key) }
            self = .object(fields)
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let bool = try? single.decode(Bool.self) {
            self = .bool(bool)
        } else if let number = try? single.decode(Double.self) {
            self = .number(number)
        } else {
            self = .string(try single.decode(String.self))
        }
    }

    /// An integer, or a string of one (`3448` or `"3448"`).
    var integer: Int? {
        switch self {
        case .number(let value) where value == value.rounded() && abs(value) < 9e15: Int(value)
        case .string(let text): Int(text)
        default: nil
        }
    }

    /// A Boolean, or the string `"true"`/`"false"` in any case.
    var boolean: Bool? {
        switch self {
        case .bool(let value): value
        case .string(let text) where text.lowercased() == "true": true
        case .string(let text) where text.lowercased() == "false": false
        default: nil
        }
    }

    /// A string's text, or a compact rendering of any other value.
    var text: String {
        switch self {
        case .null: "null"
        case .bool(let value): String(value)
        case .number(let value): String(value)
        case .string(let value): value
        case .array(let values): "[" + values.map(\.text).joined(separator: ",") + "]"
        case .object(let fields):
            "{" + fields.keys.sorted().map { "\($0):\(fields[$0]?.text ?? "")" }.joined(separator: ",") + "}"
        }
    }

    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
