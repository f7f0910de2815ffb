import Foundation
import Gestures
import Testing

@Suite("Deceleration")
struct DecelerationTests {
    func rate(_ value: Double) throws -> DecelerationRate {
        try #require(DecelerationRate(perMillisecond: value))
    }

    @Test("projections match the table, both formulas", arguments: try GestureFixtures.friction().projectionTable)
    func projections(row: GestureFixtures.Friction.Projection) throws {
        let rate = try rate(row.decelerationRate)
        #expect(abs(rate.projectedDistance(forVelocity: row.v0) - row.projectionContinuous) < 1e-9)
        #expect(abs(rate.steppedProjectedDistance(forVelocity: row.v0) - row.projectionAppleWwdc) < 1e-9)
        let motion = Deceleration(position: 0, velocity: row.v0, rate: rate)
        #expect(abs(motion.time(untilSpeed: 10) - row.timeToSpeed10pxPerS) < 1e-9)
        #expect(abs(motion.restingPosition - row.projectionContinuous) < 1e-9)
    }

    @Test("the closed form reproduces the decay series", arguments: try GestureFixtures.friction().decaySeries)
    func series(series: GestureFixtures.Friction.Series) throws {
        let motion = Deceleration(position: series.x0, velocity: series.v0, rate: try rate(series.decelerationRate))
        for (index, time) in series.t.enumerated() {
            #expect(abs(motion.position(at: time) - series.x[index]) < 1e-9)
            #expect(abs(motion.velocity(at: time) - series.v[index]) < 1e-9)
        }
    }

    @Test(
        "stepping frame by frame gives the same state at 1 s at any rate",
        arguments: try GestureFixtures.friction().frameRates)
    func frameRateIndependence(row: GestureFixtures.Friction.FrameRate) {
        var motion = Deceleration(position: 0, velocity: 1_000, rate: .normal)
        for _ in 0..<row.hz { motion = motion.advanced(by: 1 / Double(row.hz)) }
        #expect(abs(motion.initialPosition - row.xAt1s) < 1e-9)
        #expect(abs(motion.initialVelocity - row.vAt1s) < 1e-9)
    }

    @Test("time to reach a position inverts the closed form; unreachable positions are nil")
    func timeToReach() throws {
        let motion = Deceleration(position: 10, velocity: 1_000, rate: .fast)
        let time = try #require(motion.time(toReach: 60))
        #expect(abs(motion.position(at: time) - 60) < 1e-9)
        #expect(motion.time(toReach: motion.restingPosition + 1) == nil)
        #expect(motion.time(toReach: 0) == nil)
        #expect(motion.time(toReach: 10) == 0)
    }

    @Test("rates outside 0…1 are refused", arguments: [0, 1, -0.5, 1.2, Double.nan])
    func invalidRates(value: Double) {
        #expect(DecelerationRate(perMillisecond: value) == nil)
    }
}

@Suite("Timing curves")
struct TimingCurveTests {
    static let named: [String: CubicBezierTiming] = [
        "linear": .linear, "css_ease": .ease, "css_ease_in": .easeIn, "css_ease_out": .easeOut,
        "css_ease_in_out": .easeInOut,
    ]

    /// Exact values from two independent solvers (agreeing to 2e-15); we solve x to 1e-7.
    @Test(
        "CSS curves match the exact values",
        arguments: ["linear", "css_ease", "css_ease_in", "css_ease_out", "css_ease_in_out"])
    func cssCurves(name: String) throws {
        let curve = try #require(try GestureFixtures.bezier().curves[name])
        let timing = try #require(Self.named[name])
        let points = curve.controlPoints
        let built = try CubicBezierTiming(x1: points[0], y1: points[1], x2: points[2], y2: points[3])
        #expect(built == timing)
        for (index, x) in curve.x.enumerated() {
            #expect(abs(timing.value(at: x) - curve.y[index]) < 1e-6, "\(name) x=\(x)")
            #expect(abs(timing.valueByBisection(at: x) - curve.y[index]) < 1e-6, "\(name) x=\(x)")
            if let slope = curve.slopeDyDx[index], x > 0, x < 1 {
                #expect(abs(timing.slope(at: x) - slope) < 1e-4 * max(1, abs(slope)), "\(name) x=\(x)")
            }
        }
    }

    @Test(
        "control points outside the CSS range are a typed error",
        arguments: [(-0.1, 0.0), (1.1, 0.0), (Double.nan, 0.0)])
    func invalid(x1: Double, y1: Double) {
        #expect(throws: CubicBezierTiming.InvalidControlPoints.self) {
            try CubicBezierTiming(x1: x1, y1: y1, x2: 0.5, y2: 1)
        }
    }

    @Test("curves with overshoot (y outside 0…1) are fine, and x is clamped")
    func overshoot() throws {
        let back = try CubicBezierTiming(x1: 0.68, y1: -0.55, x2: 0.265, y2: 1.55)
        #expect(back.value(at: -1) == 0)
        #expect(back.value(at: 2) == 1)
        #expect(back.value(at: 0.1) < 0)
    }
}

@Suite("Springs")
struct SpringTests {
    /// Closed forms checked against an ODE solver to 5e-9 in the fixture.
    @Test(
        "critically, over- and under-damped springs match the fixture", arguments: try GestureFixtures.springs().cases)
    func fixtureCases(fixture: GestureFixtures.Springs.Case) {
        let spring = Spring(mass: fixture.mass, stiffness: fixture.stiffness, damping: fixture.damping)
        let motion = SpringMotion(
            spring: spring, from: fixture.start, to: fixture.end, initialVelocity: fixture.initialVelocity)
        for (index, time) in fixture.t.enumerated() {
            #expect(abs(motion.position(at: time) - fixture.position[index]) < 1e-6, "\(fixture.name) t=\(time)")
            #expect(abs(motion.velocity(at: time) - fixture.velocity[index]) < 1e-5, "\(fixture.name) t=\(time)")
        }
    }

    @Test("Flutter's spring test expectations hold")
    func flutterFloors() {
        let critical = SpringMotion(spring: Spring(stiffness: 100, damping: 20), from: 0, to: 500)
        #expect([0.25, 0.5, 0.75].map { critical.position(at: $0).rounded(.down) } == [356, 479, 497])
        #expect([0.25, 0.5, 0.75].map { critical.velocity(at: $0).rounded(.down) } == [1_026, 168, 20])
        let under = SpringMotion(spring: Spring(stiffness: 100, damping: 5), from: 0, to: 300)
        #expect(under.position(at: 1).rounded(.down) == 325)
        #expect(under.velocity(at: 1).rounded(.down) == -65)
        #expect(under.position(at: 6).rounded(.down) == 299)
    }

    @Test("SwiftUI's response/damping and Apple's duration/bounce convert as documented")
    func conversions() {
        let swiftUI = Spring(response: 0.5, dampingFraction: 1)
        #expect(abs(swiftUI.stiffness - 157.91367041742973) < 1e-9)
        #expect(abs(swiftUI.damping - 25.132741228718345) < 1e-9)
        #expect(abs(swiftUI.dampingRatio - 1) < 1e-12)
        let bouncy = Spring(duration: 0.5, bounce: 0.3)
        #expect(abs(bouncy.stiffness - 157.91367041742973) < 1e-9)
        #expect(abs(bouncy.dampingRatio - 0.7) < 1e-9)
        #expect(Spring(stiffness: -1, damping: .nan) == Spring(response: 0.5, dampingFraction: 1))
    }

    @Test(
        "the settling time is a guarantee, and close to the last unsettled moment",
        arguments: [
            Spring(response: 0.5, dampingFraction: 0.3), Spring(response: 0.45, dampingFraction: 1),
            Spring(stiffness: 100, damping: 25),
        ]
    )
    func settling(spring: Spring) {
        for velocity in [-3_000.0, 0, 800] {
            let motion = SpringMotion(spring: spring, from: 0, to: 100, initialVelocity: velocity)
            let time = motion.settlingTime()
            // Settled at every millisecond from then on (checked for 5 s).
            for step in 0..<5_000 { #expect(motion.isSettled(at: time + Double(step) * 0.001)) }
            // The last unsettled millisecond, by a dense scan.
            var lastUnsettled = 0.0
            for step in 0..<10_000 where !motion.isSettled(at: Double(step) * 0.001) {
                lastUnsettled = Double(step) * 0.001
            }
            #expect(time >= lastUnsettled)
            // The envelope is conservative by at most about one oscillation period.
            #expect(time - lastUnsettled <= 0.5, "\(spring) v0=\(velocity)")
        }
    }
}
