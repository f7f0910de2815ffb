import Catalog
import Foundation
import HTTPSupport
import TestSupport
import Testing

@Suite("LessonIndex")
struct LessonIndexTests {
    let lessons = [
        Lesson(id: "1", title: "Salsa Basics", instructor: "José Pérez", level: "beginner"),
        Lesson(id: "2", title: "Advanced Spins", instructor: "Ana Lima", level: "advanced"),
        Lesson(id: "3", title: "Bachata Footwork", instructor: "José Pérez", level: "intermediate"),
        Lesson(
            id: "4", title: "Cha-cha Timing", instructor: "Zoë Brandt", level: "beginner",
            extra: ["song": "Oye Como Va"]),
        Lesson(id: "5", title: "Street Jazz", instructor: "Ana Lima", level: nil),
    ]

    @Test(
        "text search is case- and diacritic-insensitive and matches word prefixes",
        arguments: [
            ("jose", ["1", "3"]), ("JOSÉ pér", ["1", "3"]), ("zoe", ["4"]), ("sal", ["1"]), ("cha", ["4"]),
            ("oye como", ["4"]), ("spin beg", []), ("", ["1", "2", "3", "4", "5"]), ("  ", ["1", "2", "3", "4", "5"]),
        ]
    )
    func text(query: String, ids: [String]) {
        let index = LessonIndex(lessons)
        #expect(index.search(LessonQuery(text: query)).lessons.map(\.id) == ids)
    }

    @Test("filters combine; orders and pages are stable")
    func filtersOrdersPages() {
        let index = LessonIndex(lessons)
        #expect(index.search(LessonQuery(levels: ["beginner"])).lessons.map(\.id) == ["1", "4"])
        #expect(index.search(LessonQuery(levels: ["beginner"], instructors: ["José Pérez"])).lessons.map(\.id) == ["1"])
        #expect(index.search(LessonQuery(order: .title)).lessons.map(\.id) == ["2", "3", "4", "1", "5"])
        #expect(index.search(LessonQuery(order: .instructor)).lessons.map(\.id) == ["2", "5", "3", "1", "4"])
        #expect(index.search(LessonQuery(order: .level)).lessons.map(\.id) == ["4", "1", "3", "2", "5"])
        let page = index.search(LessonQuery(order: .title, page: 1, pageSize: 2))
        #expect(page.lessons.map(\.id) == ["4", "1"])
        #expect(page.totalCount == 5 && page.pageCount == 3)
        #expect(index.groupedByLevel(LessonQuery()).map(\.level) == ["beginner", "intermediate", "advanced", ""])
        #expect(index.instructors == ["Ana Lima", "José Pérez", "Zoë Brandt"])
    }

    /// 1,000 seeds: the index agrees with a linear scan of the folded fields.
    @Test("the index answers what a linear scan answers")
    func agreesWithScan() throws {
        let classes = try ClassSpreadsheet.lessons(from: FixtureLoader(bundle: .module).data("steezy-classes.csv"))
            .lessons
        let index = LessonIndex(classes)
        var generator = SplitMix64(seed: 3)
        let vocabulary = classes.flatMap { ($0.title + " " + ($0.instructor ?? "")).split(separator: " ") }.map(
            String.init)
        func words(_ text: String) -> [Substring] {
            text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil).lowercased()
                .split { !$0.isLetter && !$0.isNumber }
        }
        let folded = classes.map { lesson in
            [lesson.title, lesson.instructor, lesson.level, lesson.extra["song"]].compactMap { $0 }.flatMap(words)
        }
        for seed in 0..<1_000 {
            let word = vocabulary[Int.random(in: 0..<vocabulary.count, using: &generator)]
            let prefix = String(word.prefix(Int.random(in: 1...max(1, word.count), using: &generator)))
            // Every word of the query begins some word of the lesson.
            let queryWords = words(prefix)
            let expected = classes.indices.filter { index in
                queryWords.allSatisfy { queryWord in folded[index].contains { $0.hasPrefix(queryWord) } }
            }.map { classes[$0].id }
            let found = index.search(LessonQuery(text: prefix, pageSize: 1_000)).lessons.map(\.id)
            #expect(found == expected, "seed \(seed): \(prefix)")
        }
    }
}

@Suite("Lesson thumbnails")
struct LessonThumbnailTests {
    @Test(
        "a lesson's thumbnail is a URL only when it is an absolute http(s) one",
        arguments: [
            ("https://img.example/a.jpg", "https://img.example/a.jpg"),
            ("HTTP://img.example/b.png", "HTTP://img.example/b.png"),
            ("dance-hero", nil), ("file:///etc/passwd", nil), ("https:///no-host.jpg", nil), ("", nil),
        ] as [(String, String?)])
    func thumbnailURL(thumbnail: String, expected: String?) {
        let lesson = Lesson(id: "1", title: "Salsa", thumbnail: thumbnail)
        #expect(lesson.thumbnailURL?.absoluteString == expected)
    }
}

@Suite("ThumbnailCache")
struct ThumbnailCacheTests {
    let clock = ManualClock()
    let transport: InMemoryHTTPTransport<ManualClock>
    let image = URL(literal: "https://i.example/id/477/2000/2000.jpg")

    init() {
        transport = InMemoryHTTPTransport(clock: clock)
    }

    func cache(folder: URL = temporaryFolder(), memoryLimit: Int = 1 << 20) -> ThumbnailCache {
        let transport = transport
        return ThumbnailCache(
            directory: folder, memoryLimit: memoryLimit, clock: clock, transport: transport)
    }

    @Test("memory, then disk after a relaunch, then the network; concurrent requests share a download")
    func layers() async throws {
        transport.stub(image, reply: .response(status: 200, body: Data("jpeg".utf8), latency: .seconds(1)))
        let folder = temporaryFolder()
        let cache = cache(folder: folder)
        async let first = cache.data(for: image)
        async let second = cache.data(for: image)
        // The download's latency; its 30 s timeout sleeps beside it.
        await clock.waitForSleeper(until: clock.now.advanced(by: .seconds(1)))
        clock.advance(by: .seconds(1))
        #expect(try await [first, second] == [Data("jpeg".utf8), Data("jpeg".utf8)])
        #expect(try await cache.data(for: image) == Data("jpeg".utf8))
        #expect(await cache.downloadCount == 1)
        let relaunched = self.cache(folder: folder)
        #expect(try await relaunched.data(for: image) == Data("jpeg".utf8))
        #expect(await relaunched.downloadCount == 0)
        #expect(transport.requests.count == 1)
        // Never a URL as a path.
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.path).allSatisfy {
                !$0.contains("picsum") && !$0.contains("/")
            })
    }

    @Test("an image past maximumImageBytes is stopped at the cap as it streams, never held whole")
    func oversizedImageStopped() async throws {
        // 3 MiB chunks of a body that would never end: only the cap ends the transfer.
        let chunks = (0..<4).map { Data(repeating: UInt8($0), count: 3 << 20) }
        transport.stub(image, reply: .chunked(status: 200, chunks: chunks, gap: .zero, stallsAtEnd: true))
        let cache = cache()
        await #expect(throws: ThumbnailError(.unusableBody(bytes: (8 << 20) + 1), url: image)) {
            try await cache.data(for: image)
        }
        await transport.waitForAbandonedStreams()
        #expect(transport.abandonedStreams == 1)
    }

    @Test("a failure is reported for its URL and not cached")
    func failures() async throws {
        transport.stub(image, replies: [.response(status: 500), .response(status: 200, body: Data("ok".utf8))])
        let cache = cache()
        await #expect(throws: ThumbnailError(.httpStatus(500), url: image)) { try await cache.data(for: image) }
        #expect(try await cache.data(for: image) == Data("ok".utf8))
        let empty = URL(literal: "https://i.example/empty.jpg")
        transport.stub(empty, reply: .response(status: 200, body: Data()))
        await #expect(throws: ThumbnailError(.unusableBody(bytes: 0), url: empty)) { try await cache.data(for: empty) }
    }

    @Test("an image that drips slower than the timeout fails for its URL, and the next request tries again")
    func drip() async throws {
        transport.stub(
            image,
            replies: [
                .response(status: 200, body: Data("jpeg".utf8), latency: .seconds(600)),
                .response(status: 200, body: Data("jpeg".utf8)),
            ])
        let cache = cache()
        let deadline = clock.now.advanced(by: .seconds(30))
        let first = Task { try await cache.data(for: image) }
        await clock.waitForSleeper(until: deadline)
        clock.advance(by: .seconds(30))
        let timedOut = ThumbnailError(
            .transport(HTTPTransportError(.timedOut(after: .seconds(30)), url: image)), url: image)
        await #expect(throws: timedOut) { try await first.value }
        #expect(timedOut.isTimeout)
        #expect(try await cache.data(for: image) == Data("jpeg".utf8))
        #expect(transport.requests.count == 2)
    }

    @Test("memory stays within its limit")
    func memoryBound() async throws {
        let cache = cache(memoryLimit: 1_000)
        for index in 0..<10 {
            let url = URL(literal: "https://i.example/").appendingPathComponent("\(index).jpg")
            transport.stub(url, reply: .response(status: 200, body: Data(repeating: 1, count: 300)))
            _ = try await cache.data(for: url)
        }
        #expect(await cache.memoryUsage <= 1_000)
    }
}
