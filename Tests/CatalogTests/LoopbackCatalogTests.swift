import Catalog
import Foundation
import HTTPSupport
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The catalog briefs end to end: a real URLSession against a server on 127.0.0.1. Time (the
/// throttle, the request timeout) runs on a manual clock; only the bytes are real.
@Suite("Catalogs over loopback HTTP")
struct LoopbackCatalogTests {
    let server: LoopbackHTTPServer
    let clock = ManualClock()
    let fixtures = FixtureLoader(bundle: .module)

    init() throws {
        server = try LoopbackHTTPServer()
    }

    func repository(_ store: CatalogStore) -> CatalogRepository<ManualClock> {
        CatalogRepository(
            store: store, clock: clock,
            transport: URLSessionTransport(session: URLSession(configuration: .ephemeral)))
    }

    @Test("launch from the network, pull to refresh, then the server gone: the cached list, offline")
    func videosLifecycle() async throws {
        defer { server.stop() }
        server.route("/videos", .response(status: 200, body: try fixtures.data("ips-videos.json")))
        let store = CatalogStore(directory: temporaryFolder("catalog"))
        let repository = repository(store)
        var launched: [CatalogSnapshot<[Lesson]>.Origin] = []
        for await result in repository.launch(.videos(at: server.url("/videos"))) {
            launched.append(try result.get().origin)
        }
        #expect(launched == [.network])
        #expect(try await repository.refresh(.videos(at: server.url("/videos"))).value.count == 14)
        server.stop()
        clock.advance(by: .seconds(7))  // past the throttle: the repository asks, and fails
        let fallback = try await repository.value(.videos(at: server.url("/videos")))
        #expect(fallback.origin == .cache)
        #expect(fallback.value.count == 14)
        await #expect(throws: CatalogError.self) { try await repository.refresh(.videos(at: server.url("/videos"))) }
    }

    @Test("HAL: the root page's sections expand their templates to real URLs; offline, loaded sections still serve")
    func halSections() async throws {
        defer { server.stop() }
        // The fixtures' links point at the real service; rewrite them to this server.
        let root = String(decoding: try fixtures.data("viaplay-root.json"), as: UTF8.self)
            .replacingOccurrences(of: "https://content.viaplay.com", with: server.baseURL.absoluteString)
        server.route("/ios-se", .response(status: 200, body: Data(root.utf8)))
        server.route("/ios-se/serier", .response(status: 200, body: try fixtures.data("viaplay-section-serier.json")))
        let repository = repository(CatalogStore(directory: temporaryFolder("hal")))
        let page = try await repository.value(.page(at: server.url("/ios-se"))).value
        #expect(page.sections.map(\.title) == ["Serier", "Sport", "Filmer", "Barn"])
        let series = try #require(page.sections.first?.url())
        #expect(series == server.url("/ios-se/serier"))
        let section = try await repository.value(.page(at: series))
        #expect(section.origin == .network)
        // Within the 6 s throttle the section is served from the cache: no second request.
        _ = try await repository.value(.page(at: series))
        #expect(server.requests.filter { $0.path == "/ios-se/serier" }.count == 1)
        await repository.setOffline(true)
        #expect(try await repository.value(.page(at: series)).origin == .cache)
        let sport = try #require(page.sections.dropFirst().first?.url())
        await #expect(throws: CatalogError.self) { try await repository.value(.page(at: sport)) }
    }

    @Test("going back cancels the request on the wire: the server sees the connection closed")
    func goingBack() async throws {
        defer { server.stop() }
        server.route("/videos", .response(status: 200, body: try fixtures.data("ips-videos.json")))
        server.script("/videos", [.stall])
        let store = CatalogStore(directory: temporaryFolder("back"))
        let repository = repository(store)
        let screen = Task { try await repository.value(.videos(at: server.url("/videos"))) }
        await server.waitForRequests()
        screen.cancel()
        _ = await screen.result
        // The server sees the connection close once URLSession cancels the transfer.
        await server.waitForStalledRequestsClosedByClient()
        #expect(server.stalledRequestsClosedByClient == 1)
        #expect(await store.entry(for: "videos:" + server.url("/videos").absoluteString) == nil)
    }
}
