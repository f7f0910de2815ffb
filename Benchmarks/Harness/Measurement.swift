/// Times a body: a warm-up, then repeated samples long enough to read reliably.
public struct Sampler: Sendable {
    /// The shortest a sample may be; fast bodies run several times per sample to reach it.
    public var minimumSampleDuration: Duration
    /// How many samples to take.
    public var sampleCount: Int

    /// Creates a sampler taking `sampleCount` samples of at least `minimumSampleDuration` each.
    public init(sampleCount: Int, minimumSampleDuration: Duration = .milliseconds(1)) {
        self.sampleCount = max(1, sampleCount)
        self.minimumSampleDuration = minimumSampleDuration
    }

    /// Warms `body` up, then returns its time per run for each sample, in seconds.
    ///
    /// The warm-up run also calibrates how many runs a sample needs to last at least
    /// ``minimumSampleDuration``.
    public func measure(_ body: () -> Void) -> [Double] {
        measure(on: ContinuousClock(), body)
    }

    /// Warms `body` up, then returns its time per run on `clock` for each sample, in seconds:
    /// ``measure(_:)`` on the continuous clock, or on a clock a test moves itself.
    public func measure<C: Clock>(on clock: C, _ body: () -> Void) -> [Double] where C.Duration == Duration {
        let warmUp = clock.measure(body)
        let perRun = max(warmUp.seconds, 1e-9)
        let runsPerSample = max(1, Int((minimumSampleDuration.seconds / perRun).rounded(.up)))
        var samples: [Double] = []
        samples.reserveCapacity(sampleCount)
        for _ in 0..<sampleCount {
            let elapsed = clock.measure {
                for _ in 0..<runsPerSample { body() }
            }
            samples.append(elapsed.seconds / Double(runsPerSample))
        }
        return samples
    }
}

extension Duration {
    /// The duration in seconds as a floating-point number.
    public var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) * 1e-18
    }
}
