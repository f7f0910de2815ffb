public import Foundation

// Streaming: a segment remuxed as its bytes arrive, with the snapshot a restart goes back to.

extension SegmentRemuxer {
    /// A copy to go back to if the segment about to stream must start over: the same state, without
    /// the memory this remuxer reuses from segment to segment (so the copy holds none of it and
    /// this one keeps reusing it).
    package func snapshot() -> SegmentRemuxer {
        var copy = self
        copy.arenas = [:]
        copy.writer.dropBuffer()
        return copy
    }

    /// Whether a segment of discontinuity number `number` can be remuxed as its bytes arrive
    /// (``begin(_:)``): its number's place on the timeline is known, so nothing waits for the
    /// segment's end to place it.
    public func canStream(discontinuity number: Int) -> Bool {
        domainOffsets[number] != nil || currentDomain.map { number <= $0 } ?? false
    }

    /// Starts remuxing a segment whose bytes arrive in pieces: feed them with ``feed(_:)`` and
    /// end with ``end()``. The segment's `data` may hold its first bytes.
    ///
    /// A segment whose discontinuity number has no place on the timeline yet
    /// (``canStream(discontinuity:)`` is false: it opens the number, or every segment of the
    /// number before it held no sample, as an fMP4 segment of only a `styp` does) is held whole
    /// and remuxed by ``end()``, as ``append(_:)`` would.
    ///
    /// - Throws: ``ContainerError`` for the segment's first bytes.
    public mutating func begin(_ segment: Segment) throws(ContainerError) {
        guard canStream(discontinuity: segment.discontinuity) else {
            held = (segment, segment.data)
            return
        }
        var header = segment
        header.data = Data()
        streaming = (header, Data(), nil)
        if !segment.data.isEmpty { try feed(segment.data) }
    }

    /// Feeds the next bytes of the segment begun with ``begin(_:)``; the samples they complete go
    /// into the file.
    ///
    /// - Throws: ``ContainerError`` naming the segment.
    public mutating func feed(_ bytes: Data) throws(ContainerError) {
        if held != nil {
            held?.data.append(bytes)
            return
        }
        // Moved out while it reads, so the reader's memory stays uniquely held and is reused.
        guard var current = streaming else { return }
        streaming = nil
        do {
            var data = bytes
            if current.reader == nil {
                current.head.append(bytes)
                // The format is told from the first bytes (fewer at the segment's end).
                guard current.head.count >= SegmentFormat.detectionLength else {
                    streaming = current
                    return
                }
                current.reader = try makeReader(for: current.segment, prefix: current.head)
                data = current.head
                current.head = Data()
            }
            guard var reader = current.reader else {
                streaming = current
                return
            }
            current.reader = nil
            let samples = try reader.read(data)
            current.reader = reader
            streaming = current
            try write(samples, of: current.segment)
        } catch {
            var located = error
            located.segment = located.segment ?? current.segment.index
            throw located
        }
    }

    /// Ends the segment begun with ``begin(_:)``.
    ///
    /// - Throws: ``ContainerError`` naming the segment: it ended inside a packet or frame, or
    ///   it was not media.
    public mutating func end() throws(ContainerError) {
        if var whole = held {
            held = nil
            whole.segment.data = whole.data
            try append([whole.segment])
            return
        }
        guard var current = streaming else { return }
        streaming = nil
        do {
            if current.reader == nil {
                var reader = try makeReader(for: current.segment, prefix: current.head)
                let samples = try reader.read(current.head)
                current.reader = reader
                try write(samples, of: current.segment)
            }
            guard var reader = current.reader else { return }
            current.reader = nil
            let samples = try reader.finish()
            close(&reader, of: current.segment)
            try write(samples, of: current.segment)
        } catch {
            var located = error
            located.segment = located.segment ?? current.segment.index
            throw located
        }
    }

    mutating func note(_ ignored: [String]) {
        for entry in ignored where !report.ignoredStreams.contains(entry) { report.ignoredStreams.append(entry) }
    }
}
