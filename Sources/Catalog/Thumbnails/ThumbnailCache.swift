public import Foundation
public import HTTPSupport

#if canImport(FoundationNetworking)
    public import FoundationNetworking
#endif

/// Why a thumbnail could not be loaded, and which.
public struct ThumbnailError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Hashable, Sendable {
        /// The request failed before a response arrived (network, timeout, cancellation), with
        /// the transport's own error.
        case transport(HTTPTransportError)
        /// The server answered with a status other than 200.
        case httpStatus(Int)
        /// The body is empty or larger than the cache accepts; its size.
        case unusableBody(bytes: Int)
    }

    /// What went wrong.
    public var kind: Kind
    /// The thumbnail's URL.
    public var url: URL

    /// Creates an error.
    public init(_ kind: Kind, url: URL) {
        self.kind = kind
        self.url = url
    }

    /// Whether the whole image failed to arrive within the cache's request timeout.
    public var isTimeout: Bool {
        if case .transport(let error) = kind, case .timedOut = error.kind { return true }
        return false
    }

    /// A sentence naming the URL.
    public var description: String {
        switch kind {
        case .transport(let error): "\(error)"
        case .httpStatus(let status): "\(url.absoluteString) answered HTTP \(status)"
        case .unusableBody(let bytes): "\(url.absoluteString): an image of \(bytes) bytes is not accepted"
        }
    }
}

/// Image bytes for thumbnail URLs, kept in memory and on disk, each bounded.
///
/// Lookups go memory → disk → network. Concurrent requests for one URL share one download. The
/// disk layer is a ``CatalogStore`` (files named by a hash, never by the URL; least recently used
/// evicted). A failure is reported for its URL only and never cached, so the next request
/// tries again. A download that has not finished within ``requestTimeout`` (30 s by default,
/// measured on the injected clock) fails with a ``ThumbnailError`` whose transport error is a
/// timeout (``ThumbnailError/isTimeout``), so a
/// server that drips an image cannot hold a cell's placeholder forever.
public actor ThumbnailCache {
    /// The most bytes kept in memory.
    public let memoryLimit: Int
    /// The largest image accepted.
    public let maximumImageBytes: Int
    /// The longest one download may take, body included; `nil` leaves timing to the transport.
    public let requestTimeout: Duration?
    /// Images downloaded since creation; tests in the package read it.
    package private(set) var downloadCount = 0

    private let disk: CatalogStore
    private let transport: any HTTPTransport
    private let clock: any Clock<Duration>
    private let now: @Sendable () -> Date
    private var memory: [URL: (data: Data, lastUse: UInt64)] = [:]
    private var memoryBytes = 0
    private var useCounter: UInt64 = 0
    private var inFlight: [URL: Task<Data, any Error>] = [:]

    /// Creates a cache with a disk folder and limits.
    ///
    /// - Parameters:
    ///   - directory: The folder of the disk layer.
    ///   - memoryLimit: The most bytes kept in memory (16 MiB).
    ///   - diskLimit: The most bytes kept on disk (128 MiB).
    ///   - maximumImageBytes: The largest image accepted (8 MiB).
    ///   - requestTimeout: The longest one download may take, body included (30 s); `nil` leaves
    ///     timing to the transport.
    ///   - clock: The clock the timeout is measured on.
    ///   - now: The wall-clock date recorded with each image on disk.
    ///   - transport: Sends the requests.
    public init(
        directory: URL, memoryLimit: Int = 16 << 20, diskLimit: Int = 128 << 20, maximumImageBytes: Int = 8 << 20,
        requestTimeout: Duration? = .seconds(30), clock: any Clock<Duration> = ContinuousClock(),
        now: @escaping @Sendable () -> Date = { Date() }, transport: any HTTPTransport
    ) {
        self.memoryLimit = memoryLimit
        self.maximumImageBytes = maximumImageBytes
        disk = CatalogStore(directory: directory, maximumBytes: diskLimit)
        self.now = now
        self.requestTimeout = requestTimeout.map { max($0, .zero) }
        self.clock = clock
        self.transport = transport
    }

    /// Creates a cache that downloads through `session` (cancellation bridged) on the
    /// continuous clock.
    ///
    /// - Parameters:
    ///   - directory: The folder of the disk layer.
    ///   - memoryLimit: The most bytes kept in memory (16 MiB).
    ///   - diskLimit: The most bytes kept on disk (128 MiB).
    ///   - maximumImageBytes: The largest image accepted (8 MiB).
    ///   - requestTimeout: The longest one download may take, body included (30 s).
    ///   - session: The session requests go through.
    public init(
        directory: URL, memoryLimit: Int = 16 << 20, diskLimit: Int = 128 << 20, maximumImageBytes: Int = 8 << 20,
        requestTimeout: Duration? = .seconds(30), session: URLSession = .shared
    ) {
        self.init(
            directory: directory, memoryLimit: memoryLimit, diskLimit: diskLimit, maximumImageBytes: maximumImageBytes,
            requestTimeout: requestTimeout, transport: URLSessionTransport(session: session))
    }

    /// The image bytes for `url`.
    ///
    /// - Throws: ``ThumbnailError`` for this URL; nothing is cached for it.
    public func data(for url: URL) async throws(ThumbnailError) -> Data {
        if let hit = memory[url] {
            useCounter += 1
            memory[url] = (hit.data, useCounter)
            return hit.data
        }
        if let entry = await disk.entry(for: url.absoluteString) {
            remember(entry.data, for: url)
            return entry.data
        }
        let data: Data
        do {
            data = try await download(url)
        } catch let error as ThumbnailError {
            throw error
        } catch {
            throw ThumbnailError(.transport(.from(error, url: url)), url: url)
        }
        remember(data, for: url)
        try? await disk.store(data, for: url.absoluteString, at: now())
        return data
    }

    /// The bytes held in memory.
    public var memoryUsage: Int { memoryBytes }

    private func download(_ url: URL) async throws -> Data {
        if let running = inFlight[url] { return try await running.value }
        downloadCount += 1
        let (transport, clock, timeout) = (transport, clock, requestTimeout)
        let limit = maximumImageBytes
        let task = Task { () throws -> Data in
            let (data, response): (Data, URLResponse)
            do throws(HTTPTransportError) {
                (data, response) = try await transport.send(
                    URLRequest(url: url), timeout: timeout, limit: limit, on: clock)
            } catch {
                // A body past the cap is stopped there, never held whole.
                if case .bodyTooLarge = error.kind { throw ThumbnailError(.unusableBody(bytes: limit + 1), url: url) }
                throw ThumbnailError(.transport(error), url: url)
            }
            let status = (response as? HTTPURLResponse)?.statusCode ?? 200
            guard status == 200 else { throw ThumbnailError(.httpStatus(status), url: url) }
            guard !data.isEmpty, data.count <= limit else {
                throw ThumbnailError(.unusableBody(bytes: data.count), url: url)
            }
            return data
        }
        inFlight[url] = task
        defer { inFlight[url] = nil }
        return try await task.value
    }

    private func remember(_ data: Data, for url: URL) {
        guard data.count <= memoryLimit else { return }
        useCounter += 1
        if let old = memory[url] { memoryBytes -= old.data.count }
        memory[url] = (data, useCounter)
        memoryBytes += data.count
        while memoryBytes > memoryLimit, let oldest = memory.min(by: { $0.value.lastUse < $1.value.lastUse }) {
            memory[oldest.key] = nil
            memoryBytes -= oldest.value.data.count
        }
    }
}
