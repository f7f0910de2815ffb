// Geometry comes from CoreGraphics on Apple platforms (Foundation alone brings neither its members
// nor its Hashable conformances there) and from Foundation on Linux.
#if canImport(CoreGraphics)
    public import CoreGraphics
    import Foundation
#else
    public import Foundation
#endif

/// Where a floating player rests, stated so that it survives rotation and resizing.
///
/// A point on the edge of the resting region is stored as a fraction of the way around its
/// perimeter, clockwise from the top-left corner, with each edge taking a quarter whatever its
/// length: 0 is the top-left corner, 0.25 top-right, 0.5 bottom-right, 0.75 bottom-left, and
/// 0.375 is halfway down the right edge. After a rotation or resize the same fraction finds the
/// same edge at the same relative position, so a player resting halfway down the right edge stays
/// halfway down the right edge. (Weighting edges by their length would move it: in landscape the
/// same share of a longer top edge would put it on the top.) A player dropped freely keeps its
/// relative position in the region instead.
public enum SnapAnchor: Sendable, Hashable, Codable {
    /// A point on the resting region's edge, as a fraction 0..<1 of its perimeter.
    case perimeter(Double)
    /// A point inside the resting region, as fractions of its width and height.
    case interior(x: Double, y: Double)

    /// The middle of the region, where the player starts.
    public static let center = SnapAnchor.interior(x: 0.5, y: 0.5)

    /// The player's center for this anchor in `layout`.
    ///
    /// - Complexity: O(1).
    public func point(in layout: FloatingLayout) -> CGPoint {
        let region = layout.restingRegion
        switch self {
        case .interior(let x, let y):
            let u = x.isFinite ? Swift.min(Swift.max(x, 0), 1) : 0.5
            let v = y.isFinite ? Swift.min(Swift.max(y, 0), 1) : 0.5
            return CGPoint(x: region.minX + region.width * u, y: region.minY + region.height * v)
        case .perimeter(let fraction):
            var f = fraction.isFinite ? fraction.truncatingRemainder(dividingBy: 1) : 0
            if f < 0 { f += 1 }
            let edge = Swift.min(Int(f * 4), 3)
            let along = CGFloat(f * 4 - Double(edge))
            switch edge {
            case 0: return CGPoint(x: region.minX + region.width * along, y: region.minY)
            case 1: return CGPoint(x: region.maxX, y: region.minY + region.height * along)
            case 2: return CGPoint(x: region.maxX - region.width * along, y: region.maxY)
            default: return CGPoint(x: region.minX, y: region.maxY - region.height * along)
            }
        }
    }

    /// The perimeter anchor of the point on `region`'s edge nearest to `point`.
    public static func perimeter(nearest point: CGPoint, in region: CGRect) -> SnapAnchor {
        let p = region.clamping(point)
        let toTop = Double(p.y - region.minY)
        let toBottom = Double(region.maxY - p.y)
        let toLeft = Double(p.x - region.minX)
        let toRight = Double(region.maxX - p.x)
        func share(_ part: Double, of whole: CGFloat) -> Double { whole > 0 ? part / Double(whole) : 0 }
        let nearest = Swift.min(toTop, toBottom, toLeft, toRight)
        let quarter: Double
        if nearest == toTop {
            quarter = share(toLeft, of: region.width)
        } else if nearest == toRight {
            quarter = 1 + share(toTop, of: region.height)
        } else if nearest == toBottom {
            quarter = 2 + share(toRight, of: region.width)
        } else {
            quarter = 3 + share(toBottom, of: region.height)
        }
        return .perimeter((quarter / 4).truncatingRemainder(dividingBy: 1))
    }

    /// The interior anchor of `point` (clamped into `region`).
    public static func interior(_ point: CGPoint, in region: CGRect) -> SnapAnchor {
        let p = region.clamping(point)
        let x = region.width > 0 ? Double((p.x - region.minX) / region.width) : 0.5
        let y = region.height > 0 ? Double((p.y - region.minY) / region.height) : 0.5
        return .interior(x: x, y: y)
    }
}
