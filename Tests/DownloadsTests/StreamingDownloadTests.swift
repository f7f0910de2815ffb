import Downloads
import Foundation
import HTTPSupport
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("DownloadEngine reads bodies as they stream")
struct StreamingDownloadTests {
    let clock = ManualClock()
    let transport: InMemoryHTTPTransport<ManualClock>
    let url = URL(literal: "https://cdn.example/lesson.mp4")

    init() {
        transport = InMemoryHTTPTransport(clock: clock)
    }

    func engine(idleTimeout: Duration? = .seconds(30), maximumPartByteCount: UInt64 = 512 << 20) -> DownloadEngine<
        ManualClock
    > {
        DownloadEngine(
            concurrency: 1, retry: .none, idleTimeout: idleTimeout, clock: clock, randomUnit: { 0 },
            maximumPartByteCount: maximumPartByteCount, transport: transport)
    }

    static func chunks(_ count: Int, size: Int = 1_000) -> [Data] {
        (0..<count).map { Data(repeating: UInt8($0 + 1), count: size) }
    }

    @Test("progress moves by bytes while one part arrives, not once per part")
    func byteProgress() async throws {
        let body = Self.chunks(4).reduce(Data(), +)
        transport.stub(url, reply: .chunked(status: 200, chunks: Self.chunks(4), gap: .seconds(1)))
        let job = engine().start([DownloadPart(url: url)], to: temporaryFolder().appendingPathComponent("a.mp4"))
        var updates = job.progress.makeAsyncIterator()
        #expect(await updates.next()?.bytesReceived == 0)
        for index in 1...4 {
            // The transport's wait for this chunk, not any two sleepers: a watchdog that wakes
            // and sleeps again, or a headers timeout not yet cancelled, would let the advance
            // come before the transport sleeps, and no chunk would ever arrive.
            await clock.waitForSleeper(until: ManualClock.Instant(offset: .seconds(index)))
            clock.advance(by: .seconds(1))
            let progress = try #require(await updates.next())
            // The bytes arrive while the part is still incomplete.
            #expect(progress.bytesReceived == UInt64(index * 1_000))
            #expect(progress.bytesWritten == 0)
            #expect(progress.partsCompleted == 0)
        }
        let written = try #require(await updates.next())
        #expect(written.bytesWritten == 4_000)
        #expect(written.bytesReceived == 4_000)
        #expect(written.partsCompleted == 1)
        let result = try await job.result()
        #expect(try Data(contentsOf: result.file) == body)
    }

    @Test("a slow but steady part longer than the idle timeout finishes")
    func slowButSteady() async throws {
        transport.stub(url, reply: .chunked(status: 200, chunks: Self.chunks(10), gap: .seconds(20)))
        let job = engine().start([DownloadPart(url: url)], to: temporaryFolder().appendingPathComponent("b.mp4"))
        var updates = job.progress.makeAsyncIterator()
        for index in 1...10 {
            // The transport's wait for chunk `index` (see `byteProgress`), then its bytes read:
            // the idle watchdog then counts from this chunk's arrival, not the one before.
            await clock.waitForSleeper(until: ManualClock.Instant(offset: .seconds(20 * index)))
            clock.advance(by: .seconds(20))
            while let progress = await updates.next(), progress.bytesReceived < UInt64(index * 1_000) {}
        }
        let result = try await job.result()
        #expect(result.byteCount == 10_000)
        #expect(clock.now.offset == .seconds(200))
    }

    @Test(
        "RFC 9110 §15.3.1: a 200 to a range request is sliced while it streams, and its transfer stops after the range")
    func rangeIgnoredSlicedWhileStreaming() async throws {
        // The server sends the whole resource and would then never end: only stopping after the
        // range lets the part finish.
        transport.stub(url, reply: .chunked(status: 200, chunks: Self.chunks(5), gap: .zero, stallsAtEnd: true))
        let part = DownloadPart(url: url, byteRange: ByteRange(length: 1_500, offset: 1_200))
        let result = try await engine(idleTimeout: nil).download(
            [part], to: temporaryFolder().appendingPathComponent("c.mp4"))
        let whole = Self.chunks(5).reduce(Data(), +)
        #expect(try Data(contentsOf: result.file) == whole[1_200..<2_700])
        await transport.waitForAbandonedStreams()
        #expect(transport.abandonedStreams == 1)
    }

    @Test("a part longer than maximumPartByteCount stops at the cap with tooLarge")
    func partCap() async throws {
        transport.stub(url, reply: .chunked(status: 200, chunks: Self.chunks(5), gap: .zero, stallsAtEnd: true))
        let destination = temporaryFolder().appendingPathComponent("d.mp4")
        await #expect(throws: DownloadError(.tooLarge(bytes: 3_000, limit: 2_500), part: 0, url: url)) {
            try await engine(idleTimeout: nil, maximumPartByteCount: 2_500).download(
                [DownloadPart(url: url)], to: destination)
        }
        await transport.waitForAbandonedStreams()
        #expect(transport.abandonedStreams == 1)
        #expect(!FileManager.default.fileExists(atPath: destination.path))
    }

    @Test("an error status is refused before its body is read", arguments: [404, 410, 416])
    func errorBodyNotRead(status: Int) async throws {
        transport.stub(
            url, reply: .chunked(status: status, chunks: Self.chunks(3), gap: .seconds(1), stallsAtEnd: true))
        await #expect(throws: DownloadError(.httpStatus(status), part: 0, url: url)) {
            try await engine().download([DownloadPart(url: url)], to: temporaryFolder().appendingPathComponent("e.mp4"))
        }
        await transport.waitForAbandonedStreams()
        #expect(transport.abandonedStreams == 1)
        #expect(clock.now.offset == .zero)
    }
}

@Suite("One download at a time per destination")
struct DestinationOwnershipTests {
    @Test("tap, cancel, tap again: the cancelled job never removes or writes the new job's files", arguments: 0..<20)
    func tapCancelTap(round: Int) async throws {
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        let url = try #require(URL(string: "https://cdn.example/lesson-\(round).mp4"))
        let resource = Data((0..<30_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ round) })
        // The first job's first request hangs; every later request is answered at once.
        transport.stub(url, replies: [.resource(resource, latency: .seconds(5)), .resource(resource)])
        let engine = DownloadEngine(concurrency: 1, retry: .none, clock: clock, transport: transport)
        let parts = (0..<3).map {
            DownloadPart(url: url, byteRange: ByteRange(length: 10_000, offset: UInt64($0) * 10_000))
        }
        let folder = temporaryFolder()
        let destination = folder.appendingPathComponent("lesson.mp4")
        let first = engine.start(parts, to: destination)
        await clock.waitForSleepers(count: 1)
        first.cancel()
        let second = engine.start(parts, to: destination)
        do {
            _ = try await first.result()
            Issue.record("the cancelled job finished")
        } catch {
            #expect(error == DownloadError(.cancelled))
        }
        let result = try await second.result()
        #expect(try Data(contentsOf: result.file) == resource)
        #expect(files(in: folder) == ["lesson.mp4"])
    }
}

/// Parts with byte ranges go to their offsets as their chunks arrive: memory holds a chunk per
/// transfer, never a whole part.
@Suite("Ranged parts streamed to their offsets")
struct StreamedPartTests {
    @Test(
        "two 200,000-byte ranged parts in 1,000-byte chunks: the file is exact, and at most two chunks were held at once"
    )
    func chunksNotParts() async throws {
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        let resource = resourceBytes(400_000, seed: 17)
        let url = URL(literal: "https://cdn.example/long-lesson.mp4")
        transport.stub(
            url,
            reply: .handler { request in
                let range = request.value(forHTTPHeaderField: "Range") ?? ""
                let bounds = range.dropFirst("bytes=".count).split(separator: "-").compactMap { Int($0) }
                guard bounds.count == 2 else { return .response(status: 400) }
                let body = resource.subdata(in: bounds[0]..<(bounds[1] + 1))
                let chunks = stride(from: 0, to: body.count, by: 1_000).map {
                    body.subdata(in: $0..<min($0 + 1_000, body.count))
                }
                return .chunked(
                    status: 206, headers: ["Content-Range": "bytes \(bounds[0])-\(bounds[1])/400000"],
                    chunks: chunks, gap: .zero)
            })
        let parts = (0..<2).map {
            DownloadPart(url: url, byteRange: ByteRange(length: 200_000, offset: UInt64($0) * 200_000))
        }
        let destination = temporaryFolder("streamed").appendingPathComponent("long-lesson.mp4")
        let engine = DownloadEngine(concurrency: 2, retry: .none, clock: clock, transport: transport)
        let result = try await engine.download(parts, to: destination)
        #expect(try Data(contentsOf: destination) == resource)
        #expect(result.peakBufferedBytes > 0)
        #expect(result.peakBufferedBytes <= 2_000, "held \(result.peakBufferedBytes) bytes at once")
    }
}
