import Progress
import TestSupport
import Testing

@Suite("xAPI played-segments")
struct PlayedSegmentsTests {
    @Test(
        "parses segments into their union",
        arguments: [
            ("0[.]12.5[,]14[.]30", [0..<12.5, 14..<30]),
            ("0.000[.]12.000[,]14.000[.]21.000[,]18.000[.]30.000", [0..<12, 14..<30]),
            ("14[.]30[,]0[.]14", [0..<30]),
            ("5[.]5", []),
            ("", []),
            ("  3[.]4\n", [3..<4]),
        ] as [(String, [Range<Double>])]
    )
    func parses(text: String, expected: [Range<Double>]) throws {
        #expect(try PlayedSegments.parse(text).intervals == expected)
    }

    @Test(
        "a malformed string names the offending segment",
        arguments: [
            ("0[.]5[,]7", PlayedSegments.ParseError(.missingSeparator, segment: 1, text: "7")),
            ("0[.]5[,]", .init(.missingSeparator, segment: 1, text: "")),
            ("0[.]5[.]9", .init(.missingSeparator, segment: 0, text: "0[.]5[.]9")),
            ("-1[.]5", .init(.invalidNumber("-1"), segment: 0, text: "-1[.]5")),
            ("0[.]nan", .init(.invalidNumber("nan"), segment: 0, text: "0[.]nan")),
            ("0[.]inf", .init(.invalidNumber("inf"), segment: 0, text: "0[.]inf")),
            ("0[.]1e3", .init(.invalidNumber("1e3"), segment: 0, text: "0[.]1e3")),
            ("0[.]1.2.3", .init(.invalidNumber("1.2.3"), segment: 0, text: "0[.]1.2.3")),
            ("0[.] 5", .init(.invalidNumber(" 5"), segment: 0, text: "0[.] 5")),
            ("1[.]2[,]9[.]3", .init(.reversed, segment: 1, text: "9[.]3")),
            ("[.]", .init(.invalidNumber(""), segment: 0, text: "[.]")),
        ]
    )
    func rejects(text: String, error: PlayedSegments.ParseError) {
        #expect(throws: error) { try PlayedSegments.parse(text) }
        #expect(!error.description.isEmpty)
    }

    @Test(
        "lenient import keeps the well-formed segments and counts the dropped ones",
        arguments: [
            ("0[.]5[,]30[.]12[,]40[.]50", [0..<5, 40..<50], 1),
            ("0[.]5[,][,]7[.]9", [0..<5, 7..<9], 1),
            ("abc[,]1[.]2[,]3[.]nan[,]4[.]5[.]6", [1..<2], 3),
            ("0[.]5[,]5[.]10", [0..<10], 0),
            ("", [], 0),
            ("garbage", [], 1),
        ] as [(String, [Range<Double>], Int)]
    )
    func lenient(text: String, kept: [Range<Double>], dropped: Int) throws {
        let result = try PlayedSegments.parseLeniently(text)
        #expect(result.segments.intervals == kept)
        #expect(result.droppedCount == dropped)
        // Strict reading refuses the same string whenever something was dropped.
        if dropped > 0 {
            #expect(throws: PlayedSegments.ParseError.self) { try PlayedSegments.parse(text) }
        } else {
            #expect(try PlayedSegments.parse(text) == result.segments)
        }
    }

    @Test("lenient import still refuses more segments than the limit, before splitting")
    func lenientLimit() {
        let text = String(repeating: "1[.]2[,]", count: PlayedSegments.maximumSegmentCount)
        #expect(throws: PlayedSegments.ParseError.self) { try PlayedSegments.parseLeniently(text) }
    }

    @Test("more segments than the limit are refused before any is split off; the limit itself parses")
    func segmentLimit() throws {
        let limit = PlayedSegments.maximumSegmentCount
        let atLimit = "0[.]1" + String(repeating: "[,]1[.]2", count: limit - 1)
        #expect(try PlayedSegments.parse(atLimit).intervals == [0..<2])
        #expect(
            throws: PlayedSegments.ParseError(.tooManySegments(count: limit + 1, limit: limit), segment: nil, text: "")
        ) {
            try PlayedSegments.parse(atLimit + "[,]2[.]3")
        }
    }

    @Test("formats with at most three decimals, and parse ∘ format is the identity on milliseconds")
    func roundTrip() throws {
        #expect(PlayedSegments.format([0..<12.5, 14..<30]) == "0[.]12.5[,]14[.]30")
        #expect(PlayedSegments.format([0.0004..<1.2345]) == "0[.]1.235")
        #expect(PlayedSegments.format([]) == "")
        // Found by fuzzing: bounds beyond Int64 milliseconds were written as "0".
        let far = try PlayedSegments.parse("0[.]15111111111111[,]2[.]3")
        #expect(PlayedSegments.format(far) == "0[.]15111111111111")
        // Found by fuzzing: an interval shorter than half a millisecond was written as "0[.]0",
        // and neighbours that touch once rounded must be one segment.
        #expect(PlayedSegments.format([0..<0.000_000_000_5]) == "")
        #expect(PlayedSegments.format([0..<1.0004, 1.0006..<2]) == "0[.]1[,]1.001[.]2")
        #expect(PlayedSegments.format([0..<1.0004, 1.0004001..<2]) == "0[.]2")
        // Found by fuzzing: near 2⁴² seconds a bound read back one millisecond off, so the
        // format drifted with every round trip; it is now a fixed point.
        let drifting = PlayedSegments.format(try PlayedSegments.parse("0[.]4444444444444.445[,]15[.]30"))
        #expect(PlayedSegments.format(try PlayedSegments.parse(drifting)) == drifting)
        for bound in [4e12 - 0.001, 4e12, 4.398e12, 8.9e12] {
            let once = PlayedSegments.format([0..<bound])
            #expect(PlayedSegments.format(try PlayedSegments.parse(once)) == once, "\(bound): \(once)")
        }
        let huge: IntervalSet = [1e20..<1e300]
        #expect(try PlayedSegments.parse(PlayedSegments.format(huge)) == huge)
        for seed in UInt64(0)..<1_000 {
            var generator = SplitMix64(seed: seed)
            var set = IntervalSet()
            for _ in 0..<Int.random(in: 0..<20, using: &generator) {
                let start = Int.random(in: 0..<100_000, using: &generator)
                let length = Int.random(in: 1..<5_000, using: &generator)
                set.insert(Double(start) / 1_000..<Double(start + length) / 1_000)
            }
            let text = PlayedSegments.format(set)
            #expect(try PlayedSegments.parse(text) == set, "seed \(seed): \(text)")
        }
    }

    /// Any set, at any resolution (1,000 seeds): writing is stable under reading back.
    @Test("format ∘ parse ∘ format == format for sets below millisecond resolution")
    func formatIsStable() throws {
        for seed in UInt64(0)..<1_000 {
            var generator = SplitMix64(seed: seed)
            var set = IntervalSet()
            for _ in 0..<Int.random(in: 0..<20, using: &generator) {
                let start = Double.random(in: 0..<2, using: &generator)
                set.insert(start..<start + Double.random(in: 0.000_01..<0.003, using: &generator))
            }
            let text = PlayedSegments.format(set)
            #expect(try PlayedSegments.format(PlayedSegments.parse(text)) == text, "seed \(seed): \(text)")
        }
    }

    @Test(
        "progress is truncated to three decimals and clamped",
        arguments: [
            (1.0 / 3, 0.333), (0.9996, 0.999), (1, 1), (0.29, 0.29), (1.5, 1), (-0.2, 0), (Double.nan, 0),
        ] as [(Double, Double)]
    )
    func progress(fraction: Double, expected: Double) {
        #expect(PlayedSegments.progress(forFraction: fraction) == expected)
    }
}
