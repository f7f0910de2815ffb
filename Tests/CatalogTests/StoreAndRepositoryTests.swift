import Catalog
import Foundation
import HTTPSupport
import TestSupport
import Testing

@Suite("CatalogStore")
struct CatalogStoreTests {
    @Test("stores, reloads after a relaunch, and never uses the key as a path")
    func roundTrip() async throws {
        let folder = temporaryFolder()
        let store = CatalogStore(directory: folder)
        let key = "page:https://content.viaplay.com/ios-se/../../etc/passwd?x=1"
        try await store.store(Data("body".utf8), for: key, at: Date(timeIntervalSince1970: 100))
        let reopened = CatalogStore(directory: folder)
        let entry = try #require(await reopened.entry(for: key))
        #expect(entry.data == Data("body".utf8))
        #expect(entry.storedAt == Date(timeIntervalSince1970: 100))
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(names.count == 1 && names[0].hasSuffix(".entry") && !names[0].contains("/"))
    }

    @Test("a file truncated at any byte offset is reported and treated as missing, never a crash")
    func truncationAtEveryOffset() async throws {
        let folder = temporaryFolder()
        let store = CatalogStore(directory: folder)
        try await store.store(Data("the catalog".utf8), for: "k", at: Date(timeIntervalSince1970: 1))
        let file = try #require(
            try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil).first)
        let bytes = try Data(contentsOf: file)
        for length in 0..<bytes.count {
            try bytes.prefix(length).write(to: file)
            let reopened = CatalogStore(directory: folder)
            #expect(await reopened.entry(for: "k") == nil, "length \(length)")
            #expect(await reopened.problems.count == (length == 0 ? 1 : 1), "length \(length)")
        }
        try bytes.write(to: file)
        #expect(await CatalogStore(directory: folder).entry(for: "k")?.data == Data("the catalog".utf8))
    }

    @Test("a bit flipped anywhere in an entry is reported and treated as missing, never served altered")
    func bitFlips() async throws {
        let folder = temporaryFolder()
        let stored = Data("the catalog, 24 bytes..!".utf8)
        let date = Date(timeIntervalSince1970: 1_763_700_000.5)
        try await CatalogStore(directory: folder).store(stored, for: "videos", at: date)
        let file = try #require(
            try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil).first)
        let bytes = try Data(contentsOf: file)
        var unreadable = 0
        for offset in bytes.indices {
            for bit in [0, 3, 6] {
                var damaged = bytes
                damaged[offset] ^= UInt8(1) << bit
                try damaged.write(to: file)
                let reopened = CatalogStore(directory: folder)
                if let entry = await reopened.entry(for: "videos") {
                    // Only a flip the JSON reader cannot see (such as an escape's case) may read back.
                    #expect(entry.data == stored && entry.storedAt == date, "offset \(offset), bit \(bit)")
                } else {
                    unreadable += 1
                    #expect(await reopened.problems.count == 1, "offset \(offset), bit \(bit)")
                }
            }
        }
        #expect(unreadable > bytes.count * 2)
    }

    @Test("a version 1 entry, written before checksums, still reads")
    func versionOneEntry() async throws {
        let folder = temporaryFolder()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let store = CatalogStore(directory: folder)
        try await store.store(Data("x".utf8), for: "k", at: Date(timeIntervalSince1970: 5))
        let file = try #require(
            try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil).first)
        let old = #"{"data":"eA==","format":"mediacore.catalog-entry","key":"k","storedAt":5,"version":1}"#
        try Data(old.utf8).write(to: file)
        let entry = try #require(await CatalogStore(directory: folder).entry(for: "k"))
        #expect(entry.data == Data("x".utf8))
        #expect(entry.storedAt == Date(timeIntervalSince1970: 5))
    }

    @Test("an entry from a newer version is reported and treated as missing")
    func futureVersion() async throws {
        let folder = temporaryFolder()
        let store = CatalogStore(directory: folder)
        try await store.store(Data("x".utf8), for: "k", at: Date())
        let file = try #require(
            try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil).first)
        let text = String(decoding: try Data(contentsOf: file), as: UTF8.self).replacingOccurrences(
            of: "\"version\":2", with: "\"version\":9")
        try Data(text.utf8).write(to: file)
        let reopened = CatalogStore(directory: folder)
        #expect(await reopened.entry(for: "k") == nil)
        #expect(await reopened.problems.first?.reason.contains("newer") == true)
    }

    @Test("beyond the size bound, the least recently used entries are evicted")
    func eviction() async throws {
        let body = Data(repeating: 65, count: 200)
        // An entry's size on disk: the envelope around the body.
        let probe = CatalogStore(directory: temporaryFolder())
        try await probe.store(body, for: "a", at: Date())
        let entrySize = await probe.totalBytes
        let bound = entrySize * 3 + entrySize / 2
        let store = CatalogStore(directory: temporaryFolder(), maximumBytes: bound)
        for key in ["a", "b", "c"] { try await store.store(body, for: key, at: Date()) }
        _ = await store.entry(for: "a")  // a is now more recent than b
        try await store.store(body, for: "d", at: Date())
        #expect(await store.totalBytes <= bound)
        #expect(await store.entry(for: "a") != nil)
        #expect(await store.entry(for: "d") != nil)
        #expect(await store.entry(for: "b") == nil)
    }
}

@Suite("CatalogRepository policies")
struct CatalogRepositoryTests {
    let clock = ManualClock()
    let transport: InMemoryHTTPTransport<ManualClock>
    let url = URL(literal: "https://api.example/videos")
    let body: Data

    init() throws {
        transport = InMemoryHTTPTransport(clock: clock)
        body = try FixtureLoader(bundle: .module).data("ips-videos.json")
    }

    func repository(store: CatalogStore? = nil) -> CatalogRepository<ManualClock> {
        let transport = transport
        return CatalogRepository(
            store: store ?? CatalogStore(directory: temporaryFolder()), clock: clock,
            transport: transport)
    }

    @Test("launch without a cache: only the network snapshot; with a cache: the cache at once, then the network")
    func launch() async throws {
        transport.stub(url, reply: .response(status: 200, body: body))
        let store = CatalogStore(directory: temporaryFolder())
        var origins: [CatalogSnapshot<[Lesson]>.Origin] = []
        for await result in repository(store: store).launch(.videos(at: url)) {
            origins.append(try result.get().origin)
        }
        #expect(origins == [.network])
        origins = []
        for await result in repository(store: store).launch(.videos(at: url)) {
            origins.append(try result.get().origin)
        }
        #expect(origins == [.cache, .network])
    }

    @Test("a failed refresh keeps the cache and surfaces the error")
    func refreshFailure() async throws {
        transport.stub(url, replies: [.response(status: 200, body: body), .response(status: 503)])
        let repository = repository()
        _ = try await repository.refresh(.videos(at: url))
        let unavailable = CatalogError(.httpStatus(503), key: "videos:" + url.absoluteString, url: url)
        await #expect(throws: unavailable) { try await repository.refresh(.videos(at: url)) }
        #expect(await repository.lastError == unavailable)
        clock.advance(by: .seconds(10))
        let fallback = try await repository.value(.videos(at: url))
        #expect(fallback.origin == .cache)
        #expect(fallback.value.count == 14)
    }

    @Test("the throttle serves the cache until exactly 6 s after the last successful fetch")
    func throttleBoundary() async throws {
        transport.stub(url, reply: .response(status: 200, body: body))
        let repository = repository()
        _ = try await repository.value(.videos(at: url))
        clock.advance(by: .milliseconds(5_999))
        #expect(try await repository.value(.videos(at: url)).origin == .cache)
        clock.advance(by: .milliseconds(1))
        #expect(try await repository.value(.videos(at: url)).origin == .network)
        #expect(transport.requests.count == 2)
    }

    @Test("a failed fetch starts no throttle window")
    func failureStartsNoWindow() async throws {
        transport.stub(
            url,
            replies: [.response(status: 200, body: body), .response(status: 500), .response(status: 200, body: body)])
        let repository = repository()
        _ = try await repository.value(.videos(at: url))
        clock.advance(by: .seconds(7))
        #expect(try await repository.value(.videos(at: url)).origin == .cache)  // 500: falls back to the cache
        clock.advance(by: .seconds(1))
        #expect(try await repository.value(.videos(at: url)).origin == .network)  // no window from the failure
    }

    @Test(
        "RFC 9110 §10.2.3: a 503 with Retry-After keeps the repository away for that long; the cache serves meanwhile and a refresh fails at once"
    )
    func retryAfterHonoured() async throws {
        transport.stub(
            url,
            replies: [
                .response(status: 200, body: body), .response(status: 503, headers: ["Retry-After": "120"]),
                .response(status: 200, body: body),
            ])
        let repository = repository()
        let key = "videos:" + url.absoluteString
        _ = try await repository.value(.videos(at: url))
        clock.advance(by: .seconds(7))
        #expect(try await repository.value(.videos(at: url)).origin == .cache)  // the 503: the cache serves
        #expect(await repository.lastError?.retryAfter == .seconds(120))
        clock.advance(by: .seconds(10))
        #expect(try await repository.value(.videos(at: url)).origin == .cache)
        let waiting = CatalogError(
            .serverAskedToWait(remaining: .seconds(110)), key: key, url: url, retryAfter: .seconds(110))
        await #expect(throws: waiting) { try await repository.refresh(.videos(at: url)) }
        #expect(transport.requests.count == 2)  // neither asked the server
        clock.advance(by: .seconds(110))
        #expect(try await repository.value(.videos(at: url)).origin == .network)
        #expect(transport.requests.count == 3)
    }

    @Test(
        "Retry-After is read on 429 and 503 only, as seconds, capped at an hour; anything else leaves the next request free",
        arguments: [
            (429, "5", Duration.seconds(5)), (503, "0", .zero), (503, "86400", .seconds(3_600)), (500, "120", nil),
            (503, "soon", nil), (503, "-3", nil), (302, "60", nil),
        ] as [(Int, String, Duration?)])
    func retryAfterParsing(status: Int, header: String, honoured: Duration?) async throws {
        transport.stub(
            url,
            replies: [
                .response(status: status, headers: ["Retry-After": header]), .response(status: 200, body: body),
            ])
        let repository = repository()
        await #expect(throws: CatalogError.self) { try await repository.value(.videos(at: url)) }
        let failure = try #require(await repository.lastError)
        #expect(failure.kind == .httpStatus(status))
        #expect(failure.retryAfter.map { min($0, CatalogRepository<ManualClock>.longestServerWait) } == honoured)
        if let honoured, honoured > .zero {
            // No cache: the wait is an error at once, with no request.
            await #expect(throws: CatalogError.self) { try await repository.value(.videos(at: url)) }
            #expect(transport.requests.count == 1)
            clock.advance(by: honoured)
        }
        #expect(try await repository.value(.videos(at: url)).origin == .network)
        #expect(transport.requests.count == 2)
    }

    @Test("offline: pages opened before are served, others say they were never loaded")
    func offline() async throws {
        let section = URL(literal: "https://content.example/serier")
        let unopened = URL(literal: "https://content.example/film")
        let page = try FixtureLoader(bundle: .module).data("viaplay-section-serier.json")
        transport.stub(section, reply: .response(status: 200, body: page))
        let repository = repository()
        _ = try await repository.value(.page(at: section))
        await repository.setOffline(true)
        #expect(try await repository.value(.page(at: section)).origin == .cache)
        await #expect(throws: CatalogError(.neverLoaded, key: "page:" + unopened.absoluteString, url: unopened)) {
            try await repository.value(.page(at: unopened))
        }
    }

    @Test("a catalog response past maximumResponseBytes is stopped at the cap as it streams")
    func oversizedCatalog() async throws {
        let chunks = (0..<3).map { _ in Data(repeating: 0x20, count: 16 << 20) }
        transport.stub(url, reply: .chunked(status: 200, chunks: chunks, gap: .zero, stallsAtEnd: true))
        let repository = repository()
        do {
            _ = try await repository.refresh(.videos(at: url))
            Issue.record("refreshed")
        } catch {
            #expect(error.kind == .transport(HTTPTransportError(.bodyTooLarge(limit: 32 << 20), url: url)))
        }
        await transport.waitForAbandonedStreams()
        #expect(transport.abandonedStreams == 1)
    }

    @Test("a server that drips slower than the request timeout is a typed timeout; the cache still serves")
    func drip() async throws {
        transport.stub(
            url,
            replies: [.response(status: 200, body: body), .response(status: 200, body: body, latency: .seconds(600))])
        let repository = repository()
        _ = try await repository.refresh(.videos(at: url))
        let deadline = clock.now.advanced(by: .seconds(60))
        async let refreshed = repository.refresh(.videos(at: url))
        await clock.waitForSleeper(until: deadline)
        clock.advance(by: .seconds(60))
        do {
            _ = try await refreshed
            Issue.record("refreshed")
        } catch {
            guard let error = error as? CatalogError, case .transport(let failure) = error.kind else {
                Issue.record("\(error)")
                return
            }
            #expect(failure == HTTPTransportError(.timedOut(after: .seconds(60)), url: url))
            #expect(error.url == url)
        }
        // value() falls back to the cache when the network times out.
        transport.stub(url, reply: .response(status: 200, body: body, latency: .seconds(600)))
        let deadline2 = clock.now.advanced(by: .seconds(60))
        async let fallback = repository.value(.videos(at: url))
        await clock.waitForSleeper(until: deadline2)
        clock.advance(by: .seconds(60))
        #expect(try await fallback.origin == .cache)
    }

    @Test("concurrent requests for the same page share one network call")
    func coalescing() async throws {
        transport.stub(url, reply: .response(status: 200, body: body, latency: .seconds(1)))
        let repository = repository()
        async let first = repository.value(.videos(at: url))
        async let second = repository.value(.videos(at: url))
        async let third = repository.refresh(.videos(at: url))
        // One request's latency (its timeout timer sleeps beside it), and every caller joined to
        // it before it answers: a caller scheduled after the answer (a loaded machine, a
        // sanitizer) would otherwise find no request to share, and its own would wait forever.
        await clock.waitForSleeper(until: clock.now.advanced(by: .seconds(1)))
        #expect(await withinPoolTurns { await repository.waitingCallerCount == 3 })
        clock.advance(by: .seconds(1))
        let results = try await [first, second, third]
        #expect(results.allSatisfy { $0.value.count == 14 })
        #expect(transport.requests.count == 1)
    }

    @Test("going back cancels the load: the request is cancelled, nothing is cached, no throttle window opens")
    func goingBackCancels() async throws {
        transport.stub(url, reply: .response(status: 200, body: body, latency: .seconds(8)))
        let store = CatalogStore(directory: temporaryFolder())
        let repository = repository(store: store)
        let screen = Task { try await repository.value(.videos(at: url)) }
        await clock.waitForSleepers(count: 2)  // the transport's latency and the request timeout
        clock.advance(by: .milliseconds(500))
        screen.cancel()
        let result = await screen.result
        guard case .failure(let error as CatalogError) = result, case .transport(let failure) = error.kind else {
            Issue.record("\(result)")
            return
        }
        #expect(failure.kind == .cancelled)
        // The request itself stops: nothing sleeps on the clock any more, well before 8 s.
        await clock.waitForNoSleepers()
        #expect(clock.now.offset < .seconds(1))
        #expect(await store.entry(for: "videos:" + url.absoluteString) == nil)
        #expect(await repository.lastError == nil)
        // No throttle window: the next screen asks the network again.
        transport.stub(url, reply: .response(status: 200, body: body))
        #expect(try await repository.value(.videos(at: url)).origin == .network)
        #expect(await repository.networkRequestCount == 2)
    }

    @Test("one waiter going back leaves the others served by the same request")
    func oneWaiterCancels() async throws {
        transport.stub(url, reply: .response(status: 200, body: body, latency: .seconds(2)))
        let repository = repository()
        let staying = Task { try await repository.value(.videos(at: url)) }
        await clock.waitForSleepers(count: 2)
        let leaving = Task { try await repository.value(.videos(at: url)) }
        // The second caller has joined the request in flight.
        while await repository.waitingCallerCount < 2 { await Task.yield() }
        leaving.cancel()
        _ = await leaving.result
        clock.advance(by: .seconds(2))
        #expect(try await staying.value.origin == .network)
        #expect(await repository.networkRequestCount == 1)
        #expect(transport.requests.count == 1)
    }
}

@Suite("Catalog fixtures end to end")
struct CatalogEndToEndTests {
    @Test("the spreadsheet, the videos API and the HAL root through the repository, online then offline")
    func endToEnd() async throws {
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        let fixtures = FixtureLoader(bundle: .module)
        let classesURL = URL(literal: "https://api.example/classes.csv")
        let videosURL = URL(literal: "https://api.example/videos")
        let rootURL = URL(literal: "https://content.viaplay.com/ios-se")
        transport.stub(classesURL, reply: .response(status: 200, body: try fixtures.data("steezy-classes.csv")))
        transport.stub(videosURL, reply: .response(status: 200, body: try fixtures.data("ips-videos.json")))
        transport.stub(rootURL, reply: .response(status: 200, body: try fixtures.data("viaplay-root.json")))
        let repository = CatalogRepository(
            store: CatalogStore(directory: temporaryFolder()), clock: clock, transport: transport)
        let classes = try await repository.value(.classes(at: classesURL))
        #expect(classes.value.count == 351)
        let index = LessonIndex(classes.value)
        #expect(index.search(LessonQuery(levels: ["beginner"])).totalCount > 0)
        #expect(try await repository.value(.videos(at: videosURL)).value.count == 14)
        let root = try await repository.value(.page(at: rootURL)).value
        #expect(root.sections.count == 4)
        await repository.setOffline(true)
        #expect(try await repository.value(.classes(at: classesURL)).origin == .cache)
        #expect(try await repository.value(.page(at: rootURL)).value == root)
        let sectionURL = try #require(root.sections.first?.url())
        await #expect(throws: CatalogError(.neverLoaded, key: "page:" + sectionURL.absoluteString, url: sectionURL)) {
            try await repository.value(.page(at: sectionURL))
        }
    }
}
