import Foundation
import Gestures
import Testing

/// Draws a function as ASCII art, so the DocC article's plots come from the real code.
enum AsciiPlot {
    static func render(
        width: Int = 56, height: Int = 12, xRange: ClosedRange<Double>, yRange: ClosedRange<Double>,
        _ function: (Double) -> Double
    ) -> String {
        var grid = [[Character]](repeating: [Character](repeating: " ", count: width), count: height)
        for column in 0..<width {
            let x = xRange.lowerBound + (xRange.upperBound - xRange.lowerBound) * Double(column) / Double(width - 1)
            let y = function(x)
            let fraction = (y - yRange.lowerBound) / (yRange.upperBound - yRange.lowerBound)
            let row = height - 1 - Int((fraction * Double(height - 1)).rounded())
            if (0..<height).contains(row) { grid[row][column] = "*" }
        }
        let lines = grid.map { "|" + String($0) }
        let axis = "+" + String(repeating: "-", count: width)
        return (lines + [axis]).map { $0.replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression) }
            .joined(separator: "\n")
    }

    /// The plots the article shows, by name.
    static var plots: [String: String] {
        let deceleration = Deceleration(position: 0, velocity: 1, rate: .normal)
        let rest = deceleration.restingPosition
        // The README's throw: released at x = 270, 68 points from the right edge at 338, at the
        // speed the session measures from the README's samples.
        let fast = GlideMotion(from: 270, to: 338, initialVelocity: ReadmeThrow.speed, within: 52...338)
        let slow = GlideMotion(from: 270, to: 338, initialVelocity: 100, within: 52...338)
        let spring = SpringMotion(
            spring: Spring(response: 0.45, dampingFraction: 1), from: 270, to: 338, initialVelocity: ReadmeThrow.speed)
        return [
            "ease-in-out": render(xRange: 0...1, yRange: 0...1) { CubicBezierTiming.easeInOut.value(at: $0) },
            "glide-fast": render(xRange: 0...fast.duration, yRange: 270...338) { fast.position(at: $0) },
            "glide-slow": render(xRange: 0...slow.duration, yRange: 270...338) { slow.position(at: $0) },
            "glide-slow-velocity": render(xRange: 0...slow.duration, yRange: 0...500) { slow.velocity(at: $0) },
            "spring-overshoot": render(xRange: 0...0.6, yRange: 270...410) { spring.position(at: $0) },
            "deceleration": render(xRange: 0...3, yRange: 0...1) { deceleration.position(at: $0) / rest },
        ]
    }
}

@Suite("DocC plots")
struct CurvePlotTests {
    /// The article in the DocC catalog, found from this file's path (tests never leave the repo).
    static let article = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/Gestures/Gestures.docc/FloatingPlayer.md")

    @Test(
        "the article's plots are the curves the code computes",
        arguments: [
            "ease-in-out", "glide-fast", "glide-slow", "glide-slow-velocity", "spring-overshoot", "deceleration",
        ])
    func plotsMatch(name: String) throws {
        let text = try String(contentsOf: Self.article, encoding: .utf8)
        let marker = "<!-- plot: \(name) -->\n```text\n"
        let start = try #require(text.range(of: marker), "no plot '\(name)' in the article")
        let end = try #require(text.range(of: "\n```", range: start.upperBound..<text.endIndex))
        let shown = String(text[start.upperBound..<end.lowerBound])
        let expected = try #require(AsciiPlot.plots[name])
        #expect(shown == expected, "Replace the '\(name)' plot in FloatingPlayer.md with:\n\(expected)")
    }
}
