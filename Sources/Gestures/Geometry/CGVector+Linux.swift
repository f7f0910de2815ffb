#if !canImport(CoreGraphics)
    public import Foundation

    /// A two-dimensional vector, for platforms whose Foundation lacks CoreGraphics' `CGVector`.
    ///
    /// Apple platforms use CoreGraphics' own type; on Linux, Foundation has `CGPoint`, `CGSize`
    /// and `CGRect` but not `CGVector`, so MediaCore declares one with the same name and
    /// members, and code written against Apple's compiles unchanged. Unlike CoreGraphics' before
    /// iOS 18 and macOS 15, it is `Hashable`: MediaCore's own types hash its components
    /// themselves, as they must on Apple platforms.
    public struct CGVector: Sendable, Hashable, Codable, CustomStringConvertible {
        /// The horizontal component.
        public var dx: CGFloat
        /// The vertical component.
        public var dy: CGFloat

        /// The zero vector.
        public static var zero: CGVector { CGVector(dx: 0, dy: 0) }

        /// Creates a vector from its components.
        public init(dx: CGFloat, dy: CGFloat) {
            self.dx = dx
            self.dy = dy
        }

        /// Creates a vector from `Double` components.
        public init(dx: Double, dy: Double) {
            self.dx = CGFloat(dx)
            self.dy = CGFloat(dy)
        }

        /// Creates a vector from `Int` components.
        public init(dx: Int, dy: Int) {
            self.dx = CGFloat(dx)
            self.dy = CGFloat(dy)
        }

        /// `(dx, dy)`.
        public var description: String { "(\(dx), \(dy))" }
    }
#endif
