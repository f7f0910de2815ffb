import Foundation
public import Testing

/// Compares a remuxed lesson with its source's frames (`packets.json`): the same frames in the
/// same order with the same parameter sets, and sound and picture where the source puts them.
public enum LessonComparison {
    /// The source frames of `kind` (`video` or `audio`) of lesson `name`'s remuxed playlists, in
    /// playlist and decode order.
    ///
    /// Each frame comes with its discontinuity number and its presentation time in seconds on
    /// the source's timeline.
    public static func sourceFrames(_ name: String, kind: String) throws -> [(
        frame: Lessons.SourceFrame, part: Int, time: Double
    )] {
        var frames: [(frame: Lessons.SourceFrame, part: Int, time: Double)] = []
        for playlist in try Lessons.playlists(name) {
            for segment in try Lessons.sourceSegments(playlist) {
                for stream in segment.streams where stream.kind == kind {
                    frames += stream.frames.map {
                        ($0, segment.discontinuity, segment.clock + Double($0.presentationTime) * stream.tick)
                    }
                }
            }
        }
        return frames
    }

    /// Records an issue for every difference between `file`'s first video and audio tracks and
    /// the source frames of lesson `name`: a count, a payload, the parameter sets a frame is
    /// decoded with, a key frame that is not a sync sample, or a presentation time that moved
    /// (by more than 100 µs) relative to the first frame of its discontinuity part, which would
    /// show the pictures in another order or the sound at another pace. At most the first three
    /// differences of each kind are reported.
    public static func expectSameFrames(
        _ file: MP4Inspector, as name: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        for (kind, handler) in [("video", "vide"), ("audio", "soun")] {
            let source = try sourceFrames(name, kind: kind)
            guard let track = file.tracks(handler).first else {
                #expect(
                    source.isEmpty, "\(name): no \(kind) track for \(source.count) frames",
                    sourceLocation: sourceLocation)
                continue
            }
            let written = SampleDigest.frames(of: track, in: file)
            #expect(
                written.count == source.count, "\(name): \(written.count) \(kind) samples for \(source.count) frames",
                sourceLocation: sourceLocation)
            let pairs = Array(zip(written, source.map(\.frame)).enumerated())
            for (index, _) in pairs.filter({ $0.1.0.payload != $0.1.1.payload }).prefix(3) {
                Issue.record(
                    "\(name): \(kind) sample \(index) differs from its source frame", sourceLocation: sourceLocation)
            }
            for (index, _) in pairs.filter({ $0.1.0.parameterSets != $0.1.1.parameterSets }).prefix(3) {
                Issue.record(
                    "\(name): \(kind) sample \(index) is decoded with other parameter sets than its source frame",
                    sourceLocation: sourceLocation)
            }
            for (index, _) in pairs.filter({ $0.1.1.isKey && !$0.1.0.isKey }).prefix(3) {
                Issue.record("\(name): \(kind) key frame \(index) is not a sync sample", sourceLocation: sourceLocation)
            }
            let times = track.presentationTimes()
            var origin: (part: Int, written: Double, source: Double)?
            var moved: [Int] = []
            for (index, entry) in source.enumerated() where index < times.count {
                if origin?.part != entry.part { origin = (entry.part, times[index], entry.time) }
                guard let origin else { continue }
                if abs((times[index] - origin.written) - (entry.time - origin.source)) > 0.000_1 { moved.append(index) }
            }
            for index in moved.prefix(3) {
                Issue.record(
                    "\(name): \(kind) sample \(index) is presented at another time than its source frame",
                    sourceLocation: sourceLocation)
            }
        }
    }

    /// A lesson's audio-video drift at its end as the tests state it, in microseconds, with each
    /// gap policy (``drift(_:as:)`` says how it is measured).
    public typealias StatedDrift = (name: String, keepingTimestamps: Int, fillingWithSilence: Int?)

    /// The audio-video drift at the end of every lesson with sound and picture, stated in
    /// microseconds for each gap policy of the remuxer. One audio frame is 21,333 µs (AAC-LC at
    /// 48 kHz), 42,667 µs (HE-AAC's 2,048 output samples), 24,000 µs (MP3) or 32,000 µs (AC-3,
    /// E-AC-3); every drift stays under it. What the numbers are:
    /// - 0 (to a microsecond): MPEG-TS lessons keep their 90 kHz timestamps exactly; so does
    ///   `fmp4-base-offset`, whose mp4 muxer wrote no edit list.
    /// - −31 µs, −21 µs, ±16 µs: the fMP4 lessons' video starts at a whole tick of 1/12,800 s (282
    ///   ticks), the nearest to the 22 ms the source's edit lists put between sound and picture,
    ///   and the audio's edit is rounded to the movie's timescale.
    /// - 5,333 µs, 1,938 µs when gaps are filled with silence: after a discontinuity the gap
    ///   before the new part's audio is filled with whole silent frames, so the audio moves by
    ///   less than half a frame (here 256 of 1,024 samples).
    /// - 7 µs, −4 µs: `disc-rates` joins 44.1 kHz audio to 48 kHz audio in one 44.1 kHz track,
    ///   whose ticks (22.7 µs) round the source's 90 kHz times; −4,982 µs when gaps are filled
    ///   with silence (whole silent frames at 48 kHz before part B's audio).
    /// - `nil`: not measured; the encrypted lessons are remuxed only through a download, which
    ///   keeps timestamps.
    public static let drifts: [StatedDrift] = [
        ("aes-explicit-iv", 0, nil), ("aes-fmp4-init", -31, nil), ("aes-implicit-iv", 0, nil), ("aes-rotation", 0, nil),
        ("cmaf", -31, -31), ("cmaf-ac3", -16, -16), ("cmaf-disc", -21, 1_938), ("cmaf-eac3", -16, -16),
        ("cmaf-heaac", 0, 0), ("cmaf-heaacv2", 0, 0), ("cmaf-hevc", -31, -31), ("cmaf-mp3", 16, 16),
        ("cmaf-renditions-disc", -21, 1_938),
        ("disc-encoders", 0, 5_333), ("disc-rates", 7, -4_982), ("disc-same", 0, 5_333), ("fmp4-base-offset", 0, 0),
        ("multi-audio", 0, 0),
        ("packed-beside-video", 0, 0),
        ("ts-ac3", 0, 0), ("ts-captions", 0, 0), ("ts-eac3", 0, 0), ("ts-heaac", 0, 0), ("ts-heaacv2", 0, 0),
        ("ts-hevc-cra", 0, 0), ("ts-mp3", 0, 0), ("ts-opengop", 0, 0), ("ts-renditions-disc", 0, 5_333),
        ("webvtt", 0, 0),
    ]

    /// A lesson's audio-video drift at its end, and the length of one of its audio frames.
    public struct Drift: Sendable {
        /// Where the file's audio ends relative to its video, less the same in the source, in
        /// seconds (positive: the audio runs later than in the source).
        public var seconds: Double
        /// One audio frame's duration, in seconds.
        public var audioFrame: Double
    }

    /// The drift at the end of `file` against lesson `name`'s source: where the last audio frame is
    /// presented relative to the last video frame in the file, less the same in the source's last
    /// part (the segments after the last discontinuity, every rendition's, on their own
    /// timestamps). Last frames' starts are compared, not ends: ffmpeg's fMP4 demuxer reports a
    /// full frame's duration for a last audio sample that `trun` trims.
    public static func drift(_ file: MP4Inspector, as name: String) throws -> Drift {
        var segments: [Lessons.SourceSegment] = []
        for playlist in try Lessons.playlists(name) { segments += try Lessons.sourceSegments(playlist) }
        let last = segments.map(\.discontinuity).max() ?? 0
        let part = segments.filter { $0.discontinuity == last }
        let streams = part.flatMap(\.streams)
        func lastStart(_ kind: String) -> Double? {
            part.flatMap { segment in
                segment.streams.filter { $0.kind == kind }.compactMap { stream in
                    stream.frames.map(\.presentationTime).max().map { segment.clock + Double($0) * stream.tick }
                }
            }.max()
        }
        let audio = streams.filter { $0.kind == "audio" }
        let durations = audio.flatMap { stream in stream.frames.map { Double($0.duration) * stream.tick } }
        guard let picture = file.tracks("vide").first, let sound = file.tracks("soun").first,
            let writtenVideo = picture.presentationTimes().max(), let writtenAudio = sound.presentationTimes().max(),
            let sourceVideo = lastStart("video"), let sourceAudio = lastStart("audio"),
            let frame = durations.sorted().dropFirst(durations.count / 2).first
        else { throw Lessons.FixtureError.missing("\(name): a video and an audio track") }
        let seconds = (writtenAudio - writtenVideo) - (sourceAudio - sourceVideo)
        return Drift(seconds: seconds, audioFrame: frame)
    }
    /// The drift at the end of each discontinuity part of `file` against lesson `name`'s source,
    /// in part order: within each part, where the part's last audio frame is presented relative to
    /// its last video frame, less the same in the source. Samples are matched to source frames by
    /// their order, so the file must hold exactly the source's frames (a remux that keeps
    /// timestamps, no silence inserted).
    public static func partDrifts(_ file: MP4Inspector, as name: String) throws -> [Double] {
        var ends: [Int: [String: (written: Double, source: Double)]] = [:]
        for (kind, handler) in [("video", "vide"), ("audio", "soun")] {
            let source = try sourceFrames(name, kind: kind)
            guard let track = file.tracks(handler).first, track.samples.count == source.count else {
                throw Lessons.FixtureError.missing("\(name): a \(kind) track of exactly the source's frames")
            }
            for (entry, written) in zip(source, track.presentationTimes()) {
                let last = ends[entry.part]?[kind]
                ends[entry.part, default: [:]][kind] = (
                    max(last?.written ?? -.infinity, written), max(last?.source ?? -.infinity, entry.time)
                )
            }
        }
        return try ends.keys.sorted().map { part in
            guard let video = ends[part]?["video"], let audio = ends[part]?["audio"] else {
                throw Lessons.FixtureError.missing("\(name): sound and picture in part \(part)")
            }
            return (audio.written - video.written) - (audio.source - video.source)
        }
    }
}
