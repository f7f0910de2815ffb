import Catalog
import Foundation
import HTTPSupport
import TestSupport
import Testing

@MainActor
@Suite("CatalogScreenModel")
struct CatalogScreenModelTests {
    let clock = ManualClock()
    let transport: InMemoryHTTPTransport<ManualClock>
    let url = URL(literal: "https://catalog.example/lessons")
    let folder = temporaryFolder("screen")
    nonisolated static let fetched = Date(timeIntervalSince1970: 1_763_900_000)

    init() {
        transport = InMemoryHTTPTransport(clock: clock)
    }

    var resource: CatalogResource<[String]> {
        CatalogResource(key: "lessons", url: url) { data in
            String(decoding: data, as: UTF8.self).split(separator: ",").map(String.init)
        }
    }

    func repository() -> CatalogRepository<ManualClock> {
        CatalogRepository(
            store: CatalogStore(directory: folder), clock: clock, throttle: .zero, requestTimeout: nil,
            now: { Self.fetched }, transport: transport)
    }

    func serve(_ body: String, status: Int = 200) {
        transport.stub(url, reply: .response(status: status, body: Data(body.utf8)))
    }

    @Test("the doc comment's example runs as it shows")
    func docExample() async throws {
        let catalogURL = URL(literal: "https://catalog.example/videos.json")
        let body =
            #"{"videos":[{"id":1,"name":"Light","description":"","thumbnail":"","video_link":"https://v.example/1.mp4"}]}"#
        transport.stub(catalogURL, reply: .response(status: 200, body: Data(body.utf8)))
        let repository = repository()
        // example: begin catalog-screen-model
        let model = CatalogScreenModel(repository: repository, resource: .videos(at: catalogURL))
        await model.load()  // the cache at once, then the network
        let lessons = model.value ?? []  // what the list shows; `model.phase` says how fresh
        await model.refresh()  // pull to refresh
        // example: end catalog-screen-model
        #expect(lessons.map(\.title) == ["Light"])
        #expect(model.phase == .loaded)
    }

    @Test("launch: loading, then loaded from the network; an empty list is empty")
    func loads() async {
        serve("salsa,tango")
        let model = CatalogScreenModel(repository: repository(), resource: resource)
        #expect(model.phase == .loading)
        await model.load()
        #expect(model.phase == .loaded)
        #expect(model.value == ["salsa", "tango"])
        #expect(model.fetchedAt == Self.fetched)
        #expect(model.age(at: Self.fetched.addingTimeInterval(300)) == 300)
        serve("")
        await model.refresh()
        #expect(model.phase == .empty)
        #expect(model.value == [])
    }

    @Test("a network failure with a cached copy shows the copy and says why: the fallback is never silent")
    func fallbackIsVisible() async {
        serve("salsa")
        let repository = repository()
        await CatalogScreenModel(repository: repository, resource: resource).load()
        serve("", status: 503)
        let model = CatalogScreenModel(repository: repository, resource: resource)
        await model.load()
        #expect(model.value == ["salsa"])
        guard case .showingCache(let fetchedAt, let error) = model.phase else {
            Issue.record("\(model.phase)")
            return
        }
        #expect(fetchedAt == Self.fetched)
        #expect(error.kind == .httpStatus(503))
    }

    @Test(
        "a dead network the app was not told about shows the cached copy with an error whose category is offline",
        arguments: [URLError.Code.notConnectedToInternet, .networkConnectionLost, .cannotFindHost, .timedOut])
    func deadNetworkIsOffline(code: URLError.Code) async throws {
        serve("salsa")
        let repository = repository()
        await CatalogScreenModel(repository: repository, resource: resource).load()
        transport.stub(url, reply: .failure(URLError(code)))
        let model = CatalogScreenModel(repository: repository, resource: resource)
        await model.load()
        guard case .showingCache(_, let error) = model.phase else {
            Issue.record("\(model.phase)")
            return
        }
        #expect(error.category == .offline)
        // Without a cached copy, the same failure is a failed screen, still offline.
        let never = CatalogScreenModel(
            repository: repository,
            resource: CatalogResource<[String]>(key: "other", url: URL(literal: "https://catalog.example/other")) {
                _ in []
            })
        transport.stub(URL(literal: "https://catalog.example/other"), reply: .failure(URLError(code)))
        await never.load()
        guard case .failed(let failure) = never.phase else {
            Issue.record("\(never.phase)")
            return
        }
        #expect(failure.category == .offline)
    }

    @Test(
        "each failure has the category a screen chooses its words by",
        arguments: [
            (503, CatalogError.Category.server), (500, .server), (404, .notFound), (410, .notFound),
            (401, .accessDenied), (403, .accessDenied),
        ])
    func statusCategories(status: Int, category: CatalogError.Category) async {
        serve("", status: status)
        let model = CatalogScreenModel(repository: repository(), resource: resource)
        await model.load()
        guard case .failed(let error) = model.phase else {
            Issue.record("\(model.phase)")
            return
        }
        #expect(error.category == category)
    }

    @Test("the other kinds' categories: offline by the app, never loaded, not a catalog, a certificate, a wait")
    func kindCategories() {
        let cases: [(CatalogError.Kind, CatalogError.Category)] = [
            (.offline, .offline), (.neverLoaded, .neverLoaded),
            (.decoding(CatalogDecodingError(.invalidJSON("expected String"), source: "videos API")), .notCatalog),
            (.transport(HTTPTransportError(.network(URLError(.serverCertificateUntrusted)), url: nil)), .server),
            (.transport(HTTPTransportError(.network(URLError(.userAuthenticationRequired)), url: nil)), .accessDenied),
            (.transport(HTTPTransportError(.timedOut(after: .seconds(60)), url: nil)), .offline),
            (.serverAskedToWait(remaining: .seconds(30)), .server),
        ]
        for (kind, category) in cases {
            #expect(CatalogError(kind, key: "k", url: nil).category == category, "\(kind)")
        }
    }

    @Test("offline: the cached copy with its age; never loaded offline is a failure, and retry recovers")
    func offline() async {
        let repository = repository()
        await repository.setOffline(true)
        let model = CatalogScreenModel(repository: repository, resource: resource)
        await model.load()
        guard case .failed(let error) = model.phase else {
            Issue.record("\(model.phase)")
            return
        }
        #expect(error.kind == .offline)
        #expect(model.value == nil)
        await repository.setOffline(false)
        serve("salsa,tango")
        await model.retry()
        #expect(model.phase == .loaded)
        await repository.setOffline(true)
        await model.refresh()
        #expect(model.phase == .offline(fetchedAt: Self.fetched))
        #expect(model.value == ["salsa", "tango"])
        // A fresh screen, offline, shows the cached copy too.
        let other = CatalogScreenModel(repository: repository, resource: resource)
        await other.refresh()
        #expect(other.phase == .offline(fetchedAt: Self.fetched))
        #expect(other.value == ["salsa", "tango"])
    }

    @Test("pull to refresh keeps the list on screen while it asks")
    func refreshing() async {
        serve("salsa")
        let model = CatalogScreenModel(repository: repository(), resource: resource)
        await model.load()
        transport.stub(url, reply: .response(status: 200, body: Data("salsa,tango".utf8), latency: .seconds(2)))
        let refresh = Task { await model.refresh() }
        await clock.waitForSleepers(count: 1)
        #expect(model.phase == .refreshing)
        #expect(model.value == ["salsa"])
        clock.advance(by: .seconds(2))
        await refresh.value
        #expect(model.phase == .loaded)
        #expect(model.value == ["salsa", "tango"])
    }
}
