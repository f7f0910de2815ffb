public import Foundation

/// Reads one packed audio segment (RFC 8216 §3.4) into timed MP4 samples: an ID3 tag whose
/// `PRIV` frame `com.apple.streaming.transportStreamTimestamp` places the first frame on the
/// 90 kHz timeline, then AAC in ADTS, MP3, AC-3 or E-AC-3 frames (the first frame's header says
/// which).
///
/// Further ID3 tags between frames (timed metadata) are skipped. A segment without a timestamp
/// continues the previous segment's clock when the reader was made to continue it, and starts at
/// 0 otherwise.
///
/// - Complexity: O(*n*) in the bytes read.
public struct PackedAudioReader: Sendable {
    private var head: [UInt8] = []
    private var skipping = 0
    private var framer: AudioFramer?
    private var pendingTimestamp: Int64?
    private var continuing: (codec: MediaCodec, next: Int64?)?
    private var offset = 0
    /// The timestamp of the segment's first frame (90 kHz ticks), once its tag is read.
    public private(set) var timestamp: Int64?

    /// Creates a reader for a segment that starts a timeline.
    public init() {}

    /// Creates a reader that continues an earlier segment's clock.
    init(continuing clock: TransportStreamReader.AudioClock?) {
        continuing = clock.map { ($0.codec, $0.next) }
    }

    /// The running clock the next segment continues from.
    var clock: TransportStreamReader.AudioClock? {
        framer.map { TransportStreamReader.AudioClock(codec: $0.codec, next: $0.nextTime) }
            ?? continuing.map { TransportStreamReader.AudioClock(codec: $0.codec, next: $0.next) }
    }

    /// Reads the segment's next bytes and returns the samples they completed.
    ///
    /// - Throws: ``ContainerError`` for a malformed tag or frame, or frames of no known codec.
    public mutating func read(_ data: Data) throws(ContainerError) -> [MediaSample] {
        var samples: [MediaSample] = []
        head.append(contentsOf: data)
        try drain(into: &samples)
        return samples
    }

    /// Ends the segment.
    ///
    /// - Throws: ``ContainerError`` when it ends inside a tag or a frame.
    public mutating func finish() throws(ContainerError) -> [MediaSample] {
        var samples: [MediaSample] = []
        try drain(into: &samples)
        guard head.isEmpty, skipping == 0 else {
            throw ContainerError(
                .malformedAudio(codec: framer?.codec ?? .aac, reason: "the segment ends inside a tag or frame"),
                offset: offset)
        }
        if var framer {
            for var sample in try framer.finish() {
                sample.stream = StreamSlot(.audio)
                samples.append(sample)
            }
            self.framer = framer
        }
        return samples
    }

    private mutating func drain(into samples: inout [MediaSample]) throws(ContainerError) {
        while !head.isEmpty {
            if skipping > 0 {
                let skipped = min(skipping, head.count)
                head.removeFirst(skipped)
                skipping -= skipped
                offset += skipped
                continue
            }
            if head.count >= 3, head[0] == 0x49, head[1] == 0x44, head[2] == 0x33 {
                guard head.count >= 10 else { return }
                guard let tag = try ID3Tag.read(Data(head.prefix(10))) else { return }
                // The whole tag is read for its timestamp; a tag longer than 1 MiB has no
                // timestamp worth waiting for and is skipped.
                if head.count >= tag.length || tag.length > 1 << 20 {
                    if head.count >= tag.length, let full = try ID3Tag.read(Data(head.prefix(tag.length))),
                        let stamp = full.transportStreamTimestamp, framer == nil || timestamp == nil
                    {
                        timestamp = stamp
                        pendingTimestamp = stamp
                    }
                    let taken = min(tag.length, head.count)
                    head.removeFirst(taken)
                    skipping = tag.length - taken
                    offset += taken
                    continue
                }
                return
            }
            if framer == nil {
                guard let codec = try Self.codec(of: head, offset: offset) else { return }
                let next = continuing?.codec == codec ? continuing?.next : nil
                framer = AudioFramer(codec: codec, nextTime: next)
            }
            guard var current = framer else { return }
            if let stamp = pendingTimestamp {
                current.stampForNextFrame = stamp
                pendingTimestamp = nil
            }
            let bytes = head
            head = []
            var produced: [MediaSample] = []
            var failure: ContainerError?
            bytes.withUnsafeBytes { raw in
                do throws(ContainerError) {
                    produced = try current.push(raw, presentationTime: nil, offset: offset)
                } catch {
                    failure = error
                }
            }
            if let failure { throw failure }
            for var sample in produced {
                sample.stream = StreamSlot(.audio)
                samples.append(sample)
            }
            // What the framer could not use yet waits with it; a tag it stopped at comes back here.
            if current.startsWithTag { head = current.takeCarry() }
            offset += bytes.count - current.pendingByteCount - head.count
            framer = current
            if !head.isEmpty, !(head.count >= 3 && head[0] == 0x49 && head[1] == 0x44 && head[2] == 0x33) { return }
        }
    }

    /// The codec of the frame at the start of `bytes`, or `nil` while too few bytes are there.
    ///
    /// - Throws: ``ContainerError/Kind/notMedia(found:)`` for bytes that start no known frame.
    static func codec(of bytes: [UInt8], offset: Int) throws(ContainerError) -> MediaCodec? {
        guard bytes.count >= 6 else { return nil }
        if bytes[0] == 0x0B, bytes[1] == 0x77 { return bytes[5] >> 3 > 10 ? .eac3 : .ac3 }
        if bytes[0] == 0xFF, bytes[1] & 0xF6 == 0xF0 { return .aac }
        if bytes[0] == 0xFF, bytes[1] & 0xE0 == 0xE0, bytes[1] & 0x06 != 0 { return .mp3 }
        throw ContainerError(.notMedia(found: "no audio frame after the ID3 tag"), offset: offset)
    }
}
