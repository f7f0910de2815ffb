import Foundation

/// Where a playlist lives, in the normal form of RFC 3986 §6.2.2 and §6.2.3, so that two
/// spellings of one URL compare equal: the scheme and host in lower case, the scheme's default
/// port dropped, dot segments removed (`./a.m3u8`, `b/../a.m3u8`), an empty path as `/`, and no
/// fragment (it names no other resource).
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
        components.host = components.host?.lowercased()
        if (components.scheme == "http" && components.port == 80)
            || (components.scheme == "https" && components.port == 443)
        {
            components.port = nil
        }
        components.fragment = nil
        let path = components.percentEncodedPath
        components.percentEncodedPath = path.isEmpty ? "/" : Self.removingDotSegments(path)
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
}
