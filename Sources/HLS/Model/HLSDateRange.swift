public import Foundation

/// A date range with its attributes (`#EXT-X-DATERANGE`, RFC 8216bis §4.4.5.1): an ad break,
/// a chapter, a program boundary, anything an app attaches to wall-clock time.
///
/// One tag as written. Several tags with one ``id`` describe one range together (a later tag
/// can add `END-DATE` or `SCTE35-IN`); ``HLSMediaPlaylist/combinedDateRanges`` joins them.
public struct HLSDateRange: Hashable, Sendable {
    /// The tag's attributes, as written (after variable substitution).
    public var attributes: HLSAttributeList

    /// Creates a date range from its attributes.
    public init(attributes: HLSAttributeList) {
        self.attributes = attributes
    }

    /// `ID`: unique within the playlist.
    public var id: String { attributes.quotedString("ID") ?? "" }
    /// `CLASS`: the app-defined kind of range, if given.
    public var rangeClass: String? { attributes.quotedString("CLASS") }
    /// `START-DATE`, parsed (ISO 8601), if given and valid.
    public var startDate: Date? { attributes.quotedString("START-DATE").flatMap(HLSDate.parse) }
    /// `END-DATE`, parsed, if given and valid.
    public var endDate: Date? { attributes.quotedString("END-DATE").flatMap(HLSDate.parse) }
    /// `DURATION` in seconds, if given.
    public var duration: Double? { attributes.decimalFloat("DURATION") }
    /// `PLANNED-DURATION` in seconds, if given.
    public var plannedDuration: Double? { attributes.decimalFloat("PLANNED-DURATION") }
    /// `END-ON-NEXT=YES`: the range ends where the next range of its class starts.
    public var endsOnNext: Bool { attributes.boolean("END-ON-NEXT") ?? false }
    /// `CUE`: when to trigger the range's action (`PRE`, `POST`, `ONCE`), in order.
    public var cue: [String] {
        (attributes.quotedString("CUE") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: " ") }
    }
    /// The `X-` client attributes, in order.
    public var clientAttributes: [HLSAttributeList.Attribute] {
        attributes.attributes.filter { $0.name.hasPrefix("X-") }
    }
    /// `SCTE35-CMD`, as bytes, if given.
    public var scte35Command: [UInt8]? { attributes.hexadecimalSequence("SCTE35-CMD") }
    /// `SCTE35-OUT`, as bytes, if given.
    public var scte35Out: [UInt8]? { attributes.hexadecimalSequence("SCTE35-OUT") }
    /// `SCTE35-IN`, as bytes, if given.
    public var scte35In: [UInt8]? { attributes.hexadecimalSequence("SCTE35-IN") }

    /// The end: `END-DATE`, or `START-DATE` plus `DURATION`; `nil` when neither is known.
    public var end: Date? {
        if let endDate { return endDate }
        guard let startDate, let duration else { return nil }
        return startDate.addingTimeInterval(duration)
    }
}

extension HLSMediaPlaylist {
    /// The date ranges with the tags of each ID joined, in the order each ID first appears:
    /// a later tag adds the attributes the earlier ones lacked (RFC 8216bis §4.4.5.1 requires
    /// the attributes both carry to be equal; the parser ignores a tag that breaks this).
    ///
    /// - Complexity: O(*d* × *a*) for *d* tags of *a* attributes.
    public var combinedDateRanges: [HLSDateRange] {
        var order: [String] = []
        var byID: [String: HLSAttributeList] = [:]
        for range in dateRanges {
            let id = range.id
            guard var combined = byID[id] else {
                order.append(id)
                byID[id] = range.attributes
                continue
            }
            for attribute in range.attributes where !combined.contains(attribute.name) {
                combined.attributes.append(attribute)
            }
            byID[id] = combined
        }
        return order.compactMap { byID[$0].map(HLSDateRange.init(attributes:)) }
    }
}

/// ISO 8601 date-times as HLS writes them (`2010-02-19T14:54:23.031+08:00`), read without a
/// formatter.
enum HLSDate {
    /// The date written in `text` (`YYYY-MM-DDThh:mm:ss[.fraction](Z|±hh:mm|±hhmm|±hh)`), or
    /// `nil` if it is not one.
    ///
    /// - Complexity: O(*n*) in the text's length.
    static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        var index = 0
        func number(_ digits: Int) -> Int? {
            guard index + digits <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[index..<(index + digits)] {
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            index += digits
            return value
        }
        func expect(_ characters: String) -> Bool {
            guard index < bytes.count, characters.utf8.contains(bytes[index]) else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
            expect("Tt "), let hour = number(2), expect(":"), let minute = number(2), expect(":"),
            let second = number(2)
        else { return nil }
        guard (1...12).contains(month), (1...31).contains(day), hour <= 23, minute <= 59, second <= 60 else {
            return nil
        }
        var fraction = 0.0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") || bytes[index] == UInt8(ascii: ",") {
            index += 1
            var scale = 0.1
            let start = index
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
                fraction += Double(bytes[index] - 0x30) * scale
                scale /= 10
                index += 1
            }
            guard index > start else { return nil }
        }
        var offset = 0
        if expect("Zz") {
            offset = 0
        } else if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
            let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard let hours = number(2), hours <= 23 else { return nil }
            var minutes = 0
            if index < bytes.count {
                _ = expect(":")
                guard let value = number(2), value <= 59 else { return nil }
                minutes = value
            }
            offset = sign * (hours * 3600 + minutes * 60)
        } else {
            return nil
        }
        guard index == bytes.count else { return nil }
        let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        guard let utc = utcCalendar.date(from: components) else { return nil }
        return utc.addingTimeInterval(Double(-offset) + fraction)
    }

    /// The Gregorian calendar in UTC, which turns the date's fields into an instant.
    static let utcCalendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0) ?? calendar.timeZone
        return calendar
    }()
}
