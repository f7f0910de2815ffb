import Foundation
import HTTPSupport
import OfflineLessonsTesting
import TestSupport
import Testing

@testable import Downloads
@testable import OfflineLessons

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Bodies a background session brought while no download ran, read back by the download through
/// the one journal and remux: byte-identical with a download from the network, no request
/// for what was staged, and each body deleted once read.
@Suite("Staged background bodies")
struct StagedBodiesTests {
    let clock = ManualClock()
    let transport: InMemoryHTTPTransport<ManualClock>

    init() {
        transport = InMemoryHTTPTransport(clock: clock)
    }

    /// Fetches `request` as the background daemon would, into a file of its own.
    func fetchToFile(_ request: URLRequest, in folder: URL) async throws -> (URL, [String: String]) {
        let (data, response) = try await transport.send(request)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent(UUID().uuidString)
        try data.write(to: file)
        let headers = (response as? HTTPURLResponse)?.allHeaderFields as? [String: String] ?? [:]
        return (file, headers)
    }

    func range(of request: URLRequest) -> ByteRange? {
        request.value(forHTTPHeaderField: "Range").flatMap(StagedBodies.parseRange).map {
            ByteRange(length: $0.last - $0.first + 1, offset: $0.first)
        }
    }

    @Test(
        "every part of a lesson staged: the download asks the network for its playlists only, writes the same bytes, and deletes each body",
        arguments: ["ts-heaac", "packed-aac", "cmaf", "aes-implicit-iv", "audio-renditions"])
    func wholeLessonStaged(name: String) async throws {
        let lesson = try ServedLesson(name)
        lesson.serve(on: transport)
        let folder = temporaryFolder("staged-\(name)")
        let downloader = MediaDownloader(
            engine: DownloadEngine(concurrency: 2, retry: .none, clock: clock, transport: transport))
        let reference = folder.appendingPathComponent("reference.mp4")
        let before = transport.requests.count
        let first = try await downloader.downloadLesson(from: lesson.entry, to: reference, preferredLanguages: [])
            .result()
        let parts = transport.requests.dropFirst(before).filter { lesson.key(of: $0) != nil }
        try #require(!parts.isEmpty)

        // The background session: each part's request fetched to a file, moved into the store.
        // Beside the file the run writes (an audio-only lesson's is an `.m4a`), where it reads them.
        let staged = StagedBodies.beside(folder.appendingPathComponent("lesson.\(first.file.pathExtension)"))
        for request in parts {
            let (file, response) = try await fetchToFile(request, in: folder)
            let url = try #require(request.url)
            try staged.stage(file, url: url, range: range(of: request), headers: response)
        }
        #expect(staged.entries.count == parts.count)

        let counted = transport.requests.count
        let fromStaged = MediaDownloader(
            engine: DownloadEngine(concurrency: 2, retry: .none, clock: clock, transport: transport))
        let destination = folder.appendingPathComponent("lesson.mp4")
        let second = try await fromStaged.downloadLesson(from: lesson.entry, to: destination, preferredLanguages: [])
            .result()
        // (An audio-only lesson is written as an `.m4a` beside the name asked for.)
        #expect(try Data(contentsOf: second.file) == Data(contentsOf: first.file))
        let fetched = transport.requests.dropFirst(counted).compactMap { lesson.key(of: $0) }
        #expect(fetched.isEmpty, "fetched again: \(fetched)")
        #expect(staged.entries.isEmpty)
        #expect(staged.byteCount == 0)
    }

    @Test("adjacent ranges merged into one background request (RFC 9110 §14.1.2) are read back part by part")
    func mergedRangesReadBack() async throws {
        let url = URL(literal: "https://cdn.example/lesson.mp4")
        let bytes = resourceBytes(50_000, seed: 31)
        transport.stub(url, reply: .resource(bytes, headers: ["ETag": "\"v1\""]))
        let parts = (0..<5).map {
            DownloadPart(url: url, byteRange: ByteRange(length: 10_000, offset: UInt64($0) * 10_000))
        }
        let folder = temporaryFolder("staged-merged")
        let staged = StagedBodies(folder: folder.appendingPathComponent(".lesson.mp4.staged"))
        // Parts 1 to 3 went to the background session as one request.
        let requests = BackgroundBatch.requests(
            download: "lesson",
            parts: (1...3).map { BackgroundBatch.Part(index: $0, part: parts[$0], expectedBytes: 10_000) })
        let batch = try #require(requests.first)
        #expect(requests.count == 1)
        #expect(batch.byteRange == ByteRange(length: 30_000, offset: 10_000))
        var request = URLRequest(url: url)
        request.setValue(batch.byteRange?.httpRangeHeader, forHTTPHeaderField: "Range")
        let (file, response) = try await fetchToFile(request, in: folder)
        try staged.stage(file, url: url, range: batch.byteRange, headers: response)

        let counted = transport.requests.count
        let engine = DownloadEngine(
            concurrency: 2, retry: .none, clock: clock, transport: StagedBodyTransport(base: transport, staged: staged))
        let destination = folder.appendingPathComponent("lesson.mp4")
        _ = try await engine.start(parts, to: destination).result()
        #expect(try Data(contentsOf: destination) == bytes)
        let asked = transport.requests.dropFirst(counted).compactMap { $0.value(forHTTPHeaderField: "Range") }
        #expect(asked.sorted() == ["bytes=0-9999", "bytes=40000-49999"])
        #expect(staged.entries.isEmpty)
    }

    @Test(
        "a body is deleted only once the download's journal keeps every byte of it: reading deletes nothing, so a kill before the journal's record loses nothing"
    )
    func deletedOnlyWhenAllRead() async throws {
        let url = URL(literal: "https://cdn.example/lesson.mp4")
        let folder = temporaryFolder("staged-read")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let staged = StagedBodies(folder: folder.appendingPathComponent("staged"))
        let bytes = resourceBytes(600_000, seed: 5)
        let body = folder.appendingPathComponent("body")
        try bytes.write(to: body)
        try staged.stage(body, url: url, range: ByteRange(length: 600_000, offset: 0), headers: [:])
        let transport = StagedBodyTransport(base: self.transport, staged: staged)
        func ask(_ range: String, readingAll: Bool = true) async throws -> Data {
            var request = URLRequest(url: url)
            request.setValue(range, forHTTPHeaderField: "Range")
            let (_, chunks) = try await transport.stream(request)
            var data = Data()
            for try await chunk in chunks {
                data.append(chunk)
                if !readingAll { break }
            }
            return data
        }
        // A reader that stops after its first chunk (a cancelled transfer).
        #expect(try await ask("bytes=0-599999", readingAll: false).count == Int(StagedBodies.chunkLength))
        #expect(staged.entries.count == 1)
        #expect(try await ask("bytes=0-299999") == bytes[0..<300_000])
        // The same range again (a retried part), then the rest: every byte read, none kept yet.
        #expect(try await ask("bytes=0-299999") == bytes[0..<300_000])
        #expect(try await ask("bytes=300000-599999") == bytes[300_000..<600_000])
        #expect(staged.entries.count == 1, "read, but a kill now would lose it: it stays")
        // The journal keeps the parts, in any order, one twice.
        staged.partIsKept(DownloadPart(url: url, byteRange: ByteRange(length: 300_000, offset: 300_000)))
        staged.partIsKept(DownloadPart(url: url, byteRange: ByteRange(length: 300_000, offset: 300_000)))
        #expect(staged.entries.count == 1)
        staged.partIsKept(DownloadPart(url: URL(literal: "https://cdn.example/other.mp4"), byteRange: nil))
        #expect(staged.entries.count == 1)
        staged.partIsKept(DownloadPart(url: url, byteRange: ByteRange(length: 300_000, offset: 0)))
        #expect(staged.entries.isEmpty)
        #expect(files(in: staged.folder).isEmpty)
    }

    @Test(
        "a request is answered only by a body that holds all its bytes, of the version If-Range names (RFC 9110 §13.1.5)",
        arguments: [
            ("bytes=10000-19999", nil, true),
            ("bytes=10000-39999", nil, true),
            ("bytes=9999-19999", nil, false),
            ("bytes=30000-40000", nil, false),
            ("bytes=10000-", nil, false),
            ("bytes=12000-19999", "\"v1\"", true),
            ("bytes=12000-19999", "\"v2\"", false),
            ("bytes=12000-19999", "Mon, 23 Nov 2026 10:00:00 GMT", true),
        ] as [(String, String?, Bool)])
    func matching(range: String, ifRange: String?, answered: Bool) throws {
        let url = URL(literal: "https://cdn.example/lesson.mp4")
        let folder = temporaryFolder("staged-match")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let staged = StagedBodies(folder: folder.appendingPathComponent("staged"))
        let body = folder.appendingPathComponent("body")
        try resourceBytes(30_000, seed: 1).write(to: body)
        let headers = ["etag": "\"v1\"", "Last-Modified": "Mon, 23 Nov 2026 10:00:00 GMT"]
        try staged.stage(body, url: url, range: ByteRange(length: 30_000, offset: 10_000), headers: headers)
        var request = URLRequest(url: url)
        request.setValue(range, forHTTPHeaderField: "Range")
        if let ifRange { request.setValue(ifRange, forHTTPHeaderField: "If-Range") }
        #expect((staged.match(request) != nil) == answered)
        // Another resource is never answered from it.
        request.url = URL(literal: "https://cdn.example/other.mp4")
        #expect(staged.match(request) == nil)
    }

    @Test(
        "a body of the wrong size is refused and left where it was; a body a kill left without its description is never read and is removed"
    )
    func refusedAndIncomplete() throws {
        let url = URL(literal: "https://cdn.example/lesson.mp4")
        let folder = temporaryFolder("staged-refused")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let staged = StagedBodies(folder: folder.appendingPathComponent("staged"))
        let body = folder.appendingPathComponent("body")
        try Data(count: 999).write(to: body)
        #expect(throws: StagedBodies.StagingError.wrongLength(expected: 1_000, received: 999)) {
            try staged.stage(body, url: url, range: ByteRange(length: 1_000, offset: 0), headers: [:])
        }
        #expect(FileManager.default.fileExists(atPath: body.path))
        try FileManager.default.createDirectory(at: staged.folder, withIntermediateDirectories: true)
        try Data(count: 1_000).write(to: staged.folder.appendingPathComponent("7.body"))
        #expect(staged.entries.isEmpty)
        staged.removeIncomplete()
        #expect(files(in: staged.folder).isEmpty)
    }
}
