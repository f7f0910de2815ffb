/// A set of media times stored as disjoint, sorted, half-open intervals, in seconds.
///
/// Inserting an interval merges it with every interval it overlaps or touches, so
/// `[0, 10)` and `[10, 20)` become `[0, 20)`. The covered length is kept up to date on every
/// change, so reading it is O(1).
///
/// <!-- example: interval-set -->
/// ```swift
/// var watched = IntervalSet()
/// watched.insert(0..<10)
/// watched.insert(90..<100)
/// watched.insert(5..<15)
/// let intervals = watched.intervals  // [0.0..<15.0, 90.0..<100.0]
/// let covered = watched.coveredLength  // 25.0
/// ```
///
/// Intervals with a non-finite bound, or with no length, are ignored: media time is always finite,
/// and a `Range<Double>` built from a NaN would have trapped before it got here.
///
/// ## Storage and complexity
///
/// The intervals live in sorted chunks of at most ``chunkCapacity`` intervals. Finding where an
/// interval goes is a binary search over the chunks and then within one chunk; inserting moves at
/// most one chunk's elements. So:
///
/// - Inserting next to the most recently inserted interval, or after the last one (ordinary
///   playback), is amortized O(1).
/// - Any other insert is O(log *n* + *B*) plus O(*k*) for the *k* intervals it merges, where *B*
///   is the chunk capacity (a constant). A chunk that fills up splits in two, which shifts the
///   chunk list: O(*n* / *B*) once per *B* / 2 inserts, so amortized O(*n* / *B*²), less than one
///   element move per insert below a hundred million intervals.
///
/// A fragmented history of 100,000 pieces inserted in random order therefore stays close to the
/// cost of sorting them, where a single sorted array would move half of it on every insert.
public struct IntervalSet: Sendable {
    /// The most intervals one chunk holds before it splits.
    public static let chunkCapacity = 128

    /// One stored interval's bounds.
    @usableFromInline
    struct Bound: Sendable {
        @usableFromInline var start: Double
        @usableFromInline var end: Double

        @inlinable
        init(start: Double, end: Double) {
            self.start = start
            self.end = end
        }
    }

    @usableFromInline
    struct Chunk: Sendable {
        /// The intervals, in order; each start beside its end, so that an insert moves one array
        /// and a search step reads one place.
        @usableFromInline var bounds: [Bound]
        /// The last interval's end, kept beside the array so that the search over chunks reads
        /// the chunk list alone, not each chunk's storage.
        @usableFromInline var lastEnd: Double

        @inlinable
        init(bounds: [Bound]) {
            self.bounds = bounds
            lastEnd = bounds.last?.end ?? 0
        }

        /// Sets the end of the interval at `index`, in one access to the chunk.
        @inlinable
        mutating func setEnd(_ end: Double, at index: Int) {
            bounds[index].end = end
            if index == bounds.count - 1 { lastEnd = end }
        }

        /// Brings the last interval's end up to date after a change of the array.
        @inlinable
        mutating func refresh() {
            lastEnd = bounds.last?.end ?? 0
        }
    }

    /// A position of an interval: its chunk and its index inside the chunk.
    @usableFromInline
    struct Position: Equatable, Sendable {
        @usableFromInline var chunk: Int
        @usableFromInline var index: Int

        @inlinable
        init(chunk: Int, index: Int) {
            self.chunk = chunk
            self.index = index
        }
    }

    /// Non-empty chunks, in order; every interval of a chunk ends before the next chunk starts.
    @usableFromInline var chunks: [Chunk]
    /// The number of intervals.
    @usableFromInline var storedCount: Int
    /// The covered length, summed with compensation so that long histories do not drift.
    @usableFromInline var length: CompensatedSum
    /// Where the last insert landed: the next insert usually extends that interval.
    @usableFromInline var recent: Position?
    /// The bounds of the interval at `recent` and the start of the one after it (infinity when
    /// none), cached so that ordinary playback never reads through the chunks. With no recent
    /// interval, `recentStart` is infinity and the fast path never applies.
    @usableFromInline var recentStart: Double
    @usableFromInline var recentEnd: Double
    @usableFromInline var recentLimit: Double

    /// Creates an empty set.
    @inlinable
    public init() {
        chunks = []
        storedCount = 0
        length = CompensatedSum()
        recent = nil
        recentStart = .infinity
        recentEnd = .infinity
        recentLimit = .infinity
    }

    /// Creates a set covering the union of `intervals`, which may overlap and come in any order.
    ///
    /// - Complexity: O(*m* log *m*) for *m* intervals: they are sorted, then merged in one pass.
    public init(_ intervals: some Sequence<Range<Double>>) {
        self.init()
        let sorted = intervals.filter(Self.isStorable).sorted { $0.lowerBound < $1.lowerBound }
        for interval in sorted {
            insert(interval)
        }
    }

    /// The number of disjoint intervals.
    ///
    /// - Complexity: O(1).
    @inlinable
    public var count: Int { storedCount }

    /// Whether the set covers nothing.
    ///
    /// - Complexity: O(1).
    @inlinable
    public var isEmpty: Bool { storedCount == 0 }

    /// The total length the intervals cover, in seconds.
    ///
    /// - Complexity: O(1): maintained by every change.
    @inlinable
    public var coveredLength: Double { length.value }

    /// The intervals, in increasing order.
    ///
    /// - Complexity: O(*n*).
    public var intervals: [Range<Double>] { Array(self) }

    /// The first interval, if any.
    public var first: Range<Double>? {
        guard let chunk = chunks.first else { return nil }
        return chunk.bounds[0].start..<chunk.bounds[0].end
    }

    /// The last interval, if any.
    public var last: Range<Double>? {
        guard let bound = chunks.last?.bounds.last else { return nil }
        return bound.start..<bound.end
    }

    /// Whether an interval can be stored: finite bounds and a positive length.
    @inlinable
    static func isStorable(_ interval: Range<Double>) -> Bool {
        interval.lowerBound.isFinite && interval.upperBound.isFinite && interval.lowerBound < interval.upperBound
    }

    // MARK: Inserting

    /// Adds `interval` to the set, merging it with the intervals it overlaps or touches.
    ///
    /// - Parameter interval: The interval to add. An interval with a non-finite bound or no
    ///   length is ignored.
    /// - Returns: The length that was not covered before, in seconds.
    /// - Complexity: Amortized O(1) next to the most recent insert or after the last interval;
    ///   otherwise O(log *n* + *B*) plus the intervals merged. See the type's discussion.
    @inlinable
    @discardableResult
    public mutating func insert(_ interval: Range<Double>) -> Double {
        insert(interval, mergingGapsShorterThan: 0)
    }

    /// Adds `interval`, also merging it with neighbours less than `tolerance` seconds away.
    ///
    /// Inserting into a set that is closed under the same tolerance (see
    /// ``closingGaps(shorterThan:)``) keeps it closed, so a tracker that always inserts this way
    /// never stores a gap shorter than `tolerance`.
    ///
    /// - Returns: The length newly covered, counting any gap filled by the merge.
    /// - Complexity: As ``insert(_:)``.
    @inlinable
    @discardableResult
    public mutating func insert(_ interval: Range<Double>, mergingGapsShorterThan tolerance: Double) -> Double {
        guard Self.isStorable(interval) else { return 0 }
        let tolerance = tolerance.isFinite && tolerance > 0 ? tolerance : 0
        let lower = interval.lowerBound
        let upper = interval.upperBound
        if let added = extendRecent(lower: lower, upper: upper, tolerance: tolerance) {
            return added
        }
        if let added = appendAfterLast(lower: lower, upper: upper, tolerance: tolerance) {
            return added
        }
        return insertSlowly(lower: lower, upper: upper, tolerance: tolerance)
    }

    /// Whether a gap of `gap` seconds between two intervals is closed by a merge.
    @inlinable
    static func joins(gap: Double, tolerance: Double) -> Bool {
        gap <= 0 || gap < tolerance
    }

    /// Extends the most recent interval when the new one starts inside it (or within the
    /// tolerance after it) and does not reach the next interval; `nil` when that does not apply.
    @inlinable
    mutating func extendRecent(lower: Double, upper: Double, tolerance: Double) -> Double? {
        guard lower >= recentStart, Self.joins(gap: lower - recentEnd, tolerance: tolerance) else { return nil }
        if upper <= recentEnd { return 0 }
        guard !Self.joins(gap: recentLimit - upper, tolerance: tolerance), let position = recent else { return nil }
        let added = upper - recentEnd
        chunks[position.chunk].setEnd(upper, at: position.index)
        recentEnd = upper
        length.add(added)
        return added
    }

    /// Makes `position` the most recent interval and caches its bounds and its successor's start.
    ///
    /// Every change of the storage ends by calling this, which keeps the cache true.
    @usableFromInline
    mutating func remember(_ position: Position) {
        recent = position
        recentStart = chunks[position.chunk].bounds[position.index].start
        recentEnd = chunks[position.chunk].bounds[position.index].end
        recentLimit = startAfter(position) ?? .infinity
    }

    /// Appends or extends at the end when the new interval starts at or after the last start.
    @usableFromInline
    mutating func appendAfterLast(lower: Double, upper: Double, tolerance: Double) -> Double? {
        guard let lastChunk = chunks.indices.last else {
            chunks.append(Chunk(bounds: [Bound(start: lower, end: upper)]))
            storedCount = 1
            length.add(upper - lower)
            remember(Position(chunk: 0, index: 0))
            return upper - lower
        }
        let lastIndex = chunks[lastChunk].bounds.count - 1
        let start = chunks[lastChunk].bounds[lastIndex].start
        guard lower >= start else { return nil }
        let end = chunks[lastChunk].bounds[lastIndex].end
        if Self.joins(gap: lower - end, tolerance: tolerance) {
            let added = Swift.max(upper - end, 0)
            if added > 0 {
                chunks[lastChunk].bounds[lastIndex].end = upper
                chunks[lastChunk].lastEnd = upper
                length.add(added)
            }
            remember(Position(chunk: lastChunk, index: lastIndex))
            return added
        }
        if chunks[lastChunk].bounds.count >= Self.chunkCapacity {
            chunks.append(Chunk(bounds: [Bound(start: lower, end: upper)]))
            remember(Position(chunk: lastChunk + 1, index: 0))
        } else {
            chunks[lastChunk].bounds.append(Bound(start: lower, end: upper))
            chunks[lastChunk].lastEnd = upper
            remember(Position(chunk: lastChunk, index: lastIndex + 1))
        }
        storedCount += 1
        length.add(upper - lower)
        return upper - lower
    }

    /// The start of the interval after `position`, if there is one.
    @inlinable
    func startAfter(_ position: Position) -> Double? {
        if position.index + 1 < chunks[position.chunk].bounds.count {
            return chunks[position.chunk].bounds[position.index + 1].start
        }
        return position.chunk + 1 < chunks.count ? chunks[position.chunk + 1].bounds[0].start : nil
    }

    /// The general insert: find the run of intervals the new one reaches, replace it by one.
    ///
    /// One binary search finds the first interval the new one reaches; a forward walk then
    /// visits exactly the intervals it merges with.
    @usableFromInline
    mutating func insertSlowly(lower: Double, upper: Double, tolerance: Double) -> Double {
        // First interval whose end reaches `lower`: end >= lower, or end > lower - tolerance.
        let reach = lower - tolerance
        let first = tolerance > 0 ? firstPosition { $0 > reach } : firstPosition { $0 >= lower }
        let limit = upper + tolerance
        func reaches(_ start: Double) -> Bool {
            tolerance > 0 ? start < limit : start <= upper
        }
        guard first.chunk < chunks.count, reaches(chunks[first.chunk].bounds[first.index].start) else {
            insertNew(lower: lower, upper: upper, at: first)
            length.add(upper - lower)
            return upper - lower
        }
        // Walk the run of intervals the new one reaches.
        var run = Run()
        run.firstStart = chunks[first.chunk].bounds[first.index].start
        var pastLast = first
        walk: while pastLast.chunk < chunks.count {
            let count = chunks[pastLast.chunk].bounds.count
            while pastLast.index < count {
                let start = chunks[pastLast.chunk].bounds[pastLast.index].start
                guard reaches(start) else { break walk }
                let end = chunks[pastLast.chunk].bounds[pastLast.index].end
                run.coveredLength += end - start
                run.lastEnd = end
                run.count += 1
                pastLast.index += 1
            }
            pastLast = Position(chunk: pastLast.chunk + 1, index: 0)
        }
        let mergedLower = Swift.min(lower, run.firstStart)
        let mergedUpper = Swift.max(upper, run.lastEnd)
        let added = (mergedUpper - mergedLower) - run.coveredLength
        replace(from: first, to: pastLast, count: run.count, with: mergedLower, mergedUpper)
        length.add(mergedUpper - mergedLower)
        length.add(-run.coveredLength)
        return added
    }

    /// A summary of a run of stored intervals.
    @usableFromInline
    struct Run {
        @usableFromInline var count = 0
        @usableFromInline var firstStart = 0.0
        @usableFromInline var lastEnd = 0.0
        @usableFromInline var coveredLength = 0.0

        @inlinable
        init() {}
    }

    /// The position of the first interval whose end satisfies `predicate`, or the end position.
    /// The predicate must be monotonic over the intervals (false, then true).
    ///
    /// - Complexity: O(log *n*).
    @inline(__always)
    func firstPosition(whereEnd predicate: (_ end: Double) -> Bool) -> Position {
        // Over chunks by their last interval, then inside the chunk, whose ends are read through
        // one buffer pointer, without a bounds check per step.
        let chunk = Self.partitionPoint(count: chunks.count) { predicate(chunks[$0].lastEnd) }
        guard chunk < chunks.count else { return endPosition }
        let index = chunks[chunk].bounds.withUnsafeBufferPointer { bounds in
            Self.partitionPoint(count: bounds.count) { predicate(bounds[$0].end) }
        }
        return Position(chunk: chunk, index: index)
    }

    /// The first index in `0..<count` for which `isAtOrPast` holds (`count` when none does),
    /// found by binary search; `isAtOrPast` must be false, then true.
    ///
    /// - Complexity: O(log *count*).
    @inline(__always)
    static func partitionPoint(count: Int, _ isAtOrPast: (Int) -> Bool) -> Int {
        var low = 0
        var high = count
        while low < high {
            let middle = (low &+ high) >> 1
            if isAtOrPast(middle) {
                high = middle
            } else {
                low = middle &+ 1
            }
        }
        return low
    }

    /// The position just past the last interval.
    @usableFromInline
    var endPosition: Position { Position(chunk: chunks.count, index: 0) }

    /// Inserts a new interval before `position` (which may be the end position).
    @usableFromInline
    mutating func insertNew(lower: Double, upper: Double, at position: Position) {
        storedCount += 1
        guard !chunks.isEmpty else {
            chunks = [Chunk(bounds: [Bound(start: lower, end: upper)])]
            remember(Position(chunk: 0, index: 0))
            return
        }
        var target = position
        if target.chunk == chunks.count {
            // Past the end: append to the last chunk.
            target = Position(chunk: chunks.count - 1, index: chunks[chunks.count - 1].bounds.count)
        }
        chunks[target.chunk].bounds.insert(Bound(start: lower, end: upper), at: target.index)
        chunks[target.chunk].refresh()
        remember(target)
        splitIfFull(target.chunk)
    }

    /// Splits a chunk that grew past the capacity into two halves, keeping `recent` valid.
    @usableFromInline
    mutating func splitIfFull(_ chunkIndex: Int) {
        let size = chunks[chunkIndex].bounds.count
        guard size > Self.chunkCapacity else { return }
        let half = size / 2
        let tail = Chunk(bounds: Array(chunks[chunkIndex].bounds[half...]))
        chunks[chunkIndex].bounds.removeSubrange(half...)
        chunks[chunkIndex].refresh()
        chunks.insert(tail, at: chunkIndex + 1)
        if let position = recent, position.chunk == chunkIndex, position.index >= half {
            recent = Position(chunk: chunkIndex + 1, index: position.index - half)
        } else if let position = recent, position.chunk > chunkIndex {
            recent = Position(chunk: position.chunk + 1, index: position.index)
        }
    }

    /// Replaces the `count` intervals from `first` up to `pastLast` with one interval.
    @usableFromInline
    mutating func replace(from first: Position, to pastLast: Position, count: Int, with lower: Double, _ upper: Double)
    {
        storedCount -= count - 1
        if first.chunk == pastLast.chunk {
            // Within one chunk.
            chunks[first.chunk].bounds.replaceSubrange(
                first.index..<pastLast.index, with: CollectionOfOne(Bound(start: lower, end: upper)))
            chunks[first.chunk].refresh()
            remember(first)
            return
        }
        // Spans chunks: keep the head of the first chunk plus the merged interval, drop the
        // chunks in between, and the merged part of the last chunk.
        chunks[first.chunk].bounds.replaceSubrange(
            first.index..., with: CollectionOfOne(Bound(start: lower, end: upper)))
        chunks[first.chunk].refresh()
        var removeUpTo = pastLast.chunk
        if pastLast.chunk < chunks.count {
            chunks[pastLast.chunk].bounds.removeSubrange(..<pastLast.index)
            chunks[pastLast.chunk].refresh()
            if chunks[pastLast.chunk].bounds.isEmpty { removeUpTo += 1 }
        }
        if first.chunk + 1 < removeUpTo {
            chunks.removeSubrange((first.chunk + 1)..<removeUpTo)
        }
        remember(first)
    }
}

/// A running sum with Neumaier's compensation, so that adding and removing millions of small
/// lengths does not accumulate rounding error.
@usableFromInline
struct CompensatedSum: Sendable, Hashable {
    @usableFromInline var sum = 0.0
    @usableFromInline var compensation = 0.0

    @inlinable
    init() {}

    @inlinable
    var value: Double { sum + compensation }

    @inlinable
    mutating func add(_ term: Double) {
        let total = sum + term
        if abs(sum) >= abs(term) {
            compensation += (sum - total) + term
        } else {
            compensation += (term - total) + sum
        }
        sum = total
    }
}
