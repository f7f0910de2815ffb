import Foundation
import Progress
import TestSupport
import Testing

@Suite("IntervalSet")
struct IntervalSetTests {
    @Test(
        "insertions merge what overlaps or touches, and keep the rest apart",
        arguments: [
            ([0..<10, 10..<20], [0..<20]),
            ([0..<5, 3..<4], [0..<5]),
            ([50..<60, 10..<20, 55..<70], [10..<20, 50..<70]),
            ([0..<10, 20..<30, 5..<25], [0..<30]),
            ([20..<30, 0..<10, 10..<20], [0..<30]),
            ([0..<1, 2..<3, 4..<5, 0.5..<4.5], [0..<5]),
            ([0..<10, 10.5..<20], [0..<10, 10.5..<20]),
            ([5..<5, 6..<6], []),
        ] as [([Range<Double>], [Range<Double>])]
    )
    func merging(inserted: [Range<Double>], expected: [Range<Double>]) {
        var set = IntervalSet()
        for interval in inserted { set.insert(interval) }
        #expect(set.intervals == expected)
        #expect(set.count == expected.count)
        #expect(set.coveredLength == expected.reduce(0) { $0 + $1.upperBound - $1.lowerBound })
    }

    @Test(
        "intervals with a non-finite bound are ignored, never a trap",
        arguments: [
            -Double.infinity..<0, 0..<Double.infinity, -Double.infinity..<Double.infinity,
            Double.greatestFiniteMagnitude..<Double.infinity,
        ]
    )
    func nonFinite(interval: Range<Double>) {
        var set: IntervalSet = [0..<1]
        #expect(set.insert(interval) == 0)
        #expect(set.intervals == [0..<1])
    }

    @Test("insert returns the length newly covered")
    func newlyCovered() {
        var set = IntervalSet()
        #expect(set.insert(0..<10) == 10)
        #expect(set.insert(5..<15) == 5)
        #expect(set.insert(2..<8) == 0)
        #expect(set.insert(20..<30) == 10)
        #expect(set.insert(0..<40) == 15)
    }

    @Test("contains is half-open: the start is in, the end is out")
    func contains() {
        let set: IntervalSet = [0..<10, 20..<30]
        #expect(set.contains(0))
        #expect(set.contains(9.999))
        #expect(!set.contains(10))
        #expect(!set.contains(15))
        #expect(set.contains(20))
        #expect(!set.contains(30))
        #expect(!set.contains(-1))
        #expect(!set.contains(.nan))
    }

    @Test("covered length and gaps within a range")
    func rangeQueries() {
        let set: IntervalSet = [0..<10, 20..<30, 40..<50]
        #expect(set.coveredLength(in: 5..<45) == 5 + 10 + 5)
        #expect(set.coveredLength(in: 10..<20) == 0)
        #expect(set.coveredLength(in: 30..<Double.infinity) == 10)
        #expect(set.gaps(in: 0..<60) == [10..<20, 30..<40, 50..<60])
        #expect(set.gaps(in: 22..<28) == [])
        #expect(set.gaps(in: 12..<18) == [12..<18])
    }

    @Test("union and intersection of two sets")
    func algebra() {
        let a: IntervalSet = [0..<10, 20..<30]
        let b: IntervalSet = [5..<25, 40..<50]
        #expect(a.union(b).intervals == [0..<30, 40..<50])
        #expect(a.intersection(b).intervals == [5..<10, 20..<25])
        var c = a
        c.formUnion(b)
        #expect(c == a.union(b))
        #expect(a.clipped(to: 5..<25).intervals == [5..<10, 20..<25])
    }

    @Test("closing gaps fills only the gaps shorter than the tolerance")
    func closingGaps() {
        let set: IntervalSet = [0..<10, 10.4..<20, 21..<30]
        #expect(set.closingGaps(shorterThan: 0.5).intervals == [0..<20, 21..<30])
        #expect(set.closingGaps(shorterThan: 1).intervals == [0..<20, 21..<30])
        #expect(set.closingGaps(shorterThan: 1.01).intervals == [0..<30])
        #expect(set.closingGaps(shorterThan: 0) == set)
        var tolerant = IntervalSet()
        tolerant.insert(0..<10, mergingGapsShorterThan: 0.5)
        #expect(tolerant.insert(10.25..<20, mergingGapsShorterThan: 0.5) == 10)
        #expect(tolerant.intervals == [0..<20])
    }

    @Test("equal sets are equal and hash equally whatever their insertion order")
    func equality() {
        var forward = IntervalSet()
        var backward = IntervalSet()
        let pieces = (0..<2_000).map { Double($0 * 3)..<Double($0 * 3 + 1) }
        for piece in pieces { forward.insert(piece) }
        for piece in pieces.reversed() { backward.insert(piece) }
        #expect(forward == backward)
        #expect(forward.hashValue == backward.hashValue)
        #expect(forward.count == 2_000)
    }

    @Test("Codable round-trips, and a malformed pair is a decoding error")
    func codable() throws {
        let set: IntervalSet = [0..<12.5, 14..<30]
        let data = try JSONEncoder().encode(set)
        #expect(String(decoding: data, as: UTF8.self) == "[[0,12.5],[14,30]]")
        #expect(try JSONDecoder().decode(IntervalSet.self, from: data) == set)
        #expect(try JSONDecoder().decode(IntervalSet.self, from: Data("[[5,9],[0,6]]".utf8)).intervals == [0..<9])
        for malformed in ["[[5,1]]", "[[1]]", "[[1,2,3]]", "[[1,1]]", "{\"a\":1}"] {
            #expect(throws: DecodingError.self, "\(malformed)") {
                try JSONDecoder().decode(IntervalSet.self, from: Data(malformed.utf8))
            }
        }
    }

    @Test(
        "one insert can merge across many chunks",
        arguments: [(1_000.0..<9_000.0), (0..<30_000), (4_000.5..<4_001.5), (12_000..<13_000)] as [Range<Double>]
    )
    func crossChunkMerge(covering: Range<Double>) {
        var set = IntervalSet()
        var model = ReferenceIntervals()
        // 5,000 disjoint pieces in random order: about ten chunks.
        var generator = SplitMix64(seed: 99)
        for index in (0..<5_000).shuffled(using: &generator) {
            let piece = Double(index * 2)..<Double(index * 2 + 1)
            set.insert(piece)
            model.insert(piece)
        }
        set.insert(covering)
        model.insert(covering)
        #expect(set.intervals == model.merged)
        #expect(abs(set.coveredLength - model.coveredLength) < 1e-9)
        // The structure stays usable after the merge.
        set.insert(20_000..<20_001)
        model.insert(20_000..<20_001)
        #expect(set.intervals == model.merged)
    }

    @Test("copies are independent (value semantics)")
    func valueSemantics() {
        var original: IntervalSet = [0..<10]
        let copy = original
        original.insert(20..<30)
        #expect(copy.intervals == [0..<10])
        #expect(original.intervals == [0..<10, 20..<30])
    }

    /// Random inserts against the sort-and-merge model, for 2,000 seeds; sizes cross the chunk
    /// capacity so that splits and merges across chunks are exercised.
    @Test("matches the reference model on random insert sequences")
    func propertyAgainstReference() {
        for seed in UInt64(0)..<2_000 {
            var generator = SplitMix64(seed: seed)
            var set = IntervalSet()
            var model = ReferenceIntervals()
            let count = Int.random(in: 0..<(seed.isMultiple(of: 50) ? 3_000 : 60), using: &generator)
            let span = seed.isMultiple(of: 50) ? 20_000 : 200
            for _ in 0..<count {
                let interval = generator.gridInterval(span: span)
                set.insert(interval)
                model.insert(interval)
            }
            let expected = model.merged
            #expect(set.intervals == expected, "seed \(seed)")
            #expect(abs(set.coveredLength - model.coveredLength) < 1e-9, "seed \(seed)")
            let probe = Double(Int.random(in: 0..<(span + 20), using: &generator)) / 2
            #expect(set.contains(probe) == expected.contains { $0.contains(probe) }, "seed \(seed)")
        }
    }

    @Test("union and intersection match the reference model")
    func algebraProperties() {
        for seed in UInt64(0)..<1_000 {
            var generator = SplitMix64(seed: seed)
            let a = generator.intervalSet(count: Int.random(in: 0..<40, using: &generator))
            let b = generator.intervalSet(count: Int.random(in: 0..<40, using: &generator))
            var model = ReferenceIntervals()
            for interval in a { model.insert(interval) }
            for interval in b { model.insert(interval) }
            #expect(a.union(b).intervals == model.merged, "seed \(seed)")
            #expect(a.union(b) == b.union(a), "seed \(seed)")
            let intersection = a.intersection(b)
            // Every point of the intersection is in both sets, and its length is |a| + |b| - |a ∪ b|.
            let expectedLength = a.coveredLength + b.coveredLength - model.coveredLength
            #expect(abs(intersection.coveredLength - expectedLength) < 1e-9, "seed \(seed)")
            for interval in intersection {
                let middle = (interval.lowerBound + interval.upperBound) / 2
                #expect(a.contains(middle) && b.contains(middle), "seed \(seed)")
            }
        }
    }

    /// Closing gaps is a closure operator, so it commutes with union: the law progress sync needs.
    @Test("closing gaps is idempotent and commutes with union")
    func closureLaws() {
        for seed in UInt64(0)..<1_000 {
            var generator = SplitMix64(seed: seed)
            let a = generator.intervalSet(count: 20)
            let b = generator.intervalSet(count: 20)
            let tolerance = Double(Int.random(in: 1...4, using: &generator)) / 2
            let closedA = a.closingGaps(shorterThan: tolerance)
            #expect(closedA.closingGaps(shorterThan: tolerance) == closedA, "seed \(seed)")
            #expect(
                closedA.union(b.closingGaps(shorterThan: tolerance)).closingGaps(shorterThan: tolerance)
                    == a.union(b).closingGaps(shorterThan: tolerance),
                "seed \(seed)"
            )
        }
    }

    #if os(Linux)
        /// The standard library's `RangeSet` as an independent implementation (Linux has it
        /// without an availability gate).
        @Test("matches the standard library's RangeSet on random inserts")
        func propertyAgainstRangeSet() {
            for seed in UInt64(0)..<500 {
                var generator = SplitMix64(seed: seed)
                var set = IntervalSet()
                var reference = RangeSet<Double>()
                for _ in 0..<Int.random(in: 0..<80, using: &generator) {
                    let interval = generator.gridInterval()
                    set.insert(interval)
                    reference.insert(contentsOf: interval)
                }
                #expect(set.intervals == Array(reference.ranges), "seed \(seed)")
            }
        }
    #endif
}
