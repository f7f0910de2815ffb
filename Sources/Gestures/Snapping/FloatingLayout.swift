// Geometry comes from CoreGraphics on Apple platforms (Foundation alone brings neither its members
// nor its Hashable conformances there) and from Foundation on Linux.
#if canImport(CoreGraphics)
    public import CoreGraphics
    import Foundation
#else
    public import Foundation
#endif

/// Insets from each edge, in points, such as a screen's safe area (UIKit's `UIEdgeInsets` or
/// SwiftUI's `EdgeInsets` pass straight in).
public struct LayoutInsets: Sendable, Hashable, Codable {
    /// The inset from the top edge.
    public var top: CGFloat
    /// The inset from the left edge.
    public var left: CGFloat
    /// The inset from the bottom edge.
    public var bottom: CGFloat
    /// The inset from the right edge.
    public var right: CGFloat

    /// No insets.
    public static let zero = LayoutInsets(top: 0, left: 0, bottom: 0, right: 0)

    /// Creates insets; negative or non-finite values count as 0.
    public init(top: CGFloat, left: CGFloat, bottom: CGFloat, right: CGFloat) {
        func clean(_ value: CGFloat) -> CGFloat { value.isFinite ? Swift.max(value, 0) : 0 }
        self.top = clean(top)
        self.left = clean(left)
        self.bottom = clean(bottom)
        self.right = clean(right)
    }
}

/// Where a floating player may be: its container, the container's safe area, and its own size.
public struct FloatingLayout: Sendable, Hashable {
    /// The container's bounds (the screen or the view the player floats in).
    public var bounds: CGRect
    /// The parts of the container the player must not cover at rest (notch, home indicator, bars).
    public var safeArea: LayoutInsets
    /// The player's size.
    public var playerSize: CGSize
    /// The gap kept between a resting player and the safe area's edges.
    public var margin: CGFloat

    /// Creates a layout.
    public init(bounds: CGRect, safeArea: LayoutInsets = .zero, playerSize: CGSize, margin: CGFloat = 16) {
        self.bounds = bounds.standardized
        self.safeArea = safeArea
        self.playerSize = CGSize(
            width: playerSize.width.isFinite ? Swift.max(playerSize.width, 0) : 0,
            height: playerSize.height.isFinite ? Swift.max(playerSize.height, 0) : 0)
        self.margin = margin.isFinite ? Swift.max(margin, 0) : 0
    }

    /// The rectangle the player's *center* may rest in: the safe area, less the margin and half
    /// the player. When the player does not fit, it collapses to the safe area's middle line.
    public var restingRegion: CGRect {
        let safe = CGRect(
            x: bounds.minX + safeArea.left, y: bounds.minY + safeArea.top,
            width: bounds.width - safeArea.left - safeArea.right, height: bounds.height - safeArea.top - safeArea.bottom
        )
        return Self.inset(safe, dx: margin + playerSize.width / 2, dy: margin + playerSize.height / 2)
    }

    /// The rectangle the player's center may be dragged in: the whole container less half the player.
    public var draggingRegion: CGRect {
        Self.inset(bounds, dx: playerSize.width / 2, dy: playerSize.height / 2)
    }

    /// The player's frame when its center is at `center`.
    public func frame(center: CGPoint) -> CGRect {
        CGRect(
            x: center.x - playerSize.width / 2, y: center.y - playerSize.height / 2, width: playerSize.width,
            height: playerSize.height)
    }

    /// Insets a rectangle, collapsing each axis to its middle when the inset exceeds it.
    static func inset(_ rect: CGRect, dx: CGFloat, dy: CGFloat) -> CGRect {
        let width = rect.width - 2 * dx
        let height = rect.height - 2 * dy
        return CGRect(
            x: width >= 0 ? rect.minX + dx : rect.midX, y: height >= 0 ? rect.minY + dy : rect.midY,
            width: Swift.max(width, 0), height: Swift.max(height, 0))
    }
}

extension CGRect {
    /// `point` moved to the nearest point inside the rectangle.
    func clamping(_ point: CGPoint) -> CGPoint {
        CGPoint(x: Swift.min(Swift.max(point.x, minX), maxX), y: Swift.min(Swift.max(point.y, minY), maxY))
    }
}

extension FloatingLayout {
    /// Hashes every property (`CGRect` and `CGSize` are `Hashable` only from iOS 18).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(rect: bounds)
        hasher.combine(safeArea)
        hasher.combine(size: playerSize)
        hasher.combine(margin)
    }
}
