import DecimalFormatting
import Foundation
import TestSupport
import Testing

/// The one plain-decimal reader (HLS durations and attributes, xAPI played-segments) gives the
/// value the standard library's correctly rounded conversion gives, on every path: 15 digits or
/// fewer, 16 to 19, and longer.
@Suite("Plain decimals are read correctly rounded")
struct PlainDecimalReadingTests {
    /// A random plain decimal of `digits` digits with the point at a random place (or none).
    static func randomDecimal(digits: Int, using generator: inout SplitMix64) -> String {
        var text = (0..<digits).map { _ in String(Int.random(in: 0...9, using: &generator)) }.joined()
        let point = Int.random(in: 0...digits + 1, using: &generator)
        if point <= digits { text.insert(".", at: text.index(text.startIndex, offsetBy: point)) }
        return text == "." ? "0" : text
    }

    @Test(
        "RFC 8216 §4.2 decimal-floating-point: the value Double(_:) gives, seeded",
        arguments: [(1...15, UInt64(1)), (16...19, 2), (20...40, 3)])
    func matchesStandardLibrary(digitCounts: ClosedRange<Int>, seed: UInt64) throws {
        var generator = SplitMix64(seed: seed)
        for _ in 0..<20_000 {
            let text = Self.randomDecimal(
                digits: Int.random(in: digitCounts, using: &generator), using: &generator)
            let expected = try #require(Double(text), "seed \(seed): \(text)")
            #expect(PlainDecimalReading.value(text) == expected, "seed \(seed): \(text)")
        }
    }

    @Test("what plainDecimal writes reads back to the same value, seeded")
    func roundTrip() {
        var generator = SplitMix64(seed: 4)
        for _ in 0..<20_000 {
            let value = Double(
                sign: .plus, exponent: Int.random(in: -30...60, using: &generator),
                significand: Double.random(in: 1..<2, using: &generator))
            #expect(PlainDecimalReading.value(plainDecimal(value)) == value, "\(value)")
        }
    }

    @Test(
        "halfway cases round to even, and 17-digit encoder durations read exactly",
        arguments: [
            "10.007799999999996", "9007199254740993", "9007199254740995", "0.1", "6.006", "1.", ".5",
            "00000000000000000000.5", "4503599627370496.5", "4503599627370497.5",
            "179769313486231570000000000000000000000000000000000000000000000000000000000000000000",
        ])
    func edgeCases(text: String) throws {
        #expect(PlainDecimalReading.value(text) == Double(text))
    }

    @Test(
        "not plain decimals: signs, exponents, spaces, names, nothing, more than one point, infinity",
        arguments: [
            "", ".", "-1", "+1", "1e5", " 1", "1 ", "nan", "inf", "1.2.3", "0x10", String(repeating: "9", count: 400),
        ])
    func rejected(text: String) {
        #expect(PlainDecimalReading.value(text) == nil)
    }
}
