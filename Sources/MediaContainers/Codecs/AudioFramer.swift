import Foundation

/// Cuts an audio elementary stream (ADTS AAC, MPEG audio, AC-3, E-AC-3) into MP4 samples and
/// times them, from bytes that arrive in pieces (PES payloads, or a packed audio segment).
///
/// Timestamps come from the pieces: a piece's 90 kHz presentation time belongs to the first frame
/// that starts in it (ISO/IEC 13818-1 §2.4.3.7), and the frames after it follow one frame
/// duration apart, in the sample rate's units. A timestamp within half a frame of where the
/// running clock already is keeps the clock (the 90 kHz rounding is not a gap); a larger jump is
/// honoured, and the remuxer decides what the gap or overlap means.
struct AudioFramer: Sendable {
    /// The frame decoder, fed through the one byte stream driver.
    private var driver: ByteStreamDriver<AudioFrameDecoder>

    init(codec: MediaCodec, nextTime: Int64? = nil) {
        driver = ByteStreamDriver(AudioFrameDecoder(codec: codec, nextTime: nextTime))
    }

    /// The codec the stream declares.
    var codec: MediaCodec { driver.decoder.codec }

    /// When the next frame starts, in the sample rate's units, once known.
    var nextTime: Int64? { driver.decoder.nextTime }

    /// Feeds one piece of the stream, presented at `presentationTime` (90 kHz) when it says, and
    /// returns the samples it completed, untimed by stream (the caller sets their slot). `offset`
    /// is the piece's offset in its segment, for errors.
    ///
    /// - Throws: ``ContainerError`` for a frame that is not of the declared codec or is malformed.
    mutating func push(_ piece: UnsafeRawBufferPointer, presentationTime: Int64?, offset: Int) throws(ContainerError)
        -> [MediaSample]
    {
        var samples: [MediaSample] = []
        try push(piece, presentationTime: presentationTime, offset: offset, into: &samples)
        return samples
    }

    /// Feeds one piece of the stream, as ``push(_:presentationTime:offset:)`` does, appending
    /// the samples it completed to `samples`.
    ///
    /// - Throws: ``ContainerError`` for a frame that is not of the declared codec or is malformed.
    mutating func push(
        _ piece: UnsafeRawBufferPointer, presentationTime: Int64?, offset: Int, into samples: inout [MediaSample]
    ) throws(ContainerError) {
        let start = driver.fedLength
        driver.decoder.pieceStamp = presentationTime.map { (time: $0, from: start) }
        driver.decoder.errorShift = offset - start
        // The piece's timestamp belongs to a frame that starts in it, or to none.
        defer { driver.decoder.pieceStamp = nil }
        try driver.feed(piece) { sample throws(ContainerError) in samples.append(sample) }
    }

    /// Ends the stream: the sample still being gathered, if any.
    ///
    /// - Throws: ``ContainerError`` when the stream ends inside a frame.
    mutating func finish() throws(ContainerError) -> [MediaSample] {
        var samples: [MediaSample] = []
        try driver.finish { sample throws(ContainerError) in samples.append(sample) }
        return samples
    }
}

/// The ``ByteStreamDecoder`` of audio frames (ADTS AAC, MPEG audio, AC-3, E-AC-3): a frame is
/// whole when its header's length is there. It times each frame (see ``AudioFramer``) and
/// gathers E-AC-3 frames into six-block samples. An ID3 tag where a frame should start stops
/// reading: a packed audio segment's tags are its reader's to take.
struct AudioFrameDecoder: ByteStreamDecoder, Sendable {
    /// The codec the stream declares.
    let codec: MediaCodec
    /// When the next frame starts, in the sample rate's units, once known.
    var nextTime: Int64?
    /// A 90 kHz timestamp for the next frame decoded, wherever it starts (a packed audio
    /// segment's ID3 timestamp).
    var stampForNextFrame: Int64?
    /// A piece's 90 kHz timestamp and its stream offset: it belongs to the first frame that
    /// starts at or after that offset.
    var pieceStamp: (time: Int64, from: Int)?
    /// What to add to a stream offset to give the offset errors report (the piece's place in its
    /// segment).
    var errorShift = 0
    /// E-AC-3 frames gathered into the current sample until it holds six blocks.
    private var group: EnhancedGroup?
    /// The E-AC-3 substream layout of the last sample and its description.
    private var enhancedLayout: (layout: AC3Header, description: SampleDescription)?
    /// The last frame's format and its sample description: a stream keeps its format, so the
    /// sample entry is built once, not for every frame.
    private var lastDescription: (format: FrameFormat, description: SampleDescription)?
    /// Where frames are copied: many to a block, each frame's sample a slice of it, so a frame
    /// allocates nothing.
    private let arena = SliceArena()

    init(codec: MediaCodec, nextTime: Int64? = nil) {
        self.codec = codec
        self.nextTime = nextTime
    }

    mutating func decode(_ cursor: inout ByteCursor, _ emit: (MediaSample) throws(ContainerError) -> Void)
        throws(ContainerError)
    {
        while cursor.remaining > 0 {
            // An ID3 tag between frames (a packed audio segment's) is the caller's to take.
            if cursor.remaining >= 3, cursor[ahead: 0] == 0x49, cursor[ahead: 1] == 0x44, cursor[ahead: 2] == 0x33 {
                return
            }
            guard
                let frame = try frame(
                    in: cursor.bytes, at: cursor.position, offset: cursor.base + errorShift, complete: true)
            else { return }
            let description = description(of: frame.format)
            if let stamp = stampForNextFrame {
                align(to: stamp, description: description)
                stampForNextFrame = nil
            } else if let stamp = pieceStamp, cursor.streamOffset >= stamp.from {
                align(to: stamp.time, description: description)
                pieceStamp = nil
            }
            let time = nextTime ?? 0
            let payload = cursor.peek(frame.length)
            let data = arena.copy(UnsafeRawBufferPointer(rebasing: payload[frame.skip..<frame.length]))
            if let sample = gather(data, frame: frame, description: description, time: time) { try emit(sample) }
            nextTime = time + Int64(frame.duration)
            cursor.position += frame.length
        }
    }

    /// Decodes the last frames, then hands on the sample still being gathered.
    ///
    /// - Throws: ``ContainerError`` when the stream ends inside a frame.
    mutating func decodeLast(_ cursor: inout ByteCursor, _ emit: (MediaSample) throws(ContainerError) -> Void)
        throws(ContainerError)
    {
        try decode(&cursor, emit)
        guard cursor.remaining == 0 else {
            throw ContainerError(
                .malformedAudio(codec: codec, reason: "the stream ends inside a frame (\(cursor.remaining) bytes)"))
        }
        guard let current = group else { return }
        group = nil
        try emit(enhancedSample(current))
    }

    func unitLength(at cursor: ByteCursor) -> Int? {
        (try? frame(in: cursor.bytes, at: cursor.position, offset: 0, complete: false))?.length
    }

    /// Moves the running clock to a timestamp of 90 kHz ticks unless it is within half a frame.
    /// The timestamp is 33 bits (RFC 8216 §3.4, as an MPEG-2 PTS): it is taken in the period
    /// nearest the running clock, so a clock that wraps past 2³³ carries on instead of going
    /// back 26.5 hours.
    private mutating func align(to stamp: Int64, description: SampleDescription) {
        let rate = Int64(description.timescale)
        var stamp = stamp
        if let next = nextTime, rate > 0 {
            stamp = unwrapped33(stamp, near: rescale(next, from: Int(rate), to: 90_000))
        }
        let ticks = (stamp * rate + 45_000) / 90_000
        let half = Int64(description.frameDuration ?? 1_024) / 2
        if let next = nextTime, abs(ticks - next) < half { return }
        nextTime = ticks
    }

    /// One frame's facts.
    private struct Frame {
        var length: Int
        /// Header bytes that are not part of the MP4 sample (ADTS's).
        var skip: Int
        var duration: Int
        /// What its sample description depends on.
        var format: FrameFormat
        var ac3: AC3Header?
    }

    /// What a frame's sample description depends on, and nothing else (not its length, which
    /// padding changes from frame to frame in MP3).
    private enum FrameFormat: Hashable {
        case aac(AACFormat)
        case mpegAudio(MPEGAudioHeader)
        case ac3(AC3Header)
    }

    /// The sample description of frames of `format`: the last one's when the format is the
    /// same, as it is for every frame of a stream but a change.
    ///
    /// - Complexity: O(1) while the format stays; building a new entry is O(1) too, but costs
    ///   a box written and a few allocations.
    private mutating func description(of format: FrameFormat) -> SampleDescription {
        if let last = lastDescription, last.format == format { return last.description }
        let description: SampleDescription =
            switch format {
            case .aac(let aac): aac.sampleDescription
            case .mpegAudio(let header): header.sampleDescription
            case .ac3(let header):
                header.isEnhanced ? header.enhancedDescription(dependents: [], dataRate: 0) : header.ac3Description
            }
        lastDescription = (format, description)
        return description
    }

    /// The frame whose header is at `index`, or `nil` while its header (or, when `complete`,
    /// the whole frame) is not all there.
    private func frame(in bytes: UnsafeRawBufferPointer, at index: Int, offset: Int, complete: Bool)
        throws(ContainerError) -> Frame?
    {
        switch codec {
        case .aac:
            guard let header = try ADTSReader.header(in: bytes, at: index, offset: offset) else { return nil }
            guard !complete || bytes.count - index >= header.length else { return nil }
            return Frame(length: header.length, skip: header.headerLength, duration: 1_024, format: .aac(header.format))
        case .mp3:
            guard bytes.count - index >= 4 else { return nil }
            guard let header = MPEGAudioHeader.read(bytes, at: index) else {
                throw ContainerError(
                    .malformedAudio(codec: .mp3, reason: "no MPEG audio frame header"), offset: offset + index)
            }
            guard !complete || bytes.count - index >= header.frameLength else { return nil }
            var format = header
            format.frameLength = 0  // padding changes it from frame to frame
            return Frame(
                length: header.frameLength, skip: 0, duration: header.samplesPerFrame, format: .mpegAudio(format))
        case .ac3, .eac3:
            guard let header = try AC3Header.read(bytes, at: index, offset: offset) else { return nil }
            guard !complete || bytes.count - index >= header.frameLength else { return nil }
            var format = header
            format.frameLength = 0  // at 44.1 kHz, sizes alternate
            // An E-AC-3 frame's duration counts only for the independent substream 0.
            let counts = !header.isEnhanced || (header.streamType != 1 && header.substreamID == 0)
            return Frame(
                length: header.frameLength, skip: 0, duration: counts ? header.blocks * 256 : 0,
                format: .ac3(format), ac3: header)
        default:
            throw ContainerError(.malformedAudio(codec: codec, reason: "not an audio codec"), offset: offset + index)
        }
    }

    /// The sample a frame completes: itself, or for E-AC-3 the group of frames before it, once
    /// this frame cannot join it (six blocks make an MP4 sample; dependent substreams join the
    /// independent frame they follow).
    private mutating func gather(_ data: Data, frame: Frame, description: SampleDescription, time: Int64)
        -> MediaSample?
    {
        guard let header = frame.ac3, header.isEnhanced else {
            return MediaSample(
                stream: StreamSlot(.audio), description: description, data: data, decodeTime: time,
                presentationTime: time, duration: Int64(frame.duration), isSync: true)
        }
        if header.streamType == 1 || header.substreamID != 0 {
            group?.data.append(data)
            if header.streamType == 1, group?.dependents.count ?? 0 < 15 { group?.dependents.append(header) }
            return nil
        }
        var finished: MediaSample?
        if let current = group, current.blocks + header.blocks > 6 {
            finished = enhancedSample(current)
            group = nil
        }
        if group == nil {
            group = EnhancedGroup(data: data, blocks: header.blocks, time: time, header: header)
        } else {
            group?.data.append(data)
            group?.blocks += header.blocks
        }
        return finished
    }

    /// E-AC-3 frames gathered into one MP4 sample.
    struct EnhancedGroup: Sendable {
        var data: Data
        var blocks: Int
        var time: Int64
        var header: AC3Header
        var dependents: [AC3Header] = []
    }

    /// The MP4 sample of a group of E-AC-3 frames, with the `dec3` of the stream's first group
    /// (its data rate from that group's size, to the nearest kbit/s), kept while the substreams'
    /// layout stays the same.
    private mutating func enhancedSample(_ group: EnhancedGroup) -> MediaSample {
        let samples = group.blocks * 256
        let rate = group.header.sampleRate
        var layout = group.header
        layout.frameLength = 0
        layout.channelMap = group.dependents.reduce(UInt16(0)) { $0 | ($1.channelMap ?? 0) }
        let description: SampleDescription
        if let kept = enhancedLayout, kept.layout == layout {
            description = kept.description
        } else {
            // Rounded to the nearest kbit/s: at 44.1 kHz frame sizes alternate (416 and 418
            // bytes at 96 kbit/s), and truncated they would give each segment's first group
            // another rate, and the track another sample description.
            let dataRate = samples > 0 ? (group.data.count * 8 * rate / samples + 500) / 1_000 : 0
            description = group.header.enhancedDescription(dependents: group.dependents, dataRate: dataRate)
            enhancedLayout = (layout, description)
        }
        return MediaSample(
            stream: StreamSlot(.audio), description: description, data: group.data, decodeTime: group.time,
            presentationTime: group.time, duration: Int64(samples), isSync: true)
    }
}
