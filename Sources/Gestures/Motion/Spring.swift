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

    /// The first millisecond from which the motion is guaranteed to stay settled.
    ///
    /// Each solution decays inside an envelope (`(|c₁| + |c₂|t)·e^{rt}` when critical,
    /// `√(c₁² + c₂²)·e^{rt}` when underdamped, the sum of both exponentials when overdamped),
    /// and likewise its velocity. Once both envelopes are past their peak and within the
    /// tolerances, the motion can never leave them, so jumping to the end is invisible. The
    /// moment is found by doubling and then bisecting, to 1 ms.
    ///
    /// - Complexity: O(log(*T* / 1 ms)) evaluations for a settling time *T*.
    public func settlingTime(positionTolerance: Double = 0.5, velocityTolerance: Double = 1) -> Double {
        func settled(_ time: Double) -> Bool {
            let (position, velocity) = envelopes(at: time)
            let (laterPosition, laterVelocity) = envelopes(at: time + 0.001)
            // Within tolerance and not rising: past the (single) peak of each envelope.
            return position <= positionTolerance && velocity <= velocityTolerance
                && laterPosition <= position + 1e-12 && laterVelocity <= velocity + 1e-12
        }
        if settled(0) { return 0 }
        var high = 0.001
        while !settled(high) {
            high *= 2
            // Beyond an hour a "spring" is not settling; stop rather than loop.
            if high > 3_600 { return high }
        }
        var low = high / 2
        while high - low > 0.001 {
            let middle = (low + high) / 2
            if settled(middle) { high = middle } else { low = middle }
        }
        return (high * 1_000).rounded(.up) / 1_000
    }

    /// Upper bounds of |x(t) − end| and |v(t)| that decay (after at most one peak) for ever.
    private func envelopes(at time: Double) -> (position: Double, velocity: Double) {
        switch solution {
        case .critical(let r, let c1, let c2):
            let e = exp(r * time)
            return ((abs(c1) + abs(c2) * time) * e, (abs(c2 + r * c1) + abs(r * c2) * time) * e)
        case .overdamped(let r1, let r2, let c1, let c2):
            let e1 = exp(r1 * time)
            let e2 = exp(r2 * time)
            return (abs(c1) * e1 + abs(c2) * e2, abs(c1 * r1) * e1 + abs(c2 * r2) * e2)
        case .underdamped(let r, let w, let c1, let c2):
            let e = exp(r * time)
            let a = c1 * r + c2 * w
            let b = c2 * r - c1 * w
            return ((c1 * c1 + c2 * c2).squareRoot() * e, (a * a + b * b).squareRoot() * e)
        }
    }
}
