import Foundation

/// A damped spring's physical constants.
public struct Spring: Sendable, Hashable {
    /// The mass (1 unless a model needs otherwise).
    public var mass: Double
    /// The stiffness: force per unit of displacement.
    public var stiffness: Double
    /// The damping: force per unit of velocity.
    public var damping: Double

    /// Creates a spring from its physical constants; non-positive or non-finite values are
    /// replaced by a critically damped spring with a 0.5 s response.
    public init(mass: Double = 1, stiffness: Double, damping: Double) {
        guard mass.isFinite, mass > 0, stiffness.isFinite, stiffness > 0, damping.isFinite, damping >= 0 else {
            self = Spring(response: 0.5, dampingFraction: 1)
            return
        }
        self.mass = mass
        self.stiffness = stiffness
        self.damping = damping
    }

    /// Creates a spring as SwiftUI describes one: the period of the undamped oscillation
    /// (`response`, seconds) and the damping as a fraction of critical (1 is critical).
    public init(response: Double, dampingFraction: Double, mass: Double = 1) {
        let response = response.isFinite && response > 0 ? response : 0.5
        let fraction = dampingFraction.isFinite ? Swift.max(dampingFraction, 0) : 1
        let mass = mass.isFinite && mass > 0 ? mass : 1
        self.mass = mass
        stiffness = pow(2 * Double.pi / response, 2) * mass
        damping = 4 * Double.pi * fraction * mass / response
    }

    /// Creates a spring from a perceptual duration and bounce (0 is no bounce, up to 1), as
    /// Apple's `Spring(duration:bounce:)`: response = duration, damping fraction = 1 − bounce.
    /// A negative bounce gives an overdamped spring.
    public init(duration: Double, bounce: Double = 0) {
        let bounce = bounce.isFinite ? Swift.min(Swift.max(bounce, -1), 1) : 0
        let fraction = bounce >= 0 ? 1 - bounce : 1 / (1 + bounce + 1e-9)
        self.init(response: duration, dampingFraction: fraction)
    }

    /// The damping ratio ζ = c / (2√(km)): below 1 oscillates, 1 is critical, above 1 creeps.
    public var dampingRatio: Double { damping / (2 * (stiffness * mass).squareRoot()) }
}

/// The motion of a value pulled by a spring from `start` towards `end`, in closed form.
///
/// Solving `m·u″ + c·u′ + k·u = 0` (with `u = x − end`) exactly gives the position and velocity
/// at any time, for critically, under- and over-damped springs alike.
public struct SpringMotion: Sendable, Hashable {
    /// The spring.
    public let spring: Spring
    /// The value at time 0.
    public let start: Double
    /// The value the spring pulls towards.
    public let end: Double
    /// The velocity at time 0, in units per second.
    public let initialVelocity: Double

    private enum Solution: Hashable {
        case critical(rate: Double, c1: Double, c2: Double)
        case overdamped(r1: Double, r2: Double, c1: Double, c2: Double)
        case underdamped(rate: Double, frequency: Double, c1: Double, c2: Double)
    }

    private let solution: Solution

    /// Creates the motion from `start` to `end` with an initial velocity.
    public init(spring: Spring, from start: Double, to end: Double, initialVelocity: Double = 0) {
        self.spring = spring
        self.start = start
        self.end = end
        self.initialVelocity = initialVelocity.isFinite ? initialVelocity : 0
        let m = spring.mass
        let c = spring.damping
        let k = spring.stiffness
        let u0 = start - end
        let v0 = self.initialVelocity
        let discriminant = c * c - 4 * m * k
        // A relative tolerance treats springs built as "critical" from rounded constants as critical.
        if abs(discriminant) <= 1e-9 * (c * c + 4 * m * k) {
            let r = -c / (2 * m)
            solution = .critical(rate: r, c1: u0, c2: v0 - r * u0)
        } else if discriminant > 0 {
            let root = discriminant.squareRoot()
            let r1 = (-c - root) / (2 * m)
            let r2 = (-c + root) / (2 * m)
            let c2 = (v0 - r1 * u0) / (r2 - r1)
            solution = .overdamped(r1: r1, r2: r2, c1: u0 - c2, c2: c2)
        } else {
            let w = (-discriminant).squareRoot() / (2 * m)
            let r = -c / (2 * m)
            solution = .underdamped(rate: r, frequency: w, c1: u0, c2: (v0 - r * u0) / w)
        }
    }

    /// The position at `time` seconds.
    ///
    /// - Complexity: O(1).
    public func position(at time: Double) -> Double {
        switch solution {
        case .critical(let r, let c1, let c2):
            return end + (c1 + c2 * time) * exp(r * time)
        case .overdamped(let r1, let r2, let c1, let c2):
            return end + c1 * exp(r1 * time) + c2 * exp(r2 * time)
        case .underdamped(let r, let w, let c1, let c2):
            return end + exp(r * time) * (c1 * cos(w * time) + c2 * sin(w * time))
        }
    }

    /// The velocity at `time` seconds.
    public func velocity(at time: Double) -> Double {
        switch solution {
        case .critical(let r, let c1, let c2):
            return exp(r * time) * (c2 + r * (c1 + c2 * time))
        case .overdamped(let r1, let r2, let c1, let c2):
            return c1 * r1 * exp(r1 * time) + c2 * r2 * exp(r2 * time)
        case .underdamped(let r, let w, let c1, let c2):
            let e = exp(r * time)
            return e * ((c1 * r + c2 * w) * cos(w * time) + (c2 * r - c1 * w) * sin(w * time))
        }
    }

    /// Whether the motion is within `positionTolerance` of the end and slower than
    /// `velocityTolerance` at `time`.
    public func isSettled(at time: Double, positionTolerance: Double = 0.5, velocityTolerance: Double = 1) -> Bool {
        abs(position(at: time) - end) <= positionTolerance && abs(velocity(at: time)) <= velocityTolerance
    }

    /// The first time (to 1 ms) from which the motion stays settled, searched up to `limit` seconds.
    ///
    /// An underdamped spring can pass through its end and leave again, so this is the moment
    /// after the last unsettled millisecond, not the first settled one.
    ///
    /// - Complexity: O(`limit` / 1 ms) evaluations.
    public func settlingTime(
        positionTolerance: Double = 0.5, velocityTolerance: Double = 1, limit: Double = 10
    ) -> Double {
        let steps = Int((Swift.max(limit, 0) * 1_000).rounded(.up))
        var lastUnsettled = -1
        for step in 0...steps
        where !isSettled(
            at: Double(step) / 1_000, positionTolerance: positionTolerance, velocityTolerance: velocityTolerance)
        {
            lastUnsettled = step
        }
        return Double(lastUnsettled + 1) / 1_000
    }
}
