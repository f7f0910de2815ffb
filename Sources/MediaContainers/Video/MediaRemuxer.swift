public import Foundation

/// Remuxes HLS video segments (MPEG-2 transport streams of H.264 or HEVC, with or without AAC
/// audio) and, when the audio is a separate rendition, its audio segments, into one MP4 file
/// with a video track and an audio track in sync.
///
/// <!-- example: media-remuxer -->
/// ```swift
/// var remuxer = try MediaRemuxer(destination: partialFile, audio: .separate)
/// try remuxer.startSegment(0, of: .video)
/// try remuxer.append(videoSegment, to: .video)
/// try remuxer.startSegment(0, of: .audio)
/// try remuxer.append(audioSegment, to: .audio)
/// let seconds = try remuxer.finish()
/// ```
///
/// Each input's timestamps are made continuous (a discontinuity, where they restart, continues
/// from the previous sample), and both tracks start at their first presentation times, so a
/// stream whose audio began a little after its video keeps them in sync. Video samples before
/// the first sync sample with its parameter sets cannot be decoded and are dropped.
public struct MediaRemuxer: ~Copyable {
    /// Where the audio comes from.
    public enum AudioSource: Sendable, Hashable {
        /// Muxed into the video segments.
        case muxed
        /// A separate audio rendition, fed to ``Input/audio``.
        case separate
    }

    /// One of the remuxer's inputs.
    public enum Input: Sendable, Hashable {
        /// The video segments (with their muxed audio, if any).
        case video
        /// The separate audio rendition's segments.
        case audio
    }

    private var writer: MP4MovieWriter
    private let audioSource: AudioSource
    private var videoInput = InputState()
    private var audioInput = InputState()
    private var annexB: AnnexBReader?
    private var videoFormat: VideoFormat?
    private var videoTimeline = Timeline()
    private var audioTimeline = Timeline()
    private var videoPID: UInt16?
    private var audioPID: [Input: UInt16] = [:]
    /// The first stream type met that the remuxer cannot write, and the segment it was in.
    private var unsupported: (type: StreamType, segment: Int)?

    /// The per-input reading state.
    private struct InputState {
        var demuxer = TransportStreamDemuxer()
        var adts = ADTSReader()
        var segment = 0
        var head: [UInt8] = []
        var packed = false
        var skipping = 0
        var started = false
    }

    /// Makes one input's timestamps continuous across discontinuities.
    private struct Timeline {
        var offset: Int64 = 0
        var last: Int64?
        var lastDuration: Int64 = 3_000

        /// The continuous time of a raw one; a jump backwards, or forwards by more than ten
        /// seconds, is a discontinuity that continues one duration after the previous time.
        mutating func map(_ raw: Int64, duration: Int64? = nil) -> Int64 {
            var mapped = raw + offset
            if let last {
                let delta = mapped - last
                if delta < 0 || delta > 900_000 {
                    offset = last + lastDuration - raw
                    mapped = last + lastDuration
                } else if delta > 0 {
                    lastDuration = duration ?? delta
                }
            }
            if let duration { lastDuration = duration }
            last = mapped
            return mapped
        }
    }

    /// Creates a remuxer writing to `destination` (created or truncated).
    ///
    /// - Throws: ``ContainerError/Kind/writeFailed(reason:)``.
    public init(destination: URL, audio: AudioSource = .muxed) throws(ContainerError) {
        writer = try MP4MovieWriter(destination: destination)
        audioSource = audio
    }

    /// The video samples written so far.
    public var videoSampleCount: Int { writer.videoSampleCount }
    /// The audio frames written so far.
    public var audioFrameCount: Int { writer.audioFrameCount }

    /// Starts segment `index` of `input`.
    ///
    /// - Throws: ``ContainerError`` when the previous segment ended inside a packet or frame.
    public mutating func startSegment(_ index: Int, of input: Input = .video) throws(ContainerError) {
        try endSegment(of: input)
        update(input) { state in
            state.segment = index
            state.head = []
            state.packed = false
            state.skipping = 0
            state.started = false
            state.adts = ADTSReader()
        }
    }

    /// Feeds `input`'s current segment's next bytes.
    ///
    /// - Throws: ``ContainerError`` naming the segment and byte offset.
    public mutating func append(_ data: Data, to input: Input = .video) throws(ContainerError) {
        do {
            try feed(data, input)
        } catch {
            var located = error
            located.segment = located.segment ?? state(input).segment
            throw located
        }
    }

    /// Ends the inputs, writes the sample tables and closes the file.
    ///
    /// - Returns: The duration in seconds.
    /// - Throws: ``ContainerError``.
    @discardableResult
    public consuming func finish() throws(ContainerError) -> Double {
        try endSegment(of: .video)
        try endSegment(of: .audio)
        if writer.videoSampleCount == 0, writer.audioFrameCount == 0, let unsupported {
            throw ContainerError(.unsupportedCodec(unsupported.type), segment: unsupported.segment)
        }
        return try writer.finish()
    }

    // MARK: Private

    private func state(_ input: Input) -> InputState {
        input == .video ? videoInput : audioInput
    }

    private mutating func update(_ input: Input, _ body: (inout InputState) -> Void) {
        switch input {
        case .video: body(&videoInput)
        case .audio: body(&audioInput)
        }
    }

    private mutating func feed(_ data: Data, _ input: Input) throws(ContainerError) {
        var current = state(input)
        defer { update(input) { $0 = current } }
        if !current.started {
            current.head.append(contentsOf: data)
            guard current.head.count >= 10 else { return }
            let bytes = Data(current.head)
            current.head = []
            current.started = true
            if bytes[bytes.startIndex] != 0x47, let tag = try ID3Tag.read(bytes) {
                current.packed = true
                current.skipping = tag.length
            } else if bytes[bytes.startIndex] == 0x47 {
                _ = try current.demuxer.startSegment(current.segment)
            } else {
                current.packed = true
            }
            try feedStarted(bytes, input, &current)
            return
        }
        try feedStarted(data, input, &current)
    }

    private mutating func feedStarted(_ data: Data, _ input: Input, _ current: inout InputState) throws(ContainerError)
    {
        if current.packed {
            var bytes = data
            if current.skipping > 0 {
                let skipped = min(current.skipping, bytes.count)
                current.skipping -= skipped
                bytes = bytes.dropFirst(skipped)
            }
            guard !bytes.isEmpty else { return }
            try takeAudio(bytes, presentationTime: nil, input: input, reader: &current.adts)
            if let tag = try current.adts.takeID3Tag() {
                current.skipping = tag.skip
                try feedStarted(tag.rest, input, &current)
            }
        } else {
            try take(try current.demuxer.append(data), input: input, state: &current)
        }
    }

    private mutating func take(
        _ packets: [ElementaryStreamPacket], input: Input, state current: inout InputState
    ) throws(ContainerError) {
        for packet in packets {
            switch packet.streamType {
            case .h264, .hevc:
                guard input == .video else { continue }
                if videoPID == nil { videoPID = packet.pid }
                guard packet.pid == videoPID else { continue }
                try takeVideo(packet)
            case .adtsAAC:
                guard (input == .audio) == (audioSource == .separate) else { continue }
                if audioPID[input] == nil { audioPID[input] = packet.pid }
                guard packet.pid == audioPID[input] else { continue }
                try takeAudio(
                    packet.payload, presentationTime: packet.presentationTime, input: input, reader: &current.adts)
            default:
                if unsupported == nil { unsupported = (packet.streamType, current.segment) }
                continue
            }
        }
        // Streams of types the demuxer does not even reassemble (MPEG-2 video…) are noted too.
        if unsupported == nil, let type = current.demuxer.streams.values.first(where: { !$0.isSupported }) {
            unsupported = (type, current.segment)
        }
    }

    private mutating func takeVideo(_ packet: ElementaryStreamPacket) throws(ContainerError) {
        if annexB == nil { annexB = AnnexBReader(codec: packet.streamType == .hevc ? .hevc : .h264) }
        guard var reader = annexB else { return }
        let sample = reader.sample(fromAccessUnit: packet.payload)
        annexB = reader
        guard let sample, let decode = packet.decodeTime, let present = packet.presentationTime else { return }
        if videoFormat == nil {
            // Decoding starts at a sync sample whose parameter sets are known.
            guard sample.isSync, let format = VideoFormat(reader) else { return }
            videoFormat = format
        }
        guard let videoFormat else { return }
        let mappedDecode = videoTimeline.map(decode)
        let mappedPresent = present + (mappedDecode - decode)
        try writer.appendVideo(sample, format: videoFormat, decodeTime: mappedDecode, presentationTime: mappedPresent)
    }

    private mutating func takeAudio(
        _ payload: Data, presentationTime: Int64?, input: Input, reader: inout ADTSReader
    ) throws(ContainerError) {
        var first = presentationTime
        var failure: ContainerError?
        var frames: [(AACFormat, Data)] = []
        do {
            try reader.read(payload) { format, bytes throws(ContainerError) in
                frames.append((format, Data(bytes)))
            }
        } catch {
            failure = error
        }
        if let failure { throw failure }
        for (format, bytes) in frames {
            let duration = Int64(1_024 * 90_000 / max(format.sampleRate, 1))
            let mapped = first.map { audioTimeline.map($0, duration: duration) }
            first = nil
            var appendFailure: ContainerError?
            bytes.withUnsafeBytes { raw in
                do throws(ContainerError) {
                    try writer.appendAudio(format: format, payload: raw, presentationTime: mapped)
                } catch {
                    appendFailure = error
                }
            }
            if let appendFailure { throw appendFailure }
        }
    }

    private mutating func endSegment(of input: Input) throws(ContainerError) {
        var current = state(input)
        defer { update(input) { $0 = current } }
        if !current.head.isEmpty {
            let rest = Data(current.head)
            current.head = []
            current.started = true
            current.packed = true
            try feedStarted(rest, input, &current)
        }
        if current.started, !current.packed {
            do {
                try take(try current.demuxer.finish(), input: input, state: &current)
            } catch {
                var located = error
                located.segment = located.segment ?? current.segment
                throw located
            }
        }
        guard current.adts.pendingByteCount == 0 else {
            throw ContainerError(
                .malformedADTS(reason: "the segment ends inside a frame (\(current.adts.pendingByteCount) bytes)"),
                segment: current.segment)
        }
    }
}
