import Foundation

/// Where a playlist or segment lives, in the normal form of RFC 3986 §6.2.2 and §6.2.3, so that
/// two spellings of one URL compare equal: the scheme and host in lower case, percent-encodings
/// in upper case and those of unreserved characters decoded (`a%39%36.m3u8` is `a96.m3u8`, `%7e`
/// is `~`), the scheme's default port dropped, dot segments removed (`./a.m3u8`, `b/../a.m3u8`),
/// an empty path as `/`, and no fragment (it names no other resource).
struct MediaLocation: Hashable, Sendable {
    private let normalized: String

    /// The location of `url`.
    ///
    /// - Complexity: O(*n*) in the URL's length.
    init(_ url: URL) {
        guard var components = URLComponents(url: url.absoluteURL, resolvingAgainstBaseURL: true) else {
            normalized = url.absoluteString
            return
        }
        components.scheme = components.scheme?.lowercased()
        components.percentEncodedHost = components.percentEncodedHost.map {
            Self.normalizingPercentEncoding($0).lowercased()
        }
        if (components.scheme == "http" && components.port == 80)
            || (components.scheme == "https" && components.port == 443)
        {
            components.port = nil
        }
        components.fragment = nil
        let path = Self.normalizingPercentEncoding(components.percentEncodedPath)
        components.percentEncodedPath = path.isEmpty ? "/" : Self.removingDotSegments(path)
        components.percentEncodedQuery = components.percentEncodedQuery.map(Self.normalizingPercentEncoding)
        normalized = components.string ?? url.absoluteString
    }

    /// RFC 3986 §5.2.4's remove_dot_segments, over a path's segments.
    static func removingDotSegments(_ path: String) -> String {
        var output: [Substring] = []
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        for (index, segment) in segments.enumerated() {
            let isLast = index == segments.count - 1
            switch segment {
            case ".":
                if isLast { output.append("") }
            case "..":
                if output.count > 1 { output.removeLast() }
                if isLast { output.append("") }
            default:
                output.append(segment)
            }
        }
        return output.joined(separator: "/")
    }

    /// `text` with its percent-encodings in upper case and those of unreserved characters
    /// (ALPHA, DIGIT, `-`, `.`, `_`, `~`) decoded (RFC 3986 §6.2.2.1 and §6.2.2.2).
    static func normalizingPercentEncoding(_ text: String) -> String {
        var bytes = Array(text.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count, let high = hex(bytes[index + 1]),
                let low = hex(bytes[index + 2])
            {
                let value = high << 4 | low
                let unreserved =
                    (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(value)
                    || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(value)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(value)
                    || [UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~")].contains(value)
                if unreserved {
                    output.append(value)
                } else {
                    output.append(contentsOf: Array(String(format: "%%%02X", value).utf8))
                }
                index += 3
            } else {
                output.append(bytes[index])
                index += 1
            }
        }
        bytes = output
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// What a rendition's media is, segment by segment: where each part lives (``MediaLocation``)
/// and which bytes of it, so that two playlists listing the same parts (one spelt with a query,
/// one reached through a redirect) are known for the same media.
struct MediaIdentity: Hashable, Sendable {
    private let parts: [PartIdentity]

    private struct PartIdentity: Hashable, Sendable {
        var location: MediaLocation
        var offset: UInt64?
        var length: UInt64?
        var isInitialization: Bool
    }

    /// The identity of the media `parts` make.
    ///
    /// - Complexity: O(*n*) for *n* parts.
    init(_ parts: [LessonPlan.Part]) {
        self.parts = parts.map { part in
            PartIdentity(
                location: MediaLocation(part.url), offset: part.byteRange?.offset, length: part.byteRange?.length,
                isInitialization: part.role == .initialization)
        }
    }
}
