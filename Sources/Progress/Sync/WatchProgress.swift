public import Foundation

/// What one learner has watched of one lesson: the state an app stores and syncs.
///
/// The state is a join-semilattice (a state-based CRDT), so devices can exchange it in any order,
/// any number of times, and agree:
///
/// | part | merge |
/// |---|---|
/// | ``watched`` intervals | union |
/// | ``isCompleted`` | logical or (completion is latched) |
/// | ``resumePoint`` | last writer wins, by wall-clock time, then device |
/// | ``duration`` | the larger known duration |
/// | ``timeSpentByDevice`` | per device, the larger count (a grow-only counter) |
///
/// ``merge(_:)`` is commutative, associative and idempotent.
///
/// Intervals are stored raw, in media seconds; they are clipped to `[0, duration]` only when a
/// figure is computed, so a later duration change re-clips correctly. ``watchedFraction`` is
/// O(1) to read: the clipped coverage is kept up to date by every change.
public struct WatchProgress: Sendable {
    /// The media time watched, as disjoint intervals in seconds.
    public private(set) var watched: IntervalSet
    /// The media's duration in seconds, or `nil` while unknown or for a live stream.
    public private(set) var duration: Double?
    /// Whether the lesson has been completed; once true, it stays true.
    public private(set) var isCompleted: Bool
    /// Where to resume, with who wrote it and when.
    public private(set) var resumePoint: ResumePoint?
    /// Wall-clock seconds spent in the lesson, pauses included, per device.
    public private(set) var timeSpentByDevice: [String: Double]
    /// The part of ``watched`` inside `[0, duration]`, cached for O(1) reads.
    private var coveredWithinDuration: Double

    /// Creates empty progress for media of the given duration.
    ///
    /// - Parameter duration: The duration in seconds; `nil`, a non-finite or a non-positive value
    ///   means unknown.
    public init(duration: Double? = nil) {
        watched = IntervalSet()
        self.duration = Self.validDuration(duration)
        isCompleted = false
        resumePoint = nil
        timeSpentByDevice = [:]
        coveredWithinDuration = 0
    }

    /// Creates progress from its parts, as a store or a server holds them.
    public init(
        watched: IntervalSet,
        duration: Double?,
        isCompleted: Bool = false,
        resumePoint: ResumePoint? = nil,
        timeSpentByDevice: [String: Double] = [:]
    ) {
        // Negative media time is clamped to 0 on every path in, so it is clipped away here too.
        self.watched = (watched.first?.lowerBound ?? 0) < 0 ? watched.clipped(to: 0..<Double.infinity) : watched
        self.duration = Self.validDuration(duration)
        self.isCompleted = isCompleted
        self.resumePoint = resumePoint
        self.timeSpentByDevice = timeSpentByDevice.filter { $0.value.isFinite && $0.value > 0 }
        coveredWithinDuration = 0
        recomputeCoveredWithinDuration()
    }

    static func validDuration(_ duration: Double?) -> Double? {
        guard let duration, duration.isFinite, duration > 0 else { return nil }
        return duration
    }

    // MARK: Figures

    /// The seconds of media watched: inside `[0, duration]` when the duration is known, all of
    /// them otherwise.
    ///
    /// - Complexity: O(1).
    public var watchedSeconds: Double {
        duration == nil ? watched.coveredLength : coveredWithinDuration
    }

    /// The fraction of the media watched, 0…1, or `nil` when the duration is unknown or live.
    ///
    /// - Complexity: O(1).
    public var watchedFraction: Double? {
        guard let duration else { return nil }
        return min(max(coveredWithinDuration / duration, 0), 1)
    }

    /// The position to resume at, clamped to `[0, duration]` when the duration is known.
    public var resumePosition: Double? {
        guard let position = resumePoint?.position else { return nil }
        guard let duration else { return max(position, 0) }
        return min(max(position, 0), duration)
    }

    /// Wall-clock time spent in the lesson on every device together, pauses included.
    public var timeSpent: Duration {
        .seconds(timeSpentByDevice.values.reduce(0, +))
    }

    /// The parts of the media not yet watched, within `[0, duration]`; empty while the duration
    /// is unknown.
    ///
    /// - Complexity: O(log *n* + *k*) for the *k* intervals inside the media.
    public var unwatchedSpans: [Range<Double>] {
        guard let duration else { return [] }
        return watched.gaps(in: 0..<duration)
    }

    // MARK: Recording

    /// Records `interval` as watched.
    ///
    /// - Parameters:
    ///   - interval: The media time played, in seconds. An interval with a non-finite bound or
    ///     no length is ignored; a negative start counts from 0.
    ///   - tolerance: Gaps shorter than this many seconds next to the interval are filled too.
    /// - Returns: The seconds newly covered, clipped to the media when its duration is known.
    /// - Complexity: As ``IntervalSet/insert(_:mergingGapsShorterThan:)``, plus
    ///   O(log *n* + *k*) for the *k* intervals past the end when the interval reaches past it.
    @discardableResult
    public mutating func recordWatched(_ interval: Range<Double>, mergingGapsShorterThan tolerance: Double = 0)
        -> Double
    {
        guard interval.lowerBound.isFinite, interval.upperBound.isFinite else { return 0 }
        let lower = max(interval.lowerBound, 0)
        guard lower < interval.upperBound else { return 0 }
        let added = watched.insert(lower..<interval.upperBound, mergingGapsShorterThan: tolerance)
        guard let duration else { return added }
        if interval.upperBound <= duration && !(tolerance > 0) {
            // Everything newly covered lies inside the interval, hence inside the media.
            coveredWithinDuration += added
            return added
        }
        let before = coveredWithinDuration
        recomputeCoveredWithinDuration()
        return coveredWithinDuration - before
    }

    /// Sets the media's duration; `nil`, a non-finite or a non-positive value means unknown.
    ///
    /// - Complexity: O(log *n* + *k*) for the *k* intervals past the new end.
    public mutating func setDuration(_ newDuration: Double?) {
        duration = Self.validDuration(newDuration)
        recomputeCoveredWithinDuration()
    }

    /// Records a resume position written on `deviceID` at `time`.
    ///
    /// A local write always replaces the current point: if the current point carries a later
    /// time (a remote clock ahead of this one), the new point takes that time, so the newest
    /// local action is not lost to clock skew. A position or time that is not finite is ignored.
    public mutating func recordResumePosition(_ position: Double, at time: Date, deviceID: String) {
        guard position.isFinite,
            var point = ResumePoint(position: max(position, 0), recordedAt: time, deviceID: deviceID)
        else { return }
        if let current = resumePoint, current.secondsSince1970 > point.secondsSince1970 {
            point.secondsSince1970 = current.secondsSince1970
        }
        resumePoint = point
    }

    /// Adds wall-clock seconds spent on `deviceID`; non-finite or negative amounts are ignored.
    public mutating func addTimeSpent(_ seconds: Double, deviceID: String) {
        guard seconds.isFinite, seconds > 0 else { return }
        timeSpentByDevice[deviceID, default: 0] += seconds
    }

    /// Latches completion when the watched fraction reaches `threshold`.
    ///
    /// The comparison allows 1e-9 of floating-point accumulation error, so a threshold of 1.0 is
    /// reachable by summing many small intervals. With an unknown duration nothing changes.
    ///
    /// - Returns: Whether this call completed the lesson (it was not complete before).
    @discardableResult
    public mutating func markCompletedIfReached(threshold: Double) -> Bool {
        guard !isCompleted, let fraction = watchedFraction, fraction >= threshold - 1e-9 else { return false }
        isCompleted = true
        return true
    }

    /// Marks the lesson completed, whatever was watched (for example when the learner says so).
    public mutating func markCompleted() {
        isCompleted = true
    }

    // MARK: Merging

    /// Merges another device's progress into this one.
    ///
    /// - Complexity: O(*n* + *m*) for the two interval counts.
    public mutating func merge(_ other: WatchProgress) {
        self = merged(with: other)
    }

    /// The join of this progress and `other`: see the table in the type's discussion.
    ///
    /// - Complexity: O(*n* + *m*) for the two interval counts.
    public func merged(with other: WatchProgress) -> WatchProgress {
        let duration: Double? =
            switch (self.duration, other.duration) {
            case (let lhs?, let rhs?): max(lhs, rhs)
            case (let lhs, let rhs): lhs ?? rhs
            }
        return WatchProgress(
            watched: watched.union(other.watched),
            duration: duration,
            isCompleted: isCompleted || other.isCompleted,
            resumePoint: ResumePoint.latest(resumePoint, other.resumePoint),
            timeSpentByDevice: timeSpentByDevice.merging(other.timeSpentByDevice, uniquingKeysWith: max)
        )
    }

    /// This progress with every watched gap shorter than `tolerance` filled.
    ///
    /// - Complexity: O(*n*).
    public func closingGaps(shorterThan tolerance: Double) -> WatchProgress {
        var copy = self
        copy.watched = watched.closingGaps(shorterThan: tolerance)
        copy.recomputeCoveredWithinDuration()
        return copy
    }

    private mutating func recomputeCoveredWithinDuration() {
        guard let duration else {
            coveredWithinDuration = watched.coveredLength
            return
        }
        // Intervals never start below 0, so only the part past the end needs removing.
        coveredWithinDuration = watched.coveredLength - watched.coveredLength(in: duration..<Double.infinity)
    }
}

extension WatchProgress: Hashable {
    /// Whether two progress states hold the same data (the cached figure is derived, not compared).
    public static func == (lhs: WatchProgress, rhs: WatchProgress) -> Bool {
        lhs.watched == rhs.watched && lhs.duration == rhs.duration && lhs.isCompleted == rhs.isCompleted
            && lhs.resumePoint == rhs.resumePoint && lhs.timeSpentByDevice == rhs.timeSpentByDevice
    }

    /// Hashes the same parts that ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(watched)
        hasher.combine(duration)
        hasher.combine(isCompleted)
        hasher.combine(resumePoint)
        hasher.combine(timeSpentByDevice)
    }
}
