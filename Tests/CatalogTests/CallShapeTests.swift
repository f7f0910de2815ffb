import Catalog
import Foundation
import HTTPSupport
import TestSupport
import Testing

/// Typed throws must not make ordinary Swift awkward: the repository's and the thumbnail
/// cache's async calls in the shapes apps write.
@Suite("Catalog call shapes")
struct CatalogCallShapeTests {
    let clock = ManualClock()
    let transport: InMemoryHTTPTransport<ManualClock>
    let url = URL(literal: "https://catalog.example/greeting")
    let broken = URL(literal: "https://catalog.example/broken")
    var resource: CatalogResource<String> {
        CatalogResource(key: "greeting", url: url) { data in String(decoding: data, as: UTF8.self) }
    }

    init() {
        transport = InMemoryHTTPTransport(clock: clock)
        transport.stub(url, reply: .response(status: 200, body: Data("hello".utf8)))
        transport.stub(broken, reply: .response(status: 500))
    }

    func repository() -> CatalogRepository<ManualClock> {
        CatalogRepository(
            store: CatalogStore(directory: temporaryFolder("shapes")), clock: clock, requestTimeout: nil,
            transport: transport)
    }

    /// An untyped context: the typed error converts to `any Error` with no ceremony.
    func untyped(_ repository: CatalogRepository<ManualClock>, _ resource: CatalogResource<String>) async throws
        -> String
    {
        try await repository.refresh(resource).value
    }

    @Test("value(_:) and refresh(_:): async let, untyped try, typed catch, try?, Task")
    func repositoryShapes() async throws {
        let repository = repository()
        let resource = resource
        async let first = repository.value(resource)
        #expect(try await first.value == "hello")
        #expect(try await untyped(repository, resource) == "hello")
        let failing = CatalogResource<String>(key: "broken", url: broken) { data in
            String(decoding: data, as: UTF8.self)
        }
        do {
            _ = try await repository.refresh(failing)
            Issue.record("refreshed a 500")
        } catch {
            // `error` is a CatalogError here: no cast.
            #expect(error.url == broken)
        }
        #expect((try? await repository.refresh(failing)) == nil)
        let task = Task { try await repository.value(resource).value }
        #expect(try await task.value == "hello")
    }

    @Test("ThumbnailCache.data(for:): async let, typed catch, try?")
    func thumbnailShapes() async throws {
        let cache = ThumbnailCache(directory: temporaryFolder("thumbs"), requestTimeout: nil, transport: transport)
        async let image = cache.data(for: url)
        #expect(try await image == Data("hello".utf8))
        do {
            _ = try await cache.data(for: broken)
            Issue.record("cached a 500")
        } catch {
            // `error` is a ThumbnailError here: no cast.
            #expect(error.url == broken)
        }
        #expect((try? await cache.data(for: broken)) == nil)
    }
}
