import Foundation
import OfflineLessons
import TestSupport
import Testing

/// The article *Downloading for offline use* maps a lesson download's pipeline: each stage, the
/// type that does it and the file it lives in, drawn from the table below, whose files the test
/// finds in `Sources`: a file moved or renamed fails here until the figure follows it.
@Suite("The lesson pipeline figure")
struct PipelineFigureTests {
    /// One stage of the pipeline.
    struct Stage {
        var name: String
        /// What it does, in a few words.
        var role: String
        /// Where it lives, from `Sources`.
        var file: String
    }

    /// The stages a segment goes through, in order.
    static let stages: [Stage] = [
        Stage(
            name: "Scheduler", role: "what to fetch, stream, remux next",
            file: "Downloads/Lessons/LessonScheduler.swift"),
        Stage(
            name: "Transfers", role: "2 at a time, retried, timed out", file: "Downloads/Engine/DownloadEngine.swift"),
        Stage(name: "Decrypt", role: "AES-128 segments, whole", file: "Downloads/Decryption/AES128.swift"),
        Stage(name: "Part flow", role: "held, or streamed: 2 MiB bound", file: "Downloads/Lessons/PartFlow.swift"),
        Stage(
            name: "Readers", role: "TS, packed audio, fMP4 decoders",
            file: "MediaContainers/Samples/ByteStreamDecoder.swift"),
        Stage(
            name: "Remuxer", role: "one timeline, on one serial queue",
            file: "MediaContainers/Remux/SegmentRemuxer.swift"),
        Stage(name: "Writer", role: "mdat as it comes, moov at the end", file: "MediaContainers/MP4/MP4Writer.swift"),
        Stage(name: "Journal", role: "a checkpoint after every step", file: "Downloads/Lessons/RemuxJournal.swift"),
    ]

    static let description =
        "A lesson download's pipeline, one stage below the other: "
        + stages.map { "\($0.name) (\($0.role); \(shortPath($0.file)))" }.joined(separator: ", ")
        + ". The scheduler hears back from the transfers and from each checkpoint."

    static func figure() -> SVGFigure {
        let rowHeight = 50.0
        let top = 14.0
        var figure = SVGFigure(width: 420, height: top + Double(stages.count) * rowHeight + 4, description: description)
        for (index, stage) in stages.enumerated() {
            let y = top + Double(index) * rowHeight
            let highlighted = index == 0 || index == stages.count - 1
            figure.rect(
                x: 26, y: y, width: 100, height: 32, radius: 6, fill: highlighted ? .surface : .background,
                stroke: highlighted ? .accent : .text)
            figure.text(stage.name, x: 76, y: y + 21, size: 13, anchor: "middle", bold: true)
            figure.text(stage.role, x: 138, y: y + 13, size: 12)
            figure.text(Self.shortPath(stage.file), x: 138, y: y + 29, size: 12, ink: .muted)
            if index + 1 < stages.count {
                figure.line(from: (76, y + 32), to: (76, y + rowHeight), ink: .text, width: 1.25, arrow: true)
            }
        }
        // Events back to the scheduler: a part fetched, a step checkpointed.
        let schedulerY = top + 16
        let transfersY = top + rowHeight + 16
        let journalY = top + Double(stages.count - 1) * rowHeight + 16
        figure.polyline(
            [(26, transfersY), (16, transfersY), (16, schedulerY), (25, schedulerY)], ink: .accent, width: 1.25,
            arrow: true)
        figure.polyline(
            [(26, journalY), (6, journalY), (6, schedulerY + 8), (25, schedulerY + 8)], ink: .accent, width: 1.25,
            dashed: true, arrow: true)
        return figure
    }

    /// A file's module and name: `MediaContainers › ByteStreamDecoder.swift`.
    static func shortPath(_ file: String) -> String {
        let parts = file.split(separator: "/")
        return "\(parts.first ?? "") › \(parts.last ?? "")"
    }

    @Test("every stage's file is in Sources")
    func filesExist() {
        for stage in Self.stages {
            let url = ModuleSources.root.appendingPathComponent(stage.file)
            #expect(FileManager.default.fileExists(atPath: url.path), "\(stage.file)")
        }
    }

    @Test("the pipeline figure is drawn from the stages, committed, and shown in the article")
    func pipelineFigure() {
        let problems = CommittedFigure.problems(
            Self.figure(), name: "lesson-pipeline", module: "Downloads",
            article: "Sources/Downloads/Downloads.docc/DownloadingALesson.md")
        #expect(problems.isEmpty, "\(problems)")
    }
}

/// The repository's `Sources` folder.
enum ModuleSources {
    static var root: URL { CommittedFigure.root.appendingPathComponent("Sources") }
}
