import Downloads
import Foundation
import HTTPSupport
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A resume must not mix two versions of a file (RFC 9110 §8.8, §13.1.5).
@Suite("Resuming only the same version of a file")
struct ResumeValidationTests {
    let clock = ManualClock()
    let transport: InMemoryHTTPTransport<ManualClock>
    let url = URL(literal: "https://cdn.example/lesson.mp4")
    let first = resourceBytes(50_000, seed: 21)
    let second = resourceBytes(50_000, seed: 22)

    init() {
        transport = InMemoryHTTPTransport(clock: clock)
    }

    func engine() -> DownloadEngine<ManualClock> {
        DownloadEngine(concurrency: 1, retry: .none, clock: clock, transport: transport)
    }

    var parts: [DownloadPart] {
        (0..<5).map { DownloadPart(url: url, byteRange: ByteRange(length: 10_000, offset: UInt64($0) * 10_000)) }
    }

    func drive(_ job: DownloadJob) async throws(DownloadError) -> DownloadResult {
        let clock = clock
        let driver = Task { await clock.advanceWhileSleeping() }
        defer { driver.cancel() }
        return try await job.result()
    }

    /// Downloads two of the five parts of the first version, then pauses.
    func pauseAfterTwoParts(headers: [String: String], to destination: URL) async {
        transport.stub(url, reply: .resource(first, headers: headers, latency: .seconds(1)))
        let job = engine().start(parts, to: destination)
        for _ in 0..<2 {
            await clock.waitForSleepers(count: 1)
            clock.advance(by: .seconds(1))
        }
        await clock.waitForSleepers(count: 1)
        job.pause()
        _ = try? await job.result()
    }

    @Test(
        "a changed ETag or Last-Modified between pause and resume starts over: the file is all the new version",
        arguments: [
            (["ETag": "\"v1\""], ["ETag": "\"v2\""]),
            (["Last-Modified": "Mon, 23 Nov 2026 10:00:00 GMT"], ["Last-Modified": "Mon, 23 Nov 2026 11:00:00 GMT"]),
        ])
    func changedBetweenPauseAndResume(before: [String: String], after: [String: String]) async throws {
        let folder = temporaryFolder("validators")
        let destination = folder.appendingPathComponent("lesson.mp4")
        await pauseAfterTwoParts(headers: before, to: destination)
        #expect(files(in: folder).contains(".lesson.mp4.validators"))
        transport.stub(url, reply: .resource(second, headers: after))
        let requestsBefore = transport.requests.count
        let result = try await drive(engine().start(parts, to: destination))
        #expect(try Data(contentsOf: destination) == second)
        #expect(result.partsFetched == 5)
        // The resumed run asked for the kept version with If-Range first.
        let resumed = transport.requests.dropFirst(requestsBefore)
        #expect(resumed.first?.value(forHTTPHeaderField: "If-Range") == before.values.first)
        #expect(files(in: folder) == ["lesson.mp4"])
    }

    @Test("an unchanged file resumes from its kept parts, asking with If-Range")
    func unchangedResumes() async throws {
        let folder = temporaryFolder("validators")
        let destination = folder.appendingPathComponent("lesson.mp4")
        await pauseAfterTwoParts(headers: ["ETag": "\"v1\""], to: destination)
        transport.stub(url, reply: .resource(first, headers: ["ETag": "\"v1\""]))
        let requestsBefore = transport.requests.count
        let result = try await drive(engine().start(parts, to: destination))
        #expect(try Data(contentsOf: destination) == first)
        #expect(result.partsFetched == 3)
        #expect(
            transport.requests.dropFirst(requestsBefore).allSatisfy {
                $0.value(forHTTPHeaderField: "If-Range") == "\"v1\""
            })
    }

    @Test(
        "RFC 9110 §13.1.5: a server that answers If-Range with the whole new file (200) makes the download start over")
    func ifRangeAnsweredWhole() async throws {
        let folder = temporaryFolder("validators")
        let destination = folder.appendingPathComponent("lesson.mp4")
        await pauseAfterTwoParts(headers: ["ETag": "\"v1\""], to: destination)
        let second = second
        let url = url
        // A server whose file changed: If-Range "v1" no longer matches, so it sends 200 and all.
        transport.stub(
            url,
            reply: .handler { request in
                if request.value(forHTTPHeaderField: "If-Range") == "\"v1\"" {
                    return .response(status: 200, headers: ["ETag": "\"v2\""], body: second)
                }
                return .resource(second, headers: ["ETag": "\"v2\""])
            })
        _ = try await drive(engine().start(parts, to: destination))
        #expect(try Data(contentsOf: destination) == second)
    }

    @Test("a file that keeps changing while it downloads is a typed error, and nothing is left")
    func keepsChanging() async throws {
        let folder = temporaryFolder("validators")
        let destination = folder.appendingPathComponent("lesson.mp4")
        let counter = LockedCounter()
        let first = first
        transport.stub(
            url,
            reply: .handler { _ in .resource(first, headers: ["ETag": "\"v\(counter.increment())\""]) })
        do {
            _ = try await drive(engine().start(parts, to: destination))
            Issue.record("downloaded")
        } catch {
            guard case .remoteChanged = error.kind else {
                Issue.record("\(error)")
                return
            }
        }
        #expect(files(in: folder).isEmpty)
    }
}
