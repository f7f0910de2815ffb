import BenchmarkHarness
import Foundation
import Gestures
import TestSupport

// CoreGraphics brings the geometry's members on Apple platforms (Foundation does on Linux).
#if canImport(CoreGraphics)
    import CoreGraphics
#endif

/// The Gestures module's cases.
enum GesturesBenchmarks {
    static func cases(quick: Bool) -> [Benchmark] {
        [
            bezier(count: quick ? 100_000 : 1_000_000),
            velocity(count: quick ? 2_000 : 100_000),
            gestures(count: quick ? 100 : 5_000),
        ]
    }

    /// Evaluating a timing curve once per animated property per frame.
    static func bezier(count: Int) -> Benchmark {
        var generator = SplitMix64(seed: 3)
        let inputs = (0..<count).map { _ in Double.random(in: 0...1, using: &generator) }
        let curve = CubicBezierTiming.easeInOut
        return Benchmark(
            group: "Gestures",
            name: "\(count.formatted) ease-in-out evaluations",
            items: count,
            target: .itemsPerSecond(30e6),
            setup: {
                {
                    var sum = 0.0
                    for x in inputs { sum += curve.value(at: x) }
                    blackHole(sum)
                }
            },
            baselineName: "pure bisection",
            baseline: {
                {
                    var sum = 0.0
                    for x in inputs { sum += curve.valueByBisection(at: x) }
                    blackHole(sum)
                }
            }
        )
    }

    /// A velocity estimate over a full window of 20 samples, as at every release.
    static func velocity(count: Int) -> Benchmark {
        var generator = SplitMix64(seed: 5)
        var tracker = VelocityTracker()
        var samples: [TouchSample] = []
        for index in 0..<20 {
            let time = 1_000 + Double(index) * 0.004
            let location = CGPoint(
                x: 100 + Double(index) * 9 + Double.random(in: -1...1, using: &generator),
                y: 300 - Double(index * index) * 0.3 + Double.random(in: -1...1, using: &generator))
            tracker.add(TouchSample(time: time, location: location))
            samples.append(TouchSample(time: time, location: location))
        }
        let full = tracker
        let window = samples
        return Benchmark(
            group: "Gestures",
            name: "\(count.formatted) velocity estimates over a full 20-sample window",
            items: count,
            setup: {
                {
                    var sum = 0.0
                    for _ in 0..<count { sum += Double(full.estimate().velocity.dx) }
                    blackHole(sum)
                }
            },
            baselineName: "normal equations (Gauss)",
            baseline: {
                {
                    var sum = 0.0
                    for _ in 0..<count { sum += NormalEquations.velocity(window) }
                    blackHole(sum)
                }
            }
        )
    }

    /// A whole gesture: grab, 24 moves at 120 Hz, release, and every frame until it rests.
    static func gestures(count: Int) -> Benchmark {
        let layout = FloatingLayout(
            bounds: CGRect(x: 0, y: 0, width: 390, height: 844),
            safeArea: LayoutInsets(top: 47, left: 0, bottom: 34, right: 0), playerSize: CGSize(width: 72, height: 72))
        var generator = SplitMix64(seed: 9)
        let ends = (0..<count).map { _ in
            CGPoint(x: Double.random(in: 0...390, using: &generator), y: Double.random(in: 0...844, using: &generator))
        }
        return Benchmark(
            group: "Gestures",
            name: "\(count.formatted) full gestures, sampled at 120 Hz until rest",
            items: count,
            setup: {
                {
                    var sum = 0.0
                    for end in ends { sum += simulate(layout: layout, to: end) }
                    blackHole(sum)
                }
            },
            baselineName: "Euler stepping at 1 ms",
            baseline: {
                {
                    var sum = 0.0
                    for end in ends { sum += EulerBaseline.simulate(layout: layout, to: end) }
                    blackHole(sum)
                }
            }
        )
    }

    static func simulate(layout: FloatingLayout, to end: CGPoint) -> Double {
        var session = FloatingPlayerSession(layout: layout)
        let start = session.center(at: 0)
        session.touchBegan(at: start, time: 0)
        for frame in 1...24 {
            let f = Double(frame) / 24
            session.touchMoved(
                to: CGPoint(x: start.x + (end.x - start.x) * f, y: start.y + (end.y - start.y) * f), time: 0.2 * f)
        }
        session.touchEnded(at: end, time: 0.2)
        var time = 0.2
        var sum = 0.0
        while case .settling = session.phase(at: time) {
            sum += Double(session.center(at: time).x)
            time += 1.0 / 120
        }
        return sum
    }
}

/// The textbook velocity fit: least squares by the 3×3 normal equations and Gaussian elimination.
enum NormalEquations {
    static func velocity(_ samples: [TouchSample]) -> Double {
        guard let newest = samples.last else { return 0 }
        var matrix = [[Double]](repeating: [Double](repeating: 0, count: 4), count: 3)
        for sample in samples {
            let t = (sample.time - newest.time) * 1_000
            let powers = [1, t, t * t]
            for row in 0..<3 {
                for column in 0..<3 { matrix[row][column] += powers[row] * powers[column] }
                matrix[row][3] += powers[row] * Double(sample.location.x)
            }
        }
        for pivot in 0..<3 {
            for row in (pivot + 1)..<3 {
                let factor = matrix[row][pivot] / matrix[pivot][pivot]
                for column in pivot..<4 { matrix[row][column] -= factor * matrix[pivot][column] }
            }
        }
        var solution = [0.0, 0.0, 0.0]
        for row in stride(from: 2, through: 0, by: -1) {
            var value = matrix[row][3]
            for column in (row + 1)..<3 { value -= matrix[row][column] * solution[column] }
            solution[row] = value / matrix[row][row]
        }
        return solution[1] * 1_000
    }
}

/// A naive floating player: the same drag, then the release physics stepped per frame, as
/// players without closed forms do: a spring integrated with semi-implicit Euler in 1 ms steps
/// and sampled every 120 Hz frame until it rests. MediaCore's player glides in closed form.
enum EulerBaseline {
    static func simulate(layout: FloatingLayout, to end: CGPoint) -> Double {
        let spring = Spring(response: 0.45, dampingFraction: 1)
        let region = layout.restingRegion
        let start = CGPoint(x: region.midX, y: region.midY)
        let release = region.clamping(end)
        let velocity = (Double(end.x - start.x) / 0.2, Double(end.y - start.y) / 0.2)
        let target = (Double(release.x < region.midX ? region.minX : region.maxX), Double(release.y))
        var position = (Double(release.x), Double(release.y))
        var speed = velocity
        var sum = 0.0
        var step = 0
        while abs(position.0 - target.0) > 0.5 || abs(position.1 - target.1) > 0.5 || abs(speed.0) > 1
            || abs(speed.1) > 1
        {
            let ax = (-spring.stiffness * (position.0 - target.0) - spring.damping * speed.0) / spring.mass
            let ay = (-spring.stiffness * (position.1 - target.1) - spring.damping * speed.1) / spring.mass
            speed = (speed.0 + ax * 0.001, speed.1 + ay * 0.001)
            position = (position.0 + speed.0 * 0.001, position.1 + speed.1 * 0.001)
            step += 1
            if step % 8 == 0 { sum += position.0 }
            if step > 10_000 { break }
        }
        return sum
    }
}

extension CGRect {
    fileprivate func clamping(_ point: CGPoint) -> CGPoint {
        CGPoint(x: min(max(point.x, minX), maxX), y: min(max(point.y, minY), maxY))
    }
}
