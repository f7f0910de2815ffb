/// The motion of a value from `start` at `initialVelocity` to rest at `end`, never passing
/// `end` and never leaving given bounds: a cubic Hermite curve whose duration is chosen so that
/// it cannot overshoot.
///
/// With `h = v₀·T` and `Δ = end − start`, the curve over `s = t / T` is
/// `x(s) = start + h·s + (3Δ − 2h)·s² + (h − 2Δ)·s³`: it leaves at exactly `v₀`, arrives at
/// `end` with zero velocity, and moves monotonically towards `end` exactly when `0 ≤ h ≤ 3Δ`.
/// So the duration `T` is the nominal one, shortened to `3Δ / v₀` for a release fast enough to
/// overshoot it:
///
/// - a **fast** release (`h = 3Δ`) only decelerates, `v(t) = v₀·(1 − s)²`, sticking into the end;
/// - a **slow** release (`h < 1.5Δ`) first accelerates, then decelerates: it eases in and out;
/// - a release **away** from the end (or along an axis already at its end) first goes on the
///   way it was thrown, then comes back; the duration is shortened until that excursion stays
///   within the bounds. Where so little room is left that the motion would have to be shorter
///   than a quarter of its nominal duration (a player released at, or past, the edge of its
///   region and thrown further out), the outward speed is dropped instead: the motion starts at
///   rest and eases in and out to the end, because going on outward would leave the region and
///   snapping back in an instant would jump.
///
/// Position and velocity are closed forms, so any frame rate samples the same path and a new
/// motion can start from any instant of this one with the same velocity.
public struct GlideMotion: Sendable, Hashable {
    /// The value at time 0.
    public let start: Double
    /// The value the motion comes to rest at.
    public let end: Double
    /// The velocity at time 0, in units per second: the one asked for, or zero when it was
    /// dropped (see above).
    public let initialVelocity: Double
    /// How long the motion lasts, in seconds; from then on it rests at ``end``.
    public let duration: Double

    /// The shortest and longest nominal durations, in seconds, and the distance per second of
    /// nominal duration between them: 0.2 s for a nudge, up to 0.45 s across a large screen, as
    /// a drop takes.
    static let nominal = (minimum: 0.2, maximum: 0.45, pointsPerSecond: 2_000.0)

    /// Creates the motion from `start` at `initialVelocity` to rest at `end`, staying within
    /// `bounds` widened to take in `start` (a player released outside its region may come back).
    ///
    /// Non-finite inputs are treated as no motion: a non-finite velocity as zero, a non-finite
    /// position as already at rest.
    ///
    /// - Complexity: O(1): at most 60 bisection steps on the duration, each O(1).
    public init(from start: Double, to end: Double, initialVelocity: Double, within bounds: ClosedRange<Double>? = nil)
    {
        let start = start.isFinite ? start : (end.isFinite ? end : 0)
        let end = end.isFinite ? end : start
        var velocity = initialVelocity.isFinite ? initialVelocity : 0
        self.start = start
        self.end = end
        let distance = end - start
        guard distance != 0 || velocity != 0 else {
            self.initialVelocity = 0
            duration = 0
            return
        }
        let nominal = Swift.min(
            Self.nominal.maximum, Self.nominal.minimum + abs(distance) / Self.nominal.pointsPerSecond)
        var duration = nominal
        if distance != 0, velocity * distance > 0 {
            // Towards the end: no faster than the pure deceleration, which reaches it at rest.
            duration = Swift.min(duration, 3 * distance / velocity)
        }
        // A hair of slack, so that rounding in the turning points of a monotone curve does not
        // count as leaving the bounds.
        let slack = 1e-9 * Swift.max(abs(start), abs(end), 1)
        let low = Swift.min(bounds?.lowerBound ?? -.infinity, start, end) - slack
        let high = Swift.max(bounds?.upperBound ?? .infinity, start, end) + slack
        let reach = Self.range(start: start, distance: distance, velocity: velocity, duration: duration)
        if reach.lowerBound < low || reach.upperBound > high {
            // Away from the end: the excursion grows with the duration; keep the longest that fits.
            var fits = 0.0
            var exceeds = duration
            for _ in 0..<60 {
                let middle = (fits + exceeds) / 2
                let reach = Self.range(start: start, distance: distance, velocity: velocity, duration: middle)
                if reach.lowerBound >= low && reach.upperBound <= high { fits = middle } else { exceeds = middle }
            }
            if fits >= duration / 4 || distance == 0 {
                duration = fits
            } else {
                // No room to go on outward: start at rest and ease in and out to the end.
                velocity = 0
                duration = nominal
            }
        }
        self.initialVelocity = velocity
        self.duration = duration.isFinite ? Swift.max(duration, 0) : 0
    }

    /// The position at `time` seconds: ``start`` before 0, ``end`` from ``duration`` on.
    ///
    /// - Complexity: O(1).
    public func position(at time: Double) -> Double {
        guard time < duration, duration > 0 else { return end }
        guard time > 0 else { return start }
        let s = time / duration
        let h = initialVelocity * duration
        let distance = end - start
        return start + s * (h + s * ((3 * distance - 2 * h) + s * (h - 2 * distance)))
    }

    /// The velocity at `time` seconds, in units per second; zero from ``duration`` on.
    ///
    /// - Complexity: O(1).
    public func velocity(at time: Double) -> Double {
        guard time < duration, duration > 0 else { return 0 }
        guard time > 0 else { return initialVelocity }
        let s = time / duration
        let h = initialVelocity * duration
        let distance = end - start
        return (h + s * (2 * (3 * distance - 2 * h) + s * 3 * (h - 2 * distance))) / duration
    }

    /// The lowest and highest positions of the curve over its whole duration.
    static func range(start: Double, distance: Double, velocity: Double, duration: Double) -> ClosedRange<Double> {
        let h = velocity * duration
        func x(_ s: Double) -> Double { start + s * (h + s * ((3 * distance - 2 * h) + s * (h - 2 * distance))) }
        var low = Swift.min(start, start + distance)
        var high = Swift.max(start, start + distance)
        // Turning points: x'(s) = h + 2(3Δ − 2h)s + 3(h − 2Δ)s² = 0 within 0…1.
        let a = 3 * (h - 2 * distance)
        let b = 2 * (3 * distance - 2 * h)
        let c = h
        var roots: [Double] = []
        if abs(a) < 1e-12 * (abs(b) + abs(c) + 1e-300) {
            if b != 0 { roots.append(-c / b) }
        } else {
            let discriminant = b * b - 4 * a * c
            if discriminant >= 0 {
                let root = discriminant.squareRoot()
                roots.append((-b - root) / (2 * a))
                roots.append((-b + root) / (2 * a))
            }
        }
        for s in roots where s > 0 && s < 1 {
            let value = x(s)
            low = Swift.min(low, value)
            high = Swift.max(high, value)
        }
        return low...high
    }
}
