public import Foundation

/// Why a URI in a playlist cannot be followed, with the reference as written.
public struct HLSURIError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong.
    public enum Kind: Hashable, Sendable {
        /// The reference is not a URI, even after escaping.
        case malformed
        /// The reference resolves to this scheme, which MediaCore never follows from a playlist.
        case disallowedScheme(String)
        /// A remote playlist points at a local file.
        case localFileFromRemotePlaylist
    }

    /// What was wrong.
    public var kind: Kind
    /// The reference as the playlist writes it.
    public var reference: String

    /// Creates an error.
    public init(_ kind: Kind, reference: String) {
        self.kind = kind
        self.reference = reference
    }

    /// A sentence naming the reference.
    public var description: String {
        switch kind {
        case .malformed: "'\(reference)' is not a URI"
        case .disallowedScheme(let scheme): "'\(reference)' uses the scheme '\(scheme)', which is not followed"
        case .localFileFromRemotePlaylist: "A remote playlist may not point at the local file '\(reference)'"
        }
    }
}

/// Resolves playlist URIs against the playlist's URL (RFC 3986 §5.2), safely.
///
/// Only `http` and `https` are followed, and `file` only when the playlist itself is a local
/// file: a remote playlist can never make the client read a local file or use another scheme
/// (the hole in ffmpeg's HLS demuxer). Characters a URI may not contain, such as spaces, are
/// percent-encoded first, so `segment 01.ts` resolves rather than failing.
public enum HLSURIResolver {
    /// The absolute URL of `reference` in a playlist loaded from `base` (its post-redirect URL).
    ///
    /// - Throws: ``HLSURIError`` for a malformed reference or a scheme that is not followed.
    /// - Complexity: O(*n*) in the lengths of the reference and the base.
    public static func resolve(_ reference: String, against base: URL) throws(HLSURIError) -> URL {
        let target = resolveString(escape(reference), against: base.absoluteString)
        guard let url = URL(string: target), let scheme = url.scheme?.lowercased() else {
            throw HLSURIError(.malformed, reference: reference)
        }
        let baseScheme = base.scheme?.lowercased() ?? ""
        switch scheme {
        case "http", "https":
            return url
        case "file" where baseScheme == "file":
            return url
        case "file":
            throw HLSURIError(.localFileFromRemotePlaylist, reference: reference)
        default:
            throw HLSURIError(.disallowedScheme(scheme), reference: reference)
        }
    }

    /// Percent-encodes the characters a URI may not contain (space, quotes, non-ASCII…), leaving
    /// reserved and unreserved characters and existing escapes alone.
    static func escape(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            let allowed: Bool =
                switch byte {
                case 0x41...0x5A, 0x61...0x7A, 0x30...0x39: true
                case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): true
                case UInt8(ascii: ":"), UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#"), UInt8(ascii: "["),
                    UInt8(ascii: "]"), UInt8(ascii: "@"):
                    true
                case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("),
                    UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"),
                    UInt8(ascii: "="), UInt8(ascii: "%"):
                    true
                default: false
                }
            if allowed {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                result +=
                    "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0xF, radix: 16, uppercase: true)
            }
        }
        return result
    }

    /// The parts of a URI reference (RFC 3986 Appendix B).
    struct Parts {
        var scheme: Substring?
        var authority: Substring?
        var path: Substring
        var query: Substring?
        var fragment: Substring?

        init(_ text: String) {
            var rest = Substring(text)
            if let hashIndex = rest.firstIndex(of: "#") {
                fragment = rest[rest.index(after: hashIndex)...]
                rest = rest[..<hashIndex]
            }
            if let questionIndex = rest.firstIndex(of: "?") {
                query = rest[rest.index(after: questionIndex)...]
                rest = rest[..<questionIndex]
            }
            if let colonIndex = rest.firstIndex(of: ":"),
                rest[..<colonIndex].allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) }),
                rest.first?.isLetter == true
            {
                scheme = rest[..<colonIndex]
                rest = rest[rest.index(after: colonIndex)...]
            }
            if rest.hasPrefix("//") {
                let afterSlashes = rest.index(rest.startIndex, offsetBy: 2)
                let end = rest[afterSlashes...].firstIndex(of: "/") ?? rest.endIndex
                authority = rest[afterSlashes..<end]
                rest = rest[end...]
            }
            path = rest
        }
    }

    /// RFC 3986 §5.2.2, strict.
    static func resolveString(_ reference: String, against base: String) -> String {
        let r = Parts(reference)
        let b = Parts(base)
        var scheme: Substring?
        var authority: Substring?
        var path: String
        var query: Substring?
        if let referenceScheme = r.scheme {
            scheme = referenceScheme
            authority = r.authority
            path = removeDotSegments(String(r.path))
            query = r.query
        } else {
            if r.authority != nil {
                authority = r.authority
                path = removeDotSegments(String(r.path))
                query = r.query
            } else {
                if r.path.isEmpty {
                    path = String(b.path)
                    query = r.query ?? b.query
                } else {
                    if r.path.hasPrefix("/") {
                        path = removeDotSegments(String(r.path))
                    } else {
                        path = removeDotSegments(merge(base: b, path: r.path))
                    }
                    query = r.query
                }
                authority = b.authority
            }
            scheme = b.scheme
        }
        var result = ""
        if let scheme { result += scheme + ":" }
        if let authority { result += "//" + authority }
        result += path
        if let query { result += "?" + query }
        if let fragment = r.fragment { result += "#" + fragment }
        return result
    }

    static func merge(base: Parts, path: Substring) -> String {
        if base.authority != nil, base.path.isEmpty { return "/" + path }
        guard let lastSlash = base.path.lastIndex(of: "/") else { return String(path) }
        return String(base.path[...lastSlash]) + path
    }

    /// RFC 3986 §5.2.4.
    static func removeDotSegments(_ path: String) -> String {
        var input = Substring(path)
        var output: [Substring] = []
        var result = ""
        while !input.isEmpty {
            if input.hasPrefix("../") {
                input = input.dropFirst(3)
            } else if input.hasPrefix("./") {
                input = input.dropFirst(2)
            } else if input.hasPrefix("/./") {
                input = input.dropFirst(2)
            } else if input == "/." {
                input = "/"
            } else if input.hasPrefix("/../") {
                input = input.dropFirst(3)
                if !output.isEmpty { output.removeLast() }
            } else if input == "/.." {
                input = "/"
                if !output.isEmpty { output.removeLast() }
            } else if input == "." || input == ".." {
                input = ""
            } else {
                let searchStart = input.hasPrefix("/") ? input.index(after: input.startIndex) : input.startIndex
                let end = input[searchStart...].firstIndex(of: "/") ?? input.endIndex
                output.append(input[..<end])
                input = input[end...]
            }
        }
        for segment in output { result += segment }
        return result
    }
}
