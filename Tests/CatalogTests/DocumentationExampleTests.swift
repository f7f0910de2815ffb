import Catalog
import Foundation
import TestSupport
import Testing

/// The Swift examples of Catalog's landing page, compiled and run against a server on
/// 127.0.0.1 through URLSession, as an app runs them. The architecture tests check that the
/// article shows exactly the lines between the `example` markers.
@Suite("Documentation examples")
struct DocumentationExampleTests {
    @Test("the landing page's launch: the network's list on the first launch, the cache then the network on the next")
    func launch() async throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        let csv = try FixtureLoader(bundle: .module).data("steezy-classes.csv")
        server.route("/classes.csv", .response(status: 200, body: csv))
        let cacheFolder = temporaryFolder("doc-launch")
        let classesURL = server.url("/classes.csv")
        var shown: [(instructors: Set<String>, origin: CatalogSnapshot<[Lesson]>.Origin)] = []
        func show(_ lessons: [Lesson], from origin: CatalogSnapshot<[Lesson]>.Origin) {
            shown.append((Set(lessons.compactMap(\.instructor)), origin))
        }
        for _ in 0..<2 {  // two launches of the app
            // example: begin catalog-launch
            let repository = CatalogRepository(store: CatalogStore(directory: cacheFolder))
            for await result in repository.launch(.classes(at: classesURL)) {
                guard case .success(let snapshot) = result else { continue }  // surface the error instead
                let index = LessonIndex(snapshot.value)
                let page = index.search(LessonQuery(text: "adolph", levels: ["beginner"], order: .title))
                show(page.lessons, from: snapshot.origin)  // .cache, then .network
            }
            // example: end catalog-launch
        }
        #expect(shown.map(\.origin) == [.network, .cache, .network])
        #expect(shown.allSatisfy { $0.instructors == ["Adolph Moen"] })
    }
}
