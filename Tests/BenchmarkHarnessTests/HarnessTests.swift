import BenchmarkHarness
import Testing

@Suite("Benchmark harness")
struct HarnessTests {
    @Test(
        "statistics: median, minimum and nearest-rank p90",
        arguments: [
            ([3.0], 3.0, 3.0, 3.0),
            ([4.0, 1.0], 2.5, 1.0, 4.0),
            ([5.0, 1.0, 3.0], 3.0, 1.0, 5.0),
            ([10.0, 9, 8, 7, 6, 5, 4, 3, 2, 1], 5.5, 1.0, 9.0),
        ]
    )
    func statistics(samples: [Double], median: Double, minimum: Double, p90: Double) throws {
        let statistics = try #require(Statistics(samples: samples))
        #expect(statistics.median == median)
        #expect(statistics.minimum == minimum)
        #expect(statistics.p90 == p90)
        #expect(statistics.count == samples.count)
    }

    @Test("no samples, or a non-finite one, give no statistics")
    func invalidSamples() {
        #expect(Statistics(samples: []) == nil)
        #expect(Statistics(samples: [1, .nan]) == nil)
        #expect(Statistics(samples: [.infinity]) == nil)
    }

    @Test("parses filters and options")
    func parsesOptions() throws {
        let options = try BenchmarkOptions(arguments: [
            "progress", "--quick", "--json", "out.json", "union", "--samples", "7",
        ])
        #expect(options.filters == ["progress", "union"])
        #expect(options.quick)
        #expect(options.jsonPath == "out.json")
        #expect(options.sampleCount == 7)
        #expect(options.selects("Progress/union of two sets"))
        #expect(!options.selects("Gestures/fling"))
        #expect(try BenchmarkOptions(arguments: []).selects("anything"))
        #expect(try BenchmarkOptions(arguments: ["--quick"]).sampleCount == 3)
    }

    @Test(
        "rejects bad arguments with a typed error",
        arguments: [
            (["--fast"], BenchmarkOptions.ParseError.unknownOption("--fast")),
            (["--json"], .missingValue(option: "--json")),
            (["--samples", "zero"], .invalidNumber(option: "--samples", value: "zero")),
            (["--samples", "0"], .invalidNumber(option: "--samples", value: "0")),
        ]
    )
    func rejectsBadArguments(arguments: [String], error: BenchmarkOptions.ParseError) {
        #expect(throws: error) { try BenchmarkOptions(arguments: arguments) }
    }

    @Test("targets compare the measured speed-up")
    func targets() {
        #expect(Benchmark.Target.atLeast(30).isMet(speedup: 31, itemsPerSecond: 0))
        #expect(!Benchmark.Target.atLeast(30).isMet(speedup: 29.9, itemsPerSecond: 1e12))
        #expect(Benchmark.Target.within(3).isMet(speedup: 0.34, itemsPerSecond: 0))
        #expect(!Benchmark.Target.within(3).isMet(speedup: 0.3, itemsPerSecond: 0))
        #expect(Benchmark.Target.itemsPerSecond(30e6).isMet(speedup: 0.1, itemsPerSecond: 31e6))
        #expect(!Benchmark.Target.itemsPerSecond(30e6).isMet(speedup: 100, itemsPerSecond: 29e6))
        #expect(Benchmark.Target.itemsPerSecond(30e6).description == "≥30.0 M items/s")
    }

    /// On a clock that only the body moves, 10 µs per run: the warm-up calibrates five runs
    /// per 50 µs sample, and each sample's time per run is exactly 10 µs.
    @Test("the sampler runs the body repeatedly and reports a time per run")
    func sampler() {
        let clock = StepClock()
        let counter = Counter()
        let samples = Sampler(sampleCount: 4, minimumSampleDuration: .microseconds(50)).measure(on: clock) {
            counter.increment()
            clock.step(by: .microseconds(10))
        }
        #expect(samples.count == 4)
        #expect(samples.allSatisfy { abs($0 - 10e-6) < 1e-12 }, "\(samples)")
        // The warm-up run, then five runs per sample.
        #expect(counter.value == 1 + 4 * 5)
        // The continuous clock's samples are times too.
        #expect(Sampler(sampleCount: 2, minimumSampleDuration: .microseconds(1)).measure {}.allSatisfy { $0 >= 0 })
    }

    @Test(
        "formats times, rates and ratios with three significant digits",
        arguments: [
            (ResultTable.formatTime(0.000_000_123_4), "123 ns"),
            (ResultTable.formatTime(0.001_5), "1.50 ms"),
            (ResultTable.formatTime(2.25), "2.25 s"),
            (ResultTable.formatTime(0.000_045_67), "45.7 µs"),
            (ResultTable.formatRate(12_345_678), "12.3 M"),
            (ResultTable.formatRate(999), "999"),
            (ResultTable.formatRate(999_999), "1.00 M"),
            (ResultTable.formatTime(0.000_999_9), "1.00 ms"),
            (ResultTable.formatRatio(31.42), "31.4×"),
        ]
    )
    func formatting(formatted: String, expected: String) {
        #expect(formatted == expected)
    }

    @Test("the table has a header, a rule and one aligned row per result")
    func table() throws {
        let statistics = try #require(Statistics(samples: [0.001]))
        let baseline = try #require(Statistics(samples: [0.04]))
        let result = BenchmarkResult(
            group: "Progress", name: "ticks", items: 1_000, statistics: statistics,
            baselineName: "RangeSet", baselineStatistics: baseline, target: .atLeast(30))
        #expect(result.speedup == 40)
        #expect(result.meetsTarget == true)
        let lines = ResultTable.render([result]).split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines[0].hasPrefix("benchmark"))
        #expect(lines[2].hasPrefix("Progress/ticks"))
        #expect(lines[2].contains("40.0×"))
        #expect(lines[2].contains("≥30× faster met"))
    }

    @Test("a recorded baseline is never run, and the table says it was recorded")
    func recordedBaseline() throws {
        let benchmark = Benchmark(
            group: "HLS", name: "parse", items: 1_000, setup: { { blackHole(1) } },
            baselines: [
                .recorded(name: "Python", itemsPerSecond: 100, target: .itemsPerSecond(500))
            ])
        let options = try BenchmarkOptions(arguments: ["--samples", "2"])
        let results = BenchmarkRunner(options: options).run([benchmark])
        let result = try #require(results.first)
        #expect(result.baselineIsRecorded)
        #expect(result.baselineStatistics.median == 10)
        #expect(result.baselineItemsPerSecond == 100)
        #expect(result.meetsTarget == (result.itemsPerSecond >= 500))
        let row = ResultTable.render(results).split(separator: "\n")[2]
        #expect(row.contains("(recorded)"))
    }
}

/// A counter a non-`Sendable`-capturing closure can bump.
final class Counter: @unchecked Sendable {
    private(set) var value = 0

    func increment() { value += 1 }
}

/// A clock whose time moves only when ``step(by:)`` is called: what a timed body does.
private final class StepClock: Clock, @unchecked Sendable {
    // `@unchecked`: a test uses it from one thread only.
    private(set) var now = ContinuousClock.Instant.now
    var minimumResolution: Duration { .zero }

    func step(by duration: Duration) {
        now = now.advanced(by: duration)
    }

    func sleep(until deadline: ContinuousClock.Instant, tolerance: Duration?) async throws {
        now = max(now, deadline)
    }
}
