public import Foundation  // TimeInterval

// Geometry comes from CoreGraphics on Apple platforms (Foundation alone brings neither its members
// nor its Hashable conformances there) and from Foundation on Linux.
#if canImport(CoreGraphics)
    import CoreGraphics
#endif

/// One touch position at the time the event system reported it.
public struct TouchSample: Sendable, Hashable {
    /// When the event happened, in seconds on the event clock (`UITouch.timestamp`,
    /// `DragGesture.Value.time` converted to a time interval); never the wall clock.
    public var time: TimeInterval
    /// Where the finger was, in the view's coordinates.
    public var location: CGPoint

    /// Creates a sample.
    public init(time: TimeInterval, location: CGPoint) {
        self.time = time
        self.location = location
    }
}

/// A velocity estimate and how far to trust it.
public struct VelocityEstimate: Sendable, Hashable {
    /// The velocity in points per second.
    public var velocity: CGVector
    /// How well a quadratic explains the recent motion, 0…1 (the product of both axes' R²).
    public var confidence: Double
    /// How many samples the fit used.
    public var sampleCount: Int

    /// No motion, full confidence: what a finger that stopped reports.
    public static let zero = VelocityEstimate(velocity: CGVector(dx: 0, dy: 0), confidence: 1, sampleCount: 0)

    /// Creates an estimate.
    public init(velocity: CGVector, confidence: Double, sampleCount: Int) {
        self.velocity = velocity
        self.confidence = confidence
        self.sampleCount = sampleCount
    }

    /// The speed, in points per second.
    public var speed: Double {
        (Double(velocity.dx) * Double(velocity.dx) + Double(velocity.dy) * Double(velocity.dy)).squareRoot()
    }
}

/// Estimates a finger's velocity from its recent positions, as Flutter's touch tracker does.
///
/// Each axis gets an unweighted least-squares quadratic over the recent samples, with time
/// measured back from the newest sample; the velocity is the fit's slope at the newest sample.
/// "Recent" means at most ``Configuration/historySize`` samples, none older than the
/// ``Configuration/horizon``, and none before a gap longer than
/// ``Configuration/stopGap`` (the finger rested there, so earlier motion no longer counts).
/// Asked at a time more than a stop gap after the newest sample, the tracker reports zero: a
/// finger held still before lifting has no residual velocity.
///
/// - Complexity: ``add(_:)`` is O(1); ``estimate(at:)`` is O(*h*) for the history size *h*.
public struct VelocityTracker: Sendable {
    /// The tracker's window.
    public struct Configuration: Sendable, Hashable {
        /// The most samples the fit uses.
        public var historySize: Int
        /// The oldest sample the fit uses, in seconds before the newest.
        public var horizon: TimeInterval
        /// A gap between samples longer than this, in seconds, means the finger stopped.
        public var stopGap: TimeInterval
        /// The fewest samples that give an estimate; fewer give zero.
        public var minimumSampleCount: Int

        /// Flutter's constants: 20 samples, 100 ms, 40 ms, 3 samples.
        public init(
            historySize: Int = 20, horizon: TimeInterval = 0.1, stopGap: TimeInterval = 0.04,
            minimumSampleCount: Int = 3
        ) {
            self.historySize = Swift.max(historySize, 1)
            self.horizon = horizon
            self.stopGap = stopGap
            self.minimumSampleCount = Swift.max(minimumSampleCount, 3)
        }
    }

    /// The window the tracker uses.
    public let configuration: Configuration
    /// Far below any event clock's resolution, far above the rounding of a difference of two
    /// timestamps of a device that has been up for years.
    static let timeSlack: TimeInterval = 1e-6
    private var samples: [TouchSample?]
    private var newestIndex = -1

    /// Creates an empty tracker.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        samples = [TouchSample?](repeating: nil, count: configuration.historySize)
    }

    /// Records a sample; samples with a non-finite time or position are ignored.
    public mutating func add(_ sample: TouchSample) {
        guard sample.time.isFinite, Double(sample.location.x).isFinite, Double(sample.location.y).isFinite else {
            return
        }
        newestIndex = (newestIndex + 1) % samples.count
        samples[newestIndex] = sample
    }

    /// Forgets every sample (a new touch began).
    public mutating func reset() {
        samples = [TouchSample?](repeating: nil, count: samples.count)
        newestIndex = -1
    }

    /// The velocity at the newest sample, or zero when the samples cannot tell.
    ///
    /// - Parameter time: When the velocity is wanted (the release time); more than a stop gap
    ///   after the newest sample means the finger had stopped, and the estimate is zero. `nil`
    ///   estimates at the newest sample.
    public func estimate(at time: TimeInterval? = nil) -> VelocityEstimate {
        guard newestIndex >= 0, let newest = samples[newestIndex] else { return .zero }
        if let time, time - newest.time > configuration.stopGap + Self.timeSlack { return .zero }
        var times: [Double] = []
        var xs: [Double] = []
        var ys: [Double] = []
        times.reserveCapacity(samples.count)
        xs.reserveCapacity(samples.count)
        ys.reserveCapacity(samples.count)
        var previous = newest
        var index = newestIndex
        for _ in 0..<samples.count {
            guard let sample = samples[index] else { break }
            let age = newest.time - sample.time
            let gap = previous.time - sample.time
            // Event timestamps are large (seconds since boot), so a sample exactly at the horizon
            // can compute as a hair past it; a nanosecond of slack keeps it, as exact math would.
            if age > configuration.horizon + Self.timeSlack || gap > configuration.stopGap + Self.timeSlack { break }
            // Milliseconds before the newest sample keep the fit well-conditioned.
            times.append(-age * 1_000)
            xs.append(Double(sample.location.x))
            ys.append(Double(sample.location.y))
            previous = sample
            index = (index - 1 + samples.count) % samples.count
        }
        guard times.count >= configuration.minimumSampleCount,
            let fits = PolynomialFit.fits(x: times, ys: [xs, ys], degree: 2), fits.count == 2
        else { return .zero }
        let fitX = fits[0]
        let fitY = fits[1]
        return VelocityEstimate(
            velocity: CGVector(dx: fitX.coefficients[1] * 1_000, dy: fitY.coefficients[1] * 1_000),
            confidence: fitX.confidence * fitY.confidence,
            sampleCount: times.count
        )
    }
}

/// Decides whether a release is a fling, and limits its speed.
public struct FlingThresholds: Sendable, Hashable {
    /// Below this speed (points per second) a release is a drop, not a throw.
    public var minimumSpeed: Double
    /// Above this speed a throw is slowed to it (a glitchy sample must not launch the player).
    public var maximumSpeed: Double

    /// Creates thresholds; the defaults are Flutter's 50 and 8,000 points per second.
    public init(minimumSpeed: Double = 50, maximumSpeed: Double = 8_000) {
        self.minimumSpeed = Swift.max(0, minimumSpeed)
        self.maximumSpeed = Swift.max(self.minimumSpeed, maximumSpeed)
    }

    /// The release velocity to act on: zero below the minimum, clamped in magnitude to the maximum.
    public func releaseVelocity(for velocity: CGVector) -> CGVector {
        let speed = (Double(velocity.dx) * Double(velocity.dx) + Double(velocity.dy) * Double(velocity.dy)).squareRoot()
        guard speed.isFinite, speed >= minimumSpeed, speed > 0 else { return CGVector(dx: 0, dy: 0) }
        guard speed > maximumSpeed else { return velocity }
        let scale = maximumSpeed / speed
        return CGVector(dx: Double(velocity.dx) * scale, dy: Double(velocity.dy) * scale)
    }
}

extension TouchSample {
    /// Hashes the time and the location's coordinates (`CGPoint` is `Hashable` only from iOS 18).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(time)
        hasher.combine(point: location)
    }
}

extension VelocityEstimate {
    /// Hashes every property (`CGVector` is `Hashable` only from iOS 18).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(vector: velocity)
        hasher.combine(confidence)
        hasher.combine(sampleCount)
    }
}
