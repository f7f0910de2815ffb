package import Foundation

/// The parts of one download, each made when the engine reaches it.
///
/// A list of parts (an HLS playlist's segments, a caller's parts) is kept as given, with the
/// file offset of each part when every part has a byte range. The ranges of one large file are
/// not listed at all: part *i* is computed from the file's size and the range size, so a size
/// announced by a server costs the same memory whatever it is.
package struct DownloadPlan: Sendable {
    private enum Storage: Sendable {
        /// Parts as given, and their offsets in the file when every part has a range.
        case listed([DownloadPart], offsets: [UInt64]?)
        /// The `total` bytes at `url`, in ranges of `size` bytes (the last one shorter).
        case ranges(url: URL, total: UInt64, size: UInt64)
    }

    private let storage: Storage
    /// How many parts there are.
    package let count: Int
    /// The file's length when every part has a byte range (the sum of their lengths); `nil` when
    /// some part is a whole resource of unknown length.
    package let totalLength: UInt64?

    /// The most ranges one file is split into; a smaller range size is enlarged to fit.
    package static let maximumRangeCount: UInt64 = 100_000

    /// A plan of `parts`, as given.
    ///
    /// - Throws: ``DownloadError`` of kind ``DownloadError/Kind/rangeTooLarge`` naming the first
    ///   part whose range ends past 2⁶⁴, or at which the lengths add up past it.
    /// - Complexity: O(*n*) for *n* parts.
    init(_ parts: [DownloadPart]) throws(DownloadError) {
        var total: UInt64 = 0
        var offsets: [UInt64] = []
        let positioned = parts.allSatisfy { $0.byteRange != nil }
        if positioned { offsets.reserveCapacity(parts.count) }
        for (index, part) in parts.enumerated() {
            let length = part.byteRange?.length ?? 0
            let (sum, overflow) = total.addingReportingOverflow(length)
            guard part.byteRange?.isRepresentable ?? true, !overflow else {
                throw DownloadError(.rangeTooLarge, part: index, url: part.url)
            }
            if positioned { offsets.append(total) }
            total = sum
        }
        storage = .listed(parts, offsets: positioned ? offsets : nil)
        count = parts.count
        totalLength = positioned ? total : nil
    }

    /// A plan of the `total` bytes at `url` in ranges of `rangeSize` bytes, enlarged so that
    /// there are at most ``maximumRangeCount`` of them.
    ///
    /// - Complexity: O(1): no part is made until it is asked for.
    package init(rangesOf url: URL, total: UInt64, rangeSize: UInt64) {
        let most = Self.maximumRangeCount
        let size = max(rangeSize, 1, total / most + (total % most == 0 ? 0 : 1))
        storage = .ranges(url: url, total: total, size: size)
        count = Int(total / size + (total % size == 0 ? 0 : 1))
        totalLength = total
    }

    /// Whether every part has a byte range, so that each is written at its own offset as it
    /// arrives; otherwise parts are written one after another, in order.
    var isPositioned: Bool { totalLength != nil }

    /// Part `index`, for `index` in `0..<count`.
    ///
    /// - Complexity: O(1).
    package subscript(index: Int) -> DownloadPart {
        switch storage {
        case .listed(let parts, _):
            return parts[index]
        case .ranges(let url, let total, let size):
            let offset = UInt64(index) * size
            return DownloadPart(url: url, byteRange: ByteRange(length: min(size, total - offset), offset: offset))
        }
    }

    /// Where part `index` starts in the file, when the plan ``isPositioned``; 0 otherwise.
    ///
    /// - Complexity: O(1).
    package func offset(of index: Int) -> UInt64 {
        switch storage {
        case .listed(_, let offsets): offsets?[index] ?? 0
        case .ranges(_, _, let size): UInt64(index) * size
        }
    }

    /// The length of part `index` when it has a byte range.
    ///
    /// - Complexity: O(1).
    func length(of index: Int) -> UInt64? {
        self[index].byteRange?.length
    }

    /// A hash of every part's URL and range, naming this download in its journal.
    ///
    /// - Complexity: O(*n*) time for *n* parts, O(1) memory.
    var fingerprint: String {
        var hash = FNV1a64()
        for index in 0..<count {
            let part = self[index]
            hash.add(part.url.absoluteString.utf8)
            hash.add("|\(part.byteRange?.description ?? "-");".utf8)
        }
        return String(hash.value, radix: 16)
    }
}
