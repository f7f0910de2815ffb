public import Foundation

/// How a segment is packaged, told from its first bytes (and, for HTTP answers, not from the
/// content type alone, which servers get wrong).
public enum SegmentFormat: Sendable, Hashable {
    /// An MPEG-2 transport stream: 0x47 every 188 bytes.
    case transportStream
    /// Packed audio (RFC 8216 §3.4): an ID3 tag, or an audio frame header (ADTS, MPEG audio,
    /// AC-3) at the start.
    case packedAudio
    /// ISO base media (fragmented MP4, an initialisation section, or a whole MP4 file): a known
    /// box type at bytes 4–7.
    case isoBaseMedia

    /// The boxes that start ISO base media files and segments.
    static let leadingBoxes: Set<String> = [
        "ftyp", "styp", "moof", "moov", "sidx", "emsg", "prft", "free", "skip", "mdat", "wide", "pdin", "uuid",
    ]

    /// The most bytes ``detect(_:)`` reads: a segment's format is told from its first 512 bytes
    /// (fewer when it is shorter), whether it streams or is read whole.
    static let detectionLength = 512

    /// The format of bytes that start with `prefix` (at least 12 bytes of it when there are that
    /// many; 376 or more let a transport stream be told by two sync bytes).
    ///
    /// - Throws: ``ContainerError/Kind/notMedia(found:)`` naming what the bytes look like
    ///   (an HTML page, JSON, text, or unknown binary).
    /// - Complexity: O(1).
    public static func detect(_ prefix: Data) throws(ContainerError) -> SegmentFormat {
        let bytes = [UInt8](prefix.prefix(detectionLength))
        guard !bytes.isEmpty else { throw ContainerError(.notMedia(found: "an empty body")) }
        if bytes[0] == 0x47, bytes.count < 189 || bytes[188] == 0x47 { return .transportStream }
        if bytes.count >= 8 {
            let type = String(decoding: bytes[4..<8], as: UTF8.self)
            if leadingBoxes.contains(type) { return .isoBaseMedia }
        }
        if bytes.count >= 3, bytes[0] == 0x49, bytes[1] == 0x44, bytes[2] == 0x33 { return .packedAudio }
        if bytes.count >= 2, bytes[0] == 0xFF, bytes[1] & 0xE0 == 0xE0 { return .packedAudio }
        if bytes.count >= 2, bytes[0] == 0x0B, bytes[1] == 0x77 { return .packedAudio }
        throw ContainerError(.notMedia(found: description(of: bytes)))
    }

    /// What bytes that are not media look like, for an error a person can act on: `an HTML
    /// page`, `JSON`, `text ("…")`, or the first bytes in hexadecimal.
    public static func description(of bytes: [UInt8]) -> String {
        var text = String(decoding: bytes.prefix(256), as: UTF8.self)
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let lower = trimmed.lowercased()
        if lower.hasPrefix("<!doctype html") || lower.hasPrefix("<html") || lower.contains("<body") {
            return "an HTML page"
        }
        if lower.hasPrefix("<?xml") || lower.hasPrefix("<") { return "an XML or HTML document" }
        if trimmed.hasPrefix("{") || trimmed.hasPrefix("[") { return "JSON" }
        if trimmed.hasPrefix("#EXTM3U") { return "a playlist" }
        let printable = bytes.prefix(64).allSatisfy {
            $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || (0x20..<0x7F).contains($0)
        }
        if printable { return "text (\"\(String(trimmed.prefix(40)))\")" }
        return "unknown binary data starting "
            + bytes.prefix(4).map { String(format: "%02X", $0) }.joined(separator: " ")
    }
}
