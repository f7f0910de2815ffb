import Foundation
import Gestures
import TestSupport
import Testing

// CoreGraphics brings the geometry's members on Apple platforms (Foundation does on Linux).
#if canImport(CoreGraphics)
    import CoreGraphics
#endif

/// The Gestures types that hold CoreGraphics geometry hash its coordinates themselves, because
/// CoreGraphics makes `CGPoint`, `CGSize`, `CGRect` and `CGVector` `Hashable` only from iOS 18
/// and macOS 15. These laws hold the hand-written `hash(into:)` to the synthesized `==`.
@Suite("Geometry hashing: equal values hash alike (Hashable's law)")
struct GeometryHashingTests {
    /// A coordinate from a grid of five values (negative zero among them), so that equal values
    /// come up often and `0.0 == -0.0` is exercised.
    static func coordinate(_ random: inout SplitMix64) -> CGFloat {
        [CGFloat(-0.0), 0, 1, 2.5, -3][Int(random.next() % 5)]
    }

    static func point(_ random: inout SplitMix64) -> CGPoint {
        CGPoint(x: coordinate(&random), y: coordinate(&random))
    }

    static func vector(_ random: inout SplitMix64) -> CGVector {
        CGVector(dx: coordinate(&random), dy: coordinate(&random))
    }

    /// A rectangle of positive, zero or negative size, or a null one (CoreGraphics compares a
    /// rectangle standardized, and every null rectangle equal).
    static func rect(_ random: inout SplitMix64) -> CGRect {
        switch random.next() % 5 {
        case 0: .null
        case 1: CGRect(x: CGFloat.infinity, y: coordinate(&random), width: 1, height: 1)
        default:
            CGRect(
                x: coordinate(&random), y: coordinate(&random), width: coordinate(&random),
                height: coordinate(&random))
        }
    }

    static func anchor(_ random: inout SplitMix64) -> SnapAnchor {
        random.next() % 2 == 0 ? .perimeter(0.25) : .interior(x: 0.5, y: 0.5)
    }

    static func animation(_ random: inout SplitMix64) -> SnapAnimation {
        let curves: [SnapAnimation.Curve] = [
            .glide(within: nil), .glide(within: rect(&random)), .spring(Spring(response: 0.4, dampingFraction: 0.8)),
        ]
        // Ends and velocities from two choices each, so that equal animations come up often.
        let points = [CGPoint(x: 0, y: -0.0), CGPoint(x: 2.5, y: -3)]
        return SnapAnimation(
            start: points[Int(random.next() % 2)], end: points[Int(random.next() % 2)],
            velocity: random.next() % 2 == 0 ? CGVector(dx: 0, dy: 0) : CGVector(dx: -0.0, dy: 1),
            curve: curves[Int(random.next() % UInt64(curves.count))])
    }

    static func phase(_ random: inout SplitMix64) -> FloatingPlayerSession.Phase {
        switch random.next() % 4 {
        case 0: .resting(anchor(&random))
        case 1: .pressing(center: point(&random))
        case 2: .dragging(grabOffset: vector(&random))
        default: .settling(animation(&random), anchor: anchor(&random), startTime: 1)
        }
    }

    static func layout(_ random: inout SplitMix64) -> FloatingLayout {
        var layout = FloatingLayout(
            bounds: CGRect(x: 0, y: 0, width: 390, height: 844), playerSize: CGSize(width: 72, height: 72))
        // `bounds` is settable, so a layout can hold a rectangle its initializer would standardize.
        layout.bounds = rect(&random)
        return layout
    }

    /// Draws 4,000 pairs from `make` and checks that every equal pair hashes alike, that
    /// unequal pairs were drawn too, and that a set keeps one element per equal value.
    static func checkLaw<Value: Hashable>(
        seed: UInt64, _ make: (inout SplitMix64) -> Value, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        var random = SplitMix64(seed: seed)
        var equalPairs = 0
        var values: [Value] = []
        for _ in 0..<4_000 {
            let first = make(&random)
            let second = make(&random)
            values += [first, second]
            if first == second {
                equalPairs += 1
                #expect(
                    first.hashValue == second.hashValue, "seed \(seed): \(first) and \(second) are equal",
                    sourceLocation: sourceLocation)
            }
        }
        #expect(equalPairs > 0, "seed \(seed): no equal pair was drawn", sourceLocation: sourceLocation)
        var distinct: [Value] = []
        for value in values where !distinct.contains(value) { distinct.append(value) }
        #expect(Set(values).count == distinct.count, "seed \(seed)", sourceLocation: sourceLocation)
    }

    @Test("TouchSample, VelocityEstimate and SnapDecision", arguments: [UInt64(1), 0x5EED])
    func valuesWithPointsAndVectors(seed: UInt64) {
        Self.checkLaw(seed: seed) { TouchSample(time: 1, location: Self.point(&$0)) }
        Self.checkLaw(seed: seed) {
            VelocityEstimate(velocity: Self.vector(&$0), confidence: 1, sampleCount: 3)
        }
        Self.checkLaw(seed: seed) { random in
            SnapPlanner().decide(releasedAt: Self.point(&random), velocity: Self.vector(&random), in: phone)
        }
    }

    @Test("FloatingLayout, SnapAnimation and its curve, and the session's phase", arguments: [UInt64(2), 0xF1A7])
    func valuesWithRectangles(seed: UInt64) {
        Self.checkLaw(seed: seed, Self.layout)
        Self.checkLaw(seed: seed, Self.animation)
        Self.checkLaw(seed: seed) { Self.animation(&$0).curve }
        Self.checkLaw(seed: seed, Self.phase)
    }

    @Test("a rectangle of negative size and its standardized form, and two null rectangles, hash alike")
    func standardizedAndNull() {
        let negative = SnapAnimation.Curve.glide(within: CGRect(x: 0, y: 0, width: -5, height: -5))
        let positive = SnapAnimation.Curve.glide(within: CGRect(x: -5, y: -5, width: 5, height: 5))
        #expect(negative == positive)
        #expect(Set([negative, positive]).count == 1)
        let null = SnapAnimation.Curve.glide(within: .null)
        let otherNull = SnapAnimation.Curve.glide(within: CGRect(x: CGFloat.infinity, y: 3, width: 1, height: 1))
        #expect(null == otherNull)
        #expect(Set([null, otherNull]).count == 1)
    }

    @Test("a point at negative zero equals and hashes as the one at zero")
    func negativeZero() {
        let positive = TouchSample(time: 0, location: CGPoint(x: 0, y: 0))
        let negative = TouchSample(time: 0, location: CGPoint(x: -0.0, y: -0.0))
        #expect(positive == negative)
        #expect(Set([positive, negative]).count == 1)
    }
}
