// Geometry comes from CoreGraphics on Apple platforms (Foundation alone brings neither its members
// nor its Hashable conformances there) and from Foundation on Linux.
#if canImport(CoreGraphics)
    public import CoreGraphics
    import Foundation
#else
    public import Foundation
#endif

/// How a thrown player moves to its anchor.
public enum ThrowMotion: Sendable, Hashable {
    /// A ``GlideMotion`` per axis (the default): it leaves at exactly the release velocity,
    /// eases in when the release is slow, decelerates into the edge, and never overshoots the
    /// anchor nor leaves the resting region, whatever the release velocity.
    case glide
    /// A spring per axis. A critically damped spring started fast overshoots its target, and
    /// may carry the player past the edge of the screen for a moment: choose it for a bounce.
    case spring(Spring)
}

/// The motion of a player from its release point to its anchor, as a function of time.
///
/// A drop eases in and out over a duration that grows with the distance. A throw leaves at
/// exactly its release velocity, so there is no stop-then-restart at the moment the finger
/// lifts; with ``ThrowMotion/glide`` it then slows into the edge and stops there, within the
/// region it is given, however fast it was thrown.
///
/// Position and velocity come from closed forms, so any frame rate samples the same path, and an
/// interrupting touch or layout change can take over both at any instant.
public struct SnapAnimation: Sendable, Hashable {
    /// The shape of the motion.
    public enum Curve: Sendable, Hashable {
        /// A timing curve over a fixed duration (used for drops).
        case timing(CubicBezierTiming, duration: Double)
        /// A spring per axis.
        case spring(Spring)
        /// A ``GlideMotion`` per axis, kept within `region` (widened to take in the start).
        case glide(within: CGRect?)
    }

    /// Where the motion starts.
    public let start: CGPoint
    /// Where it ends.
    public let end: CGPoint
    /// The velocity at the start.
    public let initialVelocity: CGVector
    /// The motion's shape.
    public let curve: Curve
    /// How long it lasts, in seconds; from then on the player is at `end`, at rest.
    public let duration: Double
    private let horizontal: SpringMotion?
    private let vertical: SpringMotion?
    private let glideX: GlideMotion?
    private let glideY: GlideMotion?

    /// The motion for a release: ease-in-out for a drop (no velocity), `motion` for a throw.
    ///
    /// - Parameters:
    ///   - start: The release point.
    ///   - end: The anchor's point.
    ///   - velocity: The release velocity, in points per second.
    ///   - motion: How a throw moves (``ThrowMotion/glide`` by default).
    ///   - region: The rectangle a gliding player's center stays within (the resting region).
    public init(
        from start: CGPoint, to end: CGPoint, velocity: CGVector, motion: ThrowMotion = .glide,
        within region: CGRect? = nil
    ) {
        let still = !(velocity.dx.isFinite && velocity.dy.isFinite) || (velocity.dx == 0 && velocity.dy == 0)
        if still {
            let distance = hypot(Double(end.x - start.x), Double(end.y - start.y))
            // 0.2 s for a nudge, up to 0.45 s across a large screen.
            let duration = Swift.min(0.45, 0.2 + distance / 2_000)
            self.init(
                start: start, end: end, velocity: CGVector(dx: 0, dy: 0),
                curve: .timing(.easeInOut, duration: duration.isFinite ? duration : 0))
        } else {
            switch motion {
            case .glide: self.init(start: start, end: end, velocity: velocity, curve: .glide(within: region))
            case .spring(let spring): self.init(start: start, end: end, velocity: velocity, curve: .spring(spring))
            }
        }
    }

    /// The motion along `curve`; a timing curve ignores `velocity`.
    public init(start: CGPoint, end: CGPoint, velocity: CGVector, curve: Curve) {
        self.start = start
        self.end = end
        self.curve = curve
        switch curve {
        case .timing(_, let duration):
            initialVelocity = CGVector(dx: 0, dy: 0)
            horizontal = nil
            vertical = nil
            glideX = nil
            glideY = nil
            self.duration = duration.isFinite ? Swift.max(duration, 0) : 0
        case .glide(let region):
            initialVelocity = velocity
            horizontal = nil
            vertical = nil
            let x = GlideMotion(
                from: Double(start.x), to: Double(end.x), initialVelocity: Double(velocity.dx),
                within: region.map { Double($0.minX)...Double($0.maxX) })
            let y = GlideMotion(
                from: Double(start.y), to: Double(end.y), initialVelocity: Double(velocity.dy),
                within: region.map { Double($0.minY)...Double($0.maxY) })
            glideX = x
            glideY = y
            duration = Swift.max(x.duration, y.duration)
        case .spring(let spring):
            initialVelocity = velocity
            let x = SpringMotion(
                spring: spring, from: Double(start.x), to: Double(end.x), initialVelocity: Double(velocity.dx))
            let y = SpringMotion(
                spring: spring, from: Double(start.y), to: Double(end.y), initialVelocity: Double(velocity.dy))
            horizontal = x
            vertical = y
            glideX = nil
            glideY = nil
            duration = Swift.max(x.settlingTime(), y.settlingTime())
        }
    }

    /// The position `time` seconds after the start; `end` from ``duration`` on.
    ///
    /// - Complexity: O(1).
    public func position(at time: Double) -> CGPoint {
        guard time < duration else { return end }
        guard time > 0 else { return start }
        switch curve {
        case .timing(let timing, let duration):
            let progress = timing.value(at: time / duration)
            return CGPoint(
                x: Double(start.x) + Double(end.x - start.x) * progress,
                y: Double(start.y) + Double(end.y - start.y) * progress)
        case .spring:
            return CGPoint(
                x: horizontal?.position(at: time) ?? Double(end.x), y: vertical?.position(at: time) ?? Double(end.y))
        case .glide:
            return CGPoint(
                x: glideX?.position(at: time) ?? Double(end.x), y: glideY?.position(at: time) ?? Double(end.y))
        }
    }

    /// The velocity `time` seconds after the start, in points per second; zero from ``duration`` on.
    public func velocity(at time: Double) -> CGVector {
        guard time < duration else { return CGVector(dx: 0, dy: 0) }
        switch curve {
        case .timing(let timing, let duration):
            guard duration > 0 else { return CGVector(dx: 0, dy: 0) }
            let slope = timing.slope(at: Swift.max(time, 0) / duration)
            let scale = slope.isFinite ? slope / duration : 0
            return CGVector(dx: Double(end.x - start.x) * scale, dy: Double(end.y - start.y) * scale)
        case .spring:
            let t = Swift.max(time, 0)
            return CGVector(dx: horizontal?.velocity(at: t) ?? 0, dy: vertical?.velocity(at: t) ?? 0)
        case .glide:
            let t = Swift.max(time, 0)
            return CGVector(dx: glideX?.velocity(at: t) ?? 0, dy: glideY?.velocity(at: t) ?? 0)
        }
    }
}

extension SnapAnimation {
    /// Hashes the motion's ends, start velocity, curve and duration, which determine the rest
    /// (`CGPoint` and `CGVector` are `Hashable` only from iOS 18).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(point: start)
        hasher.combine(point: end)
        hasher.combine(vector: initialVelocity)
        hasher.combine(curve)
        hasher.combine(duration)
    }
}

extension SnapAnimation.Curve {
    /// Hashes the case and its values (`CGRect` is `Hashable` only from iOS 18).
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .timing(let timing, let duration):
            hasher.combine(0)
            hasher.combine(timing)
            hasher.combine(duration)
        case .spring(let spring):
            hasher.combine(1)
            hasher.combine(spring)
        case .glide(let region):
            hasher.combine(2)
            hasher.combine(region != nil)
            if let region { hasher.combine(rect: region) }
        }
    }
}
