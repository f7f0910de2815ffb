/// A finite, non-negative `Double` as a plain decimal — digits, at most one point, no exponent —
/// that reads back to the same value: the shortest round-trip form with its exponent expanded.
///
/// Both the xAPI `played-segments` format and HLS durations forbid exponents, yet Swift writes
/// `1.5e+13`. Shared within the package (the HLS writer uses it too); not public API.
///
/// - Returns: `"0"` for zero, negative or non-finite values.
/// - Complexity: O(*d*) in the number of digits written.
package func plainDecimal(_ value: Double) -> String {
    guard value.isFinite, value > 0 else { return "0" }
    let shortest = String(value)
    guard let exponentMark = shortest.firstIndex(of: "e") else {
        return shortest.hasSuffix(".0") ? String(shortest.dropLast(2)) : shortest
    }
    guard let exponent = Int(shortest[shortest.index(after: exponentMark)...]) else { return "0" }
    let mantissa = shortest[..<exponentMark].filter { $0 != "." }
    // The mantissa is d.ddd: the point sits after its first digit, moved by the exponent.
    let pointAfter = 1 + exponent
    if pointAfter <= 0 {
        return "0." + String(repeating: "0", count: -pointAfter) + mantissa
    }
    if pointAfter >= mantissa.count {
        return mantissa + String(repeating: "0", count: pointAfter - mantissa.count)
    }
    let point = mantissa.index(mantissa.startIndex, offsetBy: pointAfter)
    return mantissa[..<point] + "." + mantissa[point...]
}
