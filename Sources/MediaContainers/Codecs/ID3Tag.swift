public import Foundation

/// The ID3v2 tag that starts a packed audio segment (RFC 8216 §3.4), as far as a remuxer needs
/// it: its length, to skip it, and the MPEG-2 transport stream timestamp of the segment's first
/// sample, from the `PRIV` frame `com.apple.streaming.transportStreamTimestamp`.
public struct ID3Tag: Hashable, Sendable {
    /// The tag's whole length in bytes: header, frames and footer.
    public var length: Int
    /// The 33-bit presentation timestamp of the segment's first sample, in 90 kHz ticks.
    public var transportStreamTimestamp: Int64?

    /// The owner identifier of the timestamp's `PRIV` frame.
    static let timestampOwner = Array("com.apple.streaming.transportStreamTimestamp".utf8) + [0]

    /// Reads the tag at the start of `data`.
    ///
    /// - Returns: The tag, or `nil` when `data` does not start with `ID3` or is shorter than
    ///   the tag's 10-byte header.
    /// - Throws: ``ContainerError/Kind/malformedID3(reason:)`` for a size that is not
    ///   synchsafe or frames that overrun the tag.
    /// - Complexity: O(*n*) in the tag's length.
    public static func read(_ data: Data) throws(ContainerError) -> ID3Tag? {
        let bytes = [UInt8](data.prefix(10))
        guard bytes.count == 10, bytes[0] == 0x49, bytes[1] == 0x44, bytes[2] == 0x33 else { return nil }
        let version = bytes[3]
        let flags = bytes[5]
        guard bytes[6..<10].allSatisfy({ $0 < 0x80 }) else {
            throw ContainerError(.malformedID3(reason: "the tag size is not synchsafe"), offset: 6)
        }
        let size = bytes[6..<10].reduce(0) { $0 << 7 | Int($1) }
        let length = 10 + size + (flags & 0x10 != 0 ? 10 : 0)
        var tag = ID3Tag(length: length, transportStreamTimestamp: nil)
        guard data.count >= 10 + size else { return tag }
        let body = [UInt8](data.dropFirst(10).prefix(size))
        var index = 0
        // Frames: a 4-byte id, a 4-byte size (synchsafe in v2.4), 2 bytes of flags, the content.
        while index + 10 <= body.count, body[index] != 0 {
            let id = String(decoding: body[index..<(index + 4)], as: UTF8.self)
            let sizeBytes = body[(index + 4)..<(index + 8)]
            let frameSize =
                version >= 4
                ? sizeBytes.reduce(0) { $0 << 7 | Int($1 & 0x7F) } : sizeBytes.reduce(0) { $0 << 8 | Int($1) }
            let start = index + 10
            guard frameSize >= 0, start + frameSize <= body.count else {
                throw ContainerError(.malformedID3(reason: "frame \(id) overruns the tag"), offset: 10 + index)
            }
            let content = Array(body[start..<(start + frameSize)])
            if id == "PRIV", content.count == timestampOwner.count + 8, content.starts(with: timestampOwner) {
                let stamp = content.suffix(8).reduce(Int64(0)) { $0 << 8 | Int64($1) }
                tag.transportStreamTimestamp = stamp & ((1 << 33) - 1)
            }
            index = start + frameSize
        }
        return tag
    }
}
