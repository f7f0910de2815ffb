public import Foundation
public import HTTPSupport

#if canImport(FoundationNetworking)
    public import FoundationNetworking
#endif

/// Downloads an ordered list of parts into one file, with a fixed number of concurrent
/// transfers, resumably.
///
/// - **Order.** Parts with byte ranges have known offsets: each is written at its place as soon
///   as it arrives. Otherwise parts are written in order through a reorder buffer; a part is
///   only started within `concurrency + 1` parts of the first unwritten one, so at most
///   (N + 1) × the largest part is ever held in memory, whatever the list's length.
/// - **Concurrency.** Never more than ``concurrency`` transfers are in flight.
/// - **Slow servers.** With a ``partTimeout`` (2 minutes in the `URLSession` initializer), each
///   attempt at a part must finish within it on the injected clock; a server that drips bytes
///   slower than that times out like a lost connection and is retried. ``MediaDownloader``'s
///   playlist fetches are held to the same deadline.
/// - **Failures.** Timeouts, connection losses and 5xx answers are retried with exponential
///   backoff and jitter on the injected clock; a 4xx, or a body of the wrong length or range,
///   fails with a ``DownloadError`` naming the part. A `200 OK` to a range request (a server
///   that ignores ranges) is sliced to the range, never written whole at the range's place.
/// - **Atomicity and resume.** Bytes go to a hidden staging file beside the destination, with a
///   journal of the parts written. The destination appears, by a single rename, only when
///   complete. A cancelled job removes both; a paused, failed or killed one leaves them, and the
///   next ``start(_:to:transform:)`` with the same parts resumes from the parts not yet
///   written, byte for byte identical to an uninterrupted download.
public struct DownloadEngine<C: Clock>: Sendable where C.Duration == Duration {
    /// Turns a part's fetched bytes into the bytes to write (for example, a decryptor).
    public typealias Transform = @Sendable (_ data: Data, _ partIndex: Int) async throws -> Data

    /// The most transfers in flight at once.
    public let concurrency: Int
    /// How transient failures are retried.
    public let retry: RetryPolicy
    /// The longest one attempt at one part may take, however slowly its bytes arrive; `nil`
    /// leaves timing to the transport.
    public let partTimeout: Duration?
    /// The URL schemes the engine fetches: `http` and `https` unless the app opts in to more.
    /// A part or playlist with any other scheme (`file:` from a hostile catalog, say) fails with
    /// a ``DownloadError`` of kind ``DownloadError/Kind/transport(_:)`` before it is sent.
    public let allowedSchemes: Set<String>
    let clock: C
    let transport: any HTTPTransport
    let randomUnit: @Sendable () -> Double

    /// Creates an engine.
    ///
    /// - Parameters:
    ///   - concurrency: The most transfers in flight (at least 1; 2 by default).
    ///   - retry: How transient failures are retried.
    ///   - partTimeout: The longest one attempt at one part may take; `nil` (the default here)
    ///     leaves timing to the transport.
    ///   - clock: The clock backoff delays and timeouts are measured on.
    ///   - randomUnit: A random number in `0..<1` for backoff jitter.
    ///   - allowedSchemes: The URL schemes fetched (`http` and `https`); others only by opting in.
    ///   - transport: Sends the requests (``URLSessionTransport`` in the convenience initializer).
    public init(
        concurrency: Int = 2, retry: RetryPolicy = RetryPolicy(), partTimeout: Duration? = nil, clock: C,
        randomUnit: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        allowedSchemes: Set<String> = ["http", "https"], transport: any HTTPTransport
    ) {
        self.allowedSchemes = Set(allowedSchemes.map { $0.lowercased() })
        self.concurrency = max(1, concurrency)
        self.retry = retry
        self.partTimeout = partTimeout.map { max($0, .zero) }
        self.clock = clock
        self.randomUnit = randomUnit
        self.transport = transport
    }

    /// Starts downloading `parts` into `destination`, resuming an interrupted download of the
    /// same parts if its staging file is there.
    public func start(_ parts: [DownloadPart], to destination: URL, transform: Transform? = nil) -> DownloadJob {
        DownloadJob { job in
            try await run(parts, to: destination, transform: transform, job: job)
        }
    }

    /// Downloads `parts` into `destination` and returns when the file is complete.
    ///
    /// Cancelling the calling task cancels the download (and removes its partial file).
    ///
    /// - Throws: ``DownloadError``.
    public func download(_ parts: [DownloadPart], to destination: URL, transform: Transform? = nil)
        async throws(DownloadError)
        -> DownloadResult
    {
        try await start(parts, to: destination, transform: transform).result()
    }

    // MARK: The run

    /// Where one run's progress sits in a job of several runs (the video, then the audio, of a
    /// lesson): parts and bytes already done by earlier runs, and the parts of the whole job.
    struct ProgressPhase: Sendable {
        var partsBefore = 0
        var bytesBefore: UInt64 = 0
        var totalParts: Int?
    }

    func run(
        _ parts: [DownloadPart], to destination: URL, transform: Transform?, job: DownloadJob,
        phase: ProgressPhase = ProgressPhase()
    ) async throws -> DownloadResult {
        // A range that ends past 2⁶⁴ (a hand-built or tampered part) is refused before any file
        // or transfer: its `Range` header and its offsets could not be written.
        var total: UInt64 = 0
        for (index, part) in parts.enumerated() {
            let length = part.byteRange?.length ?? 0
            let (sum, overflow) = total.addingReportingOverflow(length)
            guard part.byteRange?.isRepresentable ?? true, !overflow else {
                throw DownloadError(.rangeTooLarge, part: index, url: part.url)
            }
            total = sum
        }
        let files = StagingFiles(destination: destination, parts: parts)
        do {
            do {
                return try await runKeepingFiles(parts, files: files, transform: transform, job: job, phase: phase)
            } catch is Validators.Changed {
                // The server's copy changed since the bytes kept were written (between a pause and
                // a resume, say): they belong to another version, so start over, once.
                files.remove()
                do {
                    return try await runKeepingFiles(parts, files: files, transform: transform, job: job, phase: phase)
                } catch let again as Validators.Changed {
                    files.remove()
                    throw DownloadError(.remoteChanged(was: again.was, now: again.now), url: again.url)
                }
            }
        } catch {
            // A cancellation removes the partial download; a pause or a failure keeps it to resume.
            if (error is CancellationError || Task.isCancelled) && !job.isPauseRequested {
                files.remove()
            }
            throw error
        }
    }

    func runKeepingFiles(
        _ parts: [DownloadPart], files: StagingFiles, transform: Transform?, job: DownloadJob, phase: ProgressPhase
    ) async throws -> DownloadResult {
        let validators = Validators(file: files.validatorsURL)
        /// This run's progress as the whole job's.
        func report(written: UInt64, completed: Int, expected: UInt64?) {
            let whole = phase.totalParts != nil
            job.report(
                DownloadProgress(
                    bytesWritten: phase.bytesBefore + written, partsCompleted: phase.partsBefore + completed,
                    partCount: phase.totalParts ?? parts.count, bytesExpected: whole ? nil : expected))
        }
        let destination = files.destination
        var journal = try files.openJournal()
        let handle = try files.openStaging(truncatingTo: journal.bytesWritten)
        defer { try? handle.close() }

        let positioned = parts.allSatisfy { $0.byteRange != nil }
        var offsets: [UInt64] = []
        var expected: UInt64?
        if positioned {
            var next: UInt64 = 0
            for part in parts {
                offsets.append(next)
                // `run` checked that the lengths add up within 2⁶⁴.
                next += part.byteRange?.length ?? 0
            }
            expected = next
        }
        var written = journal.bytesWritten
        var completed = journal.completed
        var nextToWrite = 0
        while completed.contains(nextToWrite) { nextToWrite += 1 }
        var pending = Array((0..<parts.count).filter { !completed.contains($0) }.reversed())
        var buffer: [Int: Data] = [:]
        var buffered: UInt64 = 0
        var peak: UInt64 = 0
        var fetched = 0
        report(written: written, completed: completed.count, expected: expected)

        try await withThrowingTaskGroup(of: (Int, Data).self) { group in
            var inFlight = 0
            func startMore() {
                while inFlight < concurrency, let index = pending.last {
                    // In order mode, stay within the reorder window.
                    if !positioned, index > nextToWrite + concurrency { break }
                    pending.removeLast()
                    inFlight += 1
                    group.addTask {
                        var data = try await fetchWithRetry(parts[index], index: index, validators: validators)
                        if let transform { data = try await transform(data, index) }
                        return (index, data)
                    }
                }
            }
            startMore()
            while let (index, data) = try await group.next() {
                inFlight -= 1
                fetched += 1
                buffered += UInt64(data.count)
                peak = max(peak, buffered)
                if positioned {
                    try files.write(data, at: offsets[index], to: handle)
                    buffered -= UInt64(data.count)
                    try journal.record(index, length: UInt64(data.count))
                    completed.insert(index)
                    written += UInt64(data.count)
                } else {
                    buffer[index] = data
                    while let ready = buffer.removeValue(forKey: nextToWrite) {
                        try files.write(ready, at: written, to: handle)
                        buffered -= UInt64(ready.count)
                        try journal.record(nextToWrite, length: UInt64(ready.count))
                        completed.insert(nextToWrite)
                        written += UInt64(ready.count)
                        nextToWrite += 1
                    }
                }
                report(written: written, completed: completed.count, expected: expected)
                startMore()
            }
        }
        try files.finish(handle: handle, byteCount: written)
        return DownloadResult(file: destination, byteCount: written, partsFetched: fetched, peakBufferedBytes: peak)
    }

    /// Fetches a part, retrying transient failures with backoff on the engine's clock.
    func fetchWithRetry(_ part: DownloadPart, index: Int, validators: Validators? = nil) async throws -> Data {
        try await retry.run(
            on: clock, randomUnit: randomUnit, isTransient: { ($0 as? DownloadError)?.isTransient == true },
            serverDelay: { ($0 as? DownloadError)?.retryAfter },
            operation: { _ in try await fetch(part, index: index, validators: validators) })
    }

    /// Sends one request, under ``partTimeout`` when `timed`, and types its failure.
    ///
    /// - Parameter part: The part the request fetches, or `nil` for a playlist.
    /// - Throws: ``DownloadError/Kind/transport(_:)`` naming the part, or `CancellationError`.
    func send(_ request: URLRequest, part: Int?, timed: Bool = true) async throws -> (Data, URLResponse) {
        do {
            return try await transport.send(
                request, timeout: timed ? partTimeout : nil, on: clock, allowing: allowedSchemes)
        } catch {
            if error.kind == .cancelled { throw CancellationError() }
            throw DownloadError(.transport(error), part: part, url: request.url)
        }
    }

    /// One attempt at a part.
    func fetch(_ part: DownloadPart, index: Int, validators: Validators? = nil) async throws -> Data {
        if let range = part.byteRange, range.length == 0 { return Data() }
        var request = URLRequest(url: part.url)
        let known = validators?.validator(for: part.url)
        if let range = part.byteRange {
            request.setValue(range.httpRangeHeader, forHTTPHeaderField: "Range")
            // RFC 9110 §13.1.5: the range only if the resource is still the version whose bytes
            // are kept; otherwise the server sends it whole, and the download starts over.
            if let known { request.setValue(known, forHTTPHeaderField: "If-Range") }
        }
        let (data, response) = try await send(request, part: index)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 200
        if let validators {
            try validators.check(response, for: part.url)
            if status == 200, part.byteRange != nil, let known {
                throw Validators.Changed(url: part.url, was: known, now: "a whole new representation")
            }
        }
        switch (status, part.byteRange) {
        case (206, let range?):
            // RFC 9110 §15.3.7.1: a single-part 206 carries a Content-Range naming the bytes it
            // holds. Without one (or unreadable, or other bytes) nothing says where the body goes.
            let header = (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Range")
            guard let header, let served = ContentRange(header), served.first == range.offset,
                served.last == range.end - 1
            else {
                throw DownloadError(
                    .wrongRange(expected: range.httpRangeHeader, received: header ?? "no Content-Range"),
                    part: index, url: part.url)
            }
            guard UInt64(data.count) == range.length else {
                throw DownloadError(
                    .wrongLength(expected: range.length, received: UInt64(data.count)), part: index, url: part.url)
            }
            return data
        case (200, let range?):
            // The server ignored the range and sent the whole resource: take the slice.
            guard UInt64(data.count) >= range.end else {
                throw DownloadError(
                    .wrongLength(expected: range.end, received: UInt64(data.count)), part: index, url: part.url)
            }
            let start = data.startIndex + Int(range.offset)
            return data.subdata(in: start..<(start + Int(range.length)))
        case (200, nil):
            return data
        case (206, nil):
            throw DownloadError(
                .wrongRange(expected: "the whole resource", received: "206 Partial Content"), part: index,
                url: part.url)
        default:
            var error = DownloadError(.httpStatus(status), part: index, url: part.url)
            error.retryAfter = (response as? HTTPURLResponse)?.retryAfter
            throw error
        }
    }
}

extension DownloadEngine where C == ContinuousClock {
    /// Creates an engine over `URLSession`, cancellation bridged to the session's tasks.
    ///
    /// - Parameters:
    ///   - concurrency: The most transfers in flight (at least 1; 2 by default).
    ///   - retry: How transient failures are retried.
    ///   - partTimeout: The longest one attempt at one part may take (2 minutes).
    ///   - session: The session requests go through.
    public init(
        concurrency: Int = 2, retry: RetryPolicy = RetryPolicy(), partTimeout: Duration? = .seconds(120),
        session: URLSession = .shared
    ) {
        self.init(
            concurrency: concurrency, retry: retry, partTimeout: partTimeout, clock: ContinuousClock(),
            transport: URLSessionTransport(session: session))
    }
}

/// A `Content-Range: bytes first-last/total` header (RFC 9110 §14.4): digits only, `first` ≤
/// `last`, and a complete length, when given (not `*`), past `last`.
struct ContentRange: Equatable {
    var first: UInt64
    var last: UInt64
    var total: UInt64?

    init?(_ header: String) {
        let trimmed = header.trimmingCharacters(in: .whitespaces)
        // The range unit is case-insensitive (§14.1).
        guard trimmed.utf8.count > 6, trimmed.prefix(6).lowercased() == "bytes " else { return nil }
        let spec = trimmed.dropFirst(6)
        let halves = spec.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard halves.count == 2 else { return nil }
        let bounds = halves[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Self.digits(bounds[0]), let last = Self.digits(bounds[1]), first <= last
        else { return nil }
        self.first = first
        self.last = last
        if halves[1] == "*" {
            total = nil
        } else {
            guard let total = Self.digits(halves[1]), total > last else { return nil }
            self.total = total
        }
    }

    /// A decimal number of digits only (`UInt64.init` would also take a sign).
    static func digits(_ text: Substring) -> UInt64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return UInt64(text)
    }
}
