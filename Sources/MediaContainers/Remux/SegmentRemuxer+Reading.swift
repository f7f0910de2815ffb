import Foundation

// Reading a segment: the reader each container needs (MPEG-TS, packed audio, fMP4), chosen
// from its first bytes, and the whole-segment path.

extension SegmentRemuxer {
    /// A segment's reader, whichever its format.
    enum SegmentReading: Sendable {
        case transportStream(TransportStreamReader)
        case packedAudio(PackedAudioReader)
        case fragmented(FragmentedMP4Reader, initialization: Data)

        mutating func read(_ data: Data) throws(ContainerError) -> [MediaSample] {
            switch self {
            case .transportStream(var reader):
                defer { self = .transportStream(reader) }
                return try reader.read(data)
            case .packedAudio(var reader):
                defer { self = .packedAudio(reader) }
                return try reader.read(data)
            case .fragmented(var reader, let initialization):
                defer { self = .fragmented(reader, initialization: initialization) }
                return try reader.read(data)
            }
        }

        mutating func finish() throws(ContainerError) -> [MediaSample] {
            switch self {
            case .transportStream(var reader):
                defer { self = .transportStream(reader) }
                return try reader.finish()
            case .packedAudio(var reader):
                defer { self = .packedAudio(reader) }
                return try reader.finish()
            case .fragmented(var reader, let initialization):
                defer { self = .fragmented(reader, initialization: initialization) }
                return try reader.finish()
            }
        }
    }

    /// A reader for `segment`, whose first bytes are `prefix`, continuing its rendition's state
    /// when the segment continues its timeline.
    mutating func makeReader(for segment: Segment, prefix: Data) throws(ContainerError) -> SegmentReading {
        guard renditions.indices.contains(segment.rendition) else {
            throw ContainerError(.invalidCheckpoint(reason: "no rendition \(segment.rendition)"))
        }
        let state = renditionStates[segment.rendition]
        // The same discontinuity number continues the rendition's timeline; another starts afresh.
        let continues = state.discontinuity == segment.discontinuity
        switch try SegmentFormat.detect(prefix) {
        case .transportStream:
            var context: TransportStreamReader.Context?
            if case .transportStream(let previous) = state.reading {
                context = previous
                if !continues {
                    // Parameter sets carry over (a segment may rely on them); times do not.
                    context?.demuxer.lastTimes = [:]
                    context?.audioClocks = [:]
                    context?.started = []
                }
            }
            // RFC 8216 §3.2: an EXT-X-MAP of transport-stream segments holds their PAT and PMT,
            // which the segments need not repeat; its tables are read first, and its continuity
            // counters do not continue into the segment (a file of its own).
            if let initialization = segment.initialization, !initialization.isEmpty {
                var tables = context.map { TransportStreamReader(continuing: $0) } ?? TransportStreamReader()
                let samples = try tables.read(initialization)
                guard samples.isEmpty else {
                    throw ContainerError(
                        .unsupportedFormat("a transport-stream initialisation section that carries media"),
                        segment: segment.index)
                }
                context = tables.context
            }
            let arenas = arenas.removeValue(forKey: segment.rendition) ?? [:]
            return .transportStream(
                context.map { TransportStreamReader(continuing: $0, arenas: arenas) } ?? TransportStreamReader())
        case .packedAudio:
            var clock: TransportStreamReader.AudioClock?
            if continues, case .packedAudio(let previous) = state.reading { clock = previous }
            return .packedAudio(PackedAudioReader(continuing: clock))
        case .isoBaseMedia:
            var initialization = segment.initialization
            var times: [UInt32: Int64] = [:]
            if case .fragmented(let previous, let previousTimes) = state.reading {
                if initialization == nil || initialization == previous {
                    initialization = previous
                    if continues { times = previousTimes }
                }
            }
            guard let initialization else { throw ContainerError(.missingInitialization) }
            var reader = try FragmentedMP4Reader(initialization: initialization, continuing: times)
            reader.resourceOffset = Int(clamping: segment.resourceOffset)
            return .fragmented(reader, initialization: initialization)
        }
    }

    /// Keeps what `reader`, done with `segment`, leaves to the rendition's next segment.
    mutating func close(_ reader: inout SegmentReading, of segment: Segment) {
        var state = renditionStates[segment.rendition]
        state.discontinuity = segment.discontinuity
        switch reader {
        case .transportStream(var transport):
            arenas[segment.rendition] = transport.takeArenas()
            report.undecodableSamples += transport.undecodableSamples
            note(transport.ignoredStreams.map { "\($0.streamType) on PID \($0.pid)" })
            state.reading = .transportStream(transport.context)
            reader = .transportStream(transport)
        case .packedAudio(let packed):
            state.reading = .packedAudio(packed.clock)
        case .fragmented(let fragmented, let initialization):
            note(fragmented.ignoredTracks)
            state.reading = .fragmented(initialization: initialization, times: fragmented.nextDecodeTimes)
        }
        renditionStates[segment.rendition] = state
    }

    /// Reads a whole segment: its ``Segment/data``, then its pieces in order, as a streamed
    /// segment is fed. Each piece is let go once read, and `segment` keeps none of its bytes.
    ///
    /// - Complexity: O(*n*) in the segment's bytes.
    mutating func readSegment(_ segment: inout Segment) throws(ContainerError) -> [MediaSample] {
        var pieces = segment.data.isEmpty ? segment.pieces : [segment.data] + segment.pieces
        segment.pieces = []
        segment.data = Data()
        var head = Data()
        var next = 0
        // The format is told from the first bytes, as when streaming.
        while head.count < SegmentFormat.detectionLength, next < pieces.count {
            if head.isEmpty { head = pieces[next] } else { head.append(pieces[next]) }
            pieces[next] = Data()
            next += 1
        }
        var reader = try makeReader(for: segment, prefix: head)
        var samples = try reader.read(head)
        head = Data()
        while next < pieces.count {
            let piece = pieces[next]
            pieces[next] = Data()
            next += 1
            samples += try reader.read(piece)
        }
        samples += try reader.finish()
        close(&reader, of: segment)
        return samples
    }
}
