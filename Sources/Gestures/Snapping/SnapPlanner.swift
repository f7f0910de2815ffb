// Geometry comes from CoreGraphics on Apple platforms (Foundation alone brings neither its members
// nor its Hashable conformances there) and from Foundation on Linux.
#if canImport(CoreGraphics)
    public import CoreGraphics
    import Foundation
#else
    public import Foundation
#endif

/// Where a released player may come to rest.
public enum SnapPolicy: Sendable, Hashable {
    /// On the nearest edge of the resting region (the default).
    case nearestEdge
    /// In one of the four corners.
    case cornersOnly
    /// On the nearest edge, but in a corner when the edge point is within `radius` of one.
    case edgesWithCornerMagnets(radius: CGFloat)
    /// Wherever the throw ends, kept inside the resting region.
    case freeDrop
}

/// The decision for one release: where the player goes and why.
public struct SnapDecision: Sendable, Hashable {
    /// Where the player comes to rest.
    public var anchor: SnapAnchor
    /// The player's center at rest.
    public var target: CGPoint
    /// The velocity the player leaves with (zero for a drop): the tracker's estimate after the
    /// fling thresholds and off-axis damping.
    public var releaseVelocity: CGVector
    /// Where the throw alone would have ended, before snapping.
    public var projectedPoint: CGPoint
    /// Whether the release was a throw rather than a drop.
    public var isThrow: Bool {
        releaseVelocity.dx != 0 || releaseVelocity.dy != 0
    }
}

/// Chooses where a released floating player rests.
///
/// The throw is projected with UIScrollView-style deceleration, then snapped by the
/// ``SnapPolicy``. Two corrections make throws feel intended:
///
/// - **Off-axis damping.** A throw that is mostly horizontal (or vertical) loses most of its
///   sideways component, so a swipe to the right does not drift to the bottom edge.
/// - **Direction beats distance.** A throw goes to the edge (or corner side) its dominant axis
///   points to, even when it is too weak to get there by momentum; only a drop picks the
///   nearest edge.
public struct SnapPlanner: Sendable, Hashable {
    /// How the resting place is chosen.
    public var policy: SnapPolicy
    /// The deceleration used to project throws.
    public var deceleration: DecelerationRate
    /// What counts as a throw, and the fastest one.
    public var fling: FlingThresholds
    /// How much of the minor axis' velocity a one-axis throw keeps, 0…1.
    public var offAxisRetention: Double
    /// How many times faster the major axis must be for a throw to count as one-axis.
    public var dominanceRatio: Double

    /// Creates a planner.
    public init(
        policy: SnapPolicy = .nearestEdge,
        deceleration: DecelerationRate = .normal,
        fling: FlingThresholds = FlingThresholds(),
        offAxisRetention: Double = 0.25,
        dominanceRatio: Double = 1.5
    ) {
        self.policy = policy
        self.deceleration = deceleration
        self.fling = fling
        self.offAxisRetention = offAxisRetention.isFinite ? Swift.min(Swift.max(offAxisRetention, 0), 1) : 0.25
        self.dominanceRatio = dominanceRatio.isFinite ? Swift.max(dominanceRatio, 1) : 1.5
    }

    /// Decides where a player released at `center` with `velocity` comes to rest in `layout`.
    ///
    /// - Complexity: O(1).
    public func decide(releasedAt center: CGPoint, velocity: CGVector, in layout: FloatingLayout) -> SnapDecision {
        var release = fling.releaseVelocity(for: velocity)
        let vx = Double(release.dx)
        let vy = Double(release.dy)
        if abs(vx) > dominanceRatio * abs(vy) {
            release.dy = CGFloat(vy * offAxisRetention)
        } else if abs(vy) > dominanceRatio * abs(vx) {
            release.dx = CGFloat(vx * offAxisRetention)
        }
        let center = Self.finite(center, fallback: CGPoint(x: layout.bounds.midX, y: layout.bounds.midY))
        let projected = CGPoint(
            x: Double(center.x) + deceleration.projectedDistance(forVelocity: Double(release.dx)),
            y: Double(center.y) + deceleration.projectedDistance(forVelocity: Double(release.dy)))
        let region = layout.restingRegion
        let landing = region.clamping(projected)
        let isThrow = release.dx != 0 || release.dy != 0
        let horizontalMajor = abs(Double(release.dx)) >= abs(Double(release.dy))

        let target: CGPoint
        let anchor: SnapAnchor
        switch policy {
        case .freeDrop:
            target = landing
            anchor = .interior(landing, in: region)
        case .nearestEdge:
            target = Self.edgePoint(landing, in: region, throwDirection: isThrow ? release : nil, horizontalMajor)
            anchor = .perimeter(nearest: target, in: region)
        case .edgesWithCornerMagnets(let radius):
            let edge = Self.edgePoint(landing, in: region, throwDirection: isThrow ? release : nil, horizontalMajor)
            let corner = Self.corner(edge, in: region, throwDirection: nil, horizontalMajor)
            let distance = hypot(Double(edge.x - corner.x), Double(edge.y - corner.y))
            target = distance <= Double(radius) ? corner : edge
            anchor = .perimeter(nearest: target, in: region)
        case .cornersOnly:
            target = Self.corner(landing, in: region, throwDirection: isThrow ? release : nil, horizontalMajor)
            anchor = .perimeter(nearest: target, in: region)
        }
        return SnapDecision(anchor: anchor, target: target, releaseVelocity: release, projectedPoint: projected)
    }

    /// The point on the region's edge for a landing point: the nearest edge for a drop, the edge
    /// the dominant axis points to for a throw.
    static func edgePoint(_ p: CGPoint, in region: CGRect, throwDirection: CGVector?, _ horizontalMajor: Bool)
        -> CGPoint
    {
        if let direction = throwDirection {
            if horizontalMajor {
                return CGPoint(x: direction.dx < 0 ? region.minX : region.maxX, y: p.y)
            }
            return CGPoint(x: p.x, y: direction.dy < 0 ? region.minY : region.maxY)
        }
        let distances = [
            (p.x - region.minX, CGPoint(x: region.minX, y: p.y)),
            (region.maxX - p.x, CGPoint(x: region.maxX, y: p.y)),
            (p.y - region.minY, CGPoint(x: p.x, y: region.minY)),
            (region.maxY - p.y, CGPoint(x: p.x, y: region.maxY)),
        ]
        return distances.min { $0.0 < $1.0 }?.1 ?? p
    }

    /// The corner for a landing point: on each axis the nearer side, except that a throw's
    /// dominant axis takes the side it points to.
    static func corner(_ p: CGPoint, in region: CGRect, throwDirection: CGVector?, _ horizontalMajor: Bool) -> CGPoint {
        var right = p.x - region.minX > region.maxX - p.x
        var bottom = p.y - region.minY > region.maxY - p.y
        if let direction = throwDirection {
            if horizontalMajor { right = direction.dx > 0 } else { bottom = direction.dy > 0 }
        }
        return CGPoint(x: right ? region.maxX : region.minX, y: bottom ? region.maxY : region.minY)
    }

    static func finite(_ point: CGPoint, fallback: CGPoint) -> CGPoint {
        point.x.isFinite && point.y.isFinite ? point : fallback
    }
}

extension SnapDecision {
    /// Hashes every property (`CGPoint` and `CGVector` are `Hashable` only from iOS 18).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(anchor)
        hasher.combine(point: target)
        hasher.combine(vector: releaseVelocity)
        hasher.combine(point: projectedPoint)
    }
}
