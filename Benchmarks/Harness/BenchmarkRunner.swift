/// Runs the selected benchmark cases and collects their results.
public struct BenchmarkRunner: Sendable {
    /// The options the runner was started with.
    public var options: BenchmarkOptions

    /// Creates a runner for `options`.
    public init(options: BenchmarkOptions) {
        self.options = options
    }

    /// Whether this executable was built without optimization, which makes its figures meaningless.
    public static var isDebugBuild: Bool {
        #if DEBUG
            true
        #else
            false
        #endif
    }

    /// The warning a debug build prints before running anything.
    public static let debugBuildWarning = """
        ############################################################################
        #  WARNING: this is a DEBUG build. Its timings say nothing about MediaCore. #
        #  Run `swift run -c release benchmarks` for figures worth reading.         #
        ############################################################################
        """

    /// Times each selected case, MediaCore's side and then its baseline, calling `report` after each.
    ///
    /// - Returns: The results in the order the cases were given.
    public func run(_ cases: [Benchmark], report: (BenchmarkResult) -> Void = { _ in }) -> [BenchmarkResult] {
        var results: [BenchmarkResult] = []
        for benchmark in cases where options.selects(benchmark.qualifiedName) {
            let sampler = Sampler(sampleCount: min(options.sampleCount, benchmark.maximumSamples ?? .max))
            let body = benchmark.setup()
            guard let statistics = Statistics(samples: sampler.measure(body)) else { continue }
            for baseline in benchmark.baselines {
                let samples: [Double]
                let isRecorded: Bool
                switch baseline.source {
                case .timed(let setup):
                    samples = sampler.measure(setup())
                    isRecorded = false
                case .recorded(let rate):
                    samples = rate > 0 ? [Double(benchmark.items) / rate] : []
                    isRecorded = true
                }
                guard let baselineStatistics = Statistics(samples: samples) else { continue }
                let result = BenchmarkResult(
                    group: benchmark.group,
                    name: benchmark.name,
                    items: benchmark.items,
                    statistics: statistics,
                    baselineName: baseline.name,
                    baselineStatistics: baselineStatistics,
                    baselineIsRecorded: isRecorded,
                    target: baseline.target
                )
                report(result)
                results.append(result)
            }
        }
        return results
    }
}
