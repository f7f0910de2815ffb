import Downloads
import Foundation
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The `cmaf` lesson (fragmented MP4 video beside a separate fragmented MP4 audio rendition)
/// served with its media playlists rewritten the ways RFC 8216 allows: the download must hold
/// the same frames at the same times whichever way the playlists say it.
@Suite("Playlist tags that place segments on the timeline (RFC 8216 §4.3.2.3, §4.3.2.5, §4.3.3.3)")
struct PlaylistTimelineTests {
    /// `playlist` with `tags` before its segment line `segment`, and `header` after `#EXTM3U`.
    static func rewritten(_ playlist: Data, header: [String] = [], before segment: String = "", tags: [String] = [])
        -> Data
    {
        var lines = String(decoding: playlist, as: UTF8.self).components(separatedBy: "\n")
        if let index = lines.firstIndex(of: segment), !tags.isEmpty {
            // Before the segment's EXTINF line, which belongs to it.
            lines.insert(contentsOf: tags, at: index - 1)
        }
        lines.insert(contentsOf: header, at: 1)
        return Data(lines.joined(separator: "\n").utf8)
    }

    /// Downloads the `cmaf` lesson with its video and audio playlists given by `video` and
    /// `audio` (functions of the served ones) and `extra` files served beside them, and returns
    /// the file and the paths fetched.
    static func download(
        video: (Data) -> Data, audio: (Data) -> Data, extra: [String: Data] = [:], label: String
    ) async throws -> (MP4Inspector, [String]) {
        let (lesson, transport, downloader) = try LessonFramesTests.serving("cmaf")
        let videoPlaylist = try #require(lesson.files["video/index.m3u8"])
        let audioPlaylist = try #require(lesson.files["audio_en/index.m3u8"])
        transport.stub(lesson.base.appendingPathComponent("video/index.m3u8"), reply: .resource(video(videoPlaylist)))
        transport.stub(
            lesson.base.appendingPathComponent("audio_en/index.m3u8"), reply: .resource(audio(audioPlaylist)))
        for (path, bytes) in extra { transport.stub(lesson.base.appendingPathComponent(path), reply: .resource(bytes)) }
        let folder = temporaryFolder("timeline-\(label)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try await downloader.downloadLesson(
            from: lesson.entry, to: folder.appendingPathComponent("lesson")
        )
        .result()
        return (try MP4Inspector(url: result.file), transport.requests.compactMap(\.url?.path))
    }

    /// Checks `file` against the `cmaf` lesson's source frames and its stated drift.
    static func expectSourceTimeline(_ file: MP4Inspector) throws {
        try LessonComparison.expectSameFrames(file, as: "cmaf")
        let stated = try #require(LessonComparison.drifts.first { $0.name == "cmaf" })
        let drift = try LessonComparison.drift(file, as: "cmaf")
        #expect(abs(drift.seconds * 1_000_000 - Double(stated.keepingTimestamps)) < 1)
    }

    @Test(
        "RFC 8216 §4.3.2.5: an EXT-X-MAP that changes without a discontinuity (a new URI, a byte range of the same file) is read for the segments after it, on the same timeline"
    )
    func initialisationChangesWithoutDiscontinuity() async throws {
        let lesson = try ServedLesson("cmaf")
        let videoInit = try #require(lesson.files["video/init_0.mp4"])
        let audioInit = try #require(lesson.files["audio_en/init_1.mp4"])
        // The audio's second map is its first one again, as a byte range of a file that holds it
        // after 100 bytes of something else.
        let (file, paths) = try await Self.download(
            video: { Self.rewritten($0, before: "seg1.m4s", tags: ["#EXT-X-MAP:URI=\"init_again.mp4\""]) },
            audio: {
                Self.rewritten(
                    $0, before: "seg1.m4s", tags: ["#EXT-X-MAP:URI=\"inits.bin\",BYTERANGE=\"\(audioInit.count)@100\""])
            },
            extra: [
                "video/init_again.mp4": videoInit, "audio_en/inits.bin": Data(repeating: 0x55, count: 100) + audioInit,
            ],
            label: "map")
        try Self.expectSourceTimeline(file)
        #expect(paths.contains { $0.hasSuffix("video/init_again.mp4") })
        #expect(paths.contains { $0.hasSuffix("audio_en/inits.bin") })
        // One sample description per track: the same initialisation read again describes the
        // same samples.
        #expect(file.tracks.map(\.formats.count) == [1, 1])
    }

    @Test(
        "RFC 8216 §4.3.2.5, ISO/IEC 14496-12 §8.1.2: an EXT-X-MAP that changes to other bytes without a discontinuity starts a new reader for the segments after it, on the same timeline"
    )
    func otherInitialisationWithoutDiscontinuity() async throws {
        let lesson = try ServedLesson("cmaf")
        // Each second map is the first with a free box after its moov: other bytes, the same tracks.
        let free = Data([0, 0, 0, 16]) + Data("free".utf8) + Data("other bytes!".utf8.prefix(8))
        let videoInit = try #require(lesson.files["video/init_0.mp4"]) + free
        let audioInit = try #require(lesson.files["audio_en/init_1.mp4"]) + free
        let (file, paths) = try await Self.download(
            video: { Self.rewritten($0, before: "seg1.m4s", tags: ["#EXT-X-MAP:URI=\"init_other.mp4\""]) },
            audio: { Self.rewritten($0, before: "seg1.m4s", tags: ["#EXT-X-MAP:URI=\"init_other.mp4\""]) },
            extra: ["video/init_other.mp4": videoInit, "audio_en/init_other.mp4": audioInit],
            label: "other-map")
        try Self.expectSourceTimeline(file)
        #expect(paths.contains { $0.hasSuffix("video/init_other.mp4") })
        #expect(paths.contains { $0.hasSuffix("audio_en/init_other.mp4") })
        #expect(file.tracks.map(\.formats.count) == [1, 1])
    }

    /// Ways to number the same timeline: each rendition's EXT-X-DISCONTINUITY-SEQUENCE and how
    /// many EXT-X-DISCONTINUITY tags come before its first segment.
    static let numberings: [(video: (sequence: Int, leading: Int), audio: (sequence: Int, leading: Int))] = [
        ((0, 0), (0, 0)), ((7, 0), (7, 0)), ((3, 0), (2, 1)), ((5, 1), (6, 0)), ((0, 1), (1, 0)),
    ]

    @Test(
        "RFC 8216 §4.3.3.3, §6.2.2: renditions whose first segments carry the same discontinuity sequence number share one timeline, however each playlist states that number",
        arguments: numberings)
    func discontinuitySequence(
        video: (sequence: Int, leading: Int), audio: (sequence: Int, leading: Int)
    ) async throws {
        func numbered(_ sequence: Int, _ leading: Int) -> (Data) -> Data {
            { playlist in
                Self.rewritten(
                    playlist, header: ["#EXT-X-DISCONTINUITY-SEQUENCE:\(sequence)"], before: "seg0.m4s",
                    tags: Array(repeating: "#EXT-X-DISCONTINUITY", count: leading))
            }
        }
        let (file, _) = try await Self.download(
            video: numbered(video.sequence, video.leading), audio: numbered(audio.sequence, audio.leading),
            label: "sequence")
        try Self.expectSourceTimeline(file)
    }

    @Test(
        "RFC 8216 §4.3.3.3: a rendition numbered one discontinuity later is not on the video's timeline: its audio follows the video's first part instead of starting with it"
    )
    func differentNumbersAreDifferentTimelines() async throws {
        let (file, _) = try await Self.download(
            video: { Self.rewritten($0, header: ["#EXT-X-DISCONTINUITY-SEQUENCE:4"]) },
            audio: { Self.rewritten($0, header: ["#EXT-X-DISCONTINUITY-SEQUENCE:5"]) }, label: "apart")
        let video = try #require(file.tracks("vide").first)
        let audio = try #require(file.tracks("soun").first)
        #expect(audio.start >= video.end - 0.05, "audio starts at \(audio.start) s, video ends at \(video.end) s")
    }
}

extension PlaylistTimelineTests {
    /// Downloads lesson `name` served with `changes` (paths to the bytes served there instead),
    /// from `entry` (a path in the lesson; its entry playlist by default), and returns what `body`
    /// reads from the result and the file before the download's folder is removed.
    static func downloadServed<Value>(
        _ name: String, entry: String? = nil, changes: (ServedLesson) throws -> [String: Data],
        reading body: (DownloadResult, MP4Inspector) throws -> Value
    ) async throws -> Value {
        let (lesson, transport, downloader) = try LessonFramesTests.serving(name)
        for (path, bytes) in try changes(lesson) {
            transport.stub(lesson.base.appendingPathComponent(path), reply: .resource(bytes))
        }
        let folder = temporaryFolder("timeline-\(name)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try await downloader.downloadLesson(
            from: entry.map { lesson.base.appendingPathComponent($0) } ?? lesson.entry,
            to: folder.appendingPathComponent("lesson")
        )
        .result()
        return try body(result, try MP4Inspector(url: result.file))
    }

    @Test(
        "RFC 8216 §3.3: a first segment without samples (only a styp) does not stop the next one from streaming into the file"
    )
    func firstSegmentWithoutSamples() async throws {
        let typeOnly = Data([0, 0, 0, 24] + Array("stypmsdh".utf8) + [0, 0, 0, 0] + Array("msdhmsix".utf8))
        let written = try await Self.downloadServed(
            "cmaf", entry: "video/index.m3u8",
            changes: { lesson in
                let playlist = try #require(lesson.files["video/index.m3u8"])
                return [
                    "video/index.m3u8": Self.rewritten(
                        playlist, before: "seg0.m4s", tags: ["#EXTINF:0.040,", "empty.m4s"]),
                    "video/empty.m4s": typeOnly,
                ]
            },
            reading: { _, file in SampleDigest.frames(of: try #require(file.tracks("vide").first), in: file) })
        let source = try LessonComparison.sourceFrames("cmaf", kind: "video").map(\.frame)
        #expect(written.map(\.payload) == source.map(\.payload))
        #expect(written.map(\.parameterSets) == source.map(\.parameterSets))
    }
}

extension PlaylistTimelineTests {
    @Test(
        "RFC 8216 §3.4: audio frames trimmed where the source's sound overlaps itself are omissions the result names, with their count"
    )
    func trimmedAudioIsAnOmission() async throws {
        // packed-aac's second segment placed 4,180 ticks (two 48 kHz AAC frames) earlier than
        // the first one ends.
        let omissions = try await Self.downloadServed(
            "packed-aac",
            changes: { lesson in
                ["seg1.aac": try Lessons.packedAudio(try #require(lesson.files["seg1.aac"]), shiftedBy: -4_180)]
            },
            reading: { result, _ in result.omissions })
        #expect(omissions == [.overlappingAudio(frames: 2)])
        #expect(omissions.first?.description == "2 audio frames left out where the source's sound overlapped itself")
        // Unmoved, nothing is left out.
        let plain = try await Self.downloadServed(
            "packed-aac", changes: { _ in [:] }, reading: { result, _ in result.omissions })
        #expect(plain.isEmpty)
    }
}
