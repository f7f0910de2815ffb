import DecimalFormatting

/// An HLS attribute list (RFC 8216 §4.2): comma-separated `NAME=value` pairs, in order.
///
/// Values keep their written form and whether they were quoted, so a playlist writes back as it
/// was read; typed accessors read them as the RFC's value types.
public struct HLSAttributeList: Hashable, Sendable, Sequence {
    /// One attribute.
    public struct Attribute: Hashable, Sendable {
        /// The name: uppercase letters, digits and `-`.
        public var name: String
        /// The value, without quotes.
        public var value: String
        /// Whether the value was a quoted string.
        public var isQuoted: Bool

        /// Creates an attribute.
        public init(name: String, value: String, isQuoted: Bool) {
            self.name = name
            self.value = value
            self.isQuoted = isQuoted
        }
    }

    /// The attributes in the order written.
    public var attributes: [Attribute]

    /// Creates a list.
    public init(_ attributes: [Attribute] = []) {
        self.attributes = attributes
    }

    /// Iterates over the attributes in order.
    public func makeIterator() -> IndexingIterator<[Attribute]> { attributes.makeIterator() }

    /// The attribute named `name`, if present (the first, should a name repeat).
    public subscript(name: String) -> Attribute? {
        // Comparing byte counts first skips most string comparisons (names differ in length).
        let count = name.utf8.count
        return attributes.first { $0.name.utf8.count == count && $0.name == name }
    }

    /// Whether an attribute named `name` is present.
    public func contains(_ name: String) -> Bool { self[name] != nil }

    /// Sets `name` to `value`, replacing an existing attribute in place or appending.
    public mutating func set(_ name: String, to value: String, quoted: Bool) {
        if let index = attributes.firstIndex(where: { $0.name == name }) {
            attributes[index] = Attribute(name: name, value: value, isQuoted: quoted)
        } else {
            attributes.append(Attribute(name: name, value: value, isQuoted: quoted))
        }
    }

    // MARK: Typed values

    /// A quoted-string value.
    public func quotedString(_ name: String) -> String? {
        guard let attribute = self[name], attribute.isQuoted else { return nil }
        return attribute.value
    }

    /// An enumerated-string value (unquoted).
    public func enumeratedString(_ name: String) -> String? {
        guard let attribute = self[name], !attribute.isQuoted else { return nil }
        return attribute.value
    }

    /// A decimal-integer value: digits only, at most 20 of them.
    public func decimalInteger(_ name: String) -> UInt64? {
        guard let attribute = self[name], !attribute.isQuoted else { return nil }
        return Self.decimalInteger(attribute.value)
    }

    /// A decimal-floating-point value (non-negative, no exponent).
    public func decimalFloat(_ name: String) -> Double? {
        guard let attribute = self[name], !attribute.isQuoted else { return nil }
        return Self.decimalFloat(attribute.value, signed: false)
    }

    /// A signed-decimal-floating-point value.
    public func signedDecimalFloat(_ name: String) -> Double? {
        guard let attribute = self[name], !attribute.isQuoted else { return nil }
        return Self.decimalFloat(attribute.value, signed: true)
    }

    /// A decimal-resolution value `WIDTHxHEIGHT`.
    public func resolution(_ name: String) -> (width: Int, height: Int)? {
        guard let attribute = self[name], !attribute.isQuoted else { return nil }
        let parts = attribute.value.split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let width = Self.decimalInteger(parts[0]), let height = Self.decimalInteger(parts[1]),
            width <= UInt64(Int.max), height <= UInt64(Int.max)
        else { return nil }
        return (Int(width), Int(height))
    }

    /// A hexadecimal-sequence value `0x…`, as bytes.
    public func hexadecimalSequence(_ name: String) -> [UInt8]? {
        guard let attribute = self[name], !attribute.isQuoted else { return nil }
        return Self.hexadecimal(attribute.value)
    }

    /// A YES/NO enumerated value.
    public func boolean(_ name: String) -> Bool? {
        switch enumeratedString(name) {
        case "YES": true
        case "NO": false
        default: nil
        }
    }

    static func decimalInteger(_ text: some StringProtocol) -> UInt64? {
        guard !text.isEmpty, text.utf8.count <= 20, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            return nil
        }
        return UInt64(text)
    }

    static func decimalFloat(_ text: some StringProtocol, signed: Bool) -> Double? {
        if signed, text.utf8.first == UInt8(ascii: "-") {
            return PlainDecimalReading.value(text.dropFirst()).map { -$0 }
        }
        return PlainDecimalReading.value(text)
    }

    /// Whether `name` is present as a hexadecimal-sequence, checked without building the bytes.
    ///
    /// - Complexity: O(*n*) in the value's length.
    func isHexadecimalSequence(_ name: String) -> Bool {
        guard let attribute = self[name], !attribute.isQuoted else { return false }
        var value = attribute.value
        return value.withUTF8 { Self.hexadecimalDigits($0)?.allSatisfy { Self.nibble($0) != nil } ?? false }
    }

    static func hexadecimal(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { utf8 in
            guard let digits = hexadecimalDigits(utf8) else { return nil }
            var bytes = [UInt8](repeating: 0, count: (digits.count + 1) / 2)
            // An odd count reads as if a leading zero were written: digit k fills byte (k + odd) / 2.
            let odd = digits.count % 2
            for (offset, digit) in digits.enumerated() {
                guard let value = nibble(digit) else { return nil }
                let position = offset + odd
                bytes[position / 2] |= position % 2 == 0 ? value << 4 : value
            }
            return bytes
        }
    }

    /// The digits after the `0x` or `0X` that starts a hexadecimal-sequence, or `nil` without
    /// that prefix or without a digit after it (RFC 8216 §4.2).
    private static func hexadecimalDigits(_ utf8: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8>? {
        guard utf8.count > 2, utf8[0] == UInt8(ascii: "0"), utf8[1] == UInt8(ascii: "x") || utf8[1] == UInt8(ascii: "X")
        else { return nil }
        return UnsafeBufferPointer(rebasing: utf8[2...])
    }

    private static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }

    // MARK: Parsing and writing

    /// Parses an attribute list by the RFC grammar, tolerating spaces after commas.
    ///
    /// - Throws: A description of the first violation: a bad name, a name repeated, a missing
    ///   `=`, an unclosed quote, a quote inside an unquoted value, or a trailing comma.
    /// - Complexity: O(*n* + *a*²) for *n* bytes and *a* attributes (at most
    ///   ``HLSParserLimits/maximumAttributeCount`` are kept).
    static func parse(_ text: Substring, maximumCount: Int = .max) throws(AttributeListError) -> HLSAttributeList {
        // A native string's bytes are read in place; others are made contiguous once.
        var text = text
        return try text.withUTF8 { bytes in
            Result { () throws(AttributeListError) in try parse(bytes: bytes, maximumCount: maximumCount) }
        }.get()
    }

    /// ``parse(_:maximumCount:)`` over the list's UTF-8 bytes.
    ///
    /// - Complexity: O(*n*) in the bytes, plus O(*a*²) name comparisons for *a* attributes.
    private static func parse(bytes: UnsafeBufferPointer<UInt8>, maximumCount: Int) throws(AttributeListError)
        -> HLSAttributeList
    {
        func text(_ range: Range<Int>) -> String {
            String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
        }
        var attributes: [Attribute] = []
        attributes.reserveCapacity(6)
        var index = 0
        let count = bytes.count
        func skipSpaces() {
            while index < count, bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\t") { index += 1 }
        }
        skipSpaces()
        if index == count { return HLSAttributeList() }
        while true {
            skipSpaces()
            let nameStart = index
            while index < count, bytes[index] != UInt8(ascii: "=") {
                let byte = bytes[index]
                let valid =
                    (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x30 && byte <= 0x39) || byte == UInt8(ascii: "-")
                guard valid else {
                    let name = text(nameStart..<Swift.min(count, index + 1))
                    throw .badName(name)
                }
                index += 1
            }
            guard index < count, index > nameStart else { throw .missingEquals }
            let name = text(nameStart..<index)
            // §4.2: a name occurs at most once. Lists are short, so a scan beats hashing.
            if attributes.contains(where: { $0.name == name }) { throw .duplicateName(name) }
            guard attributes.count < maximumCount else { throw .tooMany(attributes.count + 1) }
            index += 1  // '='
            if index < count, bytes[index] == UInt8(ascii: "\"") {
                index += 1
                let valueStart = index
                while index < count, bytes[index] != UInt8(ascii: "\"") { index += 1 }
                guard index < count else { throw .unterminatedQuote(name) }
                attributes.append(
                    Attribute(
                        name: name, value: text(valueStart..<index), isQuoted: true))
                index += 1
            } else {
                let valueStart = index
                while index < count, bytes[index] != UInt8(ascii: ",") {
                    guard bytes[index] != UInt8(ascii: "\"") else { throw .quoteInValue(name) }
                    index += 1
                }
                var valueEnd = index
                while valueEnd > valueStart, bytes[valueEnd - 1] == UInt8(ascii: " ") { valueEnd -= 1 }
                guard valueEnd > valueStart else { throw .emptyValue(name) }
                attributes.append(
                    Attribute(
                        name: name, value: text(valueStart..<valueEnd), isQuoted: false))
            }
            skipSpaces()
            if index == count { break }
            guard bytes[index] == UInt8(ascii: ",") else { throw .expectedComma(name) }
            index += 1
            skipSpaces()
            guard index < count else { throw .trailingComma }
        }
        return HLSAttributeList(attributes)
    }

    /// The list as written in a playlist: `NAME=value,NAME="quoted"`.
    public var formatted: String {
        attributes.map { $0.isQuoted ? "\($0.name)=\"\($0.value)\"" : "\($0.name)=\($0.value)" }.joined(separator: ",")
    }
}

/// A violation of the attribute-list grammar, turned into an `HLSParseError` by the parser.
enum AttributeListError: Error {
    case badName(String)
    case duplicateName(String)
    case tooMany(Int)
    case missingEquals
    case unterminatedQuote(String)
    case quoteInValue(String)
    case emptyValue(String)
    case expectedComma(String)
    case trailingComma

    var reason: String {
        switch self {
        case .badName(let name): "bad attribute name '\(name)'"
        case .duplicateName(let name): "\(name) appears twice"
        case .tooMany(let count): "more than \(count - 1) attributes"
        case .missingEquals: "an attribute without '='"
        case .unterminatedQuote(let name): "the quoted value of \(name) is not closed"
        case .quoteInValue(let name): "a quote inside the unquoted value of \(name)"
        case .emptyValue(let name): "\(name) has an empty value"
        case .expectedComma(let name): "expected ',' after \(name)"
        case .trailingComma: "a trailing comma"
        }
    }
}
