/// A cubic Bézier timing curve, as CSS `cubic-bezier(x1, y1, x2, y2)` and
/// `CAMediaTimingFunction` define it: progress `y` for elapsed fraction `x`.
///
/// The curve runs from (0, 0) to (1, 1). Evaluating it solves `Bx(t) = x` for the curve
/// parameter `t` by Newton's method, falling back to bisection where the slope is too flat for
/// Newton to converge, to within 1e-7 in `x`, then returns `By(t)`.
public struct CubicBezierTiming: Sendable, Hashable {
    /// Why control points cannot make a timing curve: `x1` and `x2` must lie in 0…1 (so time
    /// never runs backwards), and every value must be finite. The one kind of failure, so the
    /// error is the offending points themselves.
    public struct InvalidControlPoints: Error, Hashable, Sendable, CustomStringConvertible {
        /// The first control point as given.
        public var x1: Double, y1: Double
        /// The second control point as given.
        public var x2: Double, y2: Double

        /// A sentence naming the points.
        public var description: String {
            "cubic-bezier(\(x1), \(y1), \(x2), \(y2)): x1 and x2 must lie in 0…1 and every value must be finite"
        }
    }

    /// The first control point.
    public let x1: Double, y1: Double
    /// The second control point.
    public let x2: Double, y2: Double

    // Polynomial coefficients: B(t) = ((a·t + b)·t + c)·t.
    private let ax: Double, bx: Double, cx: Double
    private let ay: Double, by: Double, cy: Double

    /// Creates a curve through the control points (x1, y1) and (x2, y2).
    ///
    /// - Throws: ``InvalidControlPoints`` when `x1` or `x2` is outside 0…1 or a value is not finite.
    public init(x1: Double, y1: Double, x2: Double, y2: Double) throws(InvalidControlPoints) {
        guard [x1, y1, x2, y2].allSatisfy(\.isFinite), (0...1).contains(x1), (0...1).contains(x2) else {
            throw InvalidControlPoints(x1: x1, y1: y1, x2: x2, y2: y2)
        }
        self.init(valid: x1, y1, x2, y2)
    }

    private init(valid x1: Double, _ y1: Double, _ x2: Double, _ y2: Double) {
        self.x1 = x1
        self.y1 = y1
        self.x2 = x2
        self.y2 = y2
        cx = 3 * x1
        bx = 3 * (x2 - x1) - cx
        ax = 1 - cx - bx
        cy = 3 * y1
        by = 3 * (y2 - y1) - cy
        ay = 1 - cy - by
    }

    /// `linear`: progress equals time.
    public static let linear = CubicBezierTiming(valid: 0, 0, 1, 1)
    /// CSS `ease`: (0.25, 0.1, 0.25, 1).
    public static let ease = CubicBezierTiming(valid: 0.25, 0.1, 0.25, 1)
    /// CSS `ease-in`: (0.42, 0, 1, 1).
    public static let easeIn = CubicBezierTiming(valid: 0.42, 0, 1, 1)
    /// CSS `ease-out`: (0, 0, 0.58, 1).
    public static let easeOut = CubicBezierTiming(valid: 0, 0, 0.58, 1)
    /// CSS `ease-in-out`: (0.42, 0, 0.58, 1).
    public static let easeInOut = CubicBezierTiming(valid: 0.42, 0, 0.58, 1)

    /// The progress at elapsed fraction `x`; `x` outside 0…1 is clamped.
    ///
    /// - Complexity: O(1): at most 8 Newton steps, else at most 60 bisection steps.
    @inlinable
    public func value(at x: Double) -> Double {
        // The ends are exact: rounding in the polynomial must not give 1.0000000000000002.
        guard x > 0 else { return 0 }
        guard x < 1 else { return 1 }
        return sampleY(parameter(forX: x))
    }

    /// The slope dy/dx at elapsed fraction `x`: the speed relative to the average speed.
    public func slope(at x: Double) -> Double {
        let t = parameter(forX: x)
        let dx = derivativeX(t)
        guard abs(dx) > 1e-12 else { return derivativeY(t) >= 0 ? .infinity : -.infinity }
        return derivativeY(t) / dx
    }

    /// The curve parameter `t` with `Bx(t) = x`.
    @usableFromInline
    func parameter(forX x: Double) -> Double {
        guard x > 0 else { return 0 }
        guard x < 1 else { return 1 }
        // Newton's method from t = x.
        var t = x
        for _ in 0..<8 {
            let error = sampleX(t) - x
            if abs(error) < 1e-7 { return t }
            let slope = derivativeX(t)
            if abs(slope) < 1e-6 { break }
            t -= error / slope
        }
        // Bisection: Bx is monotonic on 0…1 when x1 and x2 lie in 0…1.
        var low = 0.0
        var high = 1.0
        t = x
        for _ in 0..<60 {
            let value = sampleX(t)
            if abs(value - x) < 1e-7 { return t }
            if value < x { low = t } else { high = t }
            t = (low + high) / 2
        }
        return t
    }

    /// Evaluates `x` by bisection alone: the slow, always-safe baseline for benchmarks.
    public func valueByBisection(at x: Double) -> Double {
        guard x > 0 else { return 0 }
        guard x < 1 else { return 1 }
        var low = 0.0
        var high = 1.0
        var t = x
        for _ in 0..<60 {
            let value = sampleX(t)
            if abs(value - x) < 1e-7 { break }
            if value < x { low = t } else { high = t }
            t = (low + high) / 2
        }
        return sampleY(t)
    }

    @usableFromInline
    func sampleX(_ t: Double) -> Double { ((ax * t + bx) * t + cx) * t }

    @usableFromInline
    func sampleY(_ t: Double) -> Double { ((ay * t + by) * t + cy) * t }

    func derivativeX(_ t: Double) -> Double { (3 * ax * t + 2 * bx) * t + cx }

    func derivativeY(_ t: Double) -> Double { (3 * ay * t + 2 * by) * t + cy }
}
