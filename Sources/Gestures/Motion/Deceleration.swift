import Foundation

/// How quickly a thrown object slows down: the share of its velocity kept per millisecond.
public struct DecelerationRate: Sendable, Hashable {
    /// The velocity multiplier per millisecond, strictly between 0 and 1.
    public let perMillisecond: Double

    /// UIScrollView's normal rate, 0.998.
    public static let normal = DecelerationRate(uncheckedPerMillisecond: 0.998)
    /// UIScrollView's fast rate, 0.99.
    public static let fast = DecelerationRate(uncheckedPerMillisecond: 0.99)

    /// A custom rate, or `nil` unless `perMillisecond` is strictly between 0 and 1.
    public init?(perMillisecond: Double) {
        guard perMillisecond > 0, perMillisecond < 1 else { return nil }
        self.perMillisecond = perMillisecond
    }

    private init(uncheckedPerMillisecond: Double) {
        perMillisecond = uncheckedPerMillisecond
    }

    /// The continuous decay constant, 1000 · ln(rate) per second (negative).
    public var decayConstant: Double { 1_000 * log(perMillisecond) }

    /// How far a throw at `velocity` travels before it stops, by the continuous closed form
    /// `-v₀ / (1000 · ln d)`.
    public func projectedDistance(forVelocity velocity: Double) -> Double {
        -velocity / decayConstant
    }

    /// The distance by Apple's WWDC 2018 formula `(v₀ / 1000) · d / (1 − d)`: the sum of 1 ms
    /// steps, which differs from the continuous form by under 0.2% at the normal rate.
    public func steppedProjectedDistance(forVelocity velocity: Double) -> Double {
        velocity / 1_000 * perMillisecond / (1 - perMillisecond)
    }
}

/// The motion of a thrown object slowing down exponentially on one axis, in closed form.
///
/// Velocity decays as `v(t) = v₀ · d^(1000t)` and position follows exactly, so the state at any
/// time is known without stepping; stepping frame by frame with ``advanced(by:)`` gives the same
/// trajectory at 30, 60, 120 or 144 Hz.
public struct Deceleration: Sendable, Hashable {
    /// The position at time 0.
    public var initialPosition: Double
    /// The velocity at time 0, in units per second.
    public var initialVelocity: Double
    /// How quickly it slows down.
    public var rate: DecelerationRate

    /// Creates the motion of an object at `position` moving at `velocity`.
    public init(position: Double, velocity: Double, rate: DecelerationRate = .normal) {
        initialPosition = position
        initialVelocity = velocity
        self.rate = rate
    }

    /// The position at `time` seconds.
    ///
    /// - Complexity: O(1).
    public func position(at time: Double) -> Double {
        let k = rate.decayConstant
        return initialPosition + initialVelocity * (exp(k * time) - 1) / k
    }

    /// The velocity at `time` seconds.
    public func velocity(at time: Double) -> Double {
        initialVelocity * exp(rate.decayConstant * time)
    }

    /// Where the object comes to rest.
    public var restingPosition: Double {
        initialPosition + rate.projectedDistance(forVelocity: initialVelocity)
    }

    /// When the speed falls to `speed` (for example 10 points per second, below which motion is
    /// invisible), or 0 if it is already that slow.
    public func time(untilSpeed speed: Double) -> Double {
        let start = abs(initialVelocity)
        guard speed > 0, start > speed else { return 0 }
        return log(speed / start) / rate.decayConstant
    }

    /// When the object reaches `position`, or `nil` if it stops before (or moves away from) it.
    public func time(toReach position: Double) -> Double? {
        let distance = position - initialPosition
        guard distance != 0 else { return 0 }
        guard initialVelocity != 0, distance.sign == initialVelocity.sign else { return nil }
        // position(t) = p₀ + v₀(e^{kt} − 1)/k  ⇒  e^{kt} = 1 + k·distance/v₀.
        let k = rate.decayConstant
        let factor = 1 + k * distance / initialVelocity
        guard factor > 0 else { return nil }
        return log(factor) / k
    }

    /// The motion restarted `step` seconds later: frame-by-frame stepping with no drift.
    public func advanced(by step: Double) -> Deceleration {
        Deceleration(position: position(at: step), velocity: velocity(at: step), rate: rate)
    }
}
