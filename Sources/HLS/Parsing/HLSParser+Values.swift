import Foundation

// Tag values: integers, byte ranges and attribute lists, checked against the tag tables, and
// the renditions and keys they describe.

extension ParserState {
    func integer(_ value: Substring, tag: String, line: String) throws(HLSParseError) -> Int {
        guard let number = HLSAttributeList.decimalInteger(value), number <= UInt64(Int.max) else {
            throw HLSParseError(.invalidTagValue(tag: tag, value: String(value)), line: lineNumber, text: line)
        }
        return Int(number)
    }

    func unsigned(_ value: Substring, tag: String, line: String) throws(HLSParseError) -> UInt64 {
        guard let number = HLSAttributeList.decimalInteger(value) else {
            throw HLSParseError(.invalidTagValue(tag: tag, value: String(value)), line: lineNumber, text: line)
        }
        return number
    }

    func byteRange(_ value: Substring, tag: String, line: String) throws(HLSParseError) -> (
        length: UInt64, offset: UInt64?
    ) {
        let parts = value.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 1 || parts.count == 2, let length = HLSAttributeList.decimalInteger(parts[0]) else {
            throw HLSParseError(.invalidTagValue(tag: tag, value: String(value)), line: lineNumber, text: line)
        }
        guard parts.count == 2 else { return (length, nil) }
        guard let offset = HLSAttributeList.decimalInteger(parts[1]) else {
            throw HLSParseError(.invalidTagValue(tag: tag, value: String(value)), line: lineNumber, text: line)
        }
        guard offset <= UInt64.max - length else {
            throw HLSParseError(
                .impossibleByteRange(reason: "\(length)@\(offset) ends past 2⁶⁴"), line: lineNumber, text: line)
        }
        return (length, offset)
    }

    /// The tag's attribute list, checked: `nil` when a known enumerated attribute has a value
    /// this parser does not know, and the tag is to be ignored (RFC 8216 §6.3.1).
    mutating func attributes(_ value: Substring, tag: String, line: String, substitute: Bool = true)
        throws(HLSParseError)
        -> HLSAttributeList?
    {
        var list: HLSAttributeList
        do {
            list = try HLSAttributeList.parse(value, maximumCount: options.limits.maximumAttributeCount)
        } catch .duplicateName(let name) {
            throw HLSParseError(.duplicateAttribute(tag: tag, attribute: name), line: lineNumber, text: line)
        } catch .tooMany(let count) {
            throw HLSParseError(.limitExceeded(limit: "attributes", value: count), line: lineNumber, text: line)
        } catch {
            throw HLSParseError(.malformedAttributeList(reason: error.reason), line: lineNumber, text: line)
        }
        let rules = attributeRules[tag]
        if let enumerated = rules?.enumerated {
            for attribute in list where !attribute.isQuoted {
                guard let allowed = enumerated.first(where: { Self.sameText($0.name, attribute.name) })?.values,
                    !allowed.contains(where: { Self.sameText($0, attribute.value) })
                else { continue }
                warn(
                    HLSWarning(
                        .unrecognizedValue(tag: tag, attribute: attribute.name, value: attribute.value),
                        line: lineNumber))
                ignoresTag = true
                return nil
            }
        }
        // Most names do not start with "R": one byte rules them out before the prefix test.
        if list.attributes.contains(where: { $0.name.utf8.first == UInt8(ascii: "R") && $0.name.hasPrefix("REQ-") }) {
            uses("an attribute named REQ-…", version: 12)
        }
        // A reference needs a "{"; most playlists have none at all.
        if substitute,
            !variables.isEmpty || (containsBrace && list.attributes.contains { Self.hasVariableReference($0.value) })
        {
            for index in list.attributes.indices
            where list.attributes[index].isQuoted || list.attributes[index].value.hasPrefix("0x") {
                list.attributes[index].value = try self.substitute(list.attributes[index].value, line: line)
            }
        }
        if let known = rules?.known {
            let adoptsURI = tag == "EXT-X-STREAM-INF" && options.allowsVariantURIAttribute
            for attribute in list
            where !known.contains(where: { Self.sameText($0, attribute.name) })
                && !(adoptsURI && attribute.name == "URI")
            {
                warn(HLSWarning(.unknownAttribute(tag: tag, attribute: attribute.name), line: lineNumber))
            }
        }
        return list
    }

    /// Whether two short strings are equal, comparing byte counts first (most names differ in
    /// length, and the count of a short string is read without a call).
    @inline(__always)
    static func sameText(_ first: String, _ second: String) -> Bool {
        first.utf8.count == second.utf8.count && first == second
    }

    func require(_ names: [String], in list: HLSAttributeList, tag: String, line: String) throws(HLSParseError) {
        for name in names where !list.contains(name) {
            throw HLSParseError(.missingAttribute(tag: tag, attribute: name), line: lineNumber, text: line)
        }
    }

    /// Checks that each of `names` is present as a quoted string.
    func requireQuoted(_ names: [String], in list: HLSAttributeList, tag: String, line: String) throws(HLSParseError) {
        try require(names, in: list, tag: tag, line: line)
        for name in names where list.quotedString(name) == nil {
            throw HLSParseError(
                .invalidAttribute(tag: tag, attribute: name, value: list[name]?.value ?? ""), line: lineNumber,
                text: line)
        }
    }

    /// Checks that `name` is a decimal-floating-point value.
    func requireFloat(_ name: String, in list: HLSAttributeList, tag: String, line: String) throws(HLSParseError) {
        guard list.decimalFloat(name) != nil else {
            throw HLSParseError(
                .invalidAttribute(tag: tag, attribute: name, value: list[name]?.value ?? ""), line: lineNumber,
                text: line)
        }
    }

    func requireInteger(_ name: String, in list: HLSAttributeList, tag: String, line: String) throws(HLSParseError) {
        guard list.decimalInteger(name) != nil else {
            throw HLSParseError(
                .invalidAttribute(tag: tag, attribute: name, value: list[name]?.value ?? ""), line: lineNumber,
                text: line)
        }
    }

    mutating func rendition(_ list: HLSAttributeList, line: String) throws(HLSParseError) {
        let tag = "EXT-X-MEDIA"
        try require(["TYPE", "GROUP-ID", "NAME"], in: list, tag: tag, line: line)
        guard let typeName = list.enumeratedString("TYPE"), let type = HLSRendition.MediaType(rawValue: typeName) else {
            throw HLSParseError(
                .invalidAttribute(tag: tag, attribute: "TYPE", value: list["TYPE"]?.value ?? ""), line: lineNumber,
                text: line)
        }
        for name in ["GROUP-ID", "NAME"] where list.quotedString(name) == nil {
            throw HLSParseError(
                .invalidAttribute(tag: tag, attribute: name, value: list[name]?.value ?? ""), line: lineNumber,
                text: line)
        }
        // Unknown values were ignored with the tag; what is left here is a quoted value.
        for name in ["DEFAULT", "AUTOSELECT", "FORCED"] where list.contains(name) && list.boolean(name) == nil {
            throw HLSParseError(
                .invalidAttribute(tag: tag, attribute: name, value: list[name]?.value ?? ""), line: lineNumber,
                text: line)
        }
        // §4.3.4.1: AUTOSELECT, when present, MUST be YES if DEFAULT is YES.
        if list.boolean("DEFAULT") == true, let autoselect = list.boolean("AUTOSELECT"), !autoselect {
            warn(HLSWarning(.defaultWithoutAutoselect(name: list.quotedString("NAME") ?? ""), line: lineNumber))
        }
        if list.quotedString("INSTREAM-ID")?.hasPrefix("SERVICE") == true {
            uses("INSTREAM-ID=\"SERVICE…\"", version: 7)
        }
        if type == .closedCaptions {
            // §4.4.6.1: captions live in the video; they have an INSTREAM-ID and no URI.
            if list.contains("URI") {
                throw HLSParseError(
                    .invalidAttribute(tag: tag, attribute: "URI", value: list["URI"]?.value ?? ""), line: lineNumber,
                    text: line)
            }
            try require(["INSTREAM-ID"], in: list, tag: tag, line: line)
        }
        if type == .subtitles { try require(["URI"], in: list, tag: tag, line: line) }
        guard variants.count + renditions.count < options.limits.maximumVariantCount else {
            throw HLSParseError(
                .limitExceeded(limit: "renditions", value: renditions.count + 1), line: lineNumber, text: line)
        }
        renditions.append(HLSRendition(attributes: list))
    }

    mutating func key(_ list: HLSAttributeList, line: String) throws(HLSParseError) {
        let tag = "EXT-X-KEY"
        try require(["METHOD"], in: list, tag: tag, line: line)
        guard let method = list.enumeratedString("METHOD") else {
            throw HLSParseError(
                .invalidAttribute(tag: tag, attribute: "METHOD", value: list["METHOD"]?.value ?? ""), line: lineNumber,
                text: line)
        }
        if method == "NONE" {
            // §4.3.2.4: NONE ends encryption; other attributes MUST NOT be present.
            if let extra = list.attributes.first(where: { $0.name != "METHOD" }) {
                throw HLSParseError(
                    .invalidAttribute(tag: tag, attribute: extra.name, value: extra.value), line: lineNumber, text: line
                )
            }
            keys = [HLSKey(attributes: list)]
            return
        }
        try require(["URI"], in: list, tag: tag, line: line)
        if list.contains("IV") {
            guard list.isHexadecimalSequence("IV") else {
                throw HLSParseError(
                    .invalidAttribute(tag: tag, attribute: "IV", value: list["IV"]?.value ?? ""), line: lineNumber,
                    text: line)
            }
            uses("the IV attribute of EXT-X-KEY", version: 2)
        }
        if method.hasPrefix("SAMPLE-AES") { uses("EXT-X-KEY METHOD=\(method)", version: 5) }
        for name in ["KEYFORMAT", "KEYFORMATVERSIONS"] where list.contains(name) {
            uses("the \(name) attribute of EXT-X-KEY", version: 5)
        }
        let new = HLSKey(attributes: list)
        // A key replaces the key of the same KEYFORMAT (and a NONE key).
        keys.removeAll { !$0.encrypts || $0.keyFormat == new.keyFormat }
        keys.append(new)
    }
}
