public import Foundation

/// The stable, versioned file form of ``WatchProgress``.
///
/// Version 1 is a JSON object:
///
/// ```json
/// {
///   "format": "mediacore.watch-progress",
///   "version": 1,
///   "watched": [[0, 12.5], [14, 30]],
///   "duration": 600,
///   "completed": false,
///   "resume": {"position": 30, "recordedAt": 1763700000, "deviceID": "ipad-7"},
///   "timeSpent": {"ipad-7": 41.5}
/// }
/// ```
///
/// `duration` and `resume` are omitted when unknown; `recordedAt` is seconds since 1970.
/// A reader of version *n* rejects a file of a later version with a typed error rather than
/// guessing at fields it does not know.
public enum ProgressFormat {
    /// The version this build writes, and the newest it reads.
    public static let currentVersion = 1
    /// The value of the `format` field, which tells a progress file from any other JSON.
    public static let formatName = "mediacore.watch-progress"
    /// The most intervals a stored progress may hold: a million separate watched pieces is far
    /// beyond any real viewing, and the bound keeps a hostile file from exhausting memory.
    public static let maximumIntervalCount = 1_000_000
    /// The largest document read, in bytes (64 MiB): a million intervals with long decimals
    /// take about 40 MB.
    public static let maximumDocumentSize = 64 << 20
    /// The most devices with time spent in one document (10,000): a learner's devices number a
    /// handful, and the bound keeps a hostile file from building a huge dictionary.
    public static let maximumDeviceCount = 10_000

    /// Why stored progress could not be read. The file and lesson are named by the
    /// ``ProgressStoreError`` that carries it; a document read from elsewhere has no place of its
    /// own beyond what the kind says.
    public struct DecodingFailure: Error, Hashable, Sendable, CustomStringConvertible {
        /// What was wrong.
        public enum Kind: Hashable, Sendable {
            /// The data is not a progress document: not JSON, the wrong `format`, or a malformed
            /// field, which the reason names.
            case corrupted(reason: String)
            /// The document was written by a newer MediaCore.
            case unsupportedVersion(found: Int, newestSupported: Int)
            /// The document holds more intervals than ``ProgressFormat/maximumIntervalCount``.
            case tooManyIntervals(count: Int, limit: Int)
            /// The document is larger than ``ProgressFormat/maximumDocumentSize``.
            case tooLarge(size: Int, limit: Int)
            /// The document names more devices than ``ProgressFormat/maximumDeviceCount``.
            case tooManyDevices(count: Int, limit: Int)
        }

        /// What was wrong.
        public var kind: Kind

        /// Creates a failure.
        public init(_ kind: Kind) {
            self.kind = kind
        }

        /// A sentence saying what is wrong with the data.
        public var description: String {
            switch kind {
            case .corrupted(let reason):
                "The progress data is corrupted: \(reason)"
            case .unsupportedVersion(let found, let newest):
                "The progress data has version \(found); this version of MediaCore reads up to \(newest)"
            case .tooManyIntervals(let count, let limit):
                "The progress data holds \(count) intervals; at most \(limit) are accepted"
            case .tooLarge(let size, let limit):
                "The progress data has \(size) bytes; at most \(limit) are read"
            case .tooManyDevices(let count, let limit):
                "The progress data names \(count) devices; at most \(limit) are accepted"
            }
        }
    }

    struct Header: Decodable {
        var format: String?
        var version: Int?
    }

    struct Document: Codable {
        var format: String
        var version: Int
        var watched: [[Double]]
        var duration: Double?
        var completed: Bool
        var resume: ResumePoint?
        var timeSpent: [String: Double]

        init(_ progress: WatchProgress) {
            format = formatName
            version = currentVersion
            watched = progress.watched.map { [$0.lowerBound, $0.upperBound] }
            duration = progress.duration
            completed = progress.isCompleted
            resume = progress.resumePoint
            timeSpent = progress.timeSpentByDevice
        }

        func progress() throws(DecodingFailure) -> WatchProgress {
            guard watched.count <= maximumIntervalCount else {
                throw DecodingFailure(.tooManyIntervals(count: watched.count, limit: maximumIntervalCount))
            }
            guard timeSpent.count <= maximumDeviceCount else {
                throw DecodingFailure(.tooManyDevices(count: timeSpent.count, limit: maximumDeviceCount))
            }
            var intervals: [Range<Double>] = []
            intervals.reserveCapacity(watched.count)
            for (index, pair) in watched.enumerated() {
                guard pair.count == 2, pair[0].isFinite, pair[1].isFinite, pair[0] < pair[1] else {
                    throw DecodingFailure(
                        .corrupted(reason: "watched interval \(index) is \(pair), not [start, end] with start < end"))
                }
                intervals.append(pair[0]..<pair[1])
            }
            if let duration, !duration.isFinite {
                throw DecodingFailure(.corrupted(reason: "the duration is not finite"))
            }
            if let spent = timeSpent.first(where: { !$0.value.isFinite || $0.value < 0 }) {
                throw DecodingFailure(.corrupted(reason: "the time spent on '\(spent.key)' is \(spent.value)"))
            }
            return WatchProgress(
                watched: IntervalSet(intervals),
                duration: duration,
                isCompleted: completed,
                resumePoint: resume,
                timeSpentByDevice: timeSpent
            )
        }
    }

    /// Encodes `progress` as version-1 JSON, with sorted keys so equal states give equal bytes.
    ///
    /// - Complexity: O(*n*) for *n* intervals.
    public static func encode(_ progress: WatchProgress) -> Data {
        encodeSorted(Document(progress))
    }

    /// Decodes progress from data written by ``encode(_:)`` of this or an earlier version.
    ///
    /// - Throws: ``DecodingFailure`` saying what is wrong; never traps on any input.
    /// - Complexity: O(*n* log *n*) for *n* intervals.
    public static func decode(_ data: Data) throws(DecodingFailure) -> WatchProgress {
        try decodeDocument(data, as: Document.self, header: \.self, headerType: Header.self).progress()
    }

    /// Decodes a document of type `Wrapper` that embeds a progress document, checking the
    /// embedded header (reached through `header`) before decoding the rest, so a newer
    /// version's fields are never misread.
    static func decodeDocument<Wrapper: Decodable, HeaderWrapper: Decodable>(
        _ data: Data,
        as type: Wrapper.Type,
        header: KeyPath<HeaderWrapper, Header>,
        headerType: HeaderWrapper.Type
    ) throws(DecodingFailure) -> Wrapper {
        // Bounds first, without decoding: a decoder's own memory is several times the input's.
        guard data.count <= maximumDocumentSize else {
            throw DecodingFailure(.tooLarge(size: data.count, limit: maximumDocumentSize))
        }
        let (arrays, members) = structureCount(data)
        // Every interval is one array, every device one object member; the document itself
        // holds a few more of each.
        guard arrays <= maximumIntervalCount + 16 else {
            throw DecodingFailure(.tooManyIntervals(count: arrays - 1, limit: maximumIntervalCount))
        }
        guard members <= maximumDeviceCount + 64 else {
            throw DecodingFailure(.tooManyDevices(count: members, limit: maximumDeviceCount))
        }
        let decoder = JSONDecoder()
        let found: Header
        do {
            found = try decoder.decode(HeaderWrapper.self, from: data)[keyPath: header]
        } catch {
            throw DecodingFailure(.corrupted(reason: "not a progress document (\(describe(error)))"))
        }
        guard found.format == formatName else {
            throw DecodingFailure(
                .corrupted(reason: "the format field is \(found.format.map { "'\($0)'" } ?? "missing")"))
        }
        guard let version = found.version, version >= 1 else {
            throw DecodingFailure(.corrupted(reason: "the version field is missing or not a positive integer"))
        }
        guard version <= currentVersion else {
            throw DecodingFailure(.unsupportedVersion(found: version, newestSupported: currentVersion))
        }
        do {
            return try decoder.decode(Wrapper.self, from: data)
        } catch {
            throw DecodingFailure(.corrupted(reason: describe(error)))
        }
    }

    /// The number of arrays (`[`) and of object members (`:`) outside JSON strings: upper
    /// bounds on a document's intervals and devices, found without decoding.
    ///
    /// - Complexity: O(*n*) in the data's size, with no allocation.
    static func structureCount(_ data: Data) -> (arrays: Int, members: Int) {
        data.withUnsafeBytes { raw in
            var count = 0
            var members = 0
            var inString = false
            var escaped = false
            for byte in raw {
                if inString {
                    if escaped {
                        escaped = false
                    } else if byte == UInt8(ascii: "\\") {
                        escaped = true
                    } else if byte == UInt8(ascii: "\"") {
                        inString = false
                    }
                } else if byte == UInt8(ascii: "\"") {
                    inString = true
                } else if byte == UInt8(ascii: "[") {
                    count += 1
                } else if byte == UInt8(ascii: ":") {
                    members += 1
                }
            }
            return (count, members)
        }
    }

    static func encodeSorted(_ value: some Encodable) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Every number in a document is finite (the types guarantee it), so encoding cannot fail;
        // should it ever, an empty object fails to decode loudly rather than crashing here.
        return (try? encoder.encode(value)) ?? Data("{}".utf8)
    }

    /// A one-line account of a decoding error: what was wrong and at which key path.
    static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return String(describing: error) }
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }
            return keys.isEmpty ? "" : " at \(keys.joined(separator: "."))"
        }
        switch error {
        case .dataCorrupted(let context): return context.debugDescription + path(context)
        case .keyNotFound(let key, let context): return "missing key '\(key.stringValue)'" + path(context)
        case .typeMismatch(let type, let context): return "expected \(type)" + path(context)
        case .valueNotFound(let type, let context): return "missing \(type)" + path(context)
        @unknown default: return String(describing: error)
        }
    }
}
