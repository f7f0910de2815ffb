public import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a lesson will take once downloaded, known before its first segment: for a queue that
/// shows a course's size up front and checks it against the free space and a quota.
public struct DownloadEstimate: Hashable, Sendable, Codable {
    /// How the size is known.
    public enum Basis: String, Hashable, Sendable, Codable {
        /// The sum of every segment's byte range: exact.
        case byteRanges
        /// The server's `Content-Length` (or `Content-Range` total) of a single file: exact.
        case contentLength
        /// The variant's `BANDWIDTH` (and its audio rendition's) × the duration: an upper bound
        /// a well-behaved server keeps (RFC 8216 §4.3.4.2 makes `BANDWIDTH` the peak rate).
        case bandwidth
        /// The first segment's size, asked of its server, at its rate for the whole duration: a
        /// media playlist without `BANDWIDTH` or byte ranges.
        case firstSegment
        /// The download's own figure once its parts arrive (the bytes of the parts done, and
        /// the rest at their rate), which replaces an estimate that was not exact.
        case refined
        /// Nothing says: no byte ranges, no `BANDWIDTH`.
        case unknown
    }

    /// The bytes, or `nil` when the basis is ``Basis/unknown``.
    public var bytes: UInt64?
    /// How ``bytes`` is known.
    public var basis: Basis

    /// Whether ``bytes`` is the exact size of what is fetched.
    public var isExact: Bool { basis == .byteRanges || basis == .contentLength }

    /// Creates an estimate.
    public init(bytes: UInt64?, basis: Basis) {
        self.bytes = basis == .unknown ? nil : bytes
        self.basis = bytes == nil ? .unknown : basis
    }
}

extension MediaDownloader {
    /// Estimates what ``downloadLesson(from:to:policy:preferredLanguages:audioRenditions:decryptor:subtitles:)``
    /// would fetch from `url` with the same choices, without fetching a segment: the first
    /// kilobyte tells a file from a playlist (as the download does); a file's size is its
    /// server's total, and an HLS lesson's is the sum of its segments' byte ranges when every
    /// part has one, else its bandwidth × its duration, else (a media playlist alone) its first
    /// segment's size, asked with a one-byte range, scaled to the whole duration.
    ///
    /// - Throws: ``DownloadError`` when the lesson cannot be read (a playlist that cannot be
    ///   fetched or parsed, a page that is not media).
    public func estimateLesson(
        from url: URL, policy: VariantPolicy = .default, preferredLanguages: [String] = Locale.preferredLanguages,
        audioRenditions: AudioRenditionSelection = .best
    ) async throws -> DownloadEstimate {
        var probe = URLRequest(url: url)
        probe.setValue("bytes=0-1023", forHTTPHeaderField: "Range")
        let answer = try await engine.sendWithRetry(probe, part: 0)
        try Self.checkStatus(of: answer.1, url: url)
        switch try LessonContent.classify(answer.0, response: answer.1, url: url) {
        case .media:
            return DownloadEstimate(bytes: Self.totalLength(of: answer), basis: .contentLength)
        case .playlist:
            let planned = try await planVideoLesson(
                from: url, first: Self.wholeBody(answer), policy: policy, preferredLanguages: preferredLanguages,
                audio: audioRenditions, subtitles: false)
            let plan = planned.plan
            if let bytes = plan.expectedBytes {
                return DownloadEstimate(bytes: bytes, basis: plan.isExact ? .byteRanges : .bandwidth)
            }
            return DownloadEstimate(bytes: try await firstSegmentEstimate(of: plan), basis: .firstSegment)
        }
    }

    /// The first segment's length (from the `Content-Range` total of a one-byte request) at its
    /// rate for the lesson's whole duration, or `nil` when its server does not say.
    func firstSegmentEstimate(of plan: LessonPlan) async throws -> UInt64? {
        guard let first = plan.parts.first(where: { $0.role != .initialization }), first.duration > 0,
            plan.duration > 0
        else { return nil }
        var request = URLRequest(url: first.downloadPart.url)
        let start = first.downloadPart.byteRange?.offset ?? 0
        request.setValue("bytes=\(start)-\(start)", forHTTPHeaderField: "Range")
        let answer = try await engine.sendWithRetry(request, part: nil)
        let length = first.downloadPart.byteRange?.length ?? Self.totalLength(of: answer)
        return length.map { saturatingBytes(Double($0) / first.duration * plan.duration) }
    }

    /// A single file's total size from the answer to its first kilobyte: the `Content-Range`
    /// total of a `206`, or the `Content-Length` of a `200`.
    static func totalLength(of answer: (Data, URLResponse)) -> UInt64? {
        guard let http = answer.1 as? HTTPURLResponse else { return nil }
        if http.statusCode == 206, let header = http.value(forHTTPHeaderField: "Content-Range") {
            return ContentRange(header)?.total
        }
        if http.statusCode == 200 {
            return http.value(forHTTPHeaderField: "Content-Length").flatMap { UInt64($0) }
                ?? UInt64(answer.0.count)
        }
        return nil
    }
}
