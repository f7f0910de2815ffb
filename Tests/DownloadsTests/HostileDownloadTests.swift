import Downloads
import Foundation
import HTTPSupport
import OfflineLessons
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Parts, journals and handles that used to trap: each is now a typed error or an exact file.
@Suite("Downloads under hostile input")
struct HostileDownloadTests {
    let clock = ManualClock()
    let transport: InMemoryHTTPTransport<ManualClock>
    let resource = resourceBytes(50_000, seed: 11)

    init() {
        transport = InMemoryHTTPTransport(clock: clock)
    }

    func engine(concurrency: Int = 2) -> DownloadEngine<ManualClock> {
        DownloadEngine(concurrency: concurrency, retry: .none, clock: clock, transport: transport)
    }

    @Test(
        "RFC 9110 §14.4: a Content-Range total past the accepted size is a typed error before anything is planned",
        arguments: [UInt64(1) << 60, UInt64.max, (UInt64(64) << 30) + 1])
    func hugeAnnouncedTotal(total: UInt64) async throws {
        let url = URL(literal: "https://media.example/huge.bin")
        transport.stub(
            url,
            reply: .response(status: 206, headers: ["Content-Range": "bytes 0-0/\(total)"], body: Data([0])))
        let folder = temporaryFolder("huge")
        let downloader = MediaDownloader(engine: engine())
        let error = await #expect(throws: DownloadError.self) {
            try await downloader.downloadFile(from: url, to: folder.appendingPathComponent("huge.bin")).result()
        }
        #expect(error?.kind == .tooLarge(bytes: total, limit: 64 << 30))
        #expect(transport.requests.count == 1)
        #expect(files(in: folder).isEmpty)
    }

    @Test(
        "a file is never split into more than maximumPartCount ranges, whatever the chunk size, and its ranges tile it",
        arguments: [
            (UInt64(10_000_000), UInt64(1)), (64 << 30, 4 << 20), (1_000, 7), (0, 4), (UInt64.max, 1),
            (UInt64.max, UInt64.max),
        ] as [(UInt64, UInt64)])
    func partCountBound(total: UInt64, chunk: UInt64) {
        let plan = DownloadPlan(rangesOf: URL(literal: "https://media.example/f"), total: total, rangeSize: chunk)
        #expect(plan.count <= MediaDownloader<ManualClock>.maximumPartCount)
        #expect(plan.totalLength == total)
        // The ranges are made on demand; check the first, the last and a sample between.
        guard plan.count > 0 else {
            #expect(total == 0)
            return
        }
        let indexes = Set([0, 1, plan.count / 2, plan.count - 2, plan.count - 1].filter { $0 >= 0 && $0 < plan.count })
        for index in indexes.sorted() {
            let range = plan[index].byteRange
            #expect(range?.offset == plan.offset(of: index))
            #expect((range?.length ?? 0) > 0)
            if index + 1 < plan.count { #expect(range?.end == plan[index + 1].byteRange?.offset) }
        }
        #expect(plan[0].byteRange?.offset == 0)
        #expect(plan[plan.count - 1].byteRange?.end == total)
    }

    @Test(
        "a part whose range ends past 2⁶⁴, or parts whose sizes add up past it, are refused naming the part",
        arguments: [
            [ByteRange(length: 10, offset: UInt64.max - 5)],
            [ByteRange(length: UInt64.max / 2 + 1, offset: 0), ByteRange(length: UInt64.max / 2 + 1, offset: 1)],
        ])
    func rangesPast64Bits(ranges: [ByteRange]) async throws {
        let url = URL(literal: "https://cdn.example/huge.bin")
        transport.stub(url, reply: .resource(resource))
        let folder = temporaryFolder("hostile")
        let parts = ranges.map { DownloadPart(url: url, byteRange: $0) }
        do {
            _ = try await engine().download(parts, to: folder.appendingPathComponent("huge.bin"))
            Issue.record("downloaded")
        } catch {
            #expect(error.kind == .rangeTooLarge)
            #expect(error.part == ranges.count - 1)
            #expect(error.url == url)
        }
        #expect(transport.requests.isEmpty)
        #expect(files(in: folder).isEmpty)
    }

    @Test("a stored range that ends past 2⁶⁴ does not decode")
    func decodingRefusesOverflow() {
        let json = Data(#"{"length":10,"offset":18446744073709551610}"#.utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(ByteRange.self, from: json) }
        let fine = Data(#"{"length":5,"offset":18446744073709551610}"#.utf8)
        #expect((try? JSONDecoder().decode(ByteRange.self, from: fine))?.end == UInt64.max)
    }

    /// Downloads `parts` (each answered after a second) one at a time, and pauses once two are
    /// written: the staging file and its journal stay for a resume.
    func pauseAfterTwoParts(_ parts: [DownloadPart], to destination: URL) async {
        let first = engine(concurrency: 1).start(parts, to: destination)
        for _ in 0..<2 {
            await clock.waitForSleepers(count: 1)
            clock.advance(by: .seconds(1))
        }
        await clock.waitForSleepers(count: 1)
        first.pause()
        _ = try? await first.result()
    }

    /// Resumes the download of `parts`, moving the clock past every latency until it ends.
    func resume(_ parts: [DownloadPart], to destination: URL) async throws -> DownloadResult {
        let resumed = engine(concurrency: 1).start(parts, to: destination)
        let clock = clock
        let driver = Task { await clock.advanceWhileSleeping() }
        defer { driver.cancel() }
        return try await resumed.result()
    }

    /// The journal's digest of a part's bytes (64-bit FNV-1a), to forge lines that only the
    /// check against the staging file's bytes can refuse.
    static func digest(_ data: Data) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in data {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return String(hash, radix: 16)
    }

    enum Tampering: String, CaseIterable, Sendable {
        /// A line for part 2 with a length that is not its range's.
        case wrongLength
        /// A line for part 4, never written, with the right length and the digest of its real
        /// bytes: only reading the staging file back refuses it.
        case unwrittenPart
        /// A repeat of part 1's line.
        case repeated
        /// Part 1's bytes in the staging file overwritten after its line was recorded.
        case corruptedBytes
    }

    /// Five ranged parts, written at their offsets; the run pauses after two, the journal or
    /// the staging file is tampered with, and the resumed download must still be exact.
    @Test("a tampered journal or staging file of ranged parts never corrupts the file", arguments: Tampering.allCases)
    func tamperedRangedJournal(tampering: Tampering) async throws {
        let url = URL(literal: "https://cdn.example/lesson.bin")
        transport.stub(url, reply: .resource(resource, latency: .seconds(1)))
        let parts = (0..<5).map {
            DownloadPart(url: url, byteRange: ByteRange(length: 10_000, offset: UInt64($0) * 10_000))
        }
        let folder = temporaryFolder("journal")
        let destination = folder.appendingPathComponent("lesson.bin")
        await pauseAfterTwoParts(parts, to: destination)
        let part = { (index: Int) in self.resource.subdata(in: (index * 10_000)..<((index + 1) * 10_000)) }
        let journal = try FileHandle(forWritingTo: folder.appendingPathComponent(".lesson.bin.journal"))
        try journal.seekToEnd()
        switch tampering {
        case .wrongLength: try journal.write(contentsOf: Data("2 5 \(Self.digest(part(2).prefix(5)))\n".utf8))
        case .unwrittenPart: try journal.write(contentsOf: Data("4 10000 \(Self.digest(part(4)))\n".utf8))
        case .repeated: try journal.write(contentsOf: Data("1 10000 \(Self.digest(part(1)))\n".utf8))
        case .corruptedBytes:
            let staging = try FileHandle(forWritingTo: folder.appendingPathComponent(".lesson.bin.partial"))
            try staging.seek(toOffset: 12_345)
            try staging.write(contentsOf: Data([0xFF, 0x00, 0xFF]))
            try staging.close()
        }
        try journal.close()
        let result = try await resume(parts, to: destination)
        #expect(try Data(contentsOf: destination) == resource)
        // Parts 2, 3 and 4 in every case; part 1 again when its bytes were damaged.
        #expect(result.partsFetched == (tampering == .corruptedBytes ? 4 : 3))
        #expect(files(in: folder) == ["lesson.bin"])
    }

    /// Five whole-resource parts, written in order; the run pauses after two, a line is added
    /// to the journal by hand, and the resumed download must still be exact.
    @Test(
        "a tampered journal (a gap, a negative index, a length that overflows or passes the file, a repeat) never corrupts the file",
        arguments: [
            "3 10000 0\n", "-1 10000 0\n", "2 18446744073709551615 0\n2 1 0\n", "2 4611686018427387904 0\n",
            "1 10000 0\n", "garbage\n",
        ])
    func tamperedJournal(line: String) async throws {
        let parts = (0..<5).map { index in
            DownloadPart(url: URL(literal: "https://cdn.example/").appendingPathComponent("part\(index).bin"))
        }
        for (index, part) in parts.enumerated() {
            let bytes = resource.subdata(in: (index * 10_000)..<((index + 1) * 10_000))
            transport.stub(part.url, reply: .response(status: 200, body: bytes, latency: .seconds(1)))
        }
        let folder = temporaryFolder("journal")
        let destination = folder.appendingPathComponent("lesson.bin")
        await pauseAfterTwoParts(parts, to: destination)
        let journal = folder.appendingPathComponent(".lesson.bin.journal")
        let handle = try FileHandle(forWritingTo: journal)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(line.utf8))
        try handle.close()
        let result = try await resume(parts, to: destination)
        #expect(try Data(contentsOf: destination) == resource)
        #expect(result.partsFetched == 3)
        #expect(files(in: folder) == ["lesson.bin"])
    }

    @Test("dropping a job's handle does not stop or crash the download: it completes, and its progress ends")
    func droppedHandle() async throws {
        let url = URL(literal: "https://cdn.example/dropped.bin")
        transport.stub(url, reply: .resource(resource))
        let folder = temporaryFolder("dropped")
        let destination = folder.appendingPathComponent("dropped.bin")
        let parts = (0..<5).map {
            DownloadPart(url: url, byteRange: ByteRange(length: 10_000, offset: UInt64($0) * 10_000))
        }
        let progress: AsyncStream<DownloadProgress> = {
            let job = engine().start(parts, to: destination)
            return job.progress
        }()
        var last: DownloadProgress?
        for await report in progress { last = report }
        #expect(last?.bytesWritten == 50_000)
        #expect(try Data(contentsOf: destination) == resource)
    }

    @Test(
        "a file:, data: or relative URL from a catalog is never downloaded: unsupported, and nothing copied",
        arguments: ["file:///etc/passwd", "data:,secret", "videos/1.mp4"])
    func localSchemes(address: String) async throws {
        let url = try #require(URL(string: address))
        let folder = temporaryFolder("schemes")
        let downloader = MediaDownloader(engine: engine())
        do {
            _ = try await downloader.downloadFile(from: url, to: folder.appendingPathComponent("lesson.mp4")).result()
            Issue.record("downloaded \(address)")
        } catch {
            guard case .unsupportedURL(let scheme) = error.kind, scheme == (url.scheme ?? "") else {
                Issue.record("\(error)")
                return
            }
            #expect(error.category == .unsupported)
        }
        #expect(transport.requests.isEmpty)
        #expect(files(in: folder).isEmpty)
    }

    @Test("an offline library asked for a local file marks the item failed and copies nothing")
    func libraryLocalFile() async throws {
        let folder = temporaryFolder("library")
        let downloader = MediaDownloader(engine: engine())
        let library = OfflineLibrary(directory: folder) { remote, destination in
            downloader.downloadFile(from: remote, to: destination)
        }
        try await library.download("lesson-1", from: URL(fileURLWithPath: "/etc/hosts"))
        await library.waitForDownload("lesson-1")
        guard case .failed(let failure) = await library.state(of: "lesson-1") else {
            Issue.record("\(await library.state(of: "lesson-1"))")
            return
        }
        #expect(failure.message.contains("file"))
        #expect(files(in: folder) == ["offline-library.json"])
    }

    @Test(
        "an offline file's name is made of [a-z0-9_.-] only, whatever the id and the remote's extension",
        arguments: [
            ("lesson-1", "https://cdn.example/a.MP4", "mp4"),
            ("lesson-1", "https://cdn.example/a.mp4%00", "bin"),
            ("../../etc/passwd", "https://cdn.example/a.m%2F..%2Fy", "bin"),
            ("Ünïcode\u{202E}id", "https://cdn.example/a.%E2%80%AEmp4", "bin"),
            ("lesson-1", "https://cdn.example/a.extensionthatistoolong", "bin"),
            ("lesson-1", "https://cdn.example/master.m3u8", "m3u8"),
        ])
    func plainFileNames(id: String, address: String, pathExtension: String) async throws {
        let url = try #require(URL(string: address))
        transport.stub(url, reply: .resource(resource))
        let folder = temporaryFolder("names")
        let downloader = MediaDownloader(engine: engine())
        let library = OfflineLibrary(directory: folder) { remote, destination in
            downloader.downloadFile(from: remote, to: destination)
        }
        try await library.download(id, from: url)
        await library.waitForDownload(id)
        let file = try #require(await library.localFile(of: id))
        let name = file.lastPathComponent
        #expect(file.deletingLastPathComponent().standardizedFileURL.path == folder.standardizedFileURL.path)
        #expect(name.hasSuffix(".\(pathExtension)"))
        #expect(
            name.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" || $0 == "." || $0 == "-"
            })
        #expect(try Data(contentsOf: file) == resource)
    }

    @Test("deleting a failed item removes its partial and journal files too")
    func deleteRemovesPartialFiles() async throws {
        let url = URL(literal: "https://cdn.example/failing.mp4")
        let resource = resource
        transport.stub(
            url,
            reply: .handler { request in
                if request.value(forHTTPHeaderField: "Range") == "bytes=30000-39999" { return .response(status: 404) }
                return .resource(resource)
            })
        let folder = temporaryFolder("delete")
        let downloader = MediaDownloader(engine: engine(concurrency: 1))
        let library = OfflineLibrary(directory: folder) { remote, destination in
            downloader.downloadFile(from: remote, to: destination, chunkSize: 10_000)
        }
        try await library.download("lesson", from: url)
        await library.waitForDownload("lesson")
        guard case .failed = await library.state(of: "lesson") else {
            Issue.record("\(await library.state(of: "lesson"))")
            return
        }
        #expect(files(in: folder).count == 3)  // the state file, the staging file, its journal
        try await library.delete("lesson")
        #expect(files(in: folder) == ["offline-library.json"])
    }
}
