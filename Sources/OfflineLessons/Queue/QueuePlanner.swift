import Downloads

/// The decisions of a download queue, as a pure function of its lessons, the library's states
/// and the conditions: which lessons start, which stop, and why each waiting one waits.
///
/// The rules, in the queue's order (its priority):
/// - A downloaded lesson stays downloaded; a failed one stays failed until the learner retries
///   it, except a failure for want of a network, which waits for one instead.
/// - A lesson the learner paused waits (`pausedByLearner`), and stops if it was downloading.
/// - When the network is not one the requirements allow, every lesson waits for it, and those
///   downloading stop (their partial files are kept: they resume).
/// - A lesson that would leave less than the reserve free, or take the library past its quota,
///   waits with the bytes it needs; it never starts to be stopped by a full disk. The free space
///   it needs is what the download's own check before its first byte asks (the estimate with 2%
///   and 1 MiB to spare, for the file's index and the journal), so a lesson the queue starts is
///   not one the download refuses; the quota counts the estimate alone (the file's size), a
///   lesson downloading counted whole until it finishes, however far it has gone, or at the
///   bytes it has written when they are more. What a lesson counts against the quota is its
///   estimate as the evidence corrects it (``QueueSizes``). A lesson of unknown size needs
///   nothing up front (the download's own check refuses it before its first byte when the disk
///   is too full). The quota lets lessons in in the queue's order: under a quota, one whose
///   size is being estimated waits its turn until it is known, and the lessons after one that
///   waits (for its size, or for room) wait their turn behind it, so that no lesson is let in
///   or not by when an estimate or a finish arrived.
/// - At most `concurrency` lessons download at once; the next ones wait their turn, numbered.
///   A lesson downloading keeps going when another is moved before it.
///
/// - Complexity: O(*n*) in the lessons.
struct QueuePlanner {
    /// What the queue sees of the world.
    struct Conditions: Hashable, Sendable {
        var network: NetworkPath
        /// The volume's free bytes, or `nil` when the system does not say.
        var freeBytes: UInt64?
        /// The bytes the library's downloaded lessons take.
        var usedBytes: UInt64
    }

    /// What the queue should do.
    struct Decision: Hashable, Sendable {
        /// Each lesson's state.
        var states: [String: QueuedLessonState] = [:]
        /// The lessons to start (or resume), in order.
        var start: [String] = []
        /// The lessons to stop (their downloads paused, partial files kept).
        var stop: [String] = []
    }

    /// Decides for `lessons` (in the queue's order) given the library's state of each.
    ///
    /// - Parameters:
    ///   - retrying: Failed lessons the learner asked to try again.
    ///   - backgroundWaits: Why lessons handed to background transfers wait
    ///     (``OfflineLibrary/waitReason(of:)``): such a lesson is downloading, and shown waiting.
    ///   - counted: What each lesson counts against the quota (``QueueSizes``); a lesson
    ///     absent counts its estimate.
    ///   - written: The bytes each download in progress has written.
    ///   - estimating: The lessons whose size is being estimated.
    static func plan(
        _ lessons: [QueuedLesson], library: [String: OfflineLibrary.ItemState], conditions: Conditions,
        requirements: DownloadRequirements, concurrency: Int, retrying: Set<String> = [],
        backgroundWaits: [String: WaitReason] = [:], counted: [String: UInt64] = [:], written: [String: UInt64] = [:],
        estimating: Set<String> = []
    ) -> Decision {
        func quotaBytes(_ lesson: QueuedLesson) -> UInt64 { counted[lesson.id] ?? remaining(lesson, fraction: 0) }
        var decision = Decision()
        let networkAllowed = requirements.network.allows(conditions.network)
        var free = conditions.freeBytes.map { $0 > requirements.reserveBytes ? $0 - requirements.reserveBytes : 0 }
        var committed = conditions.usedBytes
        // What the downloads going on will still take, before any new one counts.
        var running = 0
        for lesson in lessons {
            guard case .downloading(let fraction)? = library[lesson.id], networkAllowed, !lesson.isPausedByLearner
            else { continue }
            running += 1
            let space = spaceNeeded(lesson, fraction: fraction, written: written[lesson.id])
            free = free.map { $0 > space ? $0 - space : 0 }
            // Against the quota, a lesson downloading counts whole until it finishes: the bytes
            // it wrote are in no downloaded file yet, so counting only what it has left would let
            // the next lesson in or not by how far this one had gone when the queue decided.
            committed = saturatingAdd(committed, quotaBytes(lesson))
        }
        var slots = max(concurrency, 1) - running
        var position = 0
        var isBehindAnEstimate = false
        for lesson in lessons {
            let state = library[lesson.id] ?? .notDownloaded
            switch state {
            case .downloaded(_, let bytes):
                decision.states[lesson.id] = .downloaded(byteCount: bytes)
                continue
            case .failed(let failure) where failure.category != .offline && !retrying.contains(lesson.id):
                decision.states[lesson.id] = .failed(failure)
                continue
            default:
                break
            }
            let isDownloading: Bool
            let fraction: Double
            if case .downloading(let done) = state {
                isDownloading = true
                fraction = done
            } else {
                isDownloading = false
                fraction = 0
            }
            if lesson.isPausedByLearner || !networkAllowed {
                decision.states[lesson.id] =
                    .waiting(lesson.isPausedByLearner ? .pausedByLearner : .network(required: requirements.network))
                if isDownloading { decision.stop.append(lesson.id) }
                continue
            }
            if isDownloading {
                decision.states[lesson.id] =
                    backgroundWaits[lesson.id].map { .waiting($0) } ?? .downloading(fraction: fraction)
                continue
            }
            let needed = quotaBytes(lesson)
            let space = spaceNeeded(lesson, fraction: 0)
            if requirements.quotaBytes != nil,
                isBehindAnEstimate || (lesson.estimate == nil && estimating.contains(lesson.id))
            {
                // Its size (or that of a lesson before it) comes soon, or a lesson before it
                // waits for room under the quota: the quota lets lessons in in the queue's
                // order, so which get in depends on their sizes, not on when an estimate or a
                // finish came.
                isBehindAnEstimate = true
                position += 1
                decision.states[lesson.id] = .waiting(.turn(position: position))
            } else if let available = free, space > available {
                decision.states[lesson.id] = .waiting(.storage(needed: space, available: available))
            } else if let quota = requirements.quotaBytes, saturatingAdd(committed, needed) > quota {
                decision.states[lesson.id] = .waiting(
                    .quota(needed: needed, left: quota > committed ? quota - committed : 0))
                isBehindAnEstimate = true
            } else if slots > 0 {
                slots -= 1
                free = free.map { $0 - space }
                committed = saturatingAdd(committed, needed)
                decision.start.append(lesson.id)
                decision.states[lesson.id] = .downloading(fraction: 0)
            } else {
                position += 1
                decision.states[lesson.id] = .waiting(.turn(position: position))
            }
        }
        return decision
    }

    /// The bytes a lesson still needs: its estimate less the share done, 0 when unknown.
    static func remaining(_ lesson: QueuedLesson, fraction: Double) -> UInt64 {
        guard let bytes = lesson.estimate?.bytes else { return 0 }
        let share = min(max(1 - fraction, 0), 1)
        return saturatingBytes((Double(bytes) * share).rounded(.up))
    }

    /// The free space a lesson still needs: what its download's check asks for the bytes it
    /// has left (of its estimate, or of what it has written when that is more), 0 when its size
    /// is unknown.
    static func spaceNeeded(_ lesson: QueuedLesson, fraction: Double, written done: UInt64? = nil) -> UInt64 {
        guard let estimate = lesson.estimate?.bytes else { return 0 }
        let bytes = max(estimate, done ?? 0)
        let written = done ?? saturatingBytes((Double(bytes) * min(max(fraction, 0), 1)).rounded(.down))
        return StorageSpace.room(forSource: bytes, written: min(written, bytes))
    }

    static func saturatingAdd(_ first: UInt64, _ second: UInt64) -> UInt64 {
        let (sum, overflow) = first.addingReportingOverflow(second)
        return overflow ? .max : sum
    }
}
