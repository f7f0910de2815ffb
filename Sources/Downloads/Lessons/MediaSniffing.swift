package import Foundation
import MediaContainers

#if canImport(FoundationNetworking)
    package import FoundationNetworking
#endif

/// What a lesson URL answered: a playlist to remux, or a media file to keep as it is.
package enum LessonContent: Sendable, Hashable {
    /// An HLS playlist.
    case playlist
    /// A media file, with the extension a player needs to open it.
    case media(fileExtension: String)

    /// The playlist content types of RFC 8216 §4 and their common variants.
    static let playlistTypes: Set<String> = [
        "application/vnd.apple.mpegurl", "application/x-mpegurl", "audio/mpegurl", "audio/x-mpegurl",
    ]

    /// Media content types and the extension a file of each gets.
    static let mediaTypes: [String: String] = [
        "video/mp4": "mp4", "audio/mp4": "m4a", "audio/x-m4a": "m4a", "video/x-m4v": "m4v", "video/quicktime": "mov",
        "audio/mpeg": "mp3", "audio/mp3": "mp3", "audio/aac": "aac", "audio/x-aac": "aac", "video/mp2t": "ts",
        "audio/wav": "wav", "audio/x-wav": "wav", "audio/wave": "wav", "video/webm": "webm", "audio/webm": "webm",
        "audio/ogg": "ogg", "audio/flac": "flac", "audio/x-flac": "flac", "audio/ac3": "ac3", "video/3gpp": "3gp",
    ]

    /// Classifies an answer by its content type and, first, by its bytes (servers label media
    /// `application/octet-stream`, and a captive portal answers any URL with a page labelled
    /// however it likes).
    ///
    /// - Throws: ``DownloadError`` of kind ``DownloadError/Kind/notMedia(contentType:found:)`` for
    ///   an answer that is neither a playlist nor media: an HTML page, JSON, text, or an unknown
    ///   format.
    package static func classify(_ prefix: Data, response: URLResponse, url: URL) throws(DownloadError) -> LessonContent
    {
        let type =
            (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Type")?
            .split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
        var text = String(decoding: prefix.prefix(64), as: UTF8.self)
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        if text.trimmingCharacters(in: .whitespacesAndNewlines).hasPrefix("#EXTM3U") { return .playlist }
        if let fileExtension = signatureExtension(prefix) { return .media(fileExtension: fileExtension) }
        let bytes = [UInt8](prefix.prefix(256))
        if let type, let fileExtension = mediaTypes[type], !prefix.isEmpty, !looksLikeDocument(bytes) {
            return .media(fileExtension: fileExtension)
        }
        if let type, playlistTypes.contains(type), prefix.isEmpty { return .playlist }
        throw DownloadError(.notMedia(contentType: type, found: SegmentFormat.description(of: bytes)), url: url)
    }

    /// Whether bytes read as a text document (markup, JSON) rather than media.
    static func looksLikeDocument(_ bytes: [UInt8]) -> Bool {
        let description = SegmentFormat.description(of: bytes)
        return description.hasPrefix("an HTML") || description.hasPrefix("an XML") || description == "JSON"
            || description.hasPrefix("text")
    }

    /// The extension of a media file told from its first bytes, or `nil`.
    static func signatureExtension(_ prefix: Data) -> String? {
        let bytes = [UInt8](prefix.prefix(512))
        guard bytes.count >= 4 else { return nil }
        func ascii(_ range: Range<Int>) -> String {
            guard range.upperBound <= bytes.count else { return "" }
            return String(decoding: bytes[range], as: UTF8.self)
        }
        if ascii(4..<8) == "ftyp" {
            switch ascii(8..<12) {
            case "M4A ", "M4B ", "M4P ": return "m4a"
            case "qt  ": return "mov"
            case "M4V ", "M4VH", "M4VP": return "m4v"
            case "3gp4", "3gp5", "3gp6", "3g2a": return "3gp"
            default: return "mp4"
            }
        }
        if ["moov", "mdat", "free", "wide"].contains(ascii(4..<8)) { return "mov" }
        if bytes[0] == 0x47, bytes.count < 189 || bytes[188] == 0x47 { return "ts" }
        if ascii(0..<3) == "ID3" { return "mp3" }
        if bytes[0] == 0xFF, bytes[1] & 0xF6 == 0xF0 { return "aac" }
        if bytes[0] == 0xFF, bytes[1] & 0xE0 == 0xE0, bytes[1] & 0x06 != 0 { return "mp3" }
        if bytes[0] == 0x0B, bytes[1] == 0x77 { return "ac3" }
        if bytes[0...3] == [0x1A, 0x45, 0xDF, 0xA3] { return "webm" }
        if ascii(0..<4) == "OggS" { return "ogg" }
        if ascii(0..<4) == "fLaC" { return "flac" }
        if ascii(0..<4) == "RIFF", ascii(8..<12) == "WAVE" { return "wav" }
        return nil
    }
}
