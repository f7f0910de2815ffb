public import Foundation
public import Observation

/// A catalog screen's model: bind a list (or a sections screen) to it and call its actions.
///
/// It runs a ``CatalogRepository``'s policies for one resource and says what the screen shows,
/// in ``phase``: loading with nothing yet, loaded, refreshing (pull to refresh, the current
/// value still shown), empty, offline with the age of the cached copy, a cached copy shown
/// because the network failed (the error kept, so the fallback is never silent), or failed
/// with nothing to show (``retry()``).
///
/// <!-- example: catalog-screen-model -->
/// ```swift
/// let model = CatalogScreenModel(repository: repository, resource: .videos(at: catalogURL))
/// await model.load()  // the cache at once, then the network
/// let lessons = model.value ?? []  // what the list shows; `model.phase` says how fresh
/// await model.refresh()  // pull to refresh
/// ```
///
/// (`CatalogScreenModelTests` runs these lines.)
@MainActor
@Observable
public final class CatalogScreenModel<Value: Sendable, C: Clock> where C.Duration == Duration {
    /// What the screen shows.
    public enum Phase: Sendable, Equatable {
        /// Asking the network, with nothing to show yet.
        case loading
        /// The value just came from the network.
        case loaded
        /// Asking the network again while the current value stays on screen.
        case refreshing
        /// The value came from the network and is empty.
        case empty
        /// Offline: the cached copy, fetched at `fetchedAt`, is shown.
        case offline(fetchedAt: Date)
        /// The network failed: the cached copy, fetched at `fetchedAt`, is shown, and `error` says
        /// why it is not newer.
        case showingCache(fetchedAt: Date, error: CatalogError)
        /// Nothing to show: `error` says why; ``CatalogScreenModel/retry()`` tries again.
        case failed(CatalogError)
    }

    /// What the screen shows.
    public private(set) var phase: Phase = .loading
    /// The value on screen, if any.
    public private(set) var value: Value?
    /// When the value on screen was fetched from the network.
    public private(set) var fetchedAt: Date?

    @ObservationIgnored private let repository: CatalogRepository<C>
    @ObservationIgnored private let resource: CatalogResource<Value>
    @ObservationIgnored private let isEmpty: @Sendable (Value) -> Bool

    /// Creates a model for `resource`, whose emptiness `isEmpty` tells.
    public init(
        repository: CatalogRepository<C>, resource: CatalogResource<Value>,
        isEmpty: @escaping @Sendable (Value) -> Bool
    ) {
        self.repository = repository
        self.resource = resource
        self.isEmpty = isEmpty
    }

    /// The age of the value on screen at `now`, in seconds (for "updated 5 minutes ago").
    public func age(at now: Date = Date()) -> TimeInterval? {
        fetchedAt.map { max(now.timeIntervalSince($0), 0) }
    }

    /// Loads as on launch: the cached copy at once (when there is one), then the network's.
    public func load() async {
        phase = value == nil ? .loading : .refreshing
        for await result in repository.launch(resource) {
            switch result {
            case .success(let snapshot):
                show(snapshot)
                // A cached copy stays "refreshing" until the network answers.
                if snapshot.origin == .cache { phase = .refreshing }
            case .failure(let error):
                fail(error)
            }
        }
    }

    /// Pull to refresh: asks the network; on failure the value on screen stays and says so.
    public func refresh() async {
        phase = value == nil ? .loading : .refreshing
        do throws(CatalogError) {
            show(try await repository.refresh(resource))
        } catch {
            // The cache may hold a copy this screen has not shown yet: read it, without asking
            // the network again.
            if value == nil, let entry = await repository.store.entry(for: resource.key),
                let cached = try? resource.decode(entry.data)
            {
                value = cached
                fetchedAt = entry.storedAt
            }
            fail(error)
        }
    }

    /// Tries again after a failure, as on launch.
    public func retry() async { await load() }

    private func show(_ snapshot: CatalogSnapshot<Value>) {
        value = snapshot.value
        fetchedAt = snapshot.fetchedAt
        if snapshot.origin == .network { phase = isEmpty(snapshot.value) ? .empty : .loaded }
    }

    private func fail(_ error: CatalogError) {
        guard value != nil, let fetchedAt else {
            phase = .failed(error)
            return
        }
        phase =
            error.kind == .offline ? .offline(fetchedAt: fetchedAt) : .showingCache(fetchedAt: fetchedAt, error: error)
    }
}

extension CatalogScreenModel where Value: Collection {
    /// Creates a model for a list, empty when the collection is.
    public convenience init(repository: CatalogRepository<C>, resource: CatalogResource<Value>) {
        self.init(repository: repository, resource: resource, isEmpty: { $0.isEmpty })
    }
}
