public import Downloads
public import Foundation

/// The network a download may use, as the queue sees it: whether there is one, and whether it
/// is expensive (cellular, a personal hotspot) or constrained (Low Data Mode).
public struct NetworkPath: Hashable, Sendable, Codable {
    /// Whether a network is there at all.
    public var isAvailable: Bool
    /// Whether it is metered: cellular or a hotspot.
    public var isExpensive: Bool
    /// Whether the learner asked to save data (Low Data Mode).
    public var isConstrained: Bool
    /// Whether it goes through the cellular radio (a hotspot's Wi-Fi is expensive, not
    /// cellular).
    public var isCellular: Bool

    /// Creates a path.
    public init(isAvailable: Bool, isExpensive: Bool = false, isConstrained: Bool = false, isCellular: Bool = false) {
        self.isAvailable = isAvailable
        self.isExpensive = isExpensive
        self.isConstrained = isConstrained
        self.isCellular = isCellular
    }

    private enum CodingKeys: String, CodingKey {
        case isAvailable, isExpensive, isConstrained, isCellular
    }

    /// Reads a path; one saved before ``isCellular`` existed is not cellular.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        isAvailable = try container.decode(Bool.self, forKey: .isAvailable)
        isExpensive = try container.decode(Bool.self, forKey: .isExpensive)
        isConstrained = try container.decode(Bool.self, forKey: .isConstrained)
        isCellular = try container.decodeIfPresent(Bool.self, forKey: .isCellular) ?? false
    }

    /// Wi-Fi or Ethernet: available, neither expensive nor constrained.
    public static let unmetered = NetworkPath(isAvailable: true)
    /// Cellular: available, expensive, through the cellular radio.
    public static let cellular = NetworkPath(isAvailable: true, isExpensive: true, isCellular: true)
    /// No network.
    public static let offline = NetworkPath(isAvailable: false)
}

/// What a queue needs before it downloads: the network it may use and the storage it keeps.
public struct DownloadRequirements: Hashable, Sendable, Codable {
    /// The networks downloads may use.
    public enum Network: String, Hashable, Sendable, Codable {
        /// Any network.
        case any
        /// Not an expensive one (no cellular): "Wi-Fi only".
        case notExpensive
        /// Neither an expensive one nor one in Low Data Mode.
        case notConstrained

        /// Whether `path` is one this rule allows.
        public func allows(_ path: NetworkPath) -> Bool {
            guard path.isAvailable else { return false }
            switch self {
            case .any: return true
            case .notExpensive: return !path.isExpensive
            case .notConstrained: return !path.isExpensive && !path.isConstrained
            }
        }
    }

    /// The networks downloads may use.
    public var network: Network
    /// The free space kept on the volume: a lesson that would leave less waits.
    public var reserveBytes: UInt64
    /// The most the library's downloads may take together, or `nil` for no quota.
    public var quotaBytes: UInt64?

    /// Creates requirements: any network, 500 MB kept free, no quota by default.
    public init(network: Network = .any, reserveBytes: UInt64 = 500_000_000, quotaBytes: UInt64? = nil) {
        self.network = network
        self.reserveBytes = reserveBytes
        self.quotaBytes = quotaBytes
    }
}

/// One lesson in a download queue.
public struct QueuedLesson: Hashable, Sendable, Codable, Identifiable {
    /// The lesson's ID in the library.
    public var id: String
    /// Where it is downloaded from.
    public var remoteURL: URL
    /// The group it belongs to (a course or a section), for the group's size, progress and
    /// state; `nil` for a lesson on its own.
    public var group: String?
    /// Its size as estimated before its first byte, once known.
    public var estimate: DownloadEstimate?
    /// Whether the learner paused it: it waits until resumed.
    public var isPausedByLearner: Bool
    /// Whether the learner pinned it: smart downloads never remove it.
    public var isPinned: Bool

    /// Creates a queued lesson.
    public init(
        id: String, remoteURL: URL, group: String? = nil, estimate: DownloadEstimate? = nil,
        isPausedByLearner: Bool = false, isPinned: Bool = false
    ) {
        self.id = id
        self.remoteURL = remoteURL
        self.group = group
        self.estimate = estimate
        self.isPausedByLearner = isPausedByLearner
        self.isPinned = isPinned
    }

    private enum CodingKeys: String, CodingKey {
        case id, remoteURL, group, estimate, isPausedByLearner, isPinned
    }

    /// Reads a lesson as the queue saves it; the flags may be absent (false).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        remoteURL = try container.decode(URL.self, forKey: .remoteURL)
        group = try container.decodeIfPresent(String.self, forKey: .group)
        estimate = try container.decodeIfPresent(DownloadEstimate.self, forKey: .estimate)
        isPausedByLearner = try container.decodeIfPresent(Bool.self, forKey: .isPausedByLearner) ?? false
        isPinned = try container.decodeIfPresent(Bool.self, forKey: .isPinned) ?? false
    }
}

/// Why a queued lesson is not downloading.
public enum WaitReason: Hashable, Sendable, Codable {
    /// The network is not one the requirements allow (or there is none): `required` says which
    /// the lesson waits for.
    case network(required: DownloadRequirements.Network)
    /// The lesson would leave less free space than the reserve: it needs `needed` bytes, and
    /// `available` are free beyond the reserve.
    case storage(needed: UInt64, available: UInt64)
    /// The lesson would take the library past its quota: it needs `needed` bytes, and `left`
    /// remain under the quota.
    case quota(needed: UInt64, left: UInt64)
    /// Other lessons are downloading: it is next in line at `position` (from 1).
    case turn(position: Int)
    /// The learner paused it.
    case pausedByLearner
}

/// Where a queued lesson stands.
public enum QueuedLessonState: Hashable, Sendable {
    /// Waiting, for the reason given.
    case waiting(WaitReason)
    /// Downloading; `fraction` is 0…1.
    case downloading(fraction: Double)
    /// Downloaded: its file holds every chosen track and subtitle.
    case downloaded(byteCount: UInt64)
    /// The last attempt failed; ``DownloadQueue/resume(_:)`` tries again.
    case failed(DownloadFailure)

    /// Whether the lesson is downloaded.
    public var isDownloaded: Bool {
        if case .downloaded = self { return true }
        return false
    }
}

/// A course or a section as one row: its lessons' sizes, progress and state together.
public struct QueueGroupSummary: Hashable, Sendable {
    /// Where the group stands as a whole.
    public enum State: Hashable, Sendable {
        /// Every lesson is downloaded.
        case downloaded
        /// At least one lesson is downloading.
        case downloading
        /// None is downloading, and the first that waits waits for this reason.
        case waiting(WaitReason)
        /// None is downloading or waiting; `count` lessons failed.
        case failed(count: Int)
    }

    /// The group's ID.
    public var id: String
    /// Its lessons, in the queue's order.
    public var lessonIDs: [String]
    /// How many are downloaded.
    public var downloadedCount: Int
    /// The bytes of the whole group: downloaded lessons' files and the others' estimates.
    public var bytes: UInt64
    /// Whether ``bytes`` is an estimate (some lesson's size is estimated, or not known at all).
    public var isEstimate: Bool
    /// The share done, 0…1, weighted by each lesson's bytes; a lesson of unknown size weighs as
    /// much as the group's known lessons on average (all weigh alike when no size is known).
    public var fraction: Double
    /// Where the group stands.
    public var state: State

    /// The summary of `lessons` (the group's, in order) in `states`.
    ///
    /// - Complexity: O(*n*) in the lessons.
    public init(id: String, lessons: [QueuedLesson], states: [String: QueuedLessonState]) {
        self.id = id
        lessonIDs = lessons.map(\.id)
        var downloaded = 0
        var total: UInt64 = 0
        var done = 0.0
        var weights = 0.0
        // A lesson of unknown size counts as an average one, so that it does not read as done.
        let known = lessons.compactMap { lesson -> Double? in
            if case .downloaded(let byteCount)? = states[lesson.id] { return Double(byteCount) }
            return lesson.estimate?.bytes.map { Double($0) }
        }
        let unknownWeight = known.isEmpty ? 1 : max(known.reduce(0, +) / Double(known.count), 1)
        var estimated = false
        var firstWait: WaitReason?
        var downloading = false
        var failures = 0
        for lesson in lessons {
            let state = states[lesson.id]
            var size = lesson.estimate?.bytes
            if case .downloaded(let byteCount)? = state {
                size = byteCount
            } else if lesson.estimate?.isExact != true {
                estimated = true
            }
            let weight = size.map { Double($0) } ?? unknownWeight
            let (sum, overflow) = total.addingReportingOverflow(size ?? 0)
            total = overflow ? .max : sum
            weights += weight
            switch state {
            case .downloaded?:
                downloaded += 1
                done += weight
            case .downloading(let fraction)?:
                downloading = true
                done += weight * fraction
            case .waiting(let reason)?:
                if firstWait == nil { firstWait = reason }
            case .failed?:
                failures += 1
            case nil:
                // Not decided yet (just queued): it waits for the queue's first decision.
                if firstWait == nil { firstWait = .turn(position: 1) }
            }
        }
        downloadedCount = downloaded
        bytes = total
        isEstimate = estimated
        fraction = weights > 0 ? min(done / weights, 1) : 0
        if downloaded == lessons.count {
            state = .downloaded
        } else if downloading {
            state = .downloading
        } else if let firstWait {
            state = .waiting(firstWait)
        } else {
            state = .failed(count: failures)
        }
    }
}
