/// The figures of one benchmark case: MediaCore's side, the baseline's, and their ratio.
public struct BenchmarkResult: Sendable, Codable, Equatable {
    /// The case's group, usually the module.
    public var group: String
    /// The case's name.
    public var name: String
    /// Items processed per run.
    public var items: Int
    /// MediaCore's timing, in seconds per run.
    public var statistics: Statistics
    /// What the baseline is.
    public var baselineName: String
    /// The baseline's timing, in seconds per run.
    public var baselineStatistics: Statistics
    /// Whether the baseline's figure was recorded elsewhere rather than timed in this run.
    public var baselineIsRecorded: Bool
    /// The target speed-up, if the case has one.
    public var target: Benchmark.Target?

    /// Creates a result from both sides' statistics.
    public init(
        group: String,
        name: String,
        items: Int,
        statistics: Statistics,
        baselineName: String,
        baselineStatistics: Statistics,
        baselineIsRecorded: Bool = false,
        target: Benchmark.Target?
    ) {
        self.group = group
        self.name = name
        self.items = items
        self.statistics = statistics
        self.baselineName = baselineName
        self.baselineStatistics = baselineStatistics
        self.baselineIsRecorded = baselineIsRecorded
        self.target = target
    }

    /// Items per second at MediaCore's median time.
    public var itemsPerSecond: Double { Double(items) / statistics.median }

    /// Items per second at the baseline's median time.
    public var baselineItemsPerSecond: Double { Double(items) / baselineStatistics.median }

    /// How many times faster MediaCore is than the baseline, by median (below 1 means slower).
    public var speedup: Double { baselineStatistics.median / statistics.median }

    /// Whether the case meets its target; `nil` when it has none.
    public var meetsTarget: Bool? { target?.isMet(speedup: speedup, itemsPerSecond: itemsPerSecond) }
}
