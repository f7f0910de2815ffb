#if canImport(FoundationNetworking)
    import Foundation
    public import FoundationNetworking
#else
    public import Foundation
#endif

extension HTTPURLResponse {
    /// The wait the server asks for before the next request, from its `Retry-After` field
    /// (RFC 9110 §10.2.3), or `nil` when it asks for none or the field cannot be read.
    ///
    /// The field holds either a number of seconds or an HTTP-date. A date is measured against the
    /// response's own `Date` field (RFC 9110 §6.6.1), so the device's clock, which may be wrong,
    /// plays no part; a date without a `Date` field is `nil`. A date in the past is a zero wait.
    ///
    /// - Complexity: O(*n*) in the fields' lengths.
    public var retryAfter: Duration? {
        guard let field = value(forHTTPHeaderField: "Retry-After") else { return nil }
        return retryAfterDelay(field, date: value(forHTTPHeaderField: "Date"))
    }
}

/// The delay a `Retry-After` value asks for, measuring an HTTP-date against `date`, the
/// response's `Date` field.
///
/// - Complexity: O(*n*) in the values' lengths.
package func retryAfterDelay(_ value: String, date: String?) -> Duration? {
    let trimmed = value.trimmingCharacters(in: .whitespaces)
    if !trimmed.isEmpty, trimmed.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
        // delay-seconds = 1*DIGIT; a value too large for an Int64 is as good as for ever.
        return .seconds(Int64(trimmed) ?? Int64.max)
    }
    guard let then = httpDateSeconds(trimmed), let date, let now = httpDateSeconds(date) else { return nil }
    return .seconds(max(then - now, 0))
}

/// Seconds since 1970-01-01T00:00:00Z of an HTTP-date in any of its three forms (RFC 9110
/// §5.6.7): `Sun, 06 Nov 1994 08:49:37 GMT` (IMF-fixdate), `Sunday, 06-Nov-94 08:49:37 GMT`
/// (obsolete RFC 850 form, a two-digit year 70–99 read as 19xx and 00–69 as 20xx) and
/// `Sun Nov  6 08:49:37 1994` (ANSI C's asctime), or `nil` for anything else.
///
/// - Complexity: O(*n*) in the length of `text`.
package func httpDateSeconds(_ text: String) -> Int64? {
    let tokens = text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "-" }).map(String.init)
    let weekdays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    guard let first = tokens.first, weekdays.contains(where: { first.hasPrefix($0) }) else { return nil }
    let day: String
    let month: String
    let year: String
    let time: String
    if tokens.count == 5, months.contains(tokens[1]) {
        (month, day, time, year) = (tokens[1], tokens[2], tokens[3], tokens[4])
    } else if tokens.count == 6, tokens[5] == "GMT" {
        (day, month, year, time) = (tokens[1], tokens[2], tokens[3], tokens[4])
    } else {
        return nil
    }
    guard let monthIndex = months.firstIndex(of: month), let dayNumber = Int64(day), (1...31).contains(dayNumber),
        var yearNumber = Int64(year), year.count == 4 || year.count == 2
    else { return nil }
    if year.count == 2 { yearNumber += yearNumber >= 70 ? 1900 : 2000 }
    let clock = time.split(separator: ":", omittingEmptySubsequences: false).compactMap { Int64($0) }
    guard clock.count == 3, (0...23).contains(clock[0]), (0...59).contains(clock[1]), (0...60).contains(clock[2])
    else { return nil }
    let days = daysSinceEpoch(year: yearNumber, month: Int64(monthIndex) + 1, day: dayNumber)
    return days * 86_400 + clock[0] * 3_600 + clock[1] * 60 + clock[2]
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (Howard Hinnant's
/// `days_from_civil`).
///
/// - Complexity: O(1).
func daysSinceEpoch(year: Int64, month: Int64, day: Int64) -> Int64 {
    let shifted = month <= 2 ? year - 1 : year
    let era = (shifted >= 0 ? shifted : shifted - 399) / 400
    let yearOfEra = shifted - era * 400
    let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
}
