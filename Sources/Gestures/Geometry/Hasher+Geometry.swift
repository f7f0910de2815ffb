// Geometry comes from CoreGraphics on Apple platforms and from Foundation on Linux.
#if canImport(CoreGraphics)
    import CoreGraphics
#else
    import Foundation
#endif

// CoreGraphics makes `CGPoint`, `CGSize`, `CGRect` and `CGVector` `Hashable` only from iOS 18 and
// macOS 15 (they are `Equatable` on every version), so a Gestures type that holds them and must
// hash on iOS 17 and macOS 14 feeds their coordinates to the hasher itself. Equality stays
// synthesized, through CoreGraphics' own `==`.
extension Hasher {
    /// Feeds a point's coordinates.
    mutating func combine(point: CGPoint) {
        combine(point.x)
        combine(point.y)
    }

    /// Feeds a size's width and height.
    mutating func combine(size: CGSize) {
        combine(size.width)
        combine(size.height)
    }

    /// Feeds a rectangle as CoreGraphics compares it: every null rectangle is equal to every
    /// other, and a rectangle of negative size equals its standardized form.
    mutating func combine(rect: CGRect) {
        combine(rect.isNull)
        guard !rect.isNull else { return }
        let standardized = rect.standardized
        combine(point: standardized.origin)
        combine(size: standardized.size)
    }

    /// Feeds a vector's components.
    mutating func combine(vector: CGVector) {
        combine(vector.dx)
        combine(vector.dy)
    }
}
