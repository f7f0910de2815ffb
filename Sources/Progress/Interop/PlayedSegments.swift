import DecimalFormatting

/// The xAPI Video Profile's `played-segments` and `progress` formats.
///
/// `played-segments` lists played intervals as `start[.]end`, joined by `[,]`, in seconds:
/// `0[.]12.5[,]14[.]30`. Segments may overlap and come in any order; importing them yields
/// their union. `progress` is the watched fraction with at most three decimals.
public enum PlayedSegments {
    /// Why a `played-segments` string could not be read, and which segment.
    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        /// What was wrong.
        public enum Kind: Hashable, Sendable {
            /// A segment is not two numbers joined by `[.]`.
            case missingSeparator
            /// A bound, quoted here, is not a plain non-negative decimal number.
            case invalidNumber(String)
            /// A segment ends before it starts.
            case reversed
            /// The string has more segments than ``PlayedSegments/maximumSegmentCount``.
            case tooManySegments(count: Int, limit: Int)
        }

        /// What was wrong.
        public var kind: Kind
        /// The segment's index, counted from 0 (`nil` when the whole string is refused).
        public var segment: Int?
        /// The segment as written.
        public var text: String

        /// Creates an error.
        public init(_ kind: Kind, segment: Int?, text: String) {
            self.kind = kind
            self.segment = segment
            self.text = text
        }

        /// A sentence naming the segment (counted from 0) and what is wrong with it.
        public var description: String {
            let place = "Segment \(segment.map(String.init) ?? "?") '\(text)'"
            return switch kind {
            case .missingSeparator: "\(place) is not 'start[.]end'"
            case .invalidNumber(let number): "\(place): '\(number)' is not a non-negative decimal number of seconds"
            case .reversed: "\(place) ends before it starts"
            case .tooManySegments(let count, let limit): "The string has \(count) segments; at most \(limit) are read"
            }
        }
    }

    /// The most segments a string may hold: far beyond any real history, small enough that a
    /// hostile string cannot make the import allocate without bound.
    public static let maximumSegmentCount = 1_000_000

    /// Reads a `played-segments` string into the union of its segments.
    ///
    /// An empty string (nothing played) gives an empty set; a segment with equal bounds adds
    /// nothing. Numbers are plain decimals: no sign, exponent, `nan` or `inf`.
    ///
    /// - Throws: ``ParseError`` naming the first malformed segment.
    /// - Complexity: O(*m* log *m*) for *m* segments.
    public static func parse(_ text: String) throws(ParseError) -> IntervalSet {
        try read(text, dropping: false).segments
    }

    /// What a lenient import kept and how much it dropped.
    public struct LenientImport: Hashable, Sendable {
        /// The union of the well-formed segments.
        public var segments: IntervalSet
        /// How many segments were malformed (not `start[.]end`, a bound that is not a plain
        /// non-negative decimal, or an end before its start) and were dropped.
        public var droppedCount: Int
    }

    /// Reads a `played-segments` string from a real player, dropping the segments that are
    /// malformed or reversed and keeping the rest.
    ///
    /// Players in the field write `30[.]12` when a seek races a report, or a stray `[,]`; a
    /// strict import would lose a learner's whole history to one such segment. ``parse(_:)``
    /// stays the strict reading, for data MediaCore wrote itself.
    ///
    /// - Throws: ``ParseError`` only for a string with more segments than
    ///   ``maximumSegmentCount``, which is refused whole before it is split.
    /// - Complexity: O(*m* log *m*) for *m* segments.
    public static func parseLeniently(_ text: String) throws(ParseError) -> LenientImport {
        try read(text, dropping: true)
    }

    /// Reads `text`; a malformed segment throws, or is counted and skipped when `dropping`.
    private static func read(_ text: String, dropping: Bool) throws(ParseError) -> LenientImport {
        let trimmed = text.trimmingWhitespace()
        guard !trimmed.isEmpty else { return LenientImport(segments: IntervalSet(), droppedCount: 0) }
        // Count before splitting, so a hostile string is refused without a substring per piece.
        let separators = separatorCount(trimmed)
        guard separators < maximumSegmentCount else {
            throw ParseError(
                .tooManySegments(count: separators + 1, limit: maximumSegmentCount), segment: nil, text: "")
        }
        let segments = trimmed.split(separator: "[,]", omittingEmptySubsequences: false)
        var intervals: [Range<Double>] = []
        intervals.reserveCapacity(segments.count)
        var dropped = 0
        for (index, segment) in segments.enumerated() {
            do throws(ParseError) {
                if let interval = try interval(segment, index: index) { intervals.append(interval) }
            } catch {
                guard dropping else { throw error }
                dropped += 1
            }
        }
        return LenientImport(segments: IntervalSet(intervals), droppedCount: dropped)
    }

    /// One segment's interval; `nil` for an empty one (equal bounds).
    private static func interval(_ segment: Substring, index: Int) throws(ParseError) -> Range<Double>? {
        let bounds = segment.split(separator: "[.]", omittingEmptySubsequences: false)
        guard bounds.count == 2 else { throw ParseError(.missingSeparator, segment: index, text: String(segment)) }
        guard let start = decimal(bounds[0]) else {
            throw ParseError(.invalidNumber(String(bounds[0])), segment: index, text: String(segment))
        }
        guard let end = decimal(bounds[1]) else {
            throw ParseError(.invalidNumber(String(bounds[1])), segment: index, text: String(segment))
        }
        guard start <= end else { throw ParseError(.reversed, segment: index, text: String(segment)) }
        return start < end ? start..<end : nil
    }

    /// The occurrences of `[,]` in `text`, counted over its UTF-8 bytes.
    ///
    /// - Complexity: O(*n*), without allocating.
    static func separatorCount(_ text: Substring) -> Int {
        var count = 0
        var matched = 0
        for byte in text.utf8 {
            switch (matched, byte) {
            case (0, UInt8(ascii: "[")), (2, UInt8(ascii: "[")): matched = 1
            case (1, UInt8(ascii: ",")): matched = 2
            case (2, UInt8(ascii: "]")):
                count += 1
                matched = 0
            case (_, UInt8(ascii: "[")): matched = 1
            default: matched = 0
            }
        }
        return count
    }

    /// Writes `set` as a `played-segments` string, each bound rounded to the millisecond.
    ///
    /// Rounding can make an interval empty (shorter than half a millisecond) or make neighbours
    /// touch; those are dropped and joined, so that reading the string back and writing it again
    /// gives the same string.
    ///
    /// - Complexity: O(*n*).
    public static func format(_ set: IntervalSet) -> String {
        var merged: [(lower: Double, upper: Double)] = []
        for interval in set {
            let lower = roundedToMilliseconds(interval.lowerBound)
            let upper = roundedToMilliseconds(interval.upperBound)
            guard lower < upper else { continue }
            if let last = merged.last, lower <= last.upper {
                merged[merged.count - 1].upper = Swift.max(last.upper, upper)
            } else {
                merged.append((lower, upper))
            }
        }
        return merged.map { "\(formatSeconds($0.lower))[.]\(formatSeconds($0.upper))" }.joined(separator: "[,]")
    }

    /// The largest bound written in milliseconds: below 2⁴² seconds a `Double` is finer than a
    /// tenth of a millisecond and `seconds × 1000` is an exact integer plus less than a half, so
    /// writing and reading back lands on the same millisecond. Larger bounds (found by fuzzing:
    /// `4444444444444.445` read back one millisecond off each time) are written exactly.
    static let millisecondLimit = 4e12

    /// `seconds` rounded to the millisecond, as ``formatSeconds(_:)`` writes it.
    static func roundedToMilliseconds(_ seconds: Double) -> Double {
        guard seconds.isFinite else { return 0 }
        guard seconds < millisecondLimit else { return seconds }
        return (Swift.max(seconds, 0) * 1_000).rounded() / 1_000
    }

    /// The xAPI `progress` value for a watched fraction: clamped to 0…1 and truncated (not
    /// rounded) to three decimals, so 99.96% is reported as 0.999, never as a complete 1.0.
    public static func progress(forFraction fraction: Double) -> Double {
        guard fraction.isFinite else { return 0 }
        let clamped = min(max(fraction, 0), 1)
        // The small nudge keeps values such as 0.29 (0.28999… in binary) from truncating to 0.289.
        return ((clamped * 1_000) + 1e-9).rounded(.down) / 1_000
    }

    /// A non-negative seconds value with at most three decimals and no trailing zeros: `12.5`.
    static func formatSeconds(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "0" }
        // Beyond the limit, a plain decimal of the value itself, which reads back exactly (found
        // by fuzzing: past Int64 milliseconds this wrote "0").
        guard seconds < millisecondLimit else { return plainDecimal(seconds) }
        let milliseconds = Int64((max(seconds, 0) * 1_000).rounded())
        let whole = milliseconds / 1_000
        let fraction = milliseconds % 1_000
        guard fraction != 0 else { return String(whole) }
        var digits = String(fraction)
        digits = String(repeating: "0", count: 3 - digits.count) + digits
        while digits.last == "0" { digits.removeLast() }
        return "\(whole).\(digits)"
    }

    /// Parses `digits[.digits]`, or `nil` for anything else (signs, exponents, `nan`, spaces).
    static func decimal(_ text: Substring) -> Double? {
        PlainDecimalReading.value(text)
    }
}

extension String {
    /// The string without leading and trailing spaces, tabs and newlines.
    func trimmingWhitespace() -> Substring {
        guard let start = firstIndex(where: { !$0.isWhitespace }), let end = lastIndex(where: { !$0.isWhitespace })
        else {
            return ""
        }
        return self[start...end]
    }
}
