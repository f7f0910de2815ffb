import Foundation
import TestSupport
import Testing

/// The gesture reference vectors of `shared/fixtures/gestures` (see its README for sources).
enum GestureFixtures {
    static let loader = FixtureLoader(bundle: .module)

    struct Velocity: Decodable {
        struct Solver: Decodable {
            var x: [Double]
            var y: [Double]
            var w: [Double]
            var degree: Int
            var coefficients: [Double]
            var confidence: Double
        }

        struct Gesture: Decodable, Sendable, CustomTestStringConvertible {
            var testDescription: String { "gesture \(pointer) (\(events.count) events)" }

            struct Event: Decodable, Sendable {
                var type: String
                var tMs: Double
                var x: Double
                var y: Double
            }

            struct Expected: Decodable, Sendable {
                var vx: Double
                var vy: Double
            }

            struct Computed: Decodable, Sendable {
                var vx: Double
                var vy: Double
                var confidence: Double
                var samplesUsed: Int
            }

            var pointer: Int
            var events: [Event]
            var expectedPixelsPerSecond: Expected
            var computedLsq2: Computed
        }

        var lsqSolverTests: [Solver]
        var gestures: [Gesture]
    }

    struct Friction: Decodable {
        struct Projection: Decodable, Sendable {
            var decelerationRate: Double
            var v0: Double
            var projectionContinuous: Double
            var projectionAppleWwdc: Double
            var timeToSpeed10pxPerS: Double

            enum CodingKeys: String, CodingKey {
                case decelerationRate, v0
                case projectionContinuous = "projection_continuous"
                case projectionAppleWwdc = "projection_apple_wwdc"
                case timeToSpeed10pxPerS = "time_to_speed_10px_per_s"
            }
        }

        struct Series: Decodable, Sendable {
            var decelerationRate: Double
            var x0: Double
            var v0: Double
            var t: [Double]
            var x: [Double]
            var v: [Double]
        }

        struct FrameRate: Decodable, Sendable {
            var hz: Int
            var xAt1s: Double
            var vAt1s: Double

            enum CodingKeys: String, CodingKey {
                case hz
                case xAt1s = "x_at_1s"
                case vAt1s = "v_at_1s"
            }
        }

        var projectionTable: [Projection]
        var decaySeries: [Series]
        var frameRates: [FrameRate]

        enum CodingKeys: String, CodingKey {
            case projectionTable = "projection_table"
            case decaySeries = "decay_series"
            case frameRates = "frame_rate_independence_x_at_1s_d0.998_v1000"
        }
    }

    struct Springs: Decodable {
        struct Case: Decodable, Sendable {
            var name: String
            var mass: Double
            var stiffness: Double
            var damping: Double
            var start: Double
            var end: Double
            var initialVelocity: Double
            var t: [Double]
            var position: [Double]
            var velocity: [Double]
        }

        var cases: [Case]
    }

    struct RawBezier: Decodable {
        struct RawCurve: Decodable {
            var controlPoints: [Double]
            var x: [Double]
            var y: [Double]
            var slopeDyDx: [Double?]

            enum CodingKeys: String, CodingKey {
                case x, y
                case controlPoints = "control_points"
                case slopeDyDx = "slope_dy_dx"
            }

            var curve: Bezier.Curve { Bezier.Curve(controlPoints: controlPoints, x: x, y: y, slopeDyDx: slopeDyDx) }
        }

        var curves: [String: RawCurve]
    }

    struct Bezier {
        struct Curve: Sendable {
            var controlPoints: [Double]
            var x: [Double]
            var y: [Double]
            var slopeDyDx: [Double?]
        }

        var curves: [String: Curve]
    }

    /// The fixtures use snake_case keys; Swift names are camelCase.
    static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }

    static func velocity() throws -> Velocity {
        try loader.decode(Velocity.self, from: "velocity-flutter.json", using: decoder)
    }
    static func friction() throws -> Friction {
        // Explicit raw key names (digits defeat the snake-case conversion), so no conversion.
        try loader.decode(Friction.self, from: "friction.json")
    }
    static func springs() throws -> Springs { try loader.decode(Springs.self, from: "spring.json", using: decoder) }
    /// Decoded without key conversion: the curve names are dictionary keys used as written.
    static func bezier() throws -> Bezier {
        let raw = try loader.decode(RawBezier.self, from: "bezier-css.json")
        return Bezier(curves: raw.curves.mapValues(\.curve))
    }
}
