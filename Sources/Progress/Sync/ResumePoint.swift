public import Foundation

/// Where to resume a lesson, stamped with when and on which device it was written.
///
/// Across devices the resume position is a last-writer-wins register: of two points, the one
/// written later wins; equal times are decided by the device identifier and then the position,
/// so every device picks the same winner whatever order it merges in.
public struct ResumePoint: Sendable, Hashable, Codable {
    /// The media time to resume at, in seconds, as the player reported it: finite and never
    /// negative.
    public internal(set) var position: Double
    /// The wall-clock time of the write, in seconds since 1970: the value stored and compared,
    /// so a point read back from disk is equal to the one written. Always finite.
    public internal(set) var secondsSince1970: Double
    /// The device that recorded it.
    public var deviceID: String

    /// The wall-clock time at which the position was recorded.
    public var recordedAt: Date { Date(timeIntervalSince1970: secondsSince1970) }

    /// Creates a resume point, or `nil` when the position is negative or not finite, or the time
    /// is not finite (a player reports NaN while it does not know where it is; such a point would
    /// break the order every device must agree on).
    public init?(position: Double, recordedAt: Date, deviceID: String) {
        let seconds = recordedAt.timeIntervalSince1970
        guard position.isFinite, position >= 0, seconds.isFinite else { return nil }
        self.position = position
        self.secondsSince1970 = seconds
        self.deviceID = deviceID
    }

    /// Whether `self` loses to `other` in the last-writer-wins order.
    ///
    /// - Complexity: O(1) plus the length of the device identifiers on a tie.
    public func isSuperseded(by other: ResumePoint) -> Bool {
        if secondsSince1970 != other.secondsSince1970 { return secondsSince1970 < other.secondsSince1970 }
        if deviceID != other.deviceID { return deviceID < other.deviceID }
        return position < other.position
    }

    /// The winner of two optional points: a point beats no point.
    static func latest(_ lhs: ResumePoint?, _ rhs: ResumePoint?) -> ResumePoint? {
        switch (lhs, rhs) {
        case (let lhs?, let rhs?): lhs.isSuperseded(by: rhs) ? rhs : lhs
        case (let lhs?, nil): lhs
        case (nil, let rhs): rhs
        }
    }

    private enum CodingKeys: String, CodingKey {
        case position
        case recordedAt
        case deviceID
    }

    /// Encodes the point with its time as seconds since 1970, a stable form across platforms.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(position, forKey: .position)
        try container.encode(secondsSince1970, forKey: .recordedAt)
        try container.encode(deviceID, forKey: .deviceID)
    }

    /// Decodes a point written by ``encode(to:)``.
    ///
    /// - Throws: `DecodingError.dataCorrupted` when the position is negative or not finite, or the
    ///   time is not finite.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        position = try container.decode(Double.self, forKey: .position)
        let seconds = try container.decode(Double.self, forKey: .recordedAt)
        deviceID = try container.decode(String.self, forKey: .deviceID)
        guard position.isFinite, position >= 0 else {
            throw DecodingError.dataCorruptedError(
                forKey: .position, in: container, debugDescription: "The resume position is negative or not finite")
        }
        guard seconds.isFinite else {
            throw DecodingError.dataCorruptedError(
                forKey: .recordedAt, in: container, debugDescription: "The resume time is not finite")
        }
        secondsSince1970 = seconds
    }
}
