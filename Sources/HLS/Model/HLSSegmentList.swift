import Foundation

/// The segments of a media playlist, in order: a random-access collection of ``HLSSegment``.
///
/// A parsed playlist keeps its segments compact: where each URI sits in the playlist's bytes,
/// the duration and range as numbers, and indexes into shared tables for keys, maps and the rare
/// fields. Nothing is allocated per segment while parsing; an ``HLSSegment`` (and its URI
/// string) is built when an element is read. The list holds on to the playlist's bytes for as
/// long as it lives.
///
/// Mutating the list (setting an element, appending, removing) first turns it into a plain array
/// of segments, once; from then on it behaves as one.
///
/// - Complexity: Reading an element is O(*u*) for a URI of *u* bytes; `count` is O(1); the
///   first mutation of a parsed list is O(*n*).
public struct HLSSegmentList: Sendable {
    private enum Storage: Sendable {
        case compact(CompactSegments)
        case array([HLSSegment])
    }

    private var storage: Storage

    /// An empty list.
    public init() {
        storage = .array([])
    }

    /// A list of `segments`.
    public init(_ segments: [HLSSegment]) {
        storage = .array(segments)
    }

    init(compact: CompactSegments) {
        storage = .compact(compact)
    }

    /// The sum of the segments' durations, in seconds, without building the segments.
    ///
    /// - Complexity: O(*n*).
    public var totalDuration: Double {
        switch storage {
        case .compact(let compact): compact.records.reduce(0) { $0 + $1.duration }
        case .array(let array): array.reduce(0) { $0 + $1.duration }
        }
    }

    /// Runs `body` on the segments as an array, turning a parsed list into one first; the
    /// storage is emptied meanwhile so that the array stays uniquely referenced.
    private mutating func mutateArray<Result>(_ body: (inout [HLSSegment]) -> Result) -> Result {
        var array: [HLSSegment]
        switch storage {
        case .compact(let compact): array = (0..<compact.records.count).map { compact.segment(at: $0) }
        case .array(let existing): array = existing
        }
        storage = .array([])
        defer { storage = .array(array) }
        return body(&array)
    }
}

extension HLSSegmentList: RandomAccessCollection, MutableCollection {
    /// Positions are offsets from zero.
    public typealias Index = Int

    /// Always 0.
    public var startIndex: Int { 0 }

    /// The number of segments.
    public var endIndex: Int {
        switch storage {
        case .compact(let compact): compact.records.count
        case .array(let array): array.count
        }
    }

    /// The segment at `position`, built from the compact form when the list was parsed.
    ///
    /// - Complexity: O(*u*) for a URI of *u* bytes when reading a parsed list; setting turns a
    ///   parsed list into an array first (O(*n*), once).
    public subscript(position: Int) -> HLSSegment {
        get {
            switch storage {
            case .compact(let compact): compact.segment(at: position)
            case .array(let array): array[position]
            }
        }
        set { mutateArray { $0[position] = newValue } }
    }
}

extension HLSSegmentList {
    /// Iterates over the segments, building each from the compact form of a parsed list.
    public struct Iterator: IteratorProtocol, Sendable {
        // Visible to inlined code so that a loop over the segments in another module inlines
        // `next()`, and handles its optional result without calls.
        @usableFromInline let compact: CompactSegments?
        @usableFromInline let array: [HLSSegment]
        @usableFromInline var position = 0
        @usableFromInline let end: Int

        init(_ list: HLSSegmentList) {
            switch list.storage {
            case .compact(let segments):
                compact = segments
                array = []
                end = segments.records.count
            case .array(let segments):
                compact = nil
                array = segments
                end = segments.count
            }
        }

        /// The next segment, or `nil` after the last.
        ///
        /// - Complexity: O(*u*) for a URI of *u* bytes.
        @inlinable
        public mutating func next() -> HLSSegment? {
            guard position < end else { return nil }
            position += 1
            return element(at: position - 1)
        }

        /// The segment at `index`; not mutating, so the compact form is borrowed, not retained.
        @usableFromInline
        func element(at index: Int) -> HLSSegment {
            if let compact { return compact.segment(at: index) }
            return array[index]
        }
    }

    /// An iterator over the segments in order.
    public func makeIterator() -> Iterator { Iterator(self) }
}

extension HLSSegmentList: RangeReplaceableCollection {
    /// Replaces the segments in `subrange` with `newElements`.
    ///
    /// - Complexity: O(*n* + *m*) for *m* new segments.
    public mutating func replaceSubrange<C: Collection>(_ subrange: Range<Int>, with newElements: C)
    where C.Element == HLSSegment {
        mutateArray { $0.replaceSubrange(subrange, with: newElements) }
    }

    /// Reserves room for `minimumCapacity` segments.
    public mutating func reserveCapacity(_ minimumCapacity: Int) {
        mutateArray { $0.reserveCapacity(minimumCapacity) }
    }
}

extension HLSSegmentList: ExpressibleByArrayLiteral {
    /// A list of the literal's segments.
    public init(arrayLiteral elements: HLSSegment...) {
        self.init(elements)
    }
}

extension HLSSegmentList: Hashable {
    /// Whether the two lists hold equal segments in the same order, however each is stored.
    ///
    /// - Complexity: O(*n*); O(1) for two copies of one parsed list.
    public static func == (lhs: HLSSegmentList, rhs: HLSSegmentList) -> Bool {
        if case .compact(let left) = lhs.storage, case .compact(let right) = rhs.storage, left === right {
            return true
        }
        return lhs.count == rhs.count && lhs.elementsEqual(rhs)
    }

    /// Hashes the segments in order.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for segment in self { hasher.combine(segment) }
    }
}

extension HLSSegmentList: CustomStringConvertible {
    /// The segments, as an array would print them.
    public var description: String { Array(self).description }
}

/// The compact form of a parsed playlist's segments, shared by every copy of the list.
@usableFromInline
final class CompactSegments: Sendable {
    /// One segment, without a reference to count.
    /// Its fields are ordered so that it packs into 56 bytes.
    struct Record: Sendable {
        /// The URI's first byte in ``CompactSegments/bytes``, or an index into
        /// ``CompactSegments/uris`` when ``uriLength`` is negative (a substituted URI).
        var uriStart: Int
        var duration: Double
        var rangeLength: UInt64
        var rangeOffset: UInt64
        var uriLength: Int32
        /// An index into ``CompactSegments/contexts`` (keys, map and rare fields), or -1.
        var context: Int32
        /// An index into ``CompactSegments/titles`` for a title made when parsing (a repeated
        /// or short one, or one ``titleDistance`` cannot point to), or -1.
        var storedTitle: Int32
        /// The title's first byte, counted back from ``uriStart``.
        var titleDistance: UInt32
        /// The title's length in bytes; 0 for no title here.
        var titleLength: UInt16
        var hasRange: Bool
        var isDiscontinuity: Bool
    }

    let bytes: PlaylistBytes
    let records: [Record]
    let uris: [String]
    let contexts: [HLSSegmentContext]
    let titles: [String]
    /// Whether the playlist's text (after any byte order mark) is ASCII, so that strings are made
    /// from it without checking for multi-byte sequences.
    let isASCII: Bool

    init(
        bytes: PlaylistBytes, records: [Record], uris: [String], contexts: [HLSSegmentContext],
        titles: [String], isASCII: Bool
    ) {
        self.bytes = bytes
        self.isASCII = isASCII
        self.records = records
        self.uris = uris
        self.contexts = contexts
        self.titles = titles
    }

    /// The URI of the segment `record` describes.
    func uri(of record: Record) -> String {
        guard record.uriLength >= 0 else { return uris[record.uriStart] }
        return text(record.uriStart, Int(record.uriLength))
    }

    /// The text of `count` bytes from `start`.
    func text(_ start: Int, _ count: Int) -> String {
        // The parser recorded `start` and `count` within the bytes.
        let text = UnsafeBufferPointer(start: bytes.base.assumingMemoryBound(to: UInt8.self) + start, count: count)
        // Decoding as ASCII skips the UTF-8 check (about a tenth of the cost of a URI).
        return isASCII ? String(decoding: text, as: Unicode.ASCII.self) : String(decoding: text, as: UTF8.self)
    }

    /// The title of the segment `record` describes.
    func title(of record: Record) -> String? {
        if record.titleLength > 0 { return text(record.uriStart - Int(record.titleDistance), Int(record.titleLength)) }
        return record.storedTitle >= 0 ? titles[Int(record.storedTitle)] : nil
    }

    /// The byte range of the segment `record` describes.
    func byteRange(of record: Record) -> HLSByteRange? {
        record.hasRange ? HLSByteRange(length: record.rangeLength, offset: record.rangeOffset) : nil
    }

    /// The segment at `index`, built.
    @inline(__always)
    func segment(at index: Int) -> HLSSegment {
        let record = records[index]
        let uri = uri(of: record)
        let title = title(of: record)
        let context = record.context >= 0 ? contexts[Int(record.context)] : nil
        return HLSSegment(
            uri: uri, duration: record.duration, byteRange: byteRange(of: record),
            isDiscontinuity: record.isDiscontinuity, title: title, context: context)
    }
}

/// A parsed playlist's bytes, in memory of their own: written once, by the parser's line search
/// as it reads each line, before anything else reads them; then read only, by the segment lists
/// that keep them, and freed with the last.
///
/// `@unchecked Sendable`: the memory is written only during the parse, on the parsing thread,
/// before the object is shared, and never after.
final class PlaylistBytes: @unchecked Sendable {
    /// The first byte.
    let base: UnsafeMutableRawPointer

    /// Room for `count` bytes, not yet written; bound to `UInt8`, which the parser stores raw
    /// chunks of and the segments read as bytes.
    init(count: Int) {
        base = .allocate(byteCount: Swift.max(count, 1), alignment: 16)
        base.bindMemory(to: UInt8.self, capacity: Swift.max(count, 1))
    }

    deinit { base.deallocate() }
}
