import Foundation
import Gestures
import Testing

// CoreGraphics brings the geometry's members on Apple platforms (Foundation does on Linux).
#if canImport(CoreGraphics)
    import CoreGraphics
#endif

@Suite("Velocity tracking")
struct VelocityTrackerTests {
    /// Flutter's recorded gestures; its test tolerance is 1e-3 relative per component.
    @Test("matches Flutter's 13 recorded gestures", arguments: try GestureFixtures.velocity().gestures)
    func flutterGestures(gesture: GestureFixtures.Velocity.Gesture) throws {
        var tracker = VelocityTracker()
        var upTime = 0.0
        for event in gesture.events {
            let time = event.tMs / 1_000
            if event.type == "up" {
                upTime = time
            } else {
                tracker.add(TouchSample(time: time, location: CGPoint(x: event.x, y: event.y)))
            }
        }
        let estimate = tracker.estimate(at: upTime)
        let expected = gesture.expectedPixelsPerSecond
        #expect(abs((Double(estimate.velocity.dx) - expected.vx) / expected.vx) < 1e-3, "pointer \(gesture.pointer)")
        #expect(abs((Double(estimate.velocity.dy) - expected.vy) / expected.vy) < 1e-3, "pointer \(gesture.pointer)")
        #expect(estimate.sampleCount == gesture.computedLsq2.samplesUsed)
        #expect(abs(estimate.confidence - gesture.computedLsq2.confidence) < 1e-6)
    }

    @Test("the least-squares solver reproduces Flutter's solver cases")
    func solverCases() throws {
        for solver in try GestureFixtures.velocity().lsqSolverTests {
            let fit = try #require(PolynomialFit(x: solver.x, y: solver.y, weights: solver.w, degree: solver.degree))
            for (found, expected) in zip(fit.coefficients, solver.coefficients) {
                #expect(abs(found - expected) < 1e-6)
            }
            #expect(abs(fit.confidence - solver.confidence) < 1e-6)
        }
    }

    @Test(
        "three distinct sample times fit a quadratic whatever the unit of time",
        arguments: [1.0, 1e-3, 1e-6, 1e3])
    func scaleFreeRank(unit: Double) throws {
        // y = 2 + 3t + 4t², sampled at 0, 8 and 16 ms, written in seconds × `unit`.
        let times = [0.0, 0.008, 0.016]
        let x = times.map { $0 / unit }
        let y = times.map { 2 + 3 * $0 + 4 * $0 * $0 }
        let fit = try #require(PolynomialFit(x: x, y: y, degree: 2))
        // Back in seconds: c₁ scales by 1/unit, c₂ by 1/unit².
        #expect(abs(fit.coefficients[0] - 2) < 1e-9)
        #expect(abs(fit.coefficients[1] / unit - 3) < 1e-6)
        #expect(abs(fit.coefficients[2] / (unit * unit) - 4) < 1e-3)
        // Two equal times still cannot determine it, at any scale.
        #expect(PolynomialFit(x: [x[0], x[1], x[1]], y: y, degree: 2) == nil)
    }

    @Test("a fit that the points cannot determine is nil, never a trap")
    func degenerateFits() {
        #expect(PolynomialFit(x: [1, 2], y: [1, 2], degree: 2) == nil)
        #expect(PolynomialFit(x: [1, 1, 1], y: [1, 2, 3], degree: 1) == nil)
        #expect(PolynomialFit(x: [1, 2, .nan], y: [1, 2, 3], degree: 1) == nil)
        #expect(PolynomialFit(x: [1, 2, 3], y: [1, 2], degree: 1) == nil)
    }

    @Test("a finger held still before lifting has no velocity")
    func stoppedFinger() {
        var tracker = VelocityTracker()
        for step in 0..<10 {
            tracker.add(TouchSample(time: Double(step) * 0.008, location: CGPoint(x: Double(step) * 10, y: 0)))
        }
        #expect(tracker.estimate(at: 0.072 + 0.01).speed > 1_000)
        #expect(tracker.estimate(at: 0.072 + 0.041) == .zero)
    }

    @Test("only motion after the last pause counts")
    func pauseSplitsMotion() {
        var tracker = VelocityTracker()
        // Fast to the right, a 60 ms rest, then slowly down.
        for step in 0..<5 {
            tracker.add(TouchSample(time: Double(step) * 0.008, location: CGPoint(x: Double(step) * 40, y: 0)))
        }
        for step in 0..<5 {
            tracker.add(TouchSample(time: 0.1 + Double(step) * 0.008, location: CGPoint(x: 160, y: Double(step))))
        }
        let estimate = tracker.estimate()
        #expect(abs(Double(estimate.velocity.dx)) < 1e-6)
        #expect(abs(Double(estimate.velocity.dy) - 125) < 1e-6)
    }

    @Test("fewer than three samples, or bad samples, give zero")
    func tooFewSamples() {
        var tracker = VelocityTracker()
        #expect(tracker.estimate() == .zero)
        tracker.add(TouchSample(time: 0, location: .zero))
        tracker.add(TouchSample(time: .nan, location: CGPoint(x: 5, y: 5)))
        tracker.add(TouchSample(time: 0.01, location: CGPoint(x: CGFloat.infinity, y: 5)))
        tracker.add(TouchSample(time: 0.01, location: CGPoint(x: 5, y: 5)))
        #expect(tracker.estimate() == .zero)
    }

    @Test(
        "fling thresholds: slow is a drop, too fast is clamped",
        arguments: [
            (CGVector(dx: 30, dy: 30), CGVector(dx: 0, dy: 0)),
            (CGVector(dx: 300, dy: -400), CGVector(dx: 300, dy: -400)),
            (CGVector(dx: 0, dy: 16_000), CGVector(dx: 0, dy: 8_000)),
            (CGVector(dx: CGFloat.nan, dy: 1), CGVector(dx: 0, dy: 0)),
        ]
    )
    func flingThresholds(velocity: CGVector, expected: CGVector) {
        #expect(FlingThresholds().releaseVelocity(for: velocity) == expected)
    }
}
