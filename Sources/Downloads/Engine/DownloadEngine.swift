public import Foundation
public import HTTPSupport
import Locking

#if canImport(FoundationNetworking)
    public import FoundationNetworking
#endif

/// Downloads an ordered list of parts into one file, with a fixed number of concurrent
/// transfers, resumably.
///
/// - **Order.** Parts with byte ranges have known offsets: each chunk of each is written at its
///   place as it arrives (with positional writes; a transform needs the whole part first), so
///   memory holds one chunk per transfer. Otherwise parts are written in order through a
///   reorder buffer; a part is only started within `concurrency + 1` parts of the first
///   unwritten one, so at most (N + 1) × the largest part is ever held in memory, whatever the
///   list's length.
/// - **Concurrency.** Never more than ``concurrency`` transfers are in flight.
/// - **Streaming.** Bodies are read as they arrive: the status and headers are checked before
///   any byte of the body (an error page is never read), a `200` to a range request is sliced
///   while it streams and its transfer stopped after the range, and a part without a range
///   longer than ``maximumPartByteCount`` is refused at the cap. Progress reports carry
///   ``DownloadProgress/bytesReceived`` as bytes arrive, at most every 100 ms on the clock.
/// - **Slow servers.** With an ``idleTimeout`` (2 minutes in the `URLSession` initializer), no
///   more than that may pass on the injected clock without a byte (for the headers, then
///   between chunks); a server that stops sending fails like a lost connection and is retried,
///   while a slow but steady one finishes however long it takes. ``MediaDownloader``'s
///   playlist fetches and size probes are held to the same idle timeout.
/// - **Failures.** Timeouts, connection losses and 5xx answers are retried with exponential
///   backoff and jitter on the injected clock; a 4xx, or a body of the wrong length or range,
///   fails with a ``DownloadError`` naming the part. A `200 OK` to a range request (a server
///   that ignores ranges) is sliced to the range, never written whole at the range's place.
/// - **Atomicity and resume.** Bytes go to a hidden staging file beside the destination, with a
///   journal of the parts written: each line, with the part's length and digest, is appended
///   after the part's bytes are flushed. The destination appears, by a single rename, only when
///   complete. A cancelled job removes both; a paused, failed or killed one leaves them, and the
///   next ``start(_:to:transform:)`` with the same parts checks every listed part's bytes
///   against its length and digest and resumes from the parts not yet written (or damaged),
///   byte for byte identical to an uninterrupted download. One run at a time uses a
///   destination: a run started while a cancelled one cleans up waits for it, and while another
///   process (an app extension) holds the destination's lock, a hidden `.NAME.lock` file locked
///   with `flock(2)`, a run fails at once with ``DownloadError/Kind/destinationInUse``.
public struct DownloadEngine<C: Clock>: Sendable where C.Duration == Duration {
    /// Turns a part's fetched bytes into the bytes to write (for example, a decryptor).
    public typealias Transform = @Sendable (_ data: Data, _ partIndex: Int) async throws -> Data

    /// The most transfers in flight at once.
    public let concurrency: Int
    /// How transient failures are retried.
    public let retry: RetryPolicy
    /// The longest a transfer may go without a byte (the headers, then each next chunk), on the
    /// engine's clock; `nil` leaves timing to the transport.
    public let idleTimeout: Duration?
    /// The URL schemes the engine fetches: `http` and `https` unless the app opts in to more.
    /// A part or playlist with any other scheme (`file:` from a hostile catalog, say) fails with
    /// a ``DownloadError`` of kind ``DownloadError/Kind/unsupportedURL(scheme:)`` before it is
    /// sent.
    public let allowedSchemes: Set<String>
    /// The most bytes one part may have when it has no byte range (a segment, a playlist, a
    /// file from a server that ignores ranges): a longer body stops the transfer with a
    /// ``DownloadError`` of kind ``DownloadError/Kind/tooLarge(bytes:limit:)``. 512 MiB by
    /// default.
    public let maximumPartByteCount: UInt64
    let clock: C
    var transport: any HTTPTransport
    /// Told of each part once the download's journal keeps it (its bytes written, flushed and
    /// vouched for): what background transfers staged for it may go then (``StagedBodies``).
    var partKept: (@Sendable (DownloadPart) -> Void)?
    /// Told once the download's file is in place: whatever background transfers staged for it
    /// (its keys among it) is in the file or needed no more.
    var downloadDone: (@Sendable () -> Void)?
    let randomUnit: @Sendable () -> Double
    /// The file system downloads write in: the device's, or a test's that fails operations.
    package let fileSystem: any DownloadFileSystem

    /// Creates an engine.
    ///
    /// - Parameters:
    ///   - concurrency: The most transfers in flight (at least 1; 2 by default).
    ///   - retry: How transient failures are retried.
    ///   - idleTimeout: The longest a transfer may go without a byte; `nil` (the default here)
    ///     leaves timing to the transport.
    ///   - clock: The clock backoff delays and timeouts are measured on.
    ///   - allowedSchemes: The URL schemes fetched (`http` and `https`); others only by opting in.
    ///   - maximumPartByteCount: The most bytes a part without a byte range may have (512 MiB).
    ///   - transport: Sends the requests (`URLSessionTransport` in the convenience initializer).
    public init(
        concurrency: Int = 2, retry: RetryPolicy = RetryPolicy(), idleTimeout: Duration? = nil, clock: C,
        allowedSchemes: Set<String> = ["http", "https"], maximumPartByteCount: UInt64 = 512 << 20,
        transport: any HTTPTransport
    ) {
        self.init(
            concurrency: concurrency, retry: retry, idleTimeout: idleTimeout, clock: clock,
            randomUnit: { Double.random(in: 0..<1) }, allowedSchemes: allowedSchemes,
            maximumPartByteCount: maximumPartByteCount, transport: transport)
    }

    /// Creates an engine whose backoff jitter comes from `randomUnit` (a number in `0..<1`), so
    /// that the package's tests know every delay, and whose downloads write in `fileSystem`, so
    /// that they can fail its operations.
    package init(
        concurrency: Int = 2, retry: RetryPolicy = RetryPolicy(), idleTimeout: Duration? = nil, clock: C,
        randomUnit: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        allowedSchemes: Set<String> = ["http", "https"], maximumPartByteCount: UInt64 = 512 << 20,
        fileSystem: any DownloadFileSystem = LocalFileSystem(), transport: any HTTPTransport
    ) {
        self.fileSystem = fileSystem
        self.maximumPartByteCount = max(1, maximumPartByteCount)
        self.allowedSchemes = Set(allowedSchemes.map { $0.lowercased() })
        self.concurrency = max(1, concurrency)
        self.retry = retry
        self.idleTimeout = idleTimeout.map { max($0, .zero) }
        self.clock = clock
        self.randomUnit = randomUnit
        self.transport = transport
    }

    /// This engine, answering first from what background transfers staged beside `destination`
    /// (``StagedBodies``), when there is anything: the bodies they brought go through the
    /// download's one journal as the network's bytes would.
    ///
    /// - Complexity: O(1): one check that the staging folder exists.
    func readingStagedBodies(for destination: URL) -> DownloadEngine {
        let staged = StagedBodies.beside(destination)
        guard FileManager.default.fileExists(atPath: staged.folder.path) else { return self }
        var engine = self
        engine.transport = StagedBodyTransport(base: transport, staged: staged)
        engine.partKept = { staged.partIsKept($0) }
        engine.downloadDone = { staged.removeAll() }
        return engine
    }

    /// Starts downloading `parts` into `destination`, resuming an interrupted download of the
    /// same parts if its staging file is there.
    public func start(_ parts: [DownloadPart], to destination: URL, transform: Transform? = nil) -> DownloadJob {
        DownloadJob(destination: destination) { job in
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
        try await run(DownloadPlan(parts), to: destination, transform: transform, job: job, phase: phase)
    }

    func run(
        _ parts: DownloadPlan, to destination: URL, transform: Transform?, job: DownloadJob,
        phase: ProgressPhase = ProgressPhase()
    ) async throws -> DownloadResult {
        let files = StagingFiles(destination: destination, plan: parts, fileSystem: fileSystem)
        // One run at a time per destination: a cancelled run finishes its clean-up first.
        let key = destination.standardizedFileURL.path
        try await DestinationLocks.shared.acquire(key)
        defer { DestinationLocks.shared.release(key) }
        // And one process at a time: another one's run fails fast, changing nothing.
        try files.createFolder()
        let processLock = try DestinationFileLock.acquire(for: destination)
        defer { processLock.release() }
        // What background transfers brought while no run was reading is read first.
        let engine = readingStagedBodies(for: destination)
        do {
            do {
                return try await engine.runKeepingFiles(
                    parts, files: files, transform: transform, job: job, phase: phase)
            } catch is Validators.Changed {
                // The server's copy changed since the bytes kept were written (between a pause and
                // a resume, say): they belong to another version, so start over, once.
                files.remove()
                do {
                    return try await engine.runKeepingFiles(
                        parts, files: files, transform: transform, job: job, phase: phase)
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
        _ parts: DownloadPlan, files: StagingFiles, transform: Transform?, job: DownloadJob, phase: ProgressPhase
    ) async throws -> DownloadResult {
        let validators = Validators(file: files.validatorsURL, fileSystem: fileSystem)
        /// This run's progress as the whole job's.
        @Sendable func report(written: UInt64, completed: Int, expected: UInt64?, inFlight: UInt64 = 0) {
            let whole = phase.totalParts != nil
            job.report(
                DownloadProgress(
                    bytesWritten: phase.bytesBefore + written, partsCompleted: phase.partsBefore + completed,
                    partCount: phase.totalParts ?? parts.count, bytesExpected: whole ? nil : expected,
                    bytesReceived: phase.bytesBefore + written + inFlight))
        }
        let destination = files.destination
        var journal = try files.openJournal()
        let handle = try files.openStaging(truncatingTo: journal.bytesWritten)
        defer { try? handle.close() }

        let positioned = parts.isPositioned
        let expected = parts.totalLength
        var written = journal.bytesWritten
        var completed = journal.completed
        job.planned(into: destination, done: completed) {
            (0..<parts.count).map { index in
                PlannedPart(index: index, part: parts[index], expectedBytes: parts[index].byteRange?.length)
            }
        }
        var nextToWrite = 0
        while completed.contains(nextToWrite) { nextToWrite += 1 }
        // The parts still to fetch, in order, taken one at a time: nothing is listed ahead.
        var nextToStart = 0
        func nextPending() -> Int? {
            while nextToStart < parts.count, completed.contains(nextToStart) { nextToStart += 1 }
            return nextToStart < parts.count ? nextToStart : nil
        }
        var buffer: [Int: Data] = [:]
        var buffered: UInt64 = 0
        var peak: UInt64 = 0
        var fetched = 0
        // Parts with byte ranges and no transform stream straight to their offsets: memory holds
        // one chunk per transfer, not a whole part, and a part stopped midway keeps the bytes it
        // has (its transfer resumes after them).
        let streaming = positioned && transform == nil
        let prefixes = streaming ? journal.partial : [:]
        let prefixBytes = prefixes.values.reduce(UInt64(0)) { $0 + $1.length }
        report(written: written, completed: completed.count, expected: expected, inFlight: prefixBytes)
        let reportedExpected = expected
        let meter = ByteMeter(clock: clock, written: written, completed: completed.count, inFlight: prefixBytes) {
            written, completed, inFlight in
            report(written: written, completed: completed, expected: reportedExpected, inFlight: inFlight)
        }
        let gauge = BufferGauge()
        /// The parts streaming into the staging file, by index, with how far each got.
        let streams = LockedParts()
        func fetchAll() async throws {
            try await withThrowingTaskGroup(of: FetchedPart.self) { group in
                var inFlight = 0
                func startMore() {
                    while inFlight < concurrency, let index = nextPending() {
                        // In order mode, stay within the reorder window.
                        if !positioned, index > nextToWrite + concurrency { break }
                        nextToStart = index + 1
                        inFlight += 1
                        let sink =
                            streaming
                            ? PartSink(
                                files: files, handle: handle, offset: parts.offset(of: index), gauge: gauge,
                                prefix: prefixes[index], progress: streams.track(index))
                            : nil
                        group.addTask {
                            var part = try await fetchWithRetry(
                                parts[index], index: index, validators: validators, meter: meter, into: sink)
                            part.index = index
                            if let transform {
                                part.data = try await transform(part.data, index)
                                part.length = UInt64(part.data.count)
                                part.digest = nil
                            }
                            return part
                        }
                    }
                }
                startMore()
                var fetchedSizes: [Int: UInt64] = [:]
                while let part = try await group.next() {
                    let (index, data, fetchedSize) = (part.index, part.data, part.fetched)
                    inFlight -= 1
                    fetched += 1
                    buffered += UInt64(data.count)
                    peak = max(peak, buffered)
                    if positioned {
                        if let digest = part.digest, streaming {
                            // Already in the staging file: flush it, then vouch for it.
                            try journal.record(index, length: part.length, digest: digest, flushing: handle)
                        } else {
                            try files.write(data, at: parts.offset(of: index), to: handle)
                            try journal.record(index, data: data, flushing: handle)
                        }
                        partKept?(parts[index])
                        buffered -= UInt64(data.count)
                        completed.insert(index)
                        written += part.length
                        meter.settle(fetched: fetchedSize, written: written, completed: completed.count)
                    } else {
                        buffer[index] = data
                        fetchedSizes[index] = fetchedSize
                        while let ready = buffer.removeValue(forKey: nextToWrite) {
                            try files.write(ready, at: written, to: handle)
                            buffered -= UInt64(ready.count)
                            try journal.record(nextToWrite, data: ready, flushing: handle)
                            partKept?(parts[nextToWrite])
                            completed.insert(nextToWrite)
                            written += UInt64(ready.count)
                            meter.settle(
                                fetched: fetchedSizes.removeValue(forKey: nextToWrite) ?? 0, written: written,
                                completed: completed.count)
                            nextToWrite += 1
                        }
                    }
                    startMore()
                }
            }
        }
        do {
            try await fetchAll()
        } catch {
            // What the journal holds, for a hand-over of the rest.
            job.partsDone(completed)
            // Stopped (a pause, a failure): each part that streamed some of its bytes keeps
            // them, vouched for in the journal, so the next run fetches only the rest of it.
            if streaming {
                let stopped = streams.prefixes(excluding: completed, lengths: parts.length(of:))
                if !stopped.isEmpty, (try? journal.recordPrefixes(stopped, flushing: handle)) != nil {
                    // The last word on progress: what a resume starts from, so that a screen
                    // shows it at the stop and at the resume alike.
                    let kept = stopped.values.reduce(UInt64(0)) { $0 + $1.length }
                    report(written: written, completed: completed.count, expected: expected, inFlight: kept)
                }
            }
            throw error
        }
        try files.finish(handle: handle, byteCount: written)
        downloadDone?()
        return DownloadResult(
            file: destination, byteCount: written, partsFetched: fetched, peakBufferedBytes: max(peak, gauge.peak))
    }

    /// Fetches a part, retrying transient failures with backoff on the engine's clock.
    func fetchWithRetry(
        _ part: DownloadPart, index: Int, validators: Validators? = nil, meter: ByteMeter<C>? = nil,
        into sink: PartSink? = nil, receiver: (any PartReceiver)? = nil
    ) async throws -> FetchedPart {
        try await retry.run(
            on: clock, randomUnit: randomUnit, isTransient: { ($0 as? DownloadError)?.isTransient == true },
            serverDelay: { ($0 as? DownloadError)?.retryAfter },
            operation: { attempt in
                // A new attempt starts afresh: what an earlier one handed on no longer counts.
                if attempt > 1 { await receiver?.restart() }
                return try await fetch(
                    part, index: index, validators: validators, meter: meter, into: sink, receiver: receiver
                )
            })
    }

    /// Sends one request (a playlist, a probe, a key) with ``send(_:part:)`` under the retry
    /// policy: a transport failure, a `408`, a `429` or a `5xx` is tried again after the backoff
    /// (or the server's `Retry-After`, RFC 9110 §10.2.3), and the last answer or failure is
    /// returned when the attempts run out. Other statuses come back for the caller to judge.
    ///
    /// - Throws: ``DownloadError``, or `CancellationError`.
    func sendWithRetry(_ request: URLRequest, part: Int?) async throws -> (Data, URLResponse) {
        try await retry.run(
            on: clock, randomUnit: randomUnit, isTransient: { ($0 as? DownloadError)?.isTransient == true },
            serverDelay: { ($0 as? DownloadError)?.retryAfter },
            operation: { _ in
                let answer = try await send(request, part: part)
                if let http = answer.1 as? HTTPURLResponse,
                    http.statusCode >= 500 || http.statusCode == 408 || http.statusCode == 429
                {
                    var error = DownloadError(.httpStatus(http.statusCode), part: part, url: request.url)
                    error.retryAfter = http.retryAfter
                    throw error
                }
                return answer
            })
    }

    /// Sends one request (a playlist or a probe) under ``idleTimeout``, reads a successful body
    /// up to ``maximumPartByteCount``, stops an error's body unread, and types the failure.
    ///
    /// - Parameter part: The part the request fetches, or `nil` for a playlist.
    /// - Throws: ``DownloadError/Kind/transport(_:)`` naming the part, or `CancellationError`.
    func send(_ request: URLRequest, part: Int?) async throws -> (Data, URLResponse) {
        do {
            let streamed = try await transport.stream(
                request, idleTimeout: idleTimeout, on: clock, allowing: allowedSchemes)
            let body = try await streamed.successfulBody(upTo: Int(clamping: maximumPartByteCount))
            return (body, streamed.response)
        } catch {
            if case .bodyTooLarge(let limit) = error.kind {
                throw DownloadError(
                    .tooLarge(bytes: UInt64(limit) + 1, limit: UInt64(limit)), part: part, url: request.url)
            }
            throw Self.typed(error, part: part, url: request.url)
        }
    }

    /// One attempt at a part, its body read as it streams.
    ///
    /// The status and headers are checked before any of the body is read: an error status or a
    /// `206` for other bytes stops the transfer at once. A `200` to a range request is sliced
    /// while it streams, and the transfer stops once the range has arrived. A body longer than
    /// its range, or than ``maximumPartByteCount`` when it has none, stops there too.
    ///
    /// With a `sink`, the part's bytes are written through it as they arrive (an attempt that
    /// fails leaves bytes that no journal line vouches for, and the next attempt overwrites
    /// them) and only their length and digest are returned; otherwise the bytes are returned.
    func fetch(
        _ part: DownloadPart, index: Int, validators: Validators? = nil, meter: ByteMeter<C>? = nil,
        into sink: PartSink? = nil, receiver: (any PartReceiver)? = nil
    ) async throws -> FetchedPart {
        if let range = part.byteRange, range.length == 0 {
            return FetchedPart(index: index, data: Data(), length: 0, digest: sink.map { _ in ChunkDigest().value })
        }
        var request = URLRequest(url: part.url)
        let known = validators?.validator(for: part.url)
        // A part whose first bytes a stopped transfer (an earlier attempt, or an earlier run) left
        // in the staging file asks for the rest only, and goes on hashing from their digest. Only
        // with a validator: `If-Range` is what makes sure the rest is of the same version.
        let resumed =
            known == nil
            ? nil
            : (sink?.progress?.written ?? sink?.prefix).flatMap { prefix in
                part.byteRange.flatMap { range in prefix.length < range.length ? prefix : nil }
            }
        let startAt = resumed?.length ?? 0
        if let range = part.byteRange {
            let header =
                startAt > 0
                ? "bytes=\(range.offset + startAt)-\(range.end - 1)" : range.httpRangeHeader
            request.setValue(header, forHTTPHeaderField: "Range")
            // RFC 9110 §13.1.5: the range only if the resource is still the version whose bytes
            // are kept; otherwise the server sends it whole, and the download starts over.
            if let known { request.setValue(known, forHTTPHeaderField: "If-Range") }
        }
        let streamed: HTTPStreamedResponse
        do {
            streamed = try await transport.stream(
                request, idleTimeout: idleTimeout, on: clock, allowing: allowedSchemes)
        } catch {
            throw Self.typed(error, part: index, url: part.url)
        }
        let response = streamed.response
        let status = streamed.statusCode ?? 200
        defer { streamed.body.cancel() }
        if let validators {
            try validators.check(response, for: part.url)
            if status == 200, part.byteRange != nil, let known {
                throw Validators.Changed(url: part.url, was: known, now: "a whole new representation")
            }
        }
        // Which bytes of the body are the part's: `skip` bytes, then at most `take`.
        let skip: UInt64
        let take: UInt64
        switch (status, part.byteRange) {
        case (206, let range?):
            // RFC 9110 §15.3.7.1: a single-part 206 carries a Content-Range naming the bytes it
            // holds. Without one (or unreadable, or other bytes) nothing says where the body goes.
            let header = (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Range")
            guard let header, let served = ContentRange(header), served.first == range.offset + startAt,
                served.last == range.end - 1
            else {
                throw DownloadError(
                    .wrongRange(
                        expected: request.value(forHTTPHeaderField: "Range") ?? range.httpRangeHeader,
                        received: header ?? "no Content-Range"),
                    part: index, url: part.url)
            }
            (skip, take) = (0, range.length - startAt)
        case (200, let range?):
            // The server ignored the range and sends the whole resource: take the slice.
            (skip, take) = (range.offset + startAt, range.length - startAt)
        case (200, nil):
            (skip, take) = (0, maximumPartByteCount)
        case (206, nil):
            throw DownloadError(
                .wrongRange(expected: "the whole resource", received: "206 Partial Content"), part: index,
                url: part.url)
        default:
            var error = DownloadError(.httpStatus(status), part: index, url: part.url)
            error.retryAfter = (response as? HTTPURLResponse)?.retryAfter
            throw error
        }
        var data = Data()
        // A body whose length is announced is held in memory sized once.
        if sink == nil, receiver == nil {
            let announced = (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Length")
                .flatMap { UInt64($0) }
            if let announced, announced <= maximumPartByteCount, announced > 0 {
                data.reserveCapacity(Int(min(announced, take)))
            }
        }
        // The body is read on the transport's pump, one chunk at a time, with no hop to this
        // task per chunk: what the reading has kept so far, for the checks after it.
        let reading = Locked(Reading(digest: resumed?.digest ?? ChunkDigest(), data: data))
        data = Data()  // The reserved buffer is the reading's alone, not copied on its first append.
        // A 206 must end where its range ends, and a whole body within the cap.
        let mustEndThere = status == 206 || part.byteRange == nil
        do {
            try await streamed.body.deliver { chunk in
                let step = try reading.withLock { reading -> ReadStep in
                    guard reading.kept < take else {
                        guard mustEndThere, !chunk.isEmpty else { return .stop }
                        let received = take + UInt64(chunk.count)
                        throw DownloadError(
                            part.byteRange == nil
                                ? .tooLarge(bytes: received, limit: take)
                                : .wrongLength(expected: take, received: received),
                            part: index, url: part.url)
                    }
                    let start = reading.seen
                    reading.seen += UInt64(chunk.count)
                    guard reading.seen > skip else { return .next(0) }
                    let from = start < skip ? Int(skip - start) : 0
                    let wanted = take - reading.kept
                    let available = UInt64(chunk.count - from)
                    if available > wanted, mustEndThere {
                        // More than the range, or than any part may be: refuse, not truncate.
                        guard part.byteRange == nil else {
                            throw DownloadError(
                                .wrongLength(expected: take, received: reading.seen), part: index, url: part.url)
                        }
                        throw DownloadError(.tooLarge(bytes: reading.seen, limit: take), part: index, url: part.url)
                    }
                    let used = Int(min(available, wanted))
                    let slice = chunk[(chunk.startIndex + from)..<(chunk.startIndex + from + used)]
                    if let sink {
                        try sink.write(slice, at: startAt + reading.kept)
                        slice.withUnsafeBytes { reading.digest.add($0) }
                    } else if receiver != nil {
                        return .receive(slice)
                    } else {
                        reading.data.append(slice)
                    }
                    reading.kept += UInt64(used)
                    return .next(used)
                }
                let used: Int
                switch step {
                case .stop:
                    return false
                case .next(let count):
                    used = count
                case .receive(let slice):
                    await receiver?.receive(slice)
                    used = slice.count
                    reading.withLock { $0.kept += UInt64(used) }
                }
                if used > 0 { meter?.received(UInt64(used)) }
                // Past the part's last byte, a 206 or a whole body is read on to its end (which
                // must come now); the slice of a 200 is all that is wanted of it.
                return mustEndThere || reading.withLock { $0.kept < take }
            }
        } catch {
            let (kept, digest) = reading.withLock { ($0.kept, $0.digest) }
            // The bytes written stay in the staging file: the next attempt (or run, which vouches
            // for them in the journal) goes on after them, so they still count as received when
            // a validator lets it; otherwise they no longer count.
            if let progress = sink?.progress, validators?.validator(for: part.url) != nil {
                progress.note(length: startAt + kept, digest: digest)
            } else {
                meter?.received(-Int64(kept))
            }
            throw (error as? HTTPTransportError).map { Self.typed($0, part: index, url: part.url) } ?? error
        }
        let (kept, seen, digest, read) = reading.withLock { reading in
            defer { reading.data = Data() }
            return (reading.kept, reading.seen, reading.digest, reading.data)
        }
        data = read
        guard part.byteRange == nil || kept == take else {
            if let progress = sink?.progress, validators?.validator(for: part.url) != nil {
                progress.note(length: startAt + kept, digest: digest)
            } else {
                meter?.received(-Int64(kept))
            }
            let expected = status == 200 ? skip + take : take
            throw DownloadError(
                .wrongLength(expected: expected, received: status == 200 ? seen : kept), part: index,
                url: part.url)
        }
        return FetchedPart(
            index: index, data: data, length: startAt + kept, digest: sink.map { _ in digest.value })
    }

    /// What reading a part's body has kept so far.
    private struct Reading {
        var kept: UInt64 = 0
        var seen: UInt64 = 0
        var digest: ChunkDigest
        var data: Data
    }

    /// What a chunk of a part's body asks of its reader.
    private enum ReadStep {
        /// Read on: this many bytes of the chunk were the part's, and are kept.
        case next(Int)
        /// Hand these bytes to the part's receiver, then read on.
        case receive(Data)
        /// The part is whole: stop reading.
        case stop
    }

    /// A transport failure as the engine reports it: a cancellation stays one.
    static func typed(_ error: HTTPTransportError, part: Int?, url: URL?) -> any Error {
        if error.kind == .cancelled { return CancellationError() }
        if case .disallowedScheme(let scheme) = error.kind {
            return DownloadError(.unsupportedURL(scheme: scheme), part: part, url: url)
        }
        return DownloadError(.transport(error), part: part, url: url)
    }
}

extension DownloadEngine where C == ContinuousClock {
    /// Creates an engine over `URLSession`, cancellation bridged to the session's tasks.
    ///
    /// - Parameters:
    ///   - concurrency: The most transfers in flight (at least 1; 2 by default).
    ///   - retry: How transient failures are retried.
    ///   - idleTimeout: The longest a transfer may go without a byte (2 minutes).
    ///   - session: The session requests go through.
    public init(
        concurrency: Int = 2, retry: RetryPolicy = RetryPolicy(), idleTimeout: Duration? = .seconds(120),
        session: URLSession = .shared
    ) {
        self.init(
            concurrency: concurrency, retry: retry, idleTimeout: idleTimeout, clock: ContinuousClock(),
            transport: URLSessionTransport(session: session))
    }
}
