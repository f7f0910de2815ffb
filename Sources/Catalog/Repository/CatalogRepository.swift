public import Foundation
public import HTTPSupport
import Locking

#if canImport(FoundationNetworking)
    public import FoundationNetworking
#endif

/// Why a catalog could not be served, and which resource it was.
public struct CatalogError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Hashable, Sendable {
        /// The request failed before a response arrived (network, timeout), with the
        /// transport's own error.
        case transport(HTTPTransportError)
        /// The server answered with a status other than 200.
        case httpStatus(Int)
        /// The body could not be read.
        case decoding(CatalogDecodingError)
        /// The app is offline (``CatalogRepository/setOffline(_:)``), so the network was not asked.
        case offline
        /// Offline, and this resource was never loaded: there is nothing to show.
        case neverLoaded
        /// The cache could not be written (the data was still served).
        case store(CatalogStore.WriteError)
        /// The server asked to be left alone (a `429` or `503` with `Retry-After`, RFC 9110
        /// §10.2.3) and that wait has not passed, so the network was not asked; `remaining` is
        /// what is left of it.
        case serverAskedToWait(remaining: Duration)
    }

    /// What went wrong.
    public var kind: Kind
    /// The resource's cache key.
    public var key: String
    /// The resource's URL.
    public var url: URL?
    /// The wait the server asked for with `Retry-After` on a `429` or `503` answer, if it did;
    /// the repository asks that resource's server nothing until it has passed.
    public var retryAfter: Duration?

    /// Creates an error.
    public init(_ kind: Kind, key: String, url: URL?, retryAfter: Duration? = nil) {
        self.kind = kind
        self.key = key
        self.url = url
        self.retryAfter = retryAfter
    }

    /// What a catalog screen tells the learner, whatever the details: a small set to switch on
    /// for words and an action.
    public enum Category: String, Hashable, Sendable, CaseIterable {
        /// No working connection: the app said it is offline (``CatalogRepository/setOffline(_:)``),
        /// or the request failed for want of one (not connected, the connection lost, a host not
        /// reached, a timeout). "You're offline"; retry when back online.
        case offline
        /// The server failed, answered wrongly or asked to wait (a 5xx, a `Retry-After`, a
        /// certificate that cannot be trusted): "The catalog is unavailable", retry later.
        case server
        /// The catalog is not there (404, 410).
        case notFound
        /// The server refused access (401, 403, authentication or a client certificate
        /// required): sign in again.
        case accessDenied
        /// The answer is not a catalog of the expected shape (a captive portal's page, a
        /// changed API, a body past the limits).
        case notCatalog
        /// Offline, and this catalog was never loaded: nothing to show until online.
        case neverLoaded
        /// The catalog was served, but the device could not keep a copy (a full disk).
        case storage
    }

    /// The error's ``Category``.
    public var category: Category {
        switch kind {
        case .offline: return .offline
        case .neverLoaded: return .neverLoaded
        case .serverAskedToWait: return .server
        case .decoding: return .notCatalog
        case .store: return .storage
        case .httpStatus(let status):
            switch FailingStatus(status) {
            case .notFound: return .notFound
            case .accessDenied: return .accessDenied
            case .server: return .server
            }
        case .transport(let error):
            if error.isConnectivity { return .offline }
            return error.isAuthenticationFailure ? .accessDenied : .server
        }
    }

    /// A sentence for logs, naming the resource; apps show their own wording.
    public var description: String {
        let place = url?.absoluteString ?? key
        return switch kind {
        case .transport(let error): "\(place): the request failed: \(error)"
        case .httpStatus(let status): "\(place) answered HTTP \(status)"
        case .decoding(let error): "\(place): \(error)"
        case .offline: "\(place): the app is offline"
        case .neverLoaded: "'\(key)' was never loaded, and the app is offline"
        case .store(let error): "\(place): the cache could not be written: \(error.reason)"
        case .serverAskedToWait(let remaining): "\(place): the server asked to wait \(remaining) more"
        }
    }
}

/// Something a repository serves: where it lives, how to cache it, how to read it.
public struct CatalogResource<Value: Sendable>: Sendable {
    /// The cache key (stable across launches).
    public var key: String
    /// Where the network copy is.
    public var url: URL
    /// Reads the body (the cache keeps the body as received).
    public var decode: @Sendable (Data) throws(CatalogDecodingError) -> Value

    /// Creates a resource.
    public init(key: String, url: URL, decode: @escaping @Sendable (Data) throws(CatalogDecodingError) -> Value) {
        self.key = key
        self.url = url
        self.decode = decode
    }

    /// A videos API list (``VideosAPI``), its relative links resolved against `url`.
    ///
    /// - Parameters:
    ///   - url: Where the list lives.
    ///   - policy: What to do with a bad entry: skip it (the default, as a catalog screen
    ///     prefers the good lessons to an error) or refuse the list. To show or log what was
    ///     skipped, make a resource whose value is the whole ``VideosAPI/ImportResult``:
    ///     `CatalogResource(key:url:decode:)` over `VideosAPI.lessons(from:policy:)`.
    public static func videos(at url: URL, policy: BadItemPolicy = .skip) -> CatalogResource<[Lesson]>
    where Value == [Lesson] {
        CatalogResource(key: "videos:" + url.absoluteString, url: url) { data throws(CatalogDecodingError) in
            try VideosAPI.lessons(from: data, policy: policy, relativeTo: url).lessons
        }
    }

    /// The dance-class spreadsheet (CSV).
    ///
    /// - Parameters:
    ///   - url: Where the sheet lives.
    ///   - policy: What to do with a bad row: skip it (the default, as a catalog screen
    ///     prefers) or refuse the sheet.
    public static func classes(at url: URL, policy: BadItemPolicy = .skip) -> CatalogResource<[Lesson]>
    where Value == [Lesson] {
        CatalogResource(key: "classes:" + url.absoluteString, url: url) { data throws(CatalogDecodingError) in
            do throws(CSVError) {
                return try ClassSpreadsheet.lessons(from: data, policy: policy).lessons
            } catch {
                throw CatalogDecodingError(.spreadsheet(error), source: "class spreadsheet")
            }
        }
    }

    /// A HAL page (the root page or a section) whose sections are the links of
    /// `sectionRelation` (see ``HALPage/decode(_:sectionRelation:policy:)``); bad sections are
    /// skipped by default and listed in ``HALPage/skippedSections``.
    public static func page(
        at url: URL, sectionRelation: String = "sections", policy: BadItemPolicy = .skip
    ) -> CatalogResource<HALPage> where Value == HALPage {
        CatalogResource(key: "page:" + url.absoluteString, url: url) { data throws(CatalogDecodingError) in
            try HALPage.decode(data, sectionRelation: sectionRelation, policy: policy)
        }
    }
}

/// A value served by a repository, and where it came from.
public struct CatalogSnapshot<Value: Sendable>: Sendable {
    /// Where the value came from.
    public enum Origin: Sendable, Hashable {
        /// The on-disk cache.
        case cache
        /// The network, just now.
        case network
    }

    /// The value.
    public var value: Value
    /// Where it came from.
    public var origin: Origin
    /// When it was fetched from the network.
    public var fetchedAt: Date
}

/// Serves catalogs from the cache and the network by the policies a catalog screen needs.
///
/// - **Launch**: ``launch(_:)`` publishes the cached copy at once, then the network's.
/// - **Pull to refresh**: ``refresh(_:)`` always asks the network; on failure the cache is kept
///   and the error surfaces.
/// - **Throttle**: ``value(_:)`` serves the cache without a network call within ``throttle``
///   (6 s by default) of the last *successful* fetch, measured on the injected clock; a failed
///   fetch starts no window.
/// - **Offline**: while ``isOffline``, only pages loaded before are served; any other is
///   ``CatalogError`` of kind ``CatalogError/Kind/neverLoaded``.
/// - **Coalescing**: concurrent requests for the same resource share one network call.
/// - **Timeout**: a request that has not delivered its whole body within ``requestTimeout``
///   (60 s by default) on the injected clock fails with a ``CatalogError`` of kind ``CatalogError/Kind/transport(_:)`` whose transport error is
///   `timedOut`, so a server that drips its answer cannot hold a catalog screen's spinner forever.
/// - **Retry-After**: a `429` or `503` answer with `Retry-After` (seconds or an HTTP date)
///   keeps the repository from asking for that resource again until the wait has passed (at
///   most ``longestServerWait``): ``value(_:)`` serves the cache meanwhile, and without a cache,
///   like ``refresh(_:)``, fails at once with ``CatalogError/Kind/serverAskedToWait(remaining:)``.
public actor CatalogRepository<C: Clock> where C.Duration == Duration {
    /// The cache.
    public let store: CatalogStore
    /// How long after a successful fetch the cache is served without asking the network.
    public let throttle: Duration
    /// Whether the app is offline (set from the app's reachability).
    public private(set) var isOffline = false
    /// The error of the last network attempt, if it failed.
    public private(set) var lastError: CatalogError?
    /// The longest one request may take, body included; `nil` leaves timing to the transport.
    public let requestTimeout: Duration?
    /// How many requests the repository has sent; tests in the package read it.
    package private(set) var networkRequestCount = 0

    /// How many callers wait for a shared request now, for tests of coalescing.
    package var waitingCallerCount: Int { waiting.values.reduce(0) { $0 + $1.count } }

    private let clock: C
    private let transport: any HTTPTransport
    private let now: @Sendable () -> Date
    private var lastSuccess: [String: C.Instant] = [:]
    /// Until when each resource's server asked not to be asked again (`Retry-After`).
    private var serverWaits: [String: C.Instant] = [:]
    private var inFlight: [String: Task<Data, any Error>] = [:]
    /// The callers waiting for each request in flight, by a number of their own.
    private var waiting: [String: Set<Int>] = [:]
    private var nextWaiter = 0

    /// Creates a repository.
    ///
    /// - Parameters:
    ///   - store: The on-disk cache.
    ///   - clock: The clock the throttle window and the request timeout are measured on.
    ///   - throttle: How long after a successful fetch the cache is served without asking.
    ///   - requestTimeout: The longest one request may take, body included (60 s); `nil`
    ///     leaves timing to the transport.
    ///   - now: The wall-clock date recorded with each fetch.
    ///   - transport: Sends the requests (`URLSessionTransport` in the convenience initializer).
    public init(
        store: CatalogStore, clock: C, throttle: Duration = .seconds(6), requestTimeout: Duration? = .seconds(60),
        now: @escaping @Sendable () -> Date = { Date() },
        transport: any HTTPTransport
    ) {
        self.store = store
        self.clock = clock
        self.throttle = throttle
        self.requestTimeout = requestTimeout.map { max($0, .zero) }
        self.now = now
        self.transport = transport
    }

    /// Sets whether the app is offline.
    public func setOffline(_ offline: Bool) { isOffline = offline }

    /// Load on launch: the cached copy at once (when there is one), then the network's.
    ///
    /// The stream yields `.success` snapshots tagged ``CatalogSnapshot/Origin``, and a
    /// `.failure` when the network attempt fails (the cached copy stays valid).
    public nonisolated func launch<Value>(_ resource: CatalogResource<Value>) -> AsyncStream<
        Result<CatalogSnapshot<Value>, CatalogError>
    > {
        AsyncStream { continuation in
            let task = Task {
                if let cached = await self.cached(resource) { continuation.yield(.success(cached)) }
                do throws(CatalogError) {
                    continuation.yield(.success(try await self.refresh(resource)))
                } catch {
                    continuation.yield(.failure(error))
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Pull to refresh: asks the network whatever the throttle says.
    ///
    /// - Throws: ``CatalogError``; the cache is kept as it was.
    public func refresh<Value>(_ resource: CatalogResource<Value>) async throws(CatalogError) -> CatalogSnapshot<Value>
    {
        if isOffline {
            let failure = CatalogError(.offline, key: resource.key, url: resource.url)
            lastError = failure
            throw failure
        }
        if let failure = serverWait(resource) {
            lastError = failure
            throw failure
        }
        return try await fetchFromNetwork(resource)
    }

    /// The value by the throttle and offline policies: the cache within the throttle window or
    /// while offline, the network otherwise (falling back to the cache if the network fails).
    ///
    /// - Throws: ``CatalogError`` of kind ``CatalogError/Kind/neverLoaded`` offline without a cached copy, or the
    ///   network's error when there is no cached copy to fall back to.
    public func value<Value>(_ resource: CatalogResource<Value>) async throws(CatalogError) -> CatalogSnapshot<Value> {
        let cached = await cached(resource)
        if isOffline {
            guard let cached else { throw CatalogError(.neverLoaded, key: resource.key, url: resource.url) }
            return cached
        }
        if let cached, let last = lastSuccess[resource.key], last.duration(to: clock.now) < throttle {
            return cached
        }
        if let failure = serverWait(resource) {
            guard let cached else {
                lastError = failure
                throw failure
            }
            return cached
        }
        do throws(CatalogError) {
            return try await fetchFromNetwork(resource)
        } catch {
            guard let cached else { throw error }
            return cached
        }
    }

    /// The longest `Retry-After` wait honoured (one hour); a longer one is cut to it, so a
    /// hostile or mistaken header cannot silence a catalog for days.
    public static var longestServerWait: Duration { .seconds(3_600) }

    // MARK: Private

    /// The error that stands for the server's wait when it has not passed yet; `nil` otherwise.
    private func serverWait<Value>(_ resource: CatalogResource<Value>) -> CatalogError? {
        guard let until = serverWaits[resource.key] else { return nil }
        let remaining = clock.now.duration(to: until)
        guard remaining > .zero else {
            serverWaits[resource.key] = nil
            return nil
        }
        return CatalogError(
            .serverAskedToWait(remaining: remaining), key: resource.key, url: resource.url, retryAfter: remaining)
    }

    /// The cached copy, decoded; an entry that no longer decodes counts as missing.
    private func cached<Value>(_ resource: CatalogResource<Value>) async -> CatalogSnapshot<Value>? {
        guard let entry = await store.entry(for: resource.key), let value = try? resource.decode(entry.data) else {
            return nil
        }
        return CatalogSnapshot(value: value, origin: .cache, fetchedAt: entry.storedAt)
    }

    private func fetchFromNetwork<Value>(_ resource: CatalogResource<Value>) async throws(CatalogError)
        -> CatalogSnapshot<Value>
    {
        let data: Data
        do {
            data = try await sharedFetch(resource)
        } catch {
            let failure = Self.map(error, resource: resource)
            // Going back is not a failure of the catalog: it is not remembered as one.
            if !(error is CancellationError) { lastError = failure }
            if let wait = failure.retryAfter {
                serverWaits[resource.key] = clock.now.advanced(by: min(wait, Self.longestServerWait))
            }
            throw failure
        }
        let value: Value
        do {
            value = try resource.decode(data)
        } catch {
            let failure = CatalogError(.decoding(error), key: resource.key, url: resource.url)
            lastError = failure
            throw failure
        }
        let fetchedAt = now()
        lastSuccess[resource.key] = clock.now
        lastError = nil
        do {
            try await store.store(data, for: resource.key, at: fetchedAt)
        } catch {
            lastError = CatalogError(.store(error), key: resource.key, url: resource.url)
        }
        return CatalogSnapshot(value: value, origin: .network, fetchedAt: fetchedAt)
    }

    /// One network call per resource at a time; concurrent callers share it.
    ///
    /// When every caller waiting for a request has been cancelled (the learner went back), the
    /// request itself is cancelled: the transport closes the connection, and nothing is cached.
    /// A cancelled caller stops waiting at once; the others are still served.
    private func sharedFetch<Value>(_ resource: CatalogResource<Value>) async throws -> Data {
        let key = resource.key
        let task = inFlight[key] ?? startFetch(resource)
        nextWaiter += 1
        let waiter = nextWaiter
        waiting[key, default: []].insert(waiter)
        let delivery = OneDelivery<Result<Data, any Error>>()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                delivery.wait(with: continuation)
                Task { delivery.deliver(await task.result) }
            }
        } onCancel: {
            // This caller stops waiting now; the request goes on while others wait for it.
            delivery.deliver(.failure(CancellationError()))
        }
        if Task.isCancelled {
            abandon(key, waiter: waiter, task: task)
        } else {
            waiting[key]?.remove(waiter)
            if waiting[key]?.isEmpty == true {
                waiting[key] = nil
                if inFlight[key] == task { inFlight[key] = nil }
            }
        }
        // A caller that went back gets a cancellation, never the result it no longer waits for.
        try Task.checkCancellation()
        return try result.get()
    }

    /// One caller stopped waiting; when none is left, the request is cancelled.
    private func abandon(_ key: String, waiter: Int, task: Task<Data, any Error>) {
        guard inFlight[key] == task else { return }
        waiting[key]?.remove(waiter)
        if waiting[key]?.isEmpty ?? true {
            task.cancel()
            inFlight[key] = nil
            waiting[key] = nil
        }
    }

    private func startFetch<Value>(_ resource: CatalogResource<Value>) -> Task<Data, any Error> {
        networkRequestCount += 1
        let (transport, clock, timeout) = (transport, clock, requestTimeout)
        let (url, key) = (resource.url, resource.key)
        let task = Task { () throws -> Data in
            let (data, response): (Data, URLResponse)
            do throws(HTTPTransportError) {
                (data, response) = try await transport.send(
                    URLRequest(url: url), timeout: timeout, limit: Self.maximumResponseBytes, on: clock)
            } catch {
                throw CatalogError(.transport(error), key: key, url: url)
            }
            // The typed send has already refused any answer that is not HTTP.
            guard let http = response as? HTTPURLResponse else {
                throw CatalogError(.transport(HTTPTransportError(.notHTTP, url: url)), key: key, url: url)
            }
            guard http.statusCode == 200 else {
                // RFC 9110 §10.2.3 and RFC 6585 §4: a 503 or 429 may say how long to stay away.
                let wait = [429, 503].contains(http.statusCode) ? http.retryAfter : nil
                throw CatalogError(.httpStatus(http.statusCode), key: key, url: url, retryAfter: wait)
            }
            return data
        }
        inFlight[resource.key] = task
        return task
    }

    /// The longest catalog response read (32 MiB): a longer body stops its transfer at the cap
    /// and fails with a ``CatalogError`` of kind ``CatalogError/Kind/transport(_:)`` whose error
    /// is `bodyTooLarge`, before the bytes past it are held.
    public static var maximumResponseBytes: Int { 32 << 20 }

    static func map<Value>(_ error: any Error, resource: CatalogResource<Value>) -> CatalogError {
        switch error {
        case let error as CatalogError: error
        default: CatalogError(.transport(.from(error, url: resource.url)), key: resource.key, url: resource.url)
        }
    }
}

extension CatalogRepository where C == ContinuousClock {
    /// Creates a repository over `URLSession` (cancellation bridged) on the continuous clock.
    ///
    /// - Parameters:
    ///   - store: The on-disk cache.
    ///   - throttle: How long after a successful fetch the cache is served without asking.
    ///   - requestTimeout: The longest one request may take, body included (60 s).
    ///   - session: The session requests go through.
    public init(
        store: CatalogStore, throttle: Duration = .seconds(6), requestTimeout: Duration? = .seconds(60),
        session: URLSession = .shared
    ) {
        self.init(
            store: store, clock: ContinuousClock(), throttle: throttle, requestTimeout: requestTimeout,
            transport: URLSessionTransport(session: session))
    }
}

/// Hands one value to one waiting continuation, whichever comes first: the value (a result, or
/// a cancellation) or the continuation. Later values are dropped.
final class OneDelivery<Value: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Value, Never>?
        var value: Value?
        var delivered = false
    }

    private let state = Locked(State())

    /// Waits with `continuation`, resuming it at once if the value came first.
    func wait(with continuation: CheckedContinuation<Value, Never>) {
        let ready = state.withLock { state -> Value? in
            if let value = state.value, !state.delivered {
                state.delivered = true
                return value
            }
            state.continuation = continuation
            return nil
        }
        if let ready { continuation.resume(returning: ready) }
    }

    /// Delivers `value` to the waiting continuation, or keeps it for the one to come; only the
    /// first value counts.
    func deliver(_ value: Value) {
        let waiting = state.withLock { state -> CheckedContinuation<Value, Never>? in
            guard !state.delivered, state.value == nil else { return nil }
            guard let continuation = state.continuation else {
                state.value = value
                return nil
            }
            state.delivered = true
            state.continuation = nil
            return continuation
        }
        waiting?.resume(returning: value)
    }
}
