/// One measured case: MediaCore's way of doing some work and the baseline way of doing the same.
///
/// Each side is a *setup* closure that builds its input outside the timed region and returns
/// the *body* that is timed. The body must pass its result to ``blackHole(_:)``.
public struct Benchmark: Sendable {
    /// The figure a benchmark must reach for the speed-up over its baseline.
    public enum Target: Sendable, Equatable, Codable, CustomStringConvertible {
        /// MediaCore must be at least this many times faster than the baseline.
        case atLeast(Double)
        /// MediaCore may be at most this many times slower than the baseline.
        case within(Double)
        /// MediaCore must process at least this many items per second (an absolute target).
        case itemsPerSecond(Double)

        /// Whether measured figures meet the target: the speed-up (baseline time ÷ MediaCore
        /// time) and MediaCore's items per second.
        public func isMet(speedup: Double, itemsPerSecond: Double) -> Bool {
            switch self {
            case .atLeast(let factor): speedup >= factor
            case .within(let factor): speedup >= 1 / factor
            case .itemsPerSecond(let rate): itemsPerSecond >= rate
            }
        }

        /// The target as a table shows it: `≥30× faster`, `≤3× slower` or `≥30 M items/s`.
        public var description: String {
            switch self {
            case .atLeast(let factor): "≥\(Self.format(factor))× faster"
            case .within(let factor): "≤\(Self.format(factor))× slower"
            case .itemsPerSecond(let rate): "≥\(ResultTable.formatRate(rate)) items/s"
            }
        }

        private static func format(_ factor: Double) -> String {
            factor == factor.rounded() ? String(Int(factor)) : String(factor)
        }
    }

    /// A timed body with the input its setup built.
    public typealias Setup = @Sendable () -> @Sendable () -> Void

    /// A way of doing the same work to compare against, with the target MediaCore must reach.
    ///
    /// A baseline is either timed in the same run (``init(name:target:setup:)``) or, for a figure
    /// that cannot be reproduced without foreign software, a *recorded* rate
    /// (``recorded(name:itemsPerSecond:target:)``) that the table marks as such.
    public struct Baseline: Sendable {
        /// How the baseline's figure is obtained.
        public enum Source: Sendable {
            /// Timed in the same run: builds its input and returns its timed body.
            case timed(Setup)
            /// A rate measured elsewhere and written down, in items per second; never timed.
            case recorded(itemsPerSecond: Double)
        }

        /// What the baseline is.
        public var name: String
        /// Where its figure comes from.
        public var source: Source
        /// The figure MediaCore must reach against it, if any.
        public var target: Target?

        /// Creates a baseline timed in the same run.
        public init(name: String, target: Target? = nil, setup: @escaping Setup) {
            self.name = name
            self.target = target
            self.source = .timed(setup)
        }

        /// Creates a baseline from a rate recorded elsewhere, such as another language's library.
        public static func recorded(name: String, itemsPerSecond: Double, target: Target? = nil) -> Baseline {
            var baseline = Baseline(name: name, target: target, setup: { {} })
            baseline.source = .recorded(itemsPerSecond: itemsPerSecond)
            return baseline
        }
    }

    /// The group the case belongs to, usually the module it measures.
    public var group: String
    /// A short name saying what is measured, with its size.
    public var name: String
    /// How many items one run of the body processes, for the items-per-second column.
    public var items: Int
    /// Builds MediaCore's input and returns the timed body.
    public var setup: Setup
    /// The baselines, each measured in the same run and shown on its own row.
    public var baselines: [Baseline]
    /// The most samples this case takes, for cases that move hundreds of megabytes per run.
    public var maximumSamples: Int?

    /// Creates a benchmark case.
    public init(
        group: String,
        name: String,
        items: Int,
        target: Target? = nil,
        setup: @escaping Setup,
        baselineName: String,
        baseline: @escaping Setup
    ) {
        self.init(
            group: group, name: name, items: items, setup: setup,
            baselines: [Baseline(name: baselineName, target: target, setup: baseline)])
    }

    /// Creates a benchmark case compared with several baselines.
    public init(
        group: String, name: String, items: Int, maximumSamples: Int? = nil, setup: @escaping Setup,
        baselines: [Baseline]
    ) {
        self.group = group
        self.name = name
        self.items = items
        self.maximumSamples = maximumSamples
        self.setup = setup
        self.baselines = baselines
    }

    /// The group and name, as the filter argument matches them: `Progress/sequential ticks`.
    public var qualifiedName: String { "\(group)/\(name)" }
}
