import Downloads
import Foundation

/// What a background transfer task carries, written in its `taskDescription` so that a process
/// relaunched in the background can tell what each task it re-adopts is for: the download (its
/// key, the one its journal is named by) and the parts of that download's plan its body holds,
/// in the order they lie in the body.
///
/// The text is `mediacore/2 <generation> <parts> <download>`: the hand-over's generation (a
/// number the journal never gives twice), the parts as comma-separated indices or `first-last`
/// runs, and the download's key percent-encoded (RFC 3986 §2.1) so that no space or control
/// character of the key breaks the format. The generation tells a later hand-over's tasks from
/// an earlier one's with the same parts, whose events may still come, even in another process.
/// The labels of earlier versions, `mediacore/1 <parts> <download>`, are still read (with no
/// generation). A description in another format (another library's task in the same session)
/// reads as `nil`, never as a wrong label.
struct BackgroundTaskLabel: Hashable, Sendable, CustomStringConvertible {
    /// The download's key.
    var download: String
    /// The plan's parts the task's body holds, in their order in the body (non-empty).
    var parts: [Int]
    /// The hand-over's generation; `nil` in a label of an earlier version.
    var generation: UInt64?

    private static let prefix = "mediacore/1"
    private static let generationPrefix = "mediacore/2"

    /// The label's text, for `taskDescription`.
    ///
    /// - Complexity: O(*p* + *k*) for *p* parts and a key of *k* bytes.
    var description: String {
        var runs: [String] = []
        var index = parts.startIndex
        while index < parts.endIndex {
            var last = index
            while last + 1 < parts.endIndex, parts[last + 1] == parts[last] + 1 { last += 1 }
            runs.append(last == index ? "\(parts[index])" : "\(parts[index])-\(parts[last])")
            index = last + 1
        }
        let key = download.addingPercentEncoding(withAllowedCharacters: Self.keyCharacters) ?? ""
        guard let generation else { return "\(Self.prefix) \(runs.joined(separator: ",")) \(key)" }
        return "\(Self.generationPrefix) \(generation) \(runs.joined(separator: ",")) \(key)"
    }

    /// Unreserved characters (RFC 3986 §2.3): everything else in a key is percent-encoded.
    private static let keyCharacters = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// The most parts a label may name: a description is a few kilobytes at most.
    static let maximumParts = 100_000

    /// A label for `parts` of `download`, handed over in `generation`.
    init(download: String, parts: [Int], generation: UInt64? = nil) {
        self.download = download
        self.parts = parts
        self.generation = generation
    }

    /// Reads a task's description; `nil` for a description that is not a label of this format
    /// (absent, another library's, or damaged).
    ///
    /// - Complexity: O(*n*) in the description's length and the parts it names.
    init?(parsing text: String?) {
        guard let text else { return nil }
        var fields = text.split(separator: " ", omittingEmptySubsequences: false)
        var generation: UInt64?
        if fields.count == 4, fields[0] == Self.generationPrefix {
            guard fields[1].utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let number = UInt64(fields[1]) else {
                return nil
            }
            generation = number
            fields.remove(at: 1)
        } else if fields.first != Substring(Self.prefix) {
            return nil
        }
        guard fields.count == 3, !fields[2].isEmpty, let key = String(fields[2]).removingPercentEncoding
        else { return nil }
        var parts: [Int] = []
        for run in fields[1].split(separator: ",", omittingEmptySubsequences: false) {
            let bounds = run.split(separator: "-", omittingEmptySubsequences: false)
            guard (1...2).contains(bounds.count), let first = Int(bounds[0]), first >= 0,
                let last = bounds.count == 2 ? Int(bounds[1]) : first, last >= first,
                last - first < Self.maximumParts - parts.count
            else { return nil }
            parts.append(contentsOf: first...last)
        }
        guard !parts.isEmpty else { return nil }
        self.init(download: key, parts: parts, generation: generation)
    }
}

/// One background download task to submit: a resource, or a byte range of one that covers one
/// or more of a plan's parts, with its label and the bytes it expects.
struct BackgroundTransferRequest: Hashable, Sendable {
    /// The resource.
    var url: URL
    /// The bytes asked for; `nil` for the whole resource.
    var byteRange: ByteRange?
    /// What the task is for, written as its `taskDescription`.
    var label: BackgroundTaskLabel
    /// Each part's bytes in the resource (`nil` for a part that is the whole resource), in the
    /// label's order.
    var partRanges: [ByteRange?]
    /// The body's expected size, for `countOfBytesClientExpectsToReceive` (headers are added by
    /// ``expectedBytesToReceive``); `nil` when not known.
    var expectedBodyBytes: UInt64?

    /// A generous allowance for a response's status line and headers.
    static let headerAllowance: UInt64 = 1_024

    /// The value for `countOfBytesClientExpectsToReceive`: the body and its headers, or `nil`
    /// (`NSURLSessionTransferSizeUnknown`) when the body's size is not known.
    var expectedBytesToReceive: UInt64? {
        expectedBodyBytes.map { $0 &+ Self.headerAllowance }
    }
}

/// The hand-over of a download's remaining parts to a background session, as one batch.
///
/// Each part becomes a download task, except that parts whose byte ranges of one resource are
/// adjacent merge into one request (a range request of their union, RFC 9110 §14.1.2): a lesson
/// of byte-range segments in one file becomes one task per run of adjacent segments rather than
/// one per segment, which is what the background daemon schedules well. Parts stay in plan order
/// where they can: requests are ordered by their first part.
enum BackgroundBatch {
    /// One part to hand over: its index in the download's plan, where its bytes are, and its
    /// size when known.
    typealias Part = PlannedPart

    /// The requests that fetch `parts` of `download` in hand-over `generation`, adjacent ranges
    /// of one resource merged.
    ///
    /// Parts of the same URL whose ranges touch (one's end is the next one's offset, in offset
    /// order) form one request; a part without a range (the whole resource) is a request of its
    /// own, as is a part named twice (the same range, or overlapping ones: nothing is merged
    /// that would fetch a byte twice or leave a gap).
    ///
    /// - Complexity: O(*p* log *p*) for *p* parts.
    static func requests(download: String, parts: [Part], generation: UInt64? = nil) -> [BackgroundTransferRequest] {
        var singles: [BackgroundTransferRequest] = []
        var byResource: [URL: [Part]] = [:]
        for part in parts {
            guard let range = part.part.byteRange, range.isRepresentable else {
                singles.append(
                    BackgroundTransferRequest(
                        url: part.part.url, byteRange: part.part.byteRange,
                        label: BackgroundTaskLabel(download: download, parts: [part.index], generation: generation),
                        partRanges: [part.part.byteRange], expectedBodyBytes: part.expectedBytes))
                continue
            }
            byResource[part.part.url, default: []].append(part)
        }
        var merged: [BackgroundTransferRequest] = []
        for (url, ranged) in byResource {
            let sorted = ranged.sorted { lhs, rhs in
                let (left, right) = (lhs.part.byteRange?.offset ?? 0, rhs.part.byteRange?.offset ?? 0)
                return left == right ? lhs.index < rhs.index : left < right
            }
            var run: [Part] = []
            func close() {
                guard let first = run.first?.part.byteRange, let last = run.last?.part.byteRange else { return }
                let length = last.end - first.offset
                merged.append(
                    BackgroundTransferRequest(
                        url: url, byteRange: ByteRange(length: length, offset: first.offset),
                        label: BackgroundTaskLabel(
                            download: download, parts: run.map(\.index), generation: generation),
                        partRanges: run.map(\.part.byteRange), expectedBodyBytes: length))
                run = []
            }
            for part in sorted {
                if let previous = run.last?.part.byteRange, let range = part.part.byteRange,
                    previous.end != range.offset || range.length == 0 || previous.length == 0
                {
                    close()
                }
                run.append(part)
            }
            close()
        }
        return (singles + merged).sorted { ($0.label.parts.min() ?? 0) < ($1.label.parts.min() ?? 0) }
    }

    /// Why a finished task's file cannot be split into its parts.
    enum SplitError: Error, Hashable, Sendable {
        /// The body is not the size the request asked for.
        case wrongLength(expected: UInt64, received: UInt64)
        /// The server answered with a status that carries no part of the resource.
        case unexpectedStatus(Int)
        /// A 206 whose `Content-Range` is not the range asked for (RFC 9110 §14.4).
        case otherRange(String)
        /// The request's range ends past 2⁶⁴ (the engine refuses such a part before any transfer).
        case unrepresentableRange
    }

    /// The bytes of the resource that the body a finished task wrote holds: `nil` for the whole
    /// resource.
    ///
    /// The body is judged by what the request asked and the length received, whatever the
    /// status: Apple does not document the response of a task resumed from resume data, and a
    /// resumed task asks for the rest (`Range` with `If-Range`), so its `206` may name only the
    /// remainder while the file it delivers holds the whole part.
    ///
    /// - A `200` is the whole resource (a server may ignore `Range`, RFC 9110 §14.2), at least
    ///   as long as the range asked.
    /// - A `206` (RFC 9110 §15.3.7, §14.4) whose `Content-Range` is the range asked (or absent,
    ///   for a ranged request) holds that range. One whose `Content-Range` is a remainder of it
    ///   (the same last byte, a later first one) holds the whole range asked when the body is
    ///   its length, the system having joined what it had with the rest; or only the remainder
    ///   when the body is the remainder's length. For a request of the whole resource, a
    ///   remainder to its end holds the whole resource when the body is the complete length,
    ///   or the remainder when it is the remainder's.
    ///
    /// - Throws: ``SplitError`` when the body cannot be told apart so.
    /// - Complexity: O(*p*) for the request's *p* parts.
    static func heldRange(
        of request: BackgroundTransferRequest, status: Int, contentRange: String?, bodyLength: UInt64
    ) throws(SplitError) -> ByteRange? {
        guard status == 200 || status == 206 else { throw .unexpectedStatus(status) }
        guard let asked = request.byteRange else {
            guard status == 206 else { return nil }
            // A resumed task of the whole resource: the rest, "bytes N-(total-1)/total".
            guard let header = contentRange, let range = ContentRange(header), let total = range.total,
                range.last == total - 1
            else { throw .otherRange(contentRange ?? "") }
            if bodyLength == total { return nil }
            let remainder = range.last - range.first + 1
            guard bodyLength == remainder else { throw .wrongLength(expected: total, received: bodyLength) }
            return ByteRange(length: remainder, offset: range.first)
        }
        guard asked.isRepresentable, request.partRanges.allSatisfy({ $0?.isRepresentable ?? true }) else {
            throw .unrepresentableRange
        }
        if status == 200 {
            guard bodyLength >= asked.end else { throw .wrongLength(expected: asked.end, received: bodyLength) }
            return nil
        }
        guard asked.length > 0, let header = contentRange else {
            // A 206 without a Content-Range, or for an empty range: the body is the range asked.
            if let contentRange {
                let expected = "bytes \(asked.offset)-\(asked.offset)/"
                guard contentRange.lowercased().hasPrefix(expected) else { throw .otherRange(contentRange) }
            }
            guard bodyLength == asked.length else { throw .wrongLength(expected: asked.length, received: bodyLength) }
            return asked
        }
        guard let range = ContentRange(header), range.last == asked.end - 1, range.first >= asked.offset else {
            throw .otherRange(header)
        }
        if range.first == asked.offset || bodyLength == asked.length {
            guard bodyLength == asked.length else { throw .wrongLength(expected: asked.length, received: bodyLength) }
            return asked
        }
        let remainder = range.last - range.first + 1
        guard bodyLength == remainder else { throw .wrongLength(expected: asked.length, received: bodyLength) }
        return ByteRange(length: remainder, offset: range.first)
    }

    /// Where each part's bytes lie in the body a finished task wrote, in the label's order:
    /// `nil` for a part the body does not hold (a resumed task that delivered only the rest).
    ///
    /// A body of a range (``heldRange(of:status:contentRange:bodyLength:)``) holds each part of
    /// it at its offset from the range's start; a body of the whole resource (a 200) at its own
    /// offset. For a part without a range the body is the part.
    ///
    /// - Parameters:
    ///   - request: The request the task was made from.
    ///   - status: The response's status code.
    ///   - contentRange: The response's `Content-Range`, for a 206.
    ///   - bodyLength: The size of the file the task wrote.
    /// - Throws: ``SplitError`` when the body cannot hold the parts.
    /// - Complexity: O(*p*) for the request's *p* parts.
    static func split(
        _ request: BackgroundTransferRequest, status: Int, contentRange: String?, bodyLength: UInt64
    ) throws(SplitError) -> [Range<UInt64>?] {
        let held = try heldRange(of: request, status: status, contentRange: contentRange, bodyLength: bodyLength)
        return request.partRanges.map { range -> Range<UInt64>? in
            guard let range else { return held == nil ? 0..<bodyLength : nil }
            guard let held else { return range.offset..<range.end }
            guard range.offset >= held.offset, range.end <= held.end else { return nil }
            return (range.offset - held.offset)..<(range.end - held.offset)
        }
    }
}
