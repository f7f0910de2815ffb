import Foundation
import Gestures
import Testing

// CoreGraphics brings the geometry's members on Apple platforms (Foundation does on Linux).
#if canImport(CoreGraphics)
    import CoreGraphics
#endif

/// The README's swipe, replayed: what the session measured and decided, for the article's
/// numbers and plots.
enum ReadmeThrow {
    static let layout = FloatingLayout(
        bounds: CGRect(x: 0, y: 0, width: 390, height: 844),
        safeArea: LayoutInsets(top: 47, left: 0, bottom: 34, right: 0),
        playerSize: CGSize(width: 72, height: 72))

    /// The release decision of the README's swipe.
    static let decision: SnapDecision? = {
        var session = FloatingPlayerSession(layout: layout)
        session.touchBegan(at: CGPoint(x: 195, y: 428), time: 10.000)
        session.touchMoved(to: CGPoint(x: 215, y: 430), time: 10.008)
        session.touchMoved(to: CGPoint(x: 240, y: 431), time: 10.016)
        return session.touchEnded(at: CGPoint(x: 270, y: 432), time: 10.024)?.decision
    }()

    /// The horizontal release speed the session measured, in points per second.
    static var speed: Double { Double(decision?.releaseVelocity.dx ?? 0) }
}

@Suite("FloatingPlayer.md: every number about the README's throw is the code's")
struct ArticleNumberTests {
    /// The article's text with every run of spaces and line breaks made one space, so that a
    /// sentence is found however the paragraph wraps.
    static let text: String = {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/Gestures/Gestures.docc/FloatingPlayer.md")
        let raw = (try? String(contentsOf: url, encoding: .utf8)) ?? ""
        return raw.split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " ")
    }()

    /// `value` rounded, with a comma between thousands, as the article writes numbers.
    static func grouped(_ value: Double) -> String {
        let digits = String(Int(value.rounded()))
        var groups: [Substring] = []
        var end = digits.endIndex
        while end > digits.startIndex {
            let start = digits.index(end, offsetBy: -3, limitedBy: digits.startIndex) ?? digits.startIndex
            groups.insert(digits[start..<end], at: 0)
            end = start
        }
        return groups.joined(separator: ",")
    }

    /// The README's throw on its own, then the spring from the same release, sampled every
    /// millisecond: when it passes the edge, how far beyond it peaks, when it is back for good.
    static var sentences: [String] {
        let speed = ReadmeThrow.speed
        let fast = GlideMotion(from: 270, to: 338, initialVelocity: speed, within: 52...338)
        let slow = GlideMotion(from: 270, to: 338, initialVelocity: 100, within: 52...338)
        let spring = SpringMotion(
            spring: Spring(response: 0.45, dampingFraction: 1), from: 270, to: 338, initialVelocity: speed)
        var passes: Int?
        var peak = 0.0
        var lastAway = 0
        for millisecond in 0...2_000 {
            let position = spring.position(at: Double(millisecond) / 1_000)
            if position > 338, passes == nil { passes = millisecond }
            peak = max(peak, position - 338)
            if abs(position - 338) > 1 { lastAway = millisecond }
        }
        let back = String(format: "%.2f", Double(lastAway + 1) / 1_000)
        return [
            "released at x = 270 at \(grouped(speed)) points per second (what the session measures from its"
                + " samples), reaches the edge at 338 in \(Int((fast.duration * 1_000).rounded())) ms",
            "takes the nominal 0.2–0.45 s (\(String(format: "%.2f", slow.duration)) s here)",
            "it passes the edge after \(passes ?? -1) ms, peaks \(Int(peak.rounded())) points beyond it, and is"
                + " not back within a point of it for \(back) s",
        ]
    }

    @Test("the README's throw: the session's release speed, the glide's and the spring's timings", arguments: sentences)
    func sentence(_ sentence: String) {
        #expect(Self.text.contains(sentence), "FloatingPlayer.md should say: \(sentence)")
    }

    @Test("the README's swipe is a throw to the right edge at x = 338, as the README says")
    func readmeThrow() throws {
        let decision = try #require(ReadmeThrow.decision)
        #expect(decision.isThrow)
        #expect(decision.target.x == 338)
        #expect(ReadmeThrow.speed > 3_000)
    }
}
