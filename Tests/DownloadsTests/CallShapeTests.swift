import Downloads
import Foundation
import TestSupport
import Testing

/// Typed throws must not make ordinary Swift awkward: `DownloadJob.result()` and the planning
/// calls in the shapes apps write.
@Suite("Downloads call shapes")
struct DownloadCallShapeTests {
    let clock = ManualClock()
    let transport: InMemoryHTTPTransport<ManualClock>
    let url = URL(literal: "https://media.example/lesson.mp4")
    let file = resourceBytes(3_000, seed: 11)

    init() {
        transport = InMemoryHTTPTransport(clock: clock)
        transport.stub(url, reply: .resource(file))
    }

    func downloader() -> MediaDownloader<ManualClock> {
        MediaDownloader(engine: DownloadEngine(concurrency: 2, clock: clock, transport: transport))
    }

    /// An untyped context: the typed error converts to `any Error` with no ceremony.
    func untyped(_ job: DownloadJob) async throws -> URL { try await job.result().file }

    @Test("result(): async let, untyped try, typed catch, try?, Task")
    func result() async throws {
        let folder = temporaryFolder("shapes")
        let downloader = downloader()
        async let first = downloader.downloadFile(from: url, to: folder.appendingPathComponent("a.mp4")).result()
        #expect(try await first.file.lastPathComponent == "a.mp4")
        let second = try await untyped(downloader.downloadFile(from: url, to: folder.appendingPathComponent("b.mp4")))
        #expect(try Data(contentsOf: second) == file)
        let missing = URL(literal: "https://media.example/missing.mp4")
        transport.stub(missing, reply: .response(status: 404))
        do {
            _ = try await downloader.downloadFile(from: missing, to: folder.appendingPathComponent("c.mp4")).result()
            Issue.record("downloaded a 404")
        } catch {
            // `error` is a DownloadError here: no cast.
            #expect(error.url == missing)
        }
        #expect(
            (try? await downloader.downloadFile(from: missing, to: folder.appendingPathComponent("d.mp4")).result())
                == nil)
        let task = Task {
            try await downloader.downloadFile(from: url, to: folder.appendingPathComponent("e.mp4")).result()
        }
        #expect(try await task.value.file.lastPathComponent == "e.mp4")
    }
}
