import Foundation
import MediaContainers
import TestSupport
import Testing

/// The module's article shows how two encodes joined by a discontinuity become one timeline,
/// drawn from a real remux of the `ts-renditions-disc` lesson (a video rendition and a separate
/// audio rendition, each two encodes whose timestamps restart): where each part's sound and
/// picture lie on the source's clocks, and where the remuxer puts them in the file.
@Suite("Figures of the MediaContainers catalog")
struct MediaContainersFigureTests {
    static let lesson = "ts-renditions-disc"

    /// A part's span of one kind, in seconds.
    struct Span {
        var part: Int
        var kind: String
        var start: Double
        var end: Double
    }

    /// The typical gap between `times` sorted: one frame's duration.
    static func frameDuration(_ times: [Double]) -> Double {
        let sorted = times.sorted()
        let steps = zip(sorted.dropFirst(), sorted).map { $0 - $1 }.sorted()
        return steps.isEmpty ? 0 : steps[steps.count / 2]
    }

    /// Each part's span of each kind in the source (its own clock) and in the remuxed file.
    static func spans() throws -> (source: [Span], file: [Span]) {
        let file = try Remux.lesson(lesson).file
        var source: [Span] = []
        var written: [Span] = []
        for (kind, handler) in [("video", "vide"), ("audio", "soun")] {
            let frames = try LessonComparison.sourceFrames(lesson, kind: kind)
            let times = try #require(file.tracks(handler).first).presentationTimes()
            for part in Set(frames.map(\.part)).sorted() {
                let indices = frames.indices.filter { frames[$0].part == part }
                let sourceTimes = indices.map { frames[$0].time }
                let fileTimes = indices.map { times[$0] }
                let frame = frameDuration(sourceTimes)
                source.append(
                    Span(
                        part: part, kind: kind, start: sourceTimes.min() ?? 0, end: (sourceTimes.max() ?? 0) + frame))
                written.append(
                    Span(part: part, kind: kind, start: fileTimes.min() ?? 0, end: (fileTimes.max() ?? 0) + frame))
            }
        }
        return (source, written)
    }

    static func timelineFigure() throws -> SVGFigure {
        let (source, file) = try spans()
        let left = 24.0
        let right = 396.0
        let fileEnd = (file.map(\.end).max() ?? 1)
        let sourceEnd = source.map(\.end).max() ?? 1
        let scale = (right - left) / max(fileEnd, sourceEnd)
        func x(_ seconds: Double) -> Double { left + seconds * scale }
        func seconds(_ value: Double) -> String { String(format: "%.2f s", value) }
        let parts = ["A", "B"]
        let describe = { (spans: [Span]) in
            spans.map { "\(parts[min($0.part, 1)]) \($0.kind) \(seconds($0.start))–\(seconds($0.end))" }
                .joined(separator: ", ")
        }
        var figure = SVGFigure(
            width: 420, height: 372,
            description:
                "Two encodes joined by a discontinuity, in separate video and audio renditions. In the source each part has its own clock: "
                + describe(source) + ". In the file, one timeline: " + describe(file)
                + "; part B starts where part A's picture ends, its sound and picture as far apart as in the source.")
        func bars(_ spans: [Span], top: Double, partRows: Bool) {
            for span in spans {
                let y = top + (span.kind == "video" ? 0 : 22) + Double(span.part) * (partRows ? 64 : 0)
                let ink: SVGFigure.Ink = span.part == 0 ? .accent : .highlight
                figure.rect(
                    x: x(span.start), y: y, width: max(x(span.end) - x(span.start), 1), height: 14, radius: 3,
                    fill: ink, stroke: nil)
                figure.text(
                    "\(parts[min(span.part, 1)]) \(span.kind)", x: x(span.start) + 6, y: y + 11, size: 12,
                    ink: .background, bold: true)
            }
        }
        // The source: each part on its own row pair and its own clock.
        figure.text("Source: each part on its own clock", x: left, y: 18, size: 13, bold: true)
        bars(source, top: 34, partRows: true)
        figure.line(from: (left, 170), to: (right, 170), ink: .muted)
        for tick in stride(from: 0.0, through: max(fileEnd, sourceEnd), by: 1) {
            figure.line(from: (x(tick), 170), to: (x(tick), 175), ink: .muted)
            figure.text(seconds(tick), x: x(tick), y: 190, size: 12, ink: .muted, anchor: "middle")
        }
        // The file: one timeline, B resuming where A's picture ends.
        figure.text("The file: one timeline", x: left, y: 226, size: 13, bold: true)
        bars(file, top: 242, partRows: false)
        let joint = file.filter { $0.part == 1 }.map(\.start).min() ?? 0
        figure.line(from: (x(joint), 236), to: (x(joint), 288), ink: .text, dashed: true)
        if let audioEnd = file.first(where: { $0.part == 0 && $0.kind == "audio" })?.end, audioEnd < joint {
            // A bracket under the stretch of part A with no sound, its name below it.
            let (from, to) = (x(audioEnd), x(joint))
            figure.polyline([(from, 286), (from, 292), (to, 292), (to, 286)], ink: .text, width: 1)
            figure.line(from: ((from + to) / 2, 292), to: ((from + to) / 2, 296), ink: .text)
            figure.text("no sound", x: (from + to) / 2, y: 308, size: 12, ink: .muted, anchor: "middle")
        }
        figure.line(from: (left, 320), to: (right, 320), ink: .muted)
        for tick in stride(from: 0.0, through: max(fileEnd, sourceEnd), by: 1) {
            figure.line(from: (x(tick), 320), to: (x(tick), 325), ink: .muted)
            figure.text(seconds(tick), x: x(tick), y: 340, size: 12, ink: .muted, anchor: "middle")
        }
        figure.text(
            "B starts at \(seconds(joint)): the end of A's picture", x: left, y: 364, size: 12, ink: .text)
        return figure
    }

    @Test("one-timeline.svg (light and dark) is where the remuxer puts a lesson's parts")
    func timelineFigureIsCommitted() throws {
        let problems = CommittedFigure.problems(
            try Self.timelineFigure(), name: "one-timeline", module: "MediaContainers",
            article: "Sources/MediaContainers/MediaContainers.docc/MediaContainers.md")
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }
}
