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
    /// The segment's decoder, fed through the one byte stream driver.
    private var driver: ByteStreamDriver<PackedAudioDecoder>

    /// The timestamp of the segment's first frame (90 kHz ticks), once its tag is read.
    public var timestamp: Int64? { driver.decoder.timestamp }

    /// Creates a reader for a segment that starts a timeline.
    public init() {
        driver = ByteStreamDriver(PackedAudioDecoder(continuing: nil))
    }

    /// Creates a reader that continues an earlier segment's clock.
    init(continuing clock: TransportStreamReader.AudioClock?) {
        driver = ByteStreamDriver(PackedAudioDecoder(continuing: clock))
    }

    /// The running clock the next segment continues from.
    var clock: TransportStreamReader.AudioClock? { driver.decoder.clock }

    /// Reads the segment's next bytes and returns the samples they completed.
    ///
    /// - Throws: ``ContainerError`` for a malformed tag or frame, or frames of no known codec.
    public mutating func read(_ data: Data) throws(ContainerError) -> [MediaSample] {
        var samples: [MediaSample] = []
        try driver.feed(data) { sample throws(ContainerError) in samples.append(sample) }
        return samples
    }

    /// Ends the segment.
    ///
    /// - Throws: ``ContainerError`` when it ends inside a tag or a frame.
    public mutating func finish() throws(ContainerError) -> [MediaSample] {
        var samples: [MediaSample] = []
        try driver.finish { sample throws(ContainerError) in samples.append(sample) }
        return samples
    }
}

/// The ``ByteStreamDecoder`` of a packed audio segment: ID3 tags (the first one's timestamp
/// kept, a tag over 1 MiB skipped unread) and the audio frames between them, which an
/// ``AudioFrameDecoder`` of the first frame's codec reads.
struct PackedAudioDecoder: ByteStreamDecoder, Sendable {
    private var framer: AudioFrameDecoder?
    /// The bytes of a long tag still to skip.
    private var skipping = 0
    /// A tag's timestamp for the next frame.
    private var pendingTimestamp: Int64?
    /// The earlier segment's clock, for a segment without a timestamp.
    private let continuing: TransportStreamReader.AudioClock?
    /// The timestamp of the segment's first frame (90 kHz ticks), once its tag is read.
    private(set) var timestamp: Int64?

    init(continuing: TransportStreamReader.AudioClock?) {
        self.continuing = continuing
    }

    /// The running clock the next segment continues from.
    var clock: TransportStreamReader.AudioClock? {
        framer.map { TransportStreamReader.AudioClock(codec: $0.codec, next: $0.nextTime) } ?? continuing
    }

    mutating func decode(_ cursor: inout ByteCursor, _ emit: (MediaSample) throws(ContainerError) -> Void)
        throws(ContainerError)
    {
        while cursor.remaining > 0 {
            if skipping > 0 {
                let skipped = min(skipping, cursor.remaining)
                cursor.position += skipped
                skipping -= skipped
                continue
            }
            if Self.startsWithTag(cursor) {
                guard cursor.remaining >= 10, let tag = try ID3Tag.read(Data(cursor.peek(10))) else { return }
                // The whole tag is read for its timestamp; a tag longer than 1 MiB has no
                // timestamp worth waiting for and is skipped.
                guard cursor.remaining >= tag.length || tag.length > 1 << 20 else { return }
                if cursor.remaining >= tag.length, let full = try ID3Tag.read(Data(cursor.peek(tag.length))),
                    let stamp = full.transportStreamTimestamp, framer == nil || timestamp == nil
                {
                    timestamp = stamp
                    pendingTimestamp = stamp
                }
                let taken = min(tag.length, cursor.remaining)
                cursor.position += taken
                skipping = tag.length - taken
                continue
            }
            if framer == nil {
                guard let codec = try Self.codec(at: cursor) else { return }
                let next = continuing?.codec == codec ? continuing?.next : nil
                framer = AudioFrameDecoder(codec: codec, nextTime: next)
            }
            guard var current = framer else { return }
            if let stamp = pendingTimestamp {
                current.stampForNextFrame = stamp
                pendingTimestamp = nil
            }
            let before = cursor.position
            try current.decode(&cursor) { sample throws(ContainerError) in try emit(Self.audio(sample)) }
            framer = current
            // An incomplete frame waits for more; a tag the framer stopped at is read above.
            if cursor.position == before { return }
        }
    }

    mutating func decodeLast(_ cursor: inout ByteCursor, _ emit: (MediaSample) throws(ContainerError) -> Void)
        throws(ContainerError)
    {
        try decode(&cursor, emit)
        guard cursor.remaining == 0, skipping == 0 else {
            throw ContainerError(
                .malformedAudio(codec: framer?.codec ?? .aac, reason: "the segment ends inside a tag or frame"),
                offset: cursor.streamOffset)
        }
        guard var current = framer else { return }
        try current.decodeLast(&cursor) { sample throws(ContainerError) in try emit(Self.audio(sample)) }
        framer = current
    }

    func unitLength(at cursor: ByteCursor) -> Int? {
        guard skipping == 0 else { return nil }
        if Self.startsWithTag(cursor) {
            guard cursor.remaining >= 10, let tag = try? ID3Tag.read(Data(cursor.peek(10))),
                tag.length <= 1 << 20
            else { return nil }
            return tag.length
        }
        return framer?.unitLength(at: cursor)
    }

    /// Whether the bytes at the front of `cursor` start an ID3 tag.
    static func startsWithTag(_ cursor: ByteCursor) -> Bool {
        cursor.remaining >= 3 && cursor[ahead: 0] == 0x49 && cursor[ahead: 1] == 0x44 && cursor[ahead: 2] == 0x33
    }

    /// A sample of the segment's one audio stream.
    static func audio(_ sample: MediaSample) -> MediaSample {
        var sample = sample
        sample.stream = StreamSlot(.audio)
        return sample
    }

    /// The codec of the frame at the front of `cursor`, or `nil` while too few bytes are there.
    ///
    /// - Throws: ``ContainerError/Kind/notMedia(found:)`` for bytes that start no known frame.
    static func codec(at cursor: ByteCursor) throws(ContainerError) -> MediaCodec? {
        guard cursor.remaining >= 6 else { return nil }
        let first = cursor[ahead: 0]
        let second = cursor[ahead: 1]
        if first == 0x0B, second == 0x77 { return cursor[ahead: 5] >> 3 > 10 ? .eac3 : .ac3 }
        if first == 0xFF, second & 0xF6 == 0xF0 { return .aac }
        if first == 0xFF, second & 0xE0 == 0xE0, second & 0x06 != 0 { return .mp3 }
        throw ContainerError(.notMedia(found: "no audio frame after the ID3 tag"), offset: cursor.streamOffset)
    }
}
