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
                var t_ms: Double
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
                var samples_used: Int
            }

            var pointer: Int
            var events: [Event]
            var expected_pixels_per_second: Expected
            var computed_lsq2: Computed
        }

        var lsq_solver_tests: [Solver]
        var gestures: [Gesture]
    }

    struct Friction: Decodable {
        struct Projection: Decodable, Sendable {
            var decelerationRate: Double
            var v0: Double
            var projection_continuous: Double
            var projection_apple_wwdc: Double
            var time_to_speed_10px_per_s: Double
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
            var x_at_1s: Double
            var v_at_1s: Double
        }

        var projection_table: [Projection]
        var decay_series: [Series]
        var frameRates: [FrameRate]

        enum CodingKeys: String, CodingKey {
            case projection_table, decay_series
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
            var initial_velocity: Double
            var t: [Double]
            var position: [Double]
            var velocity: [Double]
        }

        var cases: [Case]
    }

    struct Bezier: Decodable {
        struct Curve: Decodable, Sendable {
            var control_points: [Double]
            var x: [Double]
            var y: [Double]
            var slope_dy_dx: [Double?]
        }

        var curves: [String: Curve]
    }

    static func velocity() throws -> Velocity { try loader.decode(Velocity.self, from: "velocity-flutter.json") }
    static func friction() throws -> Friction { try loader.decode(Friction.self, from: "friction.json") }
    static func springs() throws -> Springs { try loader.decode(Springs.self, from: "spring.json") }
    static func bezier() throws -> Bezier { try loader.decode(Bezier.self, from: "bezier-css.json") }
}
