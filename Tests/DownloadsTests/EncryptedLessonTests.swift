import Downloads
import Foundation
import HLS
import HTTPSupport
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The AES-128 lessons of `Tests/TestSupport/Lessons` (encrypted by ffmpeg and by openssl),
/// downloaded with no app code: decrypted at download time into one file that plays offline.
@Suite("AES-128 lessons decrypted while they download")
struct EncryptedLessonTests {
    let clock = ManualClock()
    let transport: InMemoryHTTPTransport<ManualClock>

    init() {
        transport = InMemoryHTTPTransport(clock: clock)
    }

    func downloader() -> MediaDownloader<ManualClock> {
        MediaDownloader(engine: DownloadEngine(concurrency: 2, clock: clock, transport: transport))
    }

    func keyRequests() -> [String] {
        transport.requests.compactMap(\.url?.lastPathComponent).filter { $0.hasSuffix(".key") }
    }

    @Test(
        "RFC 8216 §5.2: AES-128 with an explicit IV, the media sequence number as IV, a key rotation and an encrypted EXT-X-MAP",
        arguments: ["aes-explicit-iv", "aes-implicit-iv", "aes-rotation", "aes-fmp4-init"])
    func lesson(name: String) async throws {
        let lesson = try ServedLesson(name)
        lesson.serve(on: transport)
        let folder = temporaryFolder("aes-\(name)")
        let result = try await downloader().downloadLesson(
            from: lesson.entry, to: folder.appendingPathComponent("lesson")
        )
        .result()
        #expect(result.file.lastPathComponent == "lesson.mp4")
        let file = try MP4Inspector(url: result.file)
        let packets = try Lessons.sourcePackets(name)
        #expect(file.tracks("vide").reduce(0) { $0 + $1.samples.count } == packets["video", default: 0])
        #expect(file.tracks("soun").reduce(0) { $0 + $1.samples.count } == packets["audio", default: 0])
        #expect(packets["video", default: 0] > 0 && packets["audio", default: 0] > 0)
        // Each key is fetched once, and kept in memory only: the folder holds the lesson alone.
        let keys = lesson.files.keys.filter { $0.hasSuffix(".key") }
        #expect(keyRequests().sorted() == keys.sorted())
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(left == ["lesson.mp4"])
    }

    @Test(
        "a refused key (401, 403, 404) or one that is not 16 bytes fails before anything is written",
        arguments: [
            InMemoryHTTPTransport<ManualClock>.Reply.response(status: 401),
            .response(status: 403), .response(status: 404), .resource(Data(repeating: 7, count: 15)),
            .resource(Data("<html>sign in</html>".utf8)),
        ])
    func refusedKey(reply: InMemoryHTTPTransport<ManualClock>.Reply) async throws {
        let lesson = try ServedLesson("aes-explicit-iv")
        lesson.serve(on: transport)
        transport.stub(lesson.base.appendingPathComponent("key.key"), reply: reply)
        let folder = temporaryFolder("aes-refused")
        do {
            _ = try await downloader().downloadLesson(from: lesson.entry, to: folder.appendingPathComponent("lesson"))
                .result()
            Issue.record("a refused key downloaded")
        } catch {
            switch (error.kind, reply) {
            case (.keyRefused(let status), .response(let asked, _, _, _)): #expect(status == asked)
            case (.invalidKey(let count), .resource): #expect(count != 16)
            default: Issue.record("\(error)")
            }
            #expect(error.url?.lastPathComponent == "key.key")
        }
        #expect(!transport.requests.contains { $0.url?.pathExtension == "ts" })
        #expect((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [] == [])
    }

    @Test("RFC 9110 §10.2.3: a key server's 503 with Retry-After is retried like any request of the download")
    func keyRetried() async throws {
        let lesson = try ServedLesson("aes-explicit-iv")
        lesson.serve(on: transport)
        let key = try #require(lesson.files["key.key"])
        transport.stub(
            lesson.base.appendingPathComponent("key.key"),
            replies: [.response(status: 503, headers: ["Retry-After": "0"]), .resource(key)])
        let folder = temporaryFolder("aes-retried")
        let downloader = MediaDownloader(
            engine: DownloadEngine(
                concurrency: 2, retry: RetryPolicy(maximumAttempts: 2, initialDelay: .zero, jitter: 0), clock: clock,
                transport: transport))
        let result = try await downloader.downloadLesson(
            from: lesson.entry, to: folder.appendingPathComponent("lesson")
        )
        .result()
        #expect(try MP4Inspector(url: result.file).tracks("vide").first?.samples.isEmpty == false)
        #expect(keyRequests() == ["key.key", "key.key"])
    }

    @Test(
        "a key URI outside HTTP(S) is refused before anything is fetched",
        arguments: ["file:///etc/passwd", "data:text/plain;base64,AAAAAAAAAAAAAAAAAAAAAA==", "ftp://keys.example/k"])
    func keyScheme(uri: String) async throws {
        let lesson = try ServedLesson("aes-explicit-iv")
        lesson.serve(on: transport)
        let playlist = String(decoding: try #require(lesson.files["index.m3u8"]), as: UTF8.self)
            .replacingOccurrences(of: "URI=\"key.key\"", with: "URI=\"\(uri)\"")
        let url = lesson.base.appendingPathComponent("scheme.m3u8")
        transport.stub(url, reply: .response(status: 200, body: Data(playlist.utf8)))
        do {
            _ = try await downloader().downloadLesson(
                from: url, to: temporaryFolder("aes-scheme").appendingPathComponent("x")
            )
            .result()
            Issue.record("a key at \(uri) was used")
        } catch {
            guard case .uri = error.kind else {
                Issue.record("\(error)")
                return
            }
        }
        #expect(transport.requests.count == 1)
    }

    @Test("a wrong key is a typed error naming the segment, never a file of noise")
    func wrongKey() async throws {
        let lesson = try ServedLesson("aes-rotation")
        lesson.serve(on: transport)
        // The second segment's key, swapped for another 16 bytes.
        transport.stub(lesson.base.appendingPathComponent("key2.key"), reply: .resource(Data(repeating: 9, count: 16)))
        let folder = temporaryFolder("aes-wrong")
        let destination = folder.appendingPathComponent("lesson.mp4")
        do {
            _ = try await downloader().downloadLesson(from: lesson.entry, to: destination).result()
            Issue.record("a wrong key downloaded")
        } catch {
            guard case .decryptionFailed(let reason) = error.kind else {
                Issue.record("\(error)")
                return
            }
            #expect(error.url?.lastPathComponent == "seg1.ts")
            #expect(!reason.isEmpty)
            #expect(error.description.contains("seg1.ts"))
        }
        #expect(!FileManager.default.fileExists(atPath: destination.path))
    }

    @Test("SAMPLE-AES without a decryptor is refused before anything is fetched; with one, it gets the context")
    func otherMethods() async throws {
        let lesson = try ServedLesson("aes-explicit-iv")
        lesson.serve(on: transport)
        let playlist = String(decoding: try #require(lesson.files["index.m3u8"]), as: UTF8.self)
            .replacingOccurrences(of: "METHOD=AES-128", with: "METHOD=SAMPLE-AES")
        let url = lesson.base.appendingPathComponent("sample-aes.m3u8")
        transport.stub(url, reply: .response(status: 200, body: Data(playlist.utf8)))
        let folder = temporaryFolder("sample-aes")
        do {
            _ = try await downloader().downloadLesson(from: url, to: folder.appendingPathComponent("lesson")).result()
            Issue.record("SAMPLE-AES downloaded without a decryptor")
        } catch {
            #expect(error.kind == .encrypted(method: "SAMPLE-AES"))
        }
        #expect(transport.requests.count == 1)
        // A decryptor that decrypts with the fixture's own key sees every part's context.
        let recorder = RecordingDecryptor(key: try #require(lesson.files["key.key"]))
        let result = try await downloader().downloadLesson(
            from: url, to: folder.appendingPathComponent("lesson"), decryptor: recorder
        ).result()
        #expect(try MP4Inspector(url: result.file).tracks("vide").first?.samples.isEmpty == false)
        let contexts = recorder.contexts.sorted { $0.mediaSequence < $1.mediaSequence }
        #expect(contexts.map(\.mediaSequence) == [0, 1])
        #expect(contexts.allSatisfy { $0.method == "SAMPLE-AES" && $0.keyFormat == "identity" })
        #expect(contexts.allSatisfy { $0.keyURL == lesson.base.appendingPathComponent("key.key") })
        #expect(contexts.allSatisfy { $0.initializationVector == hexBytes("0f0e0d0c0b0a09080706050403020100") })
        #expect(contexts.allSatisfy { !$0.isInitializationVectorDerived && !$0.isInitializationSection })
        #expect(contexts.map(\.url.lastPathComponent) == ["seg0.ts", "seg1.ts"])
    }
}

/// An app's decryptor for a method MediaCore leaves to it, here AES-128-CBC by another name:
/// records what it was told.
final class RecordingDecryptor: SegmentDecryptor, @unchecked Sendable {
    private let lock = NSLock()
    private var seen: [SegmentDecryptionContext] = []
    let key: Data

    init(key: Data) { self.key = key }

    var contexts: [SegmentDecryptionContext] {
        lock.lock()
        defer { lock.unlock() }
        return seen
    }

    func decrypt(_ data: Data, context: SegmentDecryptionContext) async throws -> Data {
        lock.withLock { seen.append(context) }
        guard let cipher = AES128(key: key) else { throw CancellationError() }
        return try CBCDecryptor.decrypt(data, cipher: cipher, iv: context.initializationVector)
    }
}
