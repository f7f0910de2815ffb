import Downloads
import Foundation
import HLS
import HTTPSupport
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("DownloadEngine")
struct DownloadEngineTests {
    let clock = ManualClock()
    let resourceURL = URL(literal: "https://cdn.example/media.ts")
    let resource = resourceBytes(100_000)
    let transport: InMemoryHTTPTransport<ManualClock>

    init() {
        transport = InMemoryHTTPTransport(clock: clock)
        transport.stub(resourceURL, reply: .resource(resource))
    }

    func engine(concurrency: Int = 2, retry: RetryPolicy = RetryPolicy(initialDelay: .seconds(1), jitter: 0))
        -> DownloadEngine<ManualClock>
    {
        let transport = transport
        return DownloadEngine(
            concurrency: concurrency, retry: retry, clock: clock, randomUnit: { 0 },
            transport: transport)
    }

    /// Ten ranges of 10,000 bytes covering the resource.
    var rangedParts: [DownloadPart] {
        (0..<10).map {
            DownloadPart(url: resourceURL, byteRange: ByteRange(length: 10_000, offset: UInt64($0) * 10_000))
        }
    }

    /// Runs `job` to its end, advancing the manual clock whenever everything waits on it.
    func drive(_ job: DownloadJob) async throws(DownloadError) -> DownloadResult {
        let clock = clock
        let driver = Task { await clock.advanceWhileSleeping() }
        defer { driver.cancel() }
        return try await job.result()
    }

    @Test("byte-range parts are written at their offsets; at most N transfers run at once", arguments: [1, 2, 4])
    func positioned(concurrency: Int) async throws {
        let folder = temporaryFolder()
        let destination = folder.appendingPathComponent("out.ts")
        let job = engine(concurrency: concurrency).start(rangedParts, to: destination)
        let progress = Task { await job.progress.reduce(into: [Double]()) { $0.append($1.fraction) } }
        let result = try await job.result()
        #expect(try Data(contentsOf: destination) == resource)
        #expect(result.byteCount == 100_000)
        #expect(transport.maximumConcurrentRequests <= concurrency)
        let fractions = await progress.value
        #expect(fractions.last == 1)
        #expect(zip(fractions, fractions.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(files(in: folder) == ["out.ts"])
    }

    @Test("parts without ranges arrive out of order and are written in order, within (N + 1) × the largest part")
    func reordered() async throws {
        // Part i is answered after (10 - i) seconds: later parts arrive first.
        let chunks = (0..<10).map { resourceBytes(1_000 + $0 * 100, seed: UInt64($0)) }
        var parts: [DownloadPart] = []
        for (index, chunk) in chunks.enumerated() {
            let url = URL(literal: "https://cdn.example/chunk").appendingPathComponent("\(index)")
            transport.stub(url, reply: .response(status: 200, body: chunk, latency: .seconds(10 - index)))
            parts.append(DownloadPart(url: url))
        }
        let destination = temporaryFolder().appendingPathComponent("ordered.bin")
        let result = try await drive(engine(concurrency: 3).start(parts, to: destination))
        #expect(try Data(contentsOf: destination) == chunks.reduce(Data(), +))
        #expect(transport.maximumConcurrentRequests <= 3)
        #expect(result.peakBufferedBytes <= UInt64(4 * (chunks.map(\.count).max() ?? 0)))
        #expect(result.peakBufferedBytes > 0)
    }

    @Test("a transient failure at any part is retried with backoff and the file is exact", arguments: 0..<10)
    func transientFailure(at index: Int) async throws {
        let part = rangedParts[index]
        let url = URL(literal: "https://cdn.example/flaky.ts")
        let resource = self.resource
        let failures = LockedCounter()
        transport.stub(
            url,
            reply: .handler { request in
                let range = request.value(forHTTPHeaderField: "Range")
                if range == part.byteRange?.httpRangeHeader, failures.increment() <= 2 {
                    return failures.value == 1 ? .response(status: 503) : .failure(URLError(.networkConnectionLost))
                }
                return .resource(resource)
            })
        let parts = rangedParts.map { DownloadPart(url: url, byteRange: $0.byteRange) }
        let destination = temporaryFolder().appendingPathComponent("retried.ts")
        _ = try await drive(engine().start(parts, to: destination))
        #expect(try Data(contentsOf: destination) == resource)
        #expect(failures.value == 3)
    }

    @Test(
        "RFC 9110 §10.2.3: a 503's Retry-After lengthens the backoff; a wait past the policy's longest fails at once",
        arguments: [
            ("7", [String: String](), Duration?.some(.seconds(7))),
            ("Sun, 06 Nov 1994 08:50:07 GMT", ["Date": "Sun, 06 Nov 1994 08:49:37 GMT"], .seconds(30)),
            ("0", [:], .seconds(1)),
            ("soon", [:], .seconds(1)),
            ("3600", [:], nil),
        ])
    func retryAfter(value: String, headers: [String: String], waited: Duration?) async throws {
        let url = URL(literal: "https://cdn.example/busy.ts")
        let resource = self.resource
        let requests = LockedCounter()
        transport.stub(
            url,
            reply: .handler { _ in
                if requests.increment() == 1 {
                    return .response(status: 503, headers: headers.merging(["Retry-After": value]) { $1 })
                }
                return .resource(resource)
            })
        let destination = temporaryFolder().appendingPathComponent("busy.ts")
        do {
            _ = try await drive(engine().start([DownloadPart(url: url)], to: destination))
            #expect(try Data(contentsOf: destination) == resource)
            #expect(clock.now.offset == waited)
            #expect(requests.value == 2)
        } catch {
            let error = try #require(error as? DownloadError)
            #expect(waited == nil)
            #expect(error.kind == .httpStatus(503))
            #expect(error.retryAfter == .seconds(3_600))
            #expect(requests.value == 1)
            #expect(clock.now.offset == .zero)
        }
    }

    enum Fault: String, CaseIterable, Sendable {
        case notFound, shortBody, wrongRange, missingContentRange, unreadableContentRange, signedContentRange
        case totalBeforeEnd, wholeBody
    }

    @Test(
        "RFC 9110 §15.3.7 and §14.4: faults at every part (a 206 without a readable Content-Range, a signed one, one whose total is not past its end included): a typed error naming the part, no file at the destination, and a resume that is byte-identical",
        arguments: Fault.allCases, 0..<10
    )
    func faults(fault: Fault, index: Int) async throws {
        let faulty = URL(literal: "https://cdn.example/faulty.ts")
        let target = rangedParts[index].byteRange
        let resource = self.resource
        transport.stub(
            faulty,
            reply: .handler { request in
                guard request.value(forHTTPHeaderField: "Range") == target?.httpRangeHeader, let range = target else {
                    return .resource(resource)
                }
                let start = Int(range.offset)
                switch fault {
                case .notFound: return .response(status: 404)
                case .shortBody:
                    return .response(
                        status: 206, headers: ["Content-Range": "bytes \(start)-\(range.end - 1)/100000"],
                        body: resource[start..<(start + 10)])
                case .wrongRange:
                    // The right length, one byte off.
                    return .response(
                        status: 206, headers: ["Content-Range": "bytes \(start + 1)-\(start + 10_000)/100001"],
                        body: resource[(start + 1)..<(start + 10_000)] + Data([0]))
                case .missingContentRange:
                    // The right bytes, but nothing in the answer says which they are.
                    return .response(status: 206, body: resource[start..<Int(range.end)])
                case .unreadableContentRange:
                    return .response(
                        status: 206, headers: ["Content-Range": "bytes \(start)-/100000"],
                        body: resource[start..<Int(range.end)])
                case .signedContentRange:
                    return .response(
                        status: 206, headers: ["Content-Range": "bytes +\(start)-\(range.end - 1)/100000"],
                        body: resource[start..<Int(range.end)])
                case .totalBeforeEnd:
                    return .response(
                        status: 206, headers: ["Content-Range": "bytes \(start)-\(range.end - 1)/\(range.end - 1)"],
                        body: resource[start..<Int(range.end)])
                case .wholeBody:
                    return .response(status: 200, body: resource)
                }
            })
        let folder = temporaryFolder()
        let destination = folder.appendingPathComponent("faulty.ts")
        let parts = rangedParts.map { DownloadPart(url: faulty, byteRange: $0.byteRange) }
        do {
            _ = try await engine(concurrency: 2).download(parts, to: destination)
            #expect(fault == .wholeBody)
        } catch {
            switch (fault, error.kind) {
            case (.notFound, .httpStatus(404)), (.shortBody, .wrongLength), (.wrongRange, .wrongRange),
                (.missingContentRange, .wrongRange), (.unreadableContentRange, .wrongRange),
                (.signedContentRange, .wrongRange), (.totalBeforeEnd, .wrongRange):
                #expect(error.part == index)
                #expect(error.url == faulty)
            default: Issue.record("\(fault) at \(index): \(error)")
            }
            #expect(!FileManager.default.fileExists(atPath: destination.path))
            // The server recovers: the same download resumes and completes exactly.
            transport.stub(faulty, reply: .resource(resource))
            _ = try await engine().download(parts, to: destination)
        }
        #expect(try Data(contentsOf: destination) == resource)
        #expect(files(in: folder) == ["faulty.ts"])
    }

    @Test("cancelling at any part stops the transfers and leaves no file behind", arguments: 0..<10)
    func cancel(at index: Int) async throws {
        let slow = URL(literal: "https://cdn.example/slow.ts")
        transport.stub(slow, reply: .resource(resource, latency: .seconds(1)))
        let parts = rangedParts.map { DownloadPart(url: slow, byteRange: $0.byteRange) }
        let folder = temporaryFolder()
        // One transfer at a time, so each step completes exactly one part.
        let job = engine(concurrency: 1).start(parts, to: folder.appendingPathComponent("cancelled.ts"))
        for _ in 0..<index {
            await clock.waitForSleepers(count: 1)
            clock.advanceToNextDeadline()
        }
        await clock.waitForSleepers(count: 1)
        job.cancel()
        await #expect(throws: DownloadError(.cancelled)) { try await job.result() }
        #expect(files(in: folder).isEmpty)
    }

    @Test("a server that sends nothing for longer than the idle timeout stalls, is retried, then fails")
    func slowDrip() async throws {
        let drip = URL(literal: "https://cdn.example/drip.ts")
        // No byte for ten minutes.
        transport.stub(drip, reply: .resource(resource, latency: .seconds(600)))
        let transport = transport
        let engine = DownloadEngine(
            concurrency: 1, retry: RetryPolicy(maximumAttempts: 2, initialDelay: .seconds(1), jitter: 0),
            idleTimeout: .seconds(30), clock: clock, randomUnit: { 0 }, transport: transport)
        let job = engine.start([DownloadPart(url: drip)], to: temporaryFolder().appendingPathComponent("d.ts"))
        // The first deadline at 30 s, the backoff until 31 s, the second deadline at 61 s.
        let start = clock.now
        for (deadline, step) in [(30, 30), (31, 1), (61, 30)] {
            await clock.waitForSleeper(until: start.advanced(by: .seconds(deadline)))
            clock.advance(by: .seconds(step))
        }
        do {
            _ = try await job.result()
            Issue.record("downloaded")
        } catch {
            guard case .transport(let failure) = error.kind else {
                Issue.record("\(error)")
                return
            }
            #expect(error.part == 0)
            #expect(error.url == drip)
            #expect(failure.kind == .stalled(after: .seconds(30)))
        }
        // Two attempts, each given up after 30 s of the ten-minute drip.
        #expect(transport.requests.count == 2)
    }

    @Test("a paused download resumes from the parts not yet written, byte for byte")
    func pauseAndResume() async throws {
        let slow = URL(literal: "https://cdn.example/paused.ts")
        transport.stub(slow, reply: .resource(resource, latency: .seconds(1)))
        let parts = rangedParts.map { DownloadPart(url: slow, byteRange: $0.byteRange) }
        let folder = temporaryFolder()
        let destination = folder.appendingPathComponent("paused.ts")
        let first = engine().start(parts, to: destination)
        for _ in 0..<3 {
            await clock.waitForSleepers(count: 2)
            clock.advance(by: .seconds(1))
        }
        await clock.waitForSleepers(count: 2)
        first.pause()
        await #expect(throws: DownloadError(.paused)) { try await first.result() }
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        #expect(files(in: folder).count == 2)  // the staging file and its journal
        let requestsBefore = transport.requests.count
        let second = try await drive(engine().start(parts, to: destination))
        #expect(second.partsFetched == 4)
        #expect(transport.requests.count - requestsBefore == 4)
        #expect(try Data(contentsOf: destination) == resource)
        #expect(files(in: folder) == ["paused.ts"])
    }

    @Test("a journal whose last line was cut by a crash still resumes exactly")
    func crashedJournal() async throws {
        let folder = temporaryFolder()
        let destination = folder.appendingPathComponent("crashed.ts")
        // Write the first three parts as an earlier run would have, then a torn line.
        let slow = URL(literal: "https://cdn.example/crash.ts")
        transport.stub(slow, reply: .resource(resource, latency: .seconds(1)))
        let parts = rangedParts.map { DownloadPart(url: slow, byteRange: $0.byteRange) }
        let job = engine(concurrency: 1).start(parts, to: destination)
        for _ in 0..<3 {
            await clock.waitForSleepers(count: 1)
            clock.advance(by: .seconds(1))
        }
        await clock.waitForSleepers(count: 1)
        job.pause()
        _ = try? await job.result()
        let journal = folder.appendingPathComponent(".crashed.ts.journal")
        let handle = try FileHandle(forWritingTo: journal)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("3 100".utf8))  // no line break: torn
        try handle.close()
        _ = try await drive(engine().start(parts, to: destination))
        #expect(try Data(contentsOf: destination) == resource)
    }

    @Test("a different list of parts does not resume another download's staging file")
    func mismatchedResume() async throws {
        let folder = temporaryFolder()
        let destination = folder.appendingPathComponent("x.ts")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("garbage".utf8).write(to: folder.appendingPathComponent(".x.ts.partial"))
        try Data("mediacore-download v1 0 10\n0 10000\n".utf8).write(to: folder.appendingPathComponent(".x.ts.journal"))
        _ = try await engine().download(rangedParts, to: destination)
        #expect(try Data(contentsOf: destination) == resource)
    }
}

/// A counter shared with a transport handler.
final class LockedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }

    func increment() -> Int {
        lock.lock()
        defer { lock.unlock() }
        count += 1
        return count
    }
}

@Suite("DownloadEngine over URLSession")
struct URLSessionDownloadEngineTests {
    @Test("a real URLSession fetches byte ranges, and a 404 is a typed error")
    func session() async throws {
        let file = resourceBytes(30_000, seed: 3)
        StubURLProtocol.install(host: "fetch.test") { request in
            guard request.url?.path == "/file.bin" else { return .respond(status: 404, body: Data()) }
            guard let header = request.value(forHTTPHeaderField: "Range"), header.hasPrefix("bytes="),
                let dash = header.firstIndex(of: "-"),
                let first = Int(header[header.index(header.startIndex, offsetBy: 6)..<dash]),
                let last = Int(header[header.index(after: dash)...])
            else { return .respond(status: 200, body: file) }
            return .respond(
                status: 206, body: file[first...last],
                headers: ["Content-Range": "bytes \(first)-\(last)/\(file.count)"])
        }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [StubURLProtocol.self]
        let engine = DownloadEngine(concurrency: 2, session: URLSession(configuration: configuration))
        let parts = (0..<3).map {
            DownloadPart(
                url: URL(literal: "https://fetch.test/file.bin"),
                byteRange: ByteRange(length: 10_000, offset: UInt64($0) * 10_000))
        }
        let destination = temporaryFolder().appendingPathComponent("session.bin")
        _ = try await engine.download(parts, to: destination)
        #expect(try Data(contentsOf: destination) == file)
        await #expect(throws: DownloadError.self) {
            try await engine.download(
                [DownloadPart(url: URL(literal: "https://fetch.test/missing.bin"))], to: destination)
        }
    }
}

@Suite("ByteRange")
struct ByteRangeTests {
    @Test(
        "RFC 9110 §14.1.2: the Range header names the first and last byte, both inclusive",
        arguments: [
            (ByteRange(length: 363_780, offset: 0), "bytes=0-363779"),
            (ByteRange(length: 1, offset: 10), "bytes=10-10"),
            (ByteRange(length: 4, offset: 1_000), "bytes=1000-1003"),
        ]
    )
    func rangeHeader(range: ByteRange, expected: String) {
        #expect(range.httpRangeHeader == expected)
    }

    @Test("a playlist's range converts to the same bytes, and encodes as length and offset")
    func conversionAndCoding() throws {
        let range = ByteRange(HLSByteRange(length: 500, offset: 1_500))
        #expect(range == ByteRange(length: 500, offset: 1_500))
        #expect(range.end == 2_000)
        #expect(range.description == "500@1500")
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = try encoder.encode(range)
        #expect(String(decoding: json, as: UTF8.self) == #"{"length":500,"offset":1500}"#)
        #expect(try JSONDecoder().decode(ByteRange.self, from: json) == range)
    }
}
