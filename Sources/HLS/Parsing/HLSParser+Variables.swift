import Foundation

// Variables (`EXT-X-DEFINE`, RFC 8216bis §4.4.2.3) and their substitution, and the bounded
// lists of kept tags and warnings.

extension ParserState {
    mutating func define(_ list: HLSAttributeList, line: String) throws(HLSParseError) {
        let tag = "EXT-X-DEFINE"
        uses("EXT-X-DEFINE", version: 8)
        if let name = list.quotedString("NAME") {
            guard let value = list.quotedString("VALUE") else {
                throw HLSParseError(.missingAttribute(tag: tag, attribute: "VALUE"), line: lineNumber, text: line)
            }
            try add(name, value: value, source: .value(value), line: line)
        } else if let name = list.quotedString("IMPORT") {
            guard let imported = options.importedVariables else {
                warn(HLSWarning(.importWithoutParent(name: name), line: lineNumber))
                try keepTag(line)
                definitions.append(HLSDefinition(name: name, source: .imported))
                return
            }
            guard let value = imported[name] else {
                throw HLSParseError(.undefinedVariable(name: name), line: lineNumber, text: line)
            }
            try add(name, value: value, source: .imported, line: line)
        } else if let name = list.quotedString("QUERYPARAM") {
            let items = options.playlistURL.flatMap {
                URLComponents(url: $0, resolvingAgainstBaseURL: true)?.queryItems
            }
            guard let value = items?.first(where: { $0.name == name })?.value else {
                throw HLSParseError(.missingQueryParameter(name: name), line: lineNumber, text: line)
            }
            try add(name, value: value, source: .queryParameter, line: line)
        } else {
            throw HLSParseError(.missingAttribute(tag: tag, attribute: "NAME"), line: lineNumber, text: line)
        }
    }

    mutating func add(_ name: String, value: String, source: HLSDefinition.Source, line: String) throws(HLSParseError) {
        guard variables[name] == nil else {
            throw HLSParseError(.duplicateVariable(name: name), line: lineNumber, text: line)
        }
        if source == .queryParameter { uses("EXT-X-DEFINE with QUERYPARAM", version: 11) }
        try keepTag(line)
        variables[name] = value
        definitions.append(HLSDefinition(name: name, source: source))
    }

    /// Checks that one more variant-level entry (an I-frame variant, session data or key) fits
    /// under ``HLSParserLimits/maximumVariantCount`` with the variants and renditions.
    func countVariantLevelTag(_ what: String, line: String) throws(HLSParseError) {
        let count = variants.count + renditions.count + iFrameVariants.count + sessionData.count + sessionKeys.count
        guard count < options.limits.maximumVariantCount else {
            throw HLSParseError(.limitExceeded(limit: what, value: count + 1), line: lineNumber, text: line)
        }
    }

    /// Counts one more kept tag (unknown, session data or key, definition) against its limit.
    mutating func keepTag(_ line: String) throws(HLSParseError) {
        keptTagCount += 1
        guard keptTagCount <= options.limits.maximumKeptTagCount else {
            throw HLSParseError(.limitExceeded(limit: "kept tags", value: keptTagCount), line: lineNumber, text: line)
        }
    }

    /// Collects `warning`, or counts it as dropped beyond the limit.
    mutating func warn(_ warning: HLSWarning) {
        if warnings.count < options.limits.maximumWarningCount {
            warnings.append(warning)
        } else {
            droppedWarningCount += 1
        }
    }

    /// The warnings in line order, then the count of those dropped, if any.
    func finalWarnings() -> [HLSWarning] {
        var sorted = warnings.sorted { $0.line < $1.line }
        if droppedWarningCount > 0 { sorted.append(HLSWarning(.moreWarnings(count: droppedWarningCount), line: 0)) }
        return sorted
    }

    /// Whether `text` holds `{$`, compared as bytes (Foundation's `contains` is far slower).
    static func hasVariableReference(_ text: String) -> Bool {
        var previous: UInt8 = 0
        for byte in text.utf8 {
            if byte == UInt8(ascii: "$"), previous == UInt8(ascii: "{") { return true }
            previous = byte
        }
        return false
    }

    /// Replaces every `{$name}` in `text`; an undefined name fails (§4.3: MUST).
    mutating func substitute(_ text: String, line: String) throws(HLSParseError) -> String {
        guard Self.hasVariableReference(text) else { return text }
        let limits = options.limits
        var result = ""
        var rest = Substring(text)
        // Bounds come before each append, so a hostile value never gets built.
        func append(_ piece: some StringProtocol) throws(HLSParseError) {
            let length = result.utf8.count + piece.utf8.count
            guard length <= limits.maximumExpandedLength else {
                throw HLSParseError(
                    .limitExceeded(limit: "expanded length", value: length), line: lineNumber, text: line)
            }
            result += piece
        }
        while let open = rest.range(of: "{$") {
            try append(rest[..<open.lowerBound])
            guard let close = rest[open.upperBound...].firstIndex(of: "}") else {
                try append(rest[open.lowerBound...])
                rest = rest[rest.endIndex...]
                break
            }
            let name = String(rest[open.upperBound..<close])
            guard let value = variables[name] else {
                throw HLSParseError(.undefinedVariable(name: name), line: lineNumber, text: line)
            }
            try append(value)
            rest = rest[rest.index(after: close)...]
        }
        try append(rest)
        expandedBytes += Swift.max(result.utf8.count - text.utf8.count, 0)
        guard expandedBytes <= limits.maximumExpansion else {
            throw HLSParseError(.limitExceeded(limit: "expansion", value: expandedBytes), line: lineNumber, text: line)
        }
        return result
    }
}
