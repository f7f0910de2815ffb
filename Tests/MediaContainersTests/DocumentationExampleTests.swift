import Foundation
import MediaContainers
import TestSupport
import Testing

/// The doc-comment examples, compiled and run on real segments. The architecture tests check that
/// each doc comment shows exactly the lines between its `example` markers.
@Suite("Documentation examples")
struct DocumentationExampleTests {
    @Test("SegmentRemuxer's doc comment: two segments of a lesson become one .mp4 with both tracks")
    func segmentRemuxer() throws {
        let folder = temporaryFolder("doc-remux")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let partialFile = folder.appendingPathComponent("lesson.mp4.partial")
        let segments = try ["seg0.ts", "seg1.ts"].map { try Lessons.data("ts-captions/\($0)") }
        // example: begin segment-remuxer
        let output = try MP4FileOutput(url: partialFile)
        var remuxer = try SegmentRemuxer(output: output, brand: .movie)
        for (index, segment) in segments.enumerated() {
            try remuxer.append([SegmentRemuxer.Segment(data: segment, discontinuity: 0, index: index)])
        }
        let summary = try remuxer.finish()
        // example: end segment-remuxer
        let file = try MP4Inspector(url: partialFile)
        #expect(file.tracks("vide").first?.samples.count == 50)
        #expect(file.tracks("soun").first?.samples.count == 93)
        #expect(abs(summary.duration - 2.02) < 0.01, "\(summary.duration)")
    }

    @Test("WebVTTDocument's doc comment: a subtitle segment's cues on its media's clock")
    func webVTTDocument() throws {
        let segmentText = "WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:900000,LOCAL:00:00:00.000\n\n00:00.100 --> 00:00.700\nHi\n"
        // example: begin webvtt-document
        let document = try WebVTTDocument(parsing: segmentText)
        let cues = SubtitleCue.cues(of: document, discontinuity: 0)
        // example: end webvtt-document
        #expect(cues == [SubtitleCue(start: 909_000, end: 963_000, text: "Hi")])
    }
}
