import Foundation
import Gestures
import TestSupport
import Testing

// CoreGraphics brings the geometry's members on Apple platforms (Foundation does on Linux).
#if canImport(CoreGraphics)
    import CoreGraphics
#endif

/// The article *The floating player* shows throws on a phone screen, drawn from the session's
/// own flights: each throw's path sampled every 10 ms from the release, and where it lands.
@Suite("Figures of the Gestures catalog")
struct GesturesFigureTests {
    /// A throw: where the finger lifts, and its velocity (points per second).
    struct Throw {
        var label: String
        var release: CGPoint
        var velocity: CGVector
    }

    static let throwsShown: [Throw] = [
        Throw(label: "fast, right", release: CGPoint(x: 265, y: 380), velocity: CGVector(dx: 4_000, dy: 150)),
        Throw(label: "slow, left", release: CGPoint(x: 220, y: 420), velocity: CGVector(dx: -300, dy: 0)),
        Throw(label: "up and left", release: CGPoint(x: 320, y: 690), velocity: CGVector(dx: -1_200, dy: -2_400)),
        Throw(label: "down, right", release: CGPoint(x: 120, y: 600), velocity: CGVector(dx: 900, dy: 2_800)),
        Throw(label: "a drop", release: CGPoint(x: 100, y: 250), velocity: CGVector(dx: 0, dy: 0)),
    ]

    /// The session's flight for `thrown`: the finger moves at the velocity for 24 ms, then lifts.
    static func flight(_ thrown: Throw, layout: FloatingLayout) -> (path: [CGPoint], landing: CGPoint) {
        var session = FloatingPlayerSession(layout: layout)
        let start = session.center(at: 0)
        let step = 0.008
        // Grab the player where it rests, then drag it to the release point and throw.
        session.touchBegan(at: start, time: 1)
        let approach = CGPoint(
            x: thrown.release.x - thrown.velocity.dx * step * 3, y: thrown.release.y - thrown.velocity.dy * step * 3)
        session.touchMoved(to: approach, time: 1.2)
        for index in 1...2 {
            let t = Double(index) * step
            session.touchMoved(
                to: CGPoint(x: approach.x + thrown.velocity.dx * t, y: approach.y + thrown.velocity.dy * t),
                time: 1.2 + t)
        }
        let releaseTime = 1.2 + 3 * step
        let end = session.touchEnded(at: thrown.release, time: releaseTime)
        let path = (0...80).map { session.center(at: releaseTime + Double($0) * 0.01) }
        return (path, end?.decision?.target ?? path.last ?? thrown.release)
    }

    static func throwsFigure() -> SVGFigure {
        let layout = ReadmeThrow.layout
        let scale = 0.6
        let origin = (x: 16.0, y: 30.0)
        func point(_ p: CGPoint) -> (Double, Double) {
            (origin.x + Double(p.x) * scale, origin.y + Double(p.y) * scale)
        }
        let flights = throwsShown.map { ($0, flight($0, layout: layout)) }
        var figure = SVGFigure(
            width: 420, height: 570,
            description:
                "Five throws of the floating player on a 390 by 844 point phone screen: "
                + flights.map { thrown, flight in
                    // Where the player's centre is when the finger lifts: the path's first point.
                    let start = flight.path.first ?? thrown.release
                    return "\(thrown.label) from (\(Int(start.x.rounded())), \(Int(start.y.rounded()))) lands at "
                        + "(\(Int(flight.landing.x.rounded())), \(Int(flight.landing.y.rounded())))"
                }
                .joined(separator: "; ") + ". Every path stays inside the safe area.")
        // The phone, its safe area, and the region a resting player's centre keeps to.
        figure.rect(
            x: origin.x, y: origin.y, width: 390 * scale, height: 844 * scale, radius: 24, fill: nil, stroke: .text)
        let insets = layout.safeArea
        let safe = CGRect(
            x: insets.left, y: insets.top, width: layout.bounds.width - insets.left - insets.right,
            height: layout.bounds.height - insets.top - insets.bottom)
        let region = layout.restingRegion
        figure.rect(
            x: point(safe.origin).0, y: point(safe.origin).1, width: Double(safe.width) * scale,
            height: Double(safe.height) * scale, fill: nil, stroke: .muted)
        // The resting region dashed, so that it does not read as a second safe area.
        let corner = point(region.origin)
        let far = (corner.0 + Double(region.width) * scale, corner.1 + Double(region.height) * scale)
        figure.polyline(
            [corner, (far.0, corner.1), far, (corner.0, far.1), corner], ink: .muted, width: 1, dashed: true)
        for (index, (thrown, flight)) in flights.enumerated() {
            figure.polyline(flight.path.map(point), ink: .accent, width: 2)
            // A mark every 10 ms, so that the spacing shows the speed.
            for sample in flight.path.dropFirst() {
                figure.circle(x: point(sample).0, y: point(sample).1, radius: 1.6, fill: .accent)
            }
            let release = point(flight.path.first ?? thrown.release)
            figure.circle(x: release.0, y: release.1, radius: 4, fill: .highlight)
            let landing = point(flight.landing)
            let half = Double(layout.playerSize.width) * scale / 2
            figure.rect(
                x: landing.0 - half, y: landing.1 - half, width: half * 2, height: half * 2, radius: half, fill: nil,
                stroke: .accent)
            figure.text("\(index + 1)", x: release.0 + 7, y: release.1 - 6, size: 12, ink: .highlight, bold: true)
        }
        // The legend, beside the phone.
        let legendX = origin.x + 390 * scale + 18
        figure.text("Throws", x: legendX, y: 60, size: 14, bold: true)
        for (index, (thrown, flight)) in flights.enumerated() {
            let y = 88 + Double(index) * 40
            figure.text("\(index + 1). \(thrown.label)", x: legendX, y: y, size: 13)
            let speed = Int(
                (Double(thrown.velocity.dx * thrown.velocity.dx + thrown.velocity.dy * thrown.velocity.dy))
                    .squareRoot().rounded())
            figure.text(
                "\(speed) pt/s → (\(Int(flight.landing.x.rounded())), \(Int(flight.landing.y.rounded())))",
                x: legendX + 16, y: y + 17, size: 12, ink: .muted)
        }
        figure.circle(x: legendX + 4, y: 310, radius: 4, fill: .highlight)
        figure.text("release", x: legendX + 16, y: 314, size: 12, ink: .muted)
        figure.line(from: (legendX - 2, 334), to: (legendX + 10, 334), ink: .accent, width: 2)
        figure.text("path, every 10 ms", x: legendX + 16, y: 338, size: 12, ink: .muted)
        figure.circle(x: legendX + 4, y: 358, radius: 6, fill: nil, stroke: .accent)
        figure.text("where it rests", x: legendX + 16, y: 362, size: 12, ink: .muted)
        figure.rect(x: legendX - 2, y: 376, width: 12, height: 10, fill: nil, stroke: .muted)
        figure.text("safe area", x: legendX + 16, y: 386, size: 12, ink: .muted)
        figure.polyline(
            [(legendX - 2, 400), (legendX + 10, 400), (legendX + 10, 410), (legendX - 2, 410), (legendX - 2, 400)],
            ink: .muted, width: 1, dashed: true)
        figure.text("where a resting", x: legendX + 16, y: 410, size: 12, ink: .muted)
        figure.text("player's centre stays", x: legendX + 16, y: 426, size: 12, ink: .muted)
        return figure
    }

    @Test("throws.svg (light and dark) is the session's own flights, and every flight stays inside the safe area")
    func throwsFigureMatches() {
        // What the description claims: every centre stays where the player is wholly inside the safe area.
        let layout = ReadmeThrow.layout
        for thrown in Self.throwsShown {
            for center in Self.flight(thrown, layout: layout).path {
                #expect(center.x >= 36 && center.x <= 354 && center.y >= 83 && center.y <= 774, "\(thrown.label)")
            }
        }
        let problems = CommittedFigure.problems(
            Self.throwsFigure(), name: "throws", module: "Gestures",
            article: "Sources/Gestures/Gestures.docc/FloatingPlayer.md")
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    // MARK: Motion against time

    /// The README's throw released at x = 270 towards the edge anchor at 338: fast (the speed
    /// the session measures), a slow push, and the critically damped spring earlier versions used.
    static let fast = GlideMotion(from: 270, to: 338, initialVelocity: ReadmeThrow.speed, within: 52...338)
    static let slow = GlideMotion(from: 270, to: 338, initialVelocity: 100, within: 52...338)
    static let spring = SpringMotion(
        spring: Spring(response: 0.45, dampingFraction: 1), from: 270, to: 338, initialVelocity: ReadmeThrow.speed)

    /// Progress (0 to 1) and its rate on a motion's own clock (0 to 1), for the normalized charts.
    static func normalized(_ progress: @escaping (Double) -> Double) -> (
        progress: (Double) -> Double, speed: (Double) -> Double
    ) {
        let step = 0.000_1
        return (
            progress,
            { u in (progress(min(u + step, 1)) - progress(max(u - step, 0))) / (min(u + step, 1) - max(u - step, 0)) }
        )
    }

    /// `value` rounded, with a comma between thousands (4,063).
    static func grouped(_ value: Double) -> String {
        let digits = String(Int(value.rounded()))
        guard digits.count > 3 else { return digits }
        return digits.dropLast(3) + "," + digits.suffix(3)
    }

    static func glideFigure() -> SVGFigure {
        let fastCurve = normalized { (fast.position(at: $0 * fast.duration) - 270) / 68 }
        let slowCurve = normalized { (slow.position(at: $0 * slow.duration) - 270) / 68 }
        let easeCurve = normalized { CubicBezierTiming.easeInOut.value(at: $0) }
        func series(_ progress: Bool) -> [SVGFigure.Series] {
            [
                .init(
                    "fast throw, \(grouped(ReadmeThrow.speed)) pt/s: \(Int((fast.duration * 1_000).rounded())) ms",
                    ink: .accent, domain: 0...1, value: progress ? fastCurve.progress : fastCurve.speed),
                .init(
                    "slow push, 100 pt/s: \(Int((slow.duration * 1_000).rounded())) ms", ink: .highlight, domain: 0...1,
                    value: progress ? slowCurve.progress : slowCurve.speed),
                .init(
                    "ease in and out (a drop)", ink: .muted, dashed: true, domain: 0...1,
                    value: progress ? easeCurve.progress : easeCurve.speed),
            ]
        }
        let fastStart = fastCurve.speed(0)
        var figure = SVGFigure(
            width: 420, height: 550,
            description:
                "Two charts over each motion's own duration, from the release at x = 270 to the edge at 338. "
                + "Progress: the fast throw's glide (\(grouped(ReadmeThrow.speed)) points per second, "
                + "\(Int((fast.duration * 1_000).rounded())) ms) is pure deceleration, the slow push's glide "
                + "(100 points per second, \(Int((slow.duration * 1_000).rounded())) ms) speeds up then slows down, "
                + "and the ease-in-out curve starts at rest. Speed, relative to the average: the fast glide "
                + "leaves at \(SVGFigure.number(fastStart)) times the average and falls to 0, the slow one leaves at "
                + "\(SVGFigure.number(slowCurve.speed(0))) and peaks before settling, ease-in-out starts and ends at 0."
        )
        // The two charts one above the other, so that each keeps its width on a phone.
        figure.chart(
            x: 52, y: 30, width: 340, height: 160, xRange: 0...1, yRange: 0...1.05, xTicks: [0, 0.25, 0.5, 0.75, 1],
            yTicks: [0, 0.5, 1], xTitle: "fraction of the motion's duration", yTitle: "progress to the edge",
            series: series(true))
        figure.chart(
            x: 52, y: 270, width: 340, height: 160, xRange: 0...1, yRange: 0...3.15, xTicks: [0, 0.25, 0.5, 0.75, 1],
            yTicks: [0, 1, 2, 3], xTitle: "fraction of the motion's duration", yTitle: "speed ÷ average speed",
            series: series(false))
        figure.legend(series(true), x: 20, y: 500)
        return figure
    }

    static func springFigure() -> SVGFigure {
        // How far the spring passes the edge at 338, sampled every millisecond.
        let peak = (0...600).map { spring.position(at: Double($0) / 1_000) }.max() ?? 338
        let overshoot = Int((peak - 338).rounded())
        let series: [SVGFigure.Series] = [
            .init("glide, fast throw", ink: .accent, domain: 0...fast.duration) { fast.position(at: $0) },
            .init("glide, slow push", ink: .highlight, domain: 0...slow.duration) { slow.position(at: $0) },
            .init("critically damped spring (response 0.45 s)", ink: .muted, dashed: true, domain: 0...0.6) {
                spring.position(at: $0)
            },
        ]
        var figure = SVGFigure(
            width: 420, height: 340,
            description:
                "Position against time for 0.6 s after a release at x = 270 towards the edge at 338: the fast "
                + "throw's glide reaches the edge in \(Int((fast.duration * 1_000).rounded())) ms and stops there, "
                + "the slow push's in \(Int((slow.duration * 1_000).rounded())) ms; the spring started at the fast "
                + "throw's speed passes the edge and peaks \(overshoot) points beyond it before it comes back.")
        figure.chart(
            x: 52, y: 30, width: 340, height: 200, xRange: 0...0.6, yRange: 260...410,
            xTicks: [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6], yTicks: [270, 300, 338, 400],
            xTitle: "time after the release (s)",
            yTitle: "x (points)", guides: [(338, "the edge anchor")], series: series)
        figure.legend(series, x: 20, y: 290)
        return figure
    }

    static func decelerationFigure() -> SVGFigure {
        let deceleration = Deceleration(position: 0, velocity: 1, rate: .normal)
        let rest = deceleration.restingPosition
        let series: [SVGFigure.Series] = [
            .init("scroll-view deceleration, rate 0.998 per ms", ink: .accent, domain: 0...3) {
                deceleration.position(at: $0) / rest
            }
        ]
        let half = deceleration.time(toReach: rest / 2) ?? 0
        var figure = SVGFigure(
            width: 420, height: 300,
            description:
                "The deceleration the projection assumes, position as a fraction of the resting distance over three "
                + "seconds: half the distance is covered in \(SVGFigure.number(half)) s, 95 percent in "
                + "\(SVGFigure.number(deceleration.time(toReach: rest * 0.95) ?? 0)) s.")
        figure.chart(
            x: 52, y: 30, width: 340, height: 200, xRange: 0...3, yRange: 0...1.05,
            xTicks: [0, 0.5, 1, 1.5, 2, 2.5, 3],
            yTicks: [0, 0.5, 1], xTitle: "time after the release (s)", yTitle: "fraction of the projected distance",
            guides: [(1, "where it rests")], series: series)
        figure.legend(series, x: 20, y: 285)
        return figure
    }

    @Test(
        "glide.svg, spring.svg and deceleration.svg (light and dark) are the motions the code computes",
        arguments: ["glide", "spring", "deceleration"])
    func motionFigureMatches(name: String) {
        let figure =
            switch name {
            case "glide": Self.glideFigure()
            case "spring": Self.springFigure()
            default: Self.decelerationFigure()
            }
        let problems = CommittedFigure.problems(
            figure, name: name, module: "Gestures", article: "Sources/Gestures/Gestures.docc/FloatingPlayer.md")
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }
}
