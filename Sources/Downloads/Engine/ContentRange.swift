import Foundation

/// A `Content-Range: bytes first-last/total` header (RFC 9110 §14.4): digits only, `first` ≤
/// `last`, and a complete length, when given (not `*`), past `last`.
package struct ContentRange: Equatable {
    package var first: UInt64
    package var last: UInt64
    package var total: UInt64?

    package init?(_ header: String) {
        let trimmed = header.trimmingCharacters(in: .whitespaces)
        // The range unit is case-insensitive (§14.1).
        guard trimmed.utf8.count > 6, trimmed.prefix(6).lowercased() == "bytes " else { return nil }
        let spec = trimmed.dropFirst(6)
        let halves = spec.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard halves.count == 2 else { return nil }
        let bounds = halves[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Self.digits(bounds[0]), let last = Self.digits(bounds[1]), first <= last
        else { return nil }
        self.first = first
        self.last = last
        if halves[1] == "*" {
            total = nil
        } else {
            guard let total = Self.digits(halves[1]), total > last else { return nil }
            self.total = total
        }
    }

    /// A decimal number of digits only (`UInt64.init` would also take a sign).
    package static func digits(_ text: Substring) -> UInt64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return UInt64(text)
    }
}
