public import Foundation

/// Remuxes the AAC audio of HLS segments into one `.m4a` file, as the segments' bytes arrive.
///
/// Each segment may be an MPEG-2 transport stream (its first AAC stream is taken; video and
/// other streams are skipped), a packed audio segment (an ID3 tag, then ADTS frames: RFC 8216
/// §3.4), or bare ADTS. Segments are joined into one continuous timeline, so a discontinuity
/// (timestamps that restart) plays straight through. Frames are written as they are read;
/// memory holds one incomplete packet per stream and the sample table.
///
/// <!-- example: audio-remuxer -->
/// ```swift
/// var remuxer = try AudioRemuxer(destination: partialFile)
/// for (index, segment) in segments.enumerated() {
///     try remuxer.startSegment(index)
///     try remuxer.append(segment)
/// }
/// let seconds = try remuxer.finish()
/// ```
public struct AudioRemuxer: ~Copyable {
    private var writer: MP4AudioWriter
    private var demuxer = TransportStreamDemuxer()
    private var adts = ADTSReader()
    private var head: [UInt8] = []
    private var layout: Layout = .undecided
    private var segment = 0
    private var audioPID: UInt16?

    /// How the current segment is packaged.
    private enum Layout {
        case undecided
        case transportStream
        case packedAudio(skipping: Int)
        case adts
    }

    /// Creates a remuxer writing to `destination` (created or truncated).
    ///
    /// - Throws: ``ContainerError/Kind/writeFailed(reason:)``.
    public init(destination: URL) throws(ContainerError) {
        writer = try MP4AudioWriter(destination: destination)
    }

    /// The number of AAC frames written so far.
    public var frameCount: Int { writer.frameCount }

    /// Starts segment `index`: the next bytes are its start.
    ///
    /// - Throws: ``ContainerError`` when the previous segment ended inside a packet or frame.
    public mutating func startSegment(_ index: Int) throws(ContainerError) {
        try endSegment()
        segment = index
        layout = .undecided
        head = []
        adts = ADTSReader()
    }

    /// Feeds the current segment's next bytes.
    ///
    /// - Throws: ``ContainerError`` naming the segment and byte offset.
    public mutating func append(_ data: Data) throws(ContainerError) {
        do {
            try feed(data)
        } catch {
            var located = error
            located.segment = located.segment ?? segment
            throw located
        }
    }

    /// Ends the last segment, writes the sample tables and closes the file.
    ///
    /// - Returns: The duration in seconds.
    /// - Throws: ``ContainerError``; ``ContainerError/Kind/noSupportedAudio`` when no AAC frame
    ///   was found.
    @discardableResult
    public consuming func finish() throws(ContainerError) -> Double {
        try endSegment()
        return try writer.finish()
    }

    // MARK: Private

    private mutating func feed(_ data: Data) throws(ContainerError) {
        switch layout {
        case .undecided:
            head.append(contentsOf: data)
            guard head.count >= 10 else { return }
            let bytes = Data(head)
            head = []
            if bytes[bytes.startIndex] == 0x47 {
                layout = .transportStream
                _ = try demuxer.startSegment(segment)
            } else if let tag = try ID3Tag.read(bytes) {
                layout = .packedAudio(skipping: tag.length)
            } else {
                layout = .adts
            }
            try feed(bytes)
        case .transportStream:
            try take(try demuxer.append(data))
        case .packedAudio(let skipping):
            guard skipping > 0 else {
                layout = .adts
                try feed(data)
                return
            }
            let skipped = min(skipping, data.count)
            layout = .packedAudio(skipping: skipping - skipped)
            if skipped < data.count {
                layout = .adts
                try feed(data.dropFirst(skipped))
            }
        case .adts:
            try appendADTS(data)
        }
    }

    /// Reads ADTS frames; an ID3 tag between frames (packed audio segments concatenated into one
    /// file) is skipped.
    private mutating func appendADTS(_ data: Data) throws(ContainerError) {
        var bytes = data
        while !bytes.isEmpty {
            if case .packedAudio(let skipping) = layout {
                let skipped = min(skipping, bytes.count)
                bytes = bytes.dropFirst(skipped)
                layout = skipping - skipped > 0 ? .packedAudio(skipping: skipping - skipped) : .adts
                continue
            }
            try adts.read(bytes) { format, payload throws(ContainerError) in
                try writer.append(format: format, payload: payload)
            }
            bytes = Data()
            // A tag where the next frame should start: skip it and go on with what follows.
            if let tag = try adts.takeID3Tag() {
                layout = .packedAudio(skipping: tag.skip)
                bytes = tag.rest
            }
        }
    }

    /// Writes the ADTS frames of the first AAC stream among `packets`.
    private mutating func take(_ packets: [ElementaryStreamPacket]) throws(ContainerError) {
        for packet in packets where packet.streamType == .adtsAAC {
            if audioPID == nil { audioPID = packet.pid }
            guard packet.pid == audioPID else { continue }
            try adts.read(packet.payload) { format, payload throws(ContainerError) in
                try writer.append(format: format, payload: payload)
            }
        }
    }

    private mutating func endSegment() throws(ContainerError) {
        if !head.isEmpty {
            let rest = Data(head)
            head = []
            layout = .adts
            try append(rest)
        }
        if case .transportStream = layout {
            do {
                try take(try demuxer.finish())
            } catch {
                var located = error
                located.segment = located.segment ?? segment
                throw located
            }
        }
        guard adts.pendingByteCount == 0 else {
            throw ContainerError(
                .malformedADTS(reason: "the segment ends inside a frame (\(adts.pendingByteCount) bytes)"),
                segment: segment)
        }
    }
}
