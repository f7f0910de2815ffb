import Foundation
import Progress
import TestSupport
import Testing

/// The article *Counting watched progress* shows its three cases as a figure drawn from the
/// tracker's own output: what was played, span by span, and the union that counts.
@Suite("Figures of the Progress catalog")
struct ProgressFigureTests {
    /// The three cases of ``ArticleCaseTests``, played through a tracker, drawn on one timeline each.
    static func watchedCases() -> SVGFigure {
        let left = 96.0
        let right = 400.0
        // The article's lesson lasts 100 s; the figure's axis is in percent of it.
        let duration = 100.0
        let scale = (right - left) / duration
        var rows: [(title: String, spans: [Range<Double>], union: [Range<Double>], fraction: Double)] = []
        for example in ArticleCaseTests.cases {
            var tracker = WatchTracker(deviceID: "ipad", duration: duration)
            var now = Date(timeIntervalSince1970: 1_763_700_000)
            for event in example.events {
                tracker.handle(event, at: now)
                now += 1
            }
            rows.append(
                (
                    example.name, tracker.playedSpans, tracker.progress.watched.intervals,
                    tracker.progress.watchedFraction ?? 0
                ))
        }
        let blockHeights = rows.map { 34 + Double($0.spans.count) * 16 + 26 }
        let height = blockHeights.reduce(24, +) + 28
        var figure = SVGFigure(
            width: 420, height: height,
            description:
                "Three viewings of a \(Int(duration))-second lesson on a timeline. "
                + rows.map { row in
                    let played = row.spans.map { Self.describe($0, of: duration) }.joined(separator: ", then ")
                    let watched = row.union.map { Self.describe($0, of: duration) }.joined(separator: " and ")
                    return
                        "\(row.title.prefix(1).uppercased() + row.title.dropFirst()): played \(played); watched \(watched)."
                }
                .joined(separator: " "))
        var y = 24.0
        for (index, row) in rows.enumerated() {
            figure.text(row.title.prefix(1).uppercased() + row.title.dropFirst(), x: 16, y: y + 4, size: 14, bold: true)
            var lane = y + 22
            for span in row.spans {
                figure.text("played", x: left - 10, y: lane + 4, size: 12, ink: .muted, anchor: "end")
                figure.line(
                    from: (left + span.lowerBound * scale, lane), to: (left + span.upperBound * scale, lane),
                    ink: .accent, width: 6)
                lane += 16
            }
            lane += 4
            figure.text(
                "watched \(Int((row.fraction * 100).rounded()))%", x: left - 10, y: lane + 4, size: 12, ink: .text,
                anchor: "end", bold: true)
            figure.line(from: (left, lane), to: (right, lane), ink: .muted, width: 1, dashed: true)
            for interval in row.union {
                figure.line(
                    from: (left + interval.lowerBound * scale, lane), to: (left + interval.upperBound * scale, lane),
                    ink: .highlight, width: 8)
            }
            y += blockHeights[index]
        }
        // The time axis, in percent of the lesson.
        figure.line(from: (left, y), to: (right, y), ink: .muted)
        for percent in stride(from: 0, through: 100, by: 10) {
            let x = left + Double(percent) / 100 * (right - left)
            figure.line(from: (x, y), to: (x, y + 4), ink: .muted)
            if percent % 20 == 0 {
                figure.text("\(percent)%", x: x, y: y + 17, size: 12, ink: .muted, anchor: "middle")
            }
        }
        return figure
    }

    /// `range` (seconds) as percent of a lesson of `duration` seconds: "0–15%".
    static func describe(_ range: Range<Double>, of duration: Double) -> String {
        "\(Int((range.lowerBound / duration * 100).rounded()))–\(Int((range.upperBound / duration * 100).rounded()))%"
    }

    @Test("watched-cases.svg (light and dark) is what the tracker computes for the article's cases")
    func watchedCasesFigure() {
        let problems = CommittedFigure.problems(
            Self.watchedCases(), name: "watched-cases", module: "Progress",
            article: "Sources/Progress/Progress.docc/CountingProgress.md")
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }
}
