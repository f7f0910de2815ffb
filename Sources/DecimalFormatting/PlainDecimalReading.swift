/// Reads plain decimals (`10`, `10.5`, `.5`, `10.`: digits and at most one point, no sign, no
/// exponent), the form `plainDecimal(_:)` writes, correctly rounded: the one reader behind HLS
/// durations and attributes and xAPI `played-segments`. Shared within the package; not public API.
///
/// Most values have at most 15 significant digits: their digits form an integer below 2⁵³, and
/// dividing it by an exact power of ten is a single, correctly rounded operation (Clinger's fast
/// path). Encoders also write 17-digit durations (`10.007799999999996`): up to 19 digits,
/// `roundedQuotient(_:powerOfTen:)` divides exactly in integers. Anything longer goes through
/// the standard library, which rounds correctly too, so every path gives the value `Double(_:)`
/// gives.
package enum PlainDecimalReading {
    /// The value of `digits`, a whole plain decimal, or `nil` when they are not one or when the
    /// value is not finite.
    ///
    /// - Complexity: O(*n*) in the digits.
    @inlinable
    package static func value(_ digits: UnsafeBufferPointer<UInt8>) -> Double? {
        // The common case in one pass: at most 15 digits in all, so the digits form an integer
        // below 10¹⁵ < 2⁵³ and one division by an exact power of ten rounds correctly.
        let scan = scan(from: 0, to: digits.count, in: digits)
        guard scan.stop == digits.count, scan.digitCount > 0 else { return nil }
        return scan.digitCount <= 15 ? scan.value : longValue(digits)
    }

    /// The value of `text`, a whole plain decimal, or `nil` (signs, exponents, `nan`, spaces,
    /// an empty text, or a value too large to be finite).
    ///
    /// - Complexity: O(*n*) in the text's length.
    package static func value(_ text: some StringProtocol) -> Double? {
        if let value = text.utf8.withContiguousStorageIfAvailable({ value($0) }) { return value }
        var copy = String(text)
        return copy.withUTF8 { value($0) }
    }

    /// Digits, then optionally `.` and more digits, read from `start` up to the first other byte
    /// or `end`: where the scan stopped, how many digits it read, and their value when there are
    /// at most 15 of them (meaningless beyond: read those with `value(_:)`).
    ///
    /// A caller that finds the value's end itself (an `EXTINF` duration ends at a comma) reads
    /// the common value in this one pass.
    ///
    /// - Complexity: O(*n*) in the digits.
    @inlinable @inline(__always)
    package static func scan(from start: Int, to end: Int, in bytes: UnsafeBufferPointer<UInt8>) -> (
        stop: Int, digitCount: Int, value: Double
    ) {
        var index = start
        var significand: UInt64 = 0
        while index < end {
            let digit = bytes[index] &- 0x30
            guard digit <= 9 else { break }
            significand = significand &* 10 &+ UInt64(digit)
            index += 1
        }
        let integerDigits = index - start
        var fractionDigits = 0
        if index < end, bytes[index] == UInt8(ascii: ".") {
            index += 1
            let fractionStart = index
            while index < end {
                let digit = bytes[index] &- 0x30
                guard digit <= 9 else { break }
                significand = significand &* 10 &+ UInt64(digit)
                index += 1
            }
            fractionDigits = index - fractionStart
        }
        // Below 10¹⁵ the signed conversion (one instruction) is exact, and one division by an
        // exact power of ten rounds correctly; the caller discards the value beyond.
        let value = Double(Int64(bitPattern: significand)) / exactPowerOfTen(Swift.min(fractionDigits, 15))
        return (index, integerDigits + fractionDigits, value)
    }

    /// 10ⁿ for 0 ≤ *n* ≤ 15, exact, without a lazily initialised table.
    @inlinable @inline(__always)
    package static func exactPowerOfTen(_ exponent: Int) -> Double {
        switch exponent {
        case 0: 1
        case 1: 1e1
        case 2: 1e2
        case 3: 1e3
        case 4: 1e4
        case 5: 1e5
        case 6: 1e6
        case 7: 1e7
        case 8: 1e8
        case 9: 1e9
        case 10: 1e10
        case 11: 1e11
        case 12: 1e12
        case 13: 1e13
        case 14: 1e14
        default: 1e15
        }
    }

    /// `value(_:)` for more than 15 digits (leading zeros
    /// included).
    ///
    /// - Complexity: O(*n*) in the digits.
    @usableFromInline
    package static func longValue(_ digits: UnsafeBufferPointer<UInt8>) -> Double? {
        var significand: UInt64 = 0
        var significantDigits = 0
        var fractionDigits = 0
        var sawDigit = false
        var inFraction = false
        for byte in digits {
            switch byte {
            case 0x30...0x39:
                sawDigit = true
                if significantDigits > 0 || byte != 0x30 { significantDigits += 1 }
                if significantDigits <= 19 { significand = significand &* 10 &+ UInt64(byte - 0x30) }
                if inFraction { fractionDigits += 1 }
            case UInt8(ascii: ".") where !inFraction:
                inFraction = true
            default:
                return nil
            }
        }
        guard sawDigit else { return nil }
        if significantDigits <= 15, fractionDigits <= 22, significand < 1 << 53 {
            return Double(significand) / powersOfTen[fractionDigits]
        }
        if significantDigits <= 19, fractionDigits <= 19,
            let value = roundedQuotient(significand, powerOfTen: fractionDigits)
        {
            return value
        }
        return Double(String(decoding: digits, as: UTF8.self)).flatMap { $0.isFinite ? $0 : nil }
    }

    /// `numerator ÷ 10^exponent`, correctly rounded (to nearest, ties to even), for quotients
    /// below 2⁵²; `nil` otherwise.
    ///
    /// The numerator is shifted left so that the integer quotient has 53 or 54 bits; a 128-by-64
    /// bit division then gives it exactly, with the remainder deciding the rounding.
    ///
    /// - Complexity: O(1).
    package static func roundedQuotient(_ numerator: UInt64, powerOfTen exponent: Int) -> Double? {
        guard exponent >= 0, exponent <= 19 else { return nil }
        if exponent == 0 { return Double(numerator) }  // the conversion rounds correctly
        let divisor = integerPowersOfTen[exponent]
        guard numerator > 0, numerator / divisor < 1 << 52 else { return numerator == 0 ? 0 : nil }
        let numeratorBits = UInt64.bitWidth - numerator.leadingZeroBitCount
        let divisorBits = UInt64.bitWidth - divisor.leadingZeroBitCount
        // numerator × 2^shift ÷ divisor lies in (2⁵², 2⁵⁴); shift is at most 53 + 64 = 117.
        var shift = 53 + divisorBits - numeratorBits
        let high = shift >= 64 ? numerator << (shift - 64) : numerator >> (64 - shift)
        let low = shift >= 64 ? 0 : numerator << shift
        var (quotient, remainder) = divisor.dividingFullWidth((high: high, low: low))
        var roundUp: Bool
        if quotient >= 1 << 53 {
            // One bit too many: the dropped bit is the half, the remainder the sticky rest.
            let half = quotient & 1 == 1
            quotient >>= 1
            shift -= 1
            roundUp = half && (remainder != 0 || quotient & 1 == 1)
        } else {
            let rest = divisor - remainder
            roundUp = remainder > rest || (remainder == rest && quotient & 1 == 1)
        }
        if roundUp { quotient += 1 }
        return Double(sign: .plus, exponent: -shift, significand: Double(quotient))
    }

    /// 10⁰ … 10¹⁹ as integers.
    static let integerPowersOfTen: [UInt64] = (0...19).map { exponent in
        (0..<exponent).reduce(UInt64(1)) { value, _ in value * 10 }
    }

    /// 10⁰ … 10²², all exactly representable.
    static let powersOfTen: [Double] = (0...22).map { exponent in
        (0..<exponent).reduce(1.0) { value, _ in value * 10 }
    }
}
