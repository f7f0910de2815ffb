public import Foundation

/// Reads one MPEG-2 transport stream segment (ISO/IEC 13818-1) into timed MP4 samples: H.264 and
/// HEVC access units, and AAC, MP3, AC-3 and E-AC-3 frames.
///
/// Each segment's program map table decides its streams: a stream keeps its place (its
/// ``StreamSlot``, the rank among the streams of its kind) even when an encoder change gives it
/// another PID. A segment without a PAT and PMT uses the previous segment's, when the reader was
/// made to continue it.
///
/// A stream the table declares in a codec MP4 cannot hold (MPEG-2 video, LATM AAC…) or encrypted
/// sample by sample is a typed error as soon as the table is read: nothing of the lesson is
/// silently lost. Streams that are not picture or sound (ID3 timed metadata, SCTE-35 splice
/// information) are left out and listed in ``ignoredStreams``.
///
/// Video samples before the first sync sample whose parameter sets are known cannot be decoded
/// and are left out (counted in ``undecodableSamples``).
///
/// - Complexity: O(*n*) in the bytes read.
public struct TransportStreamReader: Sendable {
    private var demuxer: TransportStreamDemuxer
    private var converters: [StreamSlot: AccessUnitConverter] = [:]
    private var framers: [StreamSlot: AudioFramer] = [:]
    private var started: Set<StreamSlot>
    private var checkedTable = -1
    private var lastVideo: [StreamSlot: (decode: Int64, delta: Int64)] = [:]
    /// The streams left out because they are not picture or sound.
    public private(set) var ignoredStreams: [DeclaredStream] = []
    /// The video samples left out because they came before a decodable sync sample.
    public private(set) var undecodableSamples = 0

    /// Creates a reader for a segment that starts a timeline.
    public init() {
        demuxer = TransportStreamDemuxer()
        started = []
    }

    /// Creates a reader for a segment that continues an earlier one's timeline: its tables,
    /// parameter sets, timestamps and audio clocks carry over.
    init(continuing context: Context, arenas: [StreamSlot: ArenaSet] = [:]) {
        demuxer = TransportStreamDemuxer(continuing: context.demuxer)
        started = context.started
        for (slot, sets) in context.parameterSets {
            converters[slot] = AccessUnitConverter(
                codec: sets.codec, parameterSets: sets.sets, arenas: arenas[slot] ?? ArenaSet())
        }
        for (slot, clock) in context.audioClocks {
            framers[slot] = AudioFramer(codec: clock.codec, nextTime: clock.next)
        }
    }

    /// What the next segment of the same timeline continues from.
    struct Context: Sendable, Hashable, Codable {
        var demuxer = TransportStreamContext()
        var started: Set<StreamSlot> = []
        var parameterSets: [StreamSlot: CodecParameterSets] = [:]
        var audioClocks: [StreamSlot: AudioClock] = [:]
    }

    /// A video stream's parameter sets, with its codec.
    struct CodecParameterSets: Sendable, Hashable, Codable {
        var codec: MediaCodec
        var sets: ParameterSets
    }

    /// An audio stream's running clock, with its codec.
    struct AudioClock: Sendable, Hashable, Codable {
        var codec: MediaCodec
        var next: Int64?
    }

    /// The state the next segment continues from.
    var context: Context {
        var context = Context(demuxer: demuxer.context, started: started)
        for (slot, converter) in converters {
            context.parameterSets[slot] = CodecParameterSets(codec: converter.codec, sets: converter.parameterSets)
        }
        for (slot, framer) in framers {
            context.audioClocks[slot] = AudioClock(codec: framer.codec, next: framer.nextTime)
        }
        return context
    }

    /// Takes the memory the segment's samples were written into, for the next segment's reader
    /// to reuse once they are gone.
    mutating func takeArenas() -> [StreamSlot: ArenaSet] {
        var taken: [StreamSlot: ArenaSet] = [:]
        for slot in Array(converters.keys) {
            if var converter = converters.removeValue(forKey: slot) {
                taken[slot] = converter.takeArenas()
                converters[slot] = converter
            }
        }
        return taken
    }

    /// The streams the segment's program map table declares, in order.
    public var declaredStreams: [DeclaredStream] { demuxer.declaredStreams }

    /// Reads the segment's next bytes and returns the samples they completed.
    ///
    /// - Throws: ``ContainerError``: a malformed stream, or a declared stream that cannot be
    ///   written.
    public mutating func read(_ data: Data) throws(ContainerError) -> [MediaSample] {
        var samples: [MediaSample] = []
        try withBytes(of: data) { (raw) throws(ContainerError) in try read(raw, into: &samples) }
        return samples
    }

    /// Reads bytes in place; see ``read(_:)``.
    mutating func read(_ bytes: UnsafeRawBufferPointer, into samples: inout [MediaSample]) throws(ContainerError) {
        // The demuxer is moved out while it calls back into the reader.
        var demuxer = TransportStreamDemuxer()
        swap(&demuxer, &self.demuxer)
        defer { swap(&demuxer, &self.demuxer) }
        try demuxer.feed(bytes) { packet throws(ContainerError) in
            try take(packet, into: &samples)
        }
        try checkTable(demuxer)
    }

    /// Ends the segment: the samples of packets still being assembled.
    ///
    /// - Throws: ``ContainerError`` when the segment ends inside a packet or a frame.
    public mutating func finish() throws(ContainerError) -> [MediaSample] {
        var samples: [MediaSample] = []
        var demuxer = TransportStreamDemuxer()
        swap(&demuxer, &self.demuxer)
        defer { swap(&demuxer, &self.demuxer) }
        try demuxer.finish { packet throws(ContainerError) in
            try take(packet, into: &samples)
        }
        try checkTable(demuxer)
        for slot in framers.keys.sorted(by: { $0.rank < $1.rank }) {
            guard var framer = framers[slot] else { continue }
            for var sample in try framer.finish() {
                sample.stream = slot
                samples.append(sample)
            }
            framers[slot] = framer
        }
        return samples
    }

    /// Refuses a table that declares a stream this module cannot write, once per table.
    private mutating func checkTable(_ demuxer: TransportStreamDemuxer) throws(ContainerError) {
        try checkTable(version: demuxer.tableVersion, streams: demuxer.declaredStreams)
    }

    private mutating func checkTable(version: Int, streams: [DeclaredStream]) throws(ContainerError) {
        guard version != checkedTable else { return }
        checkedTable = version
        for stream in streams {
            switch stream.content {
            case .media: break
            case .data:
                if !ignoredStreams.contains(stream) { ignoredStreams.append(stream) }
            case .unsupported: throw ContainerError(.unsupportedCodec(stream.streamType))
            case .encrypted(let method): throw ContainerError(.encrypted(method: method))
            }
        }
    }

    /// The slot of the declared stream at `index`: its kind and its rank among the media streams
    /// of that kind declared before it.
    private func slot(of index: Int, kind: MediaKind, in streams: [DeclaredStream]) -> StreamSlot {
        var rank = 0
        for stream in streams.prefix(index) {
            if case .media(let other, _) = stream.content, other == kind { rank += 1 }
        }
        return StreamSlot(kind, rank: rank)
    }

    private mutating func take(_ packet: TransportPacketDecoder.PESView, into samples: inout [MediaSample])
        throws(ContainerError)
    {
        try checkTable(version: packet.tableVersion, streams: packet.streams)
        guard case .media(let kind, let codec) = packet.stream.content else { return }
        let slot = slot(of: packet.index, kind: kind, in: packet.streams)
        do {
            switch kind {
            case .video:
                try takeVideo(packet, slot: slot, codec: codec, into: &samples)
            case .audio:
                // Taken out of the table while it works, so that its buffer is not shared (and
                // copied on write) with the table's copy.
                var framer = framers.removeValue(forKey: slot) ?? AudioFramer(codec: codec)
                defer { framers[slot] = framer }
                if framer.codec != codec { framer = AudioFramer(codec: codec, nextTime: framer.nextTime) }
                let first = samples.count
                try framer.push(
                    packet.payload, presentationTime: packet.presentationTime, offset: packet.offset,
                    into: &samples)
                for index in first..<samples.count { samples[index].stream = slot }
            case .text:
                return
            }
        } catch {
            var located = error
            located.offset = located.offset ?? packet.offset
            throw located
        }
    }

    private mutating func takeVideo(
        _ packet: TransportPacketDecoder.PESView, slot: StreamSlot, codec: MediaCodec, into samples: inout [MediaSample]
    ) throws(ContainerError) {
        // Taken out, not copied, so the converter's arenas stay uniquely held and are reused.
        var converter = converters.removeValue(forKey: slot) ?? AccessUnitConverter(codec: codec)
        if converter.codec != codec { converter = AccessUnitConverter(codec: codec) }
        let unit = try converter.convert(packet.payload)
        converters[slot] = converter
        guard unit.hasPicture else { return }
        let previous = lastVideo[slot]
        let decode = packet.decodeTime ?? previous.map { $0.decode + $0.delta } ?? 0
        let present = packet.presentationTime ?? decode
        lastVideo[slot] = (decode, previous.map { max(decode - $0.decode, 1) } ?? 3_000)
        guard let description = converter.description, started.contains(slot) || unit.isSync else {
            undecodableSamples += 1
            return
        }
        started.insert(slot)
        samples.append(
            MediaSample(
                stream: slot, description: description, data: unit.sample, decodeTime: decode,
                presentationTime: present,
                isSync: unit.isSync))
    }
}
