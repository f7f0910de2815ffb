/// Formats benchmark results as a plain-text table that reads well in a terminal and a CI log.
public enum ResultTable {
    /// The column titles, in order.
    static let headers = [
        "benchmark", "median", "min", "p90", "items/s", "baseline", "baseline median", "baseline items/s",
        "speed-up", "target",
    ]

    /// Renders `results` as an aligned table with a header and a rule under it.
    ///
    /// - Complexity: O(*n*) in the number of results.
    public static func render(_ results: [BenchmarkResult]) -> String {
        let rows = results.map { result -> [String] in
            [
                result.group + "/" + result.name,
                formatTime(result.statistics.median),
                formatTime(result.statistics.minimum),
                formatTime(result.statistics.p90),
                formatRate(result.itemsPerSecond),
                result.baselineName,
                result.baselineIsRecorded ? "(recorded)" : formatTime(result.baselineStatistics.median),
                formatRate(result.baselineItemsPerSecond),
                formatRatio(result.speedup),
                result.target.map { target in
                    "\(target) " + (result.meetsTarget == true ? "met" : "MISSED")
                } ?? "-",
            ]
        }
        let all = [headers] + rows
        let widths = headers.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            zip(cells, widths).map { cell, width in
                cell + String(repeating: " ", count: width - cell.count)
            }
            .joined(separator: "  ")
            .trimmingTrailingSpaces()
        }
        let rule = widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")
        return ([line(headers), rule] + rows.map(line)).joined(separator: "\n")
    }

    /// A duration in seconds with a unit that keeps three significant digits: `1.23 ms`.
    public static func formatTime(_ seconds: Double) -> String {
        switch seconds {
        case ..<999.5e-9: significant(seconds * 1e9) + " ns"
        case ..<999.5e-6: significant(seconds * 1e6) + " µs"
        case ..<0.9995: significant(seconds * 1e3) + " ms"
        default: significant(seconds) + " s"
        }
    }

    /// A rate with an SI suffix: `12.3 M`.
    public static func formatRate(_ perSecond: Double) -> String {
        // Thresholds just below each power, so 999,999 reads "1.00 M" rather than "1000 k".
        switch perSecond {
        case 999.5e6...: significant(perSecond / 1e9) + " G"
        case 999.5e3...: significant(perSecond / 1e6) + " M"
        case 999.5...: significant(perSecond / 1e3) + " k"
        default: significant(perSecond)
        }
    }

    /// A speed-up factor: `31.4×`.
    public static func formatRatio(_ ratio: Double) -> String {
        significant(ratio) + "×"
    }

    /// `value` with three significant digits, without exponent notation.
    static func significant(_ value: Double) -> String {
        guard value.isFinite else { return String(value) }
        let magnitude = abs(value)
        let decimals = magnitude >= 100 ? 0 : magnitude >= 10 ? 1 : 2
        var scaled = (value * pow10(decimals)).rounded() / pow10(decimals)
        if scaled == 0 { scaled = 0 }  // no "-0"
        var text = String(scaled)
        if decimals == 0, text.hasSuffix(".0") { text.removeLast(2) }
        if let dot = text.firstIndex(of: ".") {
            let fraction = text.distance(from: dot, to: text.endIndex) - 1
            if fraction < decimals { text += String(repeating: "0", count: decimals - fraction) }
        }
        return text
    }

    private static func pow10(_ exponent: Int) -> Double {
        (0..<exponent).reduce(1) { value, _ in value * 10 }
    }
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var copy = self
        while copy.last == " " { copy.removeLast() }
        return copy
    }
}
