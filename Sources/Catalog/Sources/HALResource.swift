/// A JSON value inside a HAL resource.
public enum HALValue: Hashable, Sendable {
    /// A string.
    case string(String)
    /// A number.
    case number(Double)
    /// `true` or `false`.
    case bool(Bool)
    /// `null`.
    case null
    /// An array.
    indirect case array([HALValue])
    /// An object.
    indirect case object([String: HALValue])

    /// The string, if this is one.
    public var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The number, if this is one.
    public var number: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// The Boolean, if this is one.
    public var bool: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The value at `key`, if this is an object that has it.
    public subscript(key: String) -> HALValue? {
        if case .object(let fields) = self { return fields[key] }
        return nil
    }
}

/// A link of a HAL resource (`_links`, draft-kelly-json-hal §5).
public struct HALLink: Hashable, Sendable {
    /// The target, a URI or, when ``isTemplated``, an RFC 6570 template.
    public var href: String
    /// Whether ``href`` is a URI template.
    public var isTemplated: Bool
    /// A title for people, if given.
    public var title: String?
    /// A name that tells links of one relation apart, if given.
    public var name: String?

    /// Creates a link.
    public init(href: String, isTemplated: Bool = false, title: String? = nil, name: String? = nil) {
        self.href = href
        self.isTemplated = isTemplated
        self.title = title
        self.name = name
    }
}

/// A HAL resource: its own fields, its links, and the resources it embeds (`_embedded`,
/// draft-kelly-json-hal §4), each embedded one a resource too.
///
/// Relations are looked up by name alone or behind any CURIE prefix (`viaplay:blocks` answers
/// `blocks`), as ``HALPage`` does for its sections.
public struct HALResource: Hashable, Sendable {
    /// The fields other than `_links` and `_embedded`.
    public var fields: [String: HALValue]
    /// The links by relation; a relation with one link holds one.
    public var links: [String: [HALLink]]
    /// The embedded resources by relation; a relation with one resource holds one.
    public var embedded: [String: [HALResource]]

    /// Creates a resource.
    public init(
        fields: [String: HALValue] = [:], links: [String: [HALLink]] = [:], embedded: [String: [HALResource]] = [:]
    ) {
        self.fields = fields
        self.links = links
        self.embedded = embedded
    }

    /// The field `key` as a string, if it is one.
    public func string(_ key: String) -> String? { fields[key]?.string }

    /// The field `key` as a number, if it is one.
    public func number(_ key: String) -> Double? { fields[key]?.number }

    /// The resources embedded under `relation`, alone or behind a CURIE prefix (the exact name
    /// first, then prefixed names in sorted order); empty when there are none.
    public func embedded(_ relation: String) -> [HALResource] {
        HALRelation.first(matching: relation, in: embedded) ?? []
    }

    /// The links of `relation`, alone or behind a CURIE prefix; empty when there are none.
    public func links(_ relation: String) -> [HALLink] {
        HALRelation.first(matching: relation, in: links) ?? []
    }

}

extension HALResource: Decodable {
    /// Reads a resource from JSON; a relation may hold one link (or resource) or an array.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: HALKey.self)
        var fields: [String: HALValue] = [:]
        var links: [String: [HALLink]] = [:]
        var embedded: [String: [HALResource]] = [:]
        for key in container.allKeys {
            switch key.stringValue {
            case "_links":
                let relations = try container.decode([String: OneOrMany<HALLink>].self, forKey: key)
                links = relations.mapValues(\.values)
            case "_embedded":
                let relations = try container.decode([String: OneOrMany<HALResource>].self, forKey: key)
                embedded = relations.mapValues(\.values)
            default:
                fields[key.stringValue] = try container.decode(HALValue.self, forKey: key)
            }
        }
        self.init(fields: fields, links: links, embedded: embedded)
    }
}

extension HALLink: Decodable {
    private enum CodingKeys: String, CodingKey {
        case href, templated, title, name
    }

    /// Reads a link object; only `href` is required.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            href: try container.decode(String.self, forKey: .href),
            isTemplated: try container.decodeIfPresent(Bool.self, forKey: .templated) ?? false,
            title: try container.decodeIfPresent(String.self, forKey: .title),
            name: try container.decodeIfPresent(String.self, forKey: .name))
    }
}

extension HALValue: Decodable {
    /// Reads any JSON value; a Boolean stays a Boolean (it is tried before a number).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let array = try? container.decode([HALValue].self) {
            self = .array(array)
        } else {
            self = .object(try container.decode([String: HALValue].self))
        }
    }
}

/// Any key of a JSON object.
struct HALKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// A HAL relation's value: one object or an array of them.
struct OneOrMany<Element: Decodable>: Decodable {
    var values: [Element]

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let many = try? container.decode([Element].self) {
            values = many
        } else {
            values = [try container.decode(Element.self)]
        }
    }
}

/// Finding a HAL relation by name alone or behind a CURIE prefix.
enum HALRelation {
    /// Whether a relation's name is `relation`, alone or behind a CURIE prefix (`acme:sections`).
    static func matches(_ name: String, relation: String) -> Bool {
        guard name != relation else { return true }
        guard let colon = name.lastIndex(of: ":") else { return false }
        return name[name.index(after: colon)...] == relation && !name[..<colon].contains("/")
    }

    /// The value of the first key matching `relation`: the exact name, then prefixed names in
    /// sorted order, so that a resource naming two prefixes reads the same every time.
    static func first<Value>(matching relation: String, in values: [String: Value]) -> Value? {
        if let exact = values[relation] { return exact }
        return values.keys.filter { matches($0, relation: relation) }.sorted().first.flatMap { values[$0] }
    }
}
