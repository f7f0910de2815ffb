import Foundation

// The timeline: discontinuity domains placed end to end, tracks matched across segments, and
// samples written with the gap policy's silence or held frames.

extension SegmentRemuxer {
    /// Places discontinuity number `number` on the output timeline: its earliest sample, among the
    /// segments `opening` it, starts where the presentation so far ends.
    mutating func openDomain(_ number: Int, with opening: [(segment: Segment, samples: [MediaSample])]) {
        let flicks = Self.flicks
        var origin: Int64?
        var firstDecodes: [TrackKey: Int64] = [:]
        for entry in opening {
            let kinds = renditions[entry.segment.rendition].kinds
            for sample in entry.samples where kinds.contains(sample.stream.kind) {
                let time = rescale(sample.presentationTime, from: sample.description.timescale, to: flicks)
                origin = min(origin ?? time, time)
                let key = TrackKey(rendition: entry.segment.rendition, slot: sample.stream)
                let decode = rescale(sample.decodeTime, from: sample.description.timescale, to: flicks)
                firstDecodes[key] = min(firstDecodes[key] ?? decode, decode)
            }
        }
        guard let origin else { return }
        var resume: Int64 = 0
        for (index, timing) in timings.enumerated() {
            let timescale = writer.tracks[index].timescale
            if let end = timing.end { resume = max(resume, rescale(end, from: timescale, to: flicks)) }
            // A track's decode times must keep increasing across the boundary.
            if let last = timing.lastDecode, let first = firstDecodes[timing.key] {
                let lastFlicks = rescale(last, from: timescale, to: flicks)
                let tick = Int64(flicks / timescale)
                resume = max(resume, lastFlicks + tick - (first - origin))
            }
        }
        domainOffsets[number] = resume - origin
        currentDomain = max(currentDomain ?? number, number)
    }

    mutating func write(_ samples: [MediaSample], of segment: Segment) throws(ContainerError) {
        guard !samples.isEmpty else { return }
        if domainOffsets[segment.discontinuity] == nil {
            // A segment of an older number than any placed (a lagging rendition) continues the
            // nearest placed one before it.
            let earlier = domainOffsets.keys.filter { $0 < segment.discontinuity }.max()
            domainOffsets[segment.discontinuity] = earlier.flatMap { domainOffsets[$0] } ?? 0
        }
        let offset = domainOffsets[segment.discontinuity] ?? 0
        let kinds = renditions[segment.rendition].kinds
        for sample in samples where kinds.contains(sample.stream.kind) {
            let key = TrackKey(rendition: segment.rendition, slot: sample.stream)
            let track = trackIndex(for: key, sample: sample)
            try write(sample, to: track, offsetFlicks: offset)
        }
    }

    mutating func trackIndex(for key: TrackKey, sample: MediaSample) -> Int {
        if let index = timings.firstIndex(where: { $0.key == key }) { return index }
        let rendition = renditions[key.rendition]
        var track = MP4Writer.Track(
            kind: sample.stream.kind, timescale: sample.description.timescale,
            language: Languages.isoCode(rendition.language), name: rendition.name)
        if track.language != nil { track.extendedLanguage = rendition.language }
        if sample.stream.kind == .audio {
            track.alternateGroup = 1
            let audioTracks = writer.tracks.enumerated().filter { $0.element.kind == .audio }
            // One audio track is presented by default: the default rendition's first, else (no
            // rendition with sound is the default) the first.
            let anotherEnabled = audioTracks.contains { $0.element.isEnabled }
            let defaultHasSound = renditions.contains { $0.isDefault && $0.kinds.contains(.audio) }
            track.isEnabled = !anotherEnabled && (rendition.isDefault || !defaultHasSound)
            if !anotherEnabled, !track.isEnabled, audioTracks.isEmpty, !defaultHasSound { track.isEnabled = true }
        }
        let index = writer.addTrack(track)
        let delta = rescale(3_600, from: 90_000, to: sample.description.timescale)
        timings.append(Timing(key: key, frameDelta: max(delta, 1)))
        return index
    }

    mutating func write(_ sample: MediaSample, to track: Int, offsetFlicks: Int64) throws(ContainerError) {
        if sample.stream.kind == .audio {
            try writeAudio(sample, to: track, offsetFlicks: offsetFlicks)
        } else {
            try writeVideo(sample, to: track, offsetFlicks: offsetFlicks)
        }
    }

    /// Writes an audio frame where the source's time puts it: continuing the track within half a
    /// frame, trimmed when it overlaps by more, after a kept or filled gap when it comes later.
    /// Frames are placed on exact times in flicks, and each one's ticks are the difference of its
    /// rounded ends: a frame of 940.8 ticks lasts 941 or 940, and the track keeps the source's time
    /// however long it runs.
    mutating func writeAudio(_ sample: MediaSample, to track: Int, offsetFlicks: Int64) throws(ContainerError) {
        let timescale = writer.tracks[track].timescale
        let source = sample.description.timescale
        let flicks = Self.flicks
        // Times past a sixteenth of Int64's range (about 26 years of flicks) are refused, so that
        // the sums and differences below cannot overflow.
        let bound = Int64.max / 16
        let frame = min(
            max(
                rescale(sample.duration ?? Int64(sample.description.frameDuration ?? 1_024), from: source, to: flicks),
                1),
            bound)
        let (placed, overflow) = rescale(sample.presentationTime, from: source, to: flicks)
            .addingReportingOverflow(offsetFlicks)
        guard !overflow, placed.magnitude <= UInt64(bound) else {
            throw ContainerError(
                .timestampOutOfRange(
                    reason: "an audio time of \(sample.presentationTime) in 1/\(source) s on the lesson's timeline"))
        }
        var timing = timings[track]
        var start = placed
        if let expected = timing.nextAudioFlicks {
            let difference = start - expected
            // More than a second back is not an overlap to trim but a clock restarted where the
            // playlist declares no discontinuity.
            guard difference >= -Int64(flicks) else {
                throw ContainerError(.timestampsStepBack(seconds: Double(-difference) / Double(flicks)))
            }
            // Within half a frame either way, the track stays continuous. Half a frame exactly is
            // continuous too: a gap of k + ½ frames is filled with k + 1 silent frames, which moves
            // what follows by half a frame, and the next frame must not then read as an overlap.
            if abs(difference) * 2 <= frame {
                start = expected
            } else if difference < 0 {
                // Overlaps what came before by half a frame or more: trimmed.
                report.framesTrimmed += 1
                return
            } else if gaps == .keepTimestamps {
                // The gap stays: the frame before lasts until this one.
                report.gapsKept += 1
            } else if case let gapFrames = (difference + frame / 2) / frame, gapFrames <= Self.maximumSilence / frame,
                let silence = SilentAudio.frame(for: sample.description, before: sample.data)
            {
                for index in 0..<gapFrames {
                    let time = expected + index * frame
                    let first = rescale(time, from: flicks, to: timescale)
                    try writer.append(
                        silence, to: track, description: sample.description, decodeTime: first,
                        presentationTime: first, isSync: true,
                        duration: max(rescale(time + frame, from: flicks, to: timescale) - first, 1))
                }
                report.silentFramesInserted += Int(gapFrames)
                start = expected + gapFrames * frame
            } else {
                // No silent frame for this codec, or a gap of more than ten minutes (a clock that
                // jumped, not missing sound): the gap stays, as with keepTimestamps.
                report.gapsKept += 1
            }
        }
        let present = rescale(start, from: flicks, to: timescale)
        let end = max(rescale(start + frame, from: flicks, to: timescale), present + 1)
        timing.nextAudioFlicks = start + frame
        timing.end = max(timing.end ?? end, end)
        try writer.append(
            sample.data, to: track, description: sample.description, decodeTime: present, presentationTime: present,
            isSync: true, duration: end - present)
        timing.lastDecode = present
        timings[track] = timing
    }

    /// Writes a video sample at its source times moved by the part's offset, keeping decode
    /// times increasing.
    mutating func writeVideo(_ sample: MediaSample, to track: Int, offsetFlicks: Int64) throws(ContainerError) {
        let timescale = writer.tracks[track].timescale
        let source = sample.description.timescale
        let offset = rescale(offsetFlicks, from: Self.flicks, to: timescale)
        var decode = rescale(sample.decodeTime, from: source, to: timescale) + offset
        var present = rescale(sample.presentationTime, from: source, to: timescale) + offset
        let duration = sample.duration.map { rescale($0, from: source, to: timescale) }
        var timing = timings[track]
        if let last = timing.lastDecode {
            guard last - decode <= Int64(timescale) else {
                throw ContainerError(.timestampsStepBack(seconds: Double(last - decode) / Double(timescale)))
            }
            if decode <= last {
                // A source whose decode times stall or step back: the sample keeps its place in
                // decode order, one tick later.
                present += last + 1 - decode
                decode = last + 1
            } else {
                timing.frameDelta = decode - last
            }
        }
        let length = duration ?? timing.frameDelta
        timing.end = max(timing.end ?? present + length, present + length)
        try writer.append(
            sample.data, to: track, description: sample.description, decodeTime: decode, presentationTime: present,
            isSync: sample.isSync, duration: duration)
        timing.lastDecode = decode
        timings[track] = timing
    }
}
