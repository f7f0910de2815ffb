import Foundation
import MediaContainers
import TestSupport
import Testing

/// The remuxers' doc-comment examples, compiled and run on real segments. The architecture
/// tests check that each doc comment shows exactly the lines between its `example` markers.
@Suite("Documentation examples")
struct DocumentationExampleTests {
    @Test("AudioRemuxer's doc comment: three transport-stream segments become one .m4a of 88 frames")
    func audioRemuxer() throws {
        let folder = temporaryFolder("doc-audio")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let partialFile = folder.appendingPathComponent("lesson.m4a.partial")
        let segments = try ["seg0.ts", "seg1.ts", "seg2.ts"].map { try Facts.data("hls-av/audio/\($0)") }
        // example: begin audio-remuxer
        var remuxer = try AudioRemuxer(destination: partialFile)
        for (index, segment) in segments.enumerated() {
            try remuxer.startSegment(index)
            try remuxer.append(segment)
        }
        let seconds = try remuxer.finish()
        // example: end audio-remuxer
        let file = MP4BoxReader(bytes: [UInt8](try Data(contentsOf: partialFile)))
        #expect(try VideoRemuxTests.count(file, "soun", "stsz") == 88)
        #expect(abs(seconds - 88 * 1024 / 44_100) < 0.01, "\(seconds)")
    }

    @Test("MediaRemuxer's doc comment: a video segment and a separate audio segment become one .mp4")
    func mediaRemuxer() throws {
        let folder = temporaryFolder("doc-video")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let partialFile = folder.appendingPathComponent("lesson.mp4.partial")
        let videoSegment = try Facts.data("hls-av/video/seg0.ts")
        let audioSegment = try Facts.data("hls-av/audio/seg0.ts")
        // example: begin media-remuxer
        var remuxer = try MediaRemuxer(destination: partialFile, audio: .separate)
        try remuxer.startSegment(0, of: .video)
        try remuxer.append(videoSegment, to: .video)
        try remuxer.startSegment(0, of: .audio)
        try remuxer.append(audioSegment, to: .audio)
        let seconds = try remuxer.finish()
        // example: end media-remuxer
        let file = MP4BoxReader(bytes: [UInt8](try Data(contentsOf: partialFile)))
        #expect(try VideoRemuxTests.count(file, "vide", "stsz") == 25)
        #expect(try VideoRemuxTests.count(file, "soun", "stsz") > 0)
        #expect(seconds > 0.9 && seconds < 1.2, "\(seconds)")
    }
}
