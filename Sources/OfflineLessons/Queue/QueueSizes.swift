import Downloads

/// What each queued lesson counts against the quota, from the evidence the queue has: its
/// estimate, corrected by how far the estimator was off for the lessons of its group already
/// downloaded, and the bytes its download has written so far.
///
/// A `BANDWIDTH` estimate is an upper bound (RFC 8216 §4.3.4.2 makes `BANDWIDTH` the peak rate),
/// and a first segment's size scaled to the whole duration is a guess; both say nothing of the
/// file the remux writes. Lessons of one course are mostly encoded alike, so a downloaded
/// lesson's measured size over its estimator's figure says how far off that figure is for its
/// siblings. The rules:
/// - A downloaded lesson counts nothing here (its file is in the library's bytes).
/// - An exact estimate (byte ranges, a `Content-Length`) and the download's own refined figure
///   count as they are.
/// - A `bandwidth` or `firstSegment` estimate counts at the estimator's figure times the median
///   ratio of measured to estimated among the downloaded lessons of the same group (lessons of
///   no group form one) whose figures had the same basis; as it is when there are none.
/// - A lesson downloading counts at least the bytes written so far.
///
/// The result depends only on the evidence, not on the order it came in: the same lessons
/// downloaded with the same sizes give the same figures.
///
/// - Complexity: O(*n* log *n*) for *n* lessons.
enum QueueSizes {
    /// The bytes each lesson not downloaded counts, by id; a lesson of unknown size is absent.
    ///
    /// - Parameters:
    ///   - lessons: The queue's lessons.
    ///   - states: The library's state of each.
    ///   - estimated: The estimator's own figure of each lesson, kept when its estimate was
    ///     refined since.
    ///   - written: The bytes each download in progress has written.
    static func counted(
        _ lessons: [QueuedLesson], states: [String: OfflineLibrary.ItemState], estimated: [String: DownloadEstimate],
        written: [String: UInt64]
    ) -> [String: UInt64] {
        let ratios = measuredRatios(lessons, states: states, estimated: estimated)
        var counted: [String: UInt64] = [:]
        for lesson in lessons {
            if case .downloaded? = states[lesson.id] { continue }
            var bytes = lesson.estimate?.bytes
            if let estimate = lesson.estimate, let figure = estimate.bytes,
                estimate.basis == .bandwidth || estimate.basis == .firstSegment,
                let ratio = ratios[RatioKey(group: lesson.group, basis: estimate.basis)]
            {
                bytes = saturatingBytes((Double(figure) * ratio).rounded(.up))
            }
            if case .downloading? = states[lesson.id], let done = written[lesson.id] {
                bytes = max(bytes ?? 0, done)
            }
            if let bytes { counted[lesson.id] = bytes }
        }
        return counted
    }

    struct RatioKey: Hashable {
        var group: String?
        var basis: DownloadEstimate.Basis
    }

    /// The median of measured to estimated bytes among each group's downloaded lessons, by the
    /// basis of the estimator's figure.
    static func measuredRatios(
        _ lessons: [QueuedLesson], states: [String: OfflineLibrary.ItemState], estimated: [String: DownloadEstimate]
    ) -> [RatioKey: Double] {
        var samples: [RatioKey: [Double]] = [:]
        for lesson in lessons {
            guard case .downloaded(_, let measured)? = states[lesson.id], measured > 0,
                let figure = estimated[lesson.id] ?? lesson.estimate, let bytes = figure.bytes, bytes > 0,
                figure.basis == .bandwidth || figure.basis == .firstSegment
            else { continue }
            samples[RatioKey(group: lesson.group, basis: figure.basis), default: []].append(
                Double(measured) / Double(bytes))
        }
        return samples.mapValues { values in
            let sorted = values.sorted()
            let middle = sorted.count / 2
            return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        }
    }
}
