/// An RFC 6570 URI template, expanded at levels 1 to 3 (and the level-4 prefix modifier).
///
/// `https://content.viaplay.com/ios-se/serier{?dtg,productsPerPage}` with
/// `productsPerPage = "20"` expands to `https://content.viaplay.com/ios-se/serier?productsPerPage=20`:
/// undefined variables vanish with their separators, values are percent-encoded, and the
/// operators `+ # . / ; ? &` behave as the RFC's table says. Stripping the braces, as a public
/// solution did, breaks every link the moment the template changes.
public struct URITemplate: Hashable, Sendable, CustomStringConvertible {
    /// Why a template cannot be read, and where.
    public struct TemplateError: Error, Hashable, Sendable, CustomStringConvertible {
        /// What was wrong.
        public enum Kind: Hashable, Sendable {
            /// A `{` without its `}`.
            case unclosedExpression
            /// An expression with an operator or variable name the RFC does not allow; the
            /// expression as written.
            case invalidExpression(String)
        }

        /// What was wrong.
        public var kind: Kind
        /// The template as written.
        public var template: String
        /// The offset in characters of the expression's `{`.
        public var position: Int

        /// Creates an error.
        public init(_ kind: Kind, template: String, position: Int) {
            self.kind = kind
            self.template = template
            self.position = position
        }

        /// A sentence naming the template and the position.
        public var description: String {
            switch kind {
            case .unclosedExpression: "'\(template)': the '{' at \(position) is never closed"
            case .invalidExpression(let expression): "'\(template)': invalid expression \(expression) at \(position)"
            }
        }
    }

    private enum Part: Hashable, Sendable {
        case literal(String)
        case expression(operator: Character?, variables: [(name: String, prefix: Int?)])

        static func == (lhs: Part, rhs: Part) -> Bool {
            switch (lhs, rhs) {
            case (.literal(let a), .literal(let b)): a == b
            case (.expression(let a, let x), .expression(let b, let y)):
                a == b && x.map(\.name) == y.map(\.name) && x.map(\.prefix) == y.map(\.prefix)
            default: false
            }
        }

        func hash(into hasher: inout Hasher) {
            switch self {
            case .literal(let text): hasher.combine(text)
            case .expression(let op, let variables):
                hasher.combine(op)
                for variable in variables {
                    hasher.combine(variable.name)
                    hasher.combine(variable.prefix)
                }
            }
        }
    }

    /// The template as written.
    public let template: String
    private let parts: [Part]

    /// Parses a template.
    ///
    /// - Throws: ``TemplateError`` for an unclosed brace, an unknown operator or a bad name.
    public init(_ template: String) throws(TemplateError) {
        self.template = template
        var parts: [Part] = []
        var literal = ""
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{") {
            literal += rest[..<open]
            let position = template.distance(from: template.startIndex, to: open)
            guard let close = rest[open...].firstIndex(of: "}") else {
                throw TemplateError(.unclosedExpression, template: template, position: position)
            }
            if !literal.isEmpty { parts.append(.literal(literal)) }
            literal = ""
            var body = rest[rest.index(after: open)..<close]
            var op: Character?
            if let first = body.first, "+#./;?&".contains(first) {
                op = first
                body = body.dropFirst()
            }
            var variables: [(String, Int?)] = []
            for spec in body.split(separator: ",", omittingEmptySubsequences: false) {
                var name = Substring(spec)
                var prefix: Int?
                if let colon = spec.firstIndex(of: ":") {
                    guard let length = Int(spec[spec.index(after: colon)...]), (1..<10_000).contains(length) else {
                        throw TemplateError(
                            .invalidExpression(String(rest[open...close])), template: template, position: position)
                    }
                    prefix = length
                    name = spec[..<colon]
                }
                guard !name.isEmpty,
                    name.allSatisfy({
                        $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "." || $0 == "%")
                    })
                else {
                    throw TemplateError(
                        .invalidExpression(String(rest[open...close])), template: template, position: position)
                }
                variables.append((String(name), prefix))
            }
            parts.append(.expression(operator: op, variables: variables))
            rest = rest[rest.index(after: close)...]
        }
        literal += rest
        if !literal.isEmpty { parts.append(.literal(literal)) }
        self.parts = parts
    }

    /// The names of the template's variables, in order.
    public var variableNames: [String] {
        parts.flatMap { part -> [String] in
            if case .expression(_, let variables) = part { return variables.map(\.name) }
            return []
        }
    }

    /// The template expanded with `values`; variables without a value are left out.
    ///
    /// - Complexity: O(*n*) in the template's and values' lengths.
    public func expand(_ values: [String: String] = [:]) -> String {
        var result = ""
        for part in parts {
            switch part {
            case .literal(let text):
                result += Self.encode(text, allowReserved: true)
            case .expression(let op, let variables):
                let rule = Rule(op)
                var first = true
                for variable in variables {
                    guard var value = values[variable.name] else { continue }
                    if let prefix = variable.prefix { value = String(value.prefix(prefix)) }
                    result += first ? rule.first : rule.separator
                    first = false
                    if rule.named {
                        result += variable.name
                        if value.isEmpty {
                            result += rule.ifEmpty
                            continue
                        }
                        result += "="
                    }
                    result += Self.encode(value, allowReserved: rule.allowsReserved)
                }
            }
        }
        return result
    }

    /// The template as written.
    public var description: String { template }

    /// RFC 6570 Appendix A's table.
    private struct Rule {
        var first = ""
        var separator = ","
        var named = false
        var ifEmpty = ""
        var allowsReserved = false

        init(_ op: Character?) {
            switch op {
            case "+": allowsReserved = true
            case "#": (first, allowsReserved) = ("#", true)
            case ".": (first, separator) = (".", ".")
            case "/": (first, separator) = ("/", "/")
            case ";": (first, separator, named) = (";", ";", true)
            case "?": (first, separator, named, ifEmpty) = ("?", "&", true, "=")
            case "&": (first, separator, named, ifEmpty) = ("&", "&", true, "=")
            default: break
            }
        }
    }

    /// Percent-encodes all but unreserved characters (and reserved ones, and existing escapes,
    /// when `allowReserved`).
    static func encode(_ text: String, allowReserved: Bool) -> String {
        var result = ""
        let bytes = Array(text.utf8)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            let unreserved =
                (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
                || byte == UInt8(ascii: "~")
            let reserved = ":/?#[]@!$&'()*+,;=".utf8.contains(byte)
            if allowReserved, byte == UInt8(ascii: "%"), index + 2 < bytes.count, bytes[index + 1].isHexDigit,
                bytes[index + 2].isHexDigit
            {
                result += String(decoding: bytes[index...(index + 2)], as: UTF8.self)
                index += 3
                continue
            }
            if unreserved || (allowReserved && reserved) {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                result +=
                    "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0xF, radix: 16, uppercase: true)
            }
            index += 1
        }
        return result
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (self >= 0x30 && self <= 0x39) || (self >= 0x41 && self <= 0x46) || (self >= 0x61 && self <= 0x66)
    }
}
