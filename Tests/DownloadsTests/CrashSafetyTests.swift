import Downloads
import Foundation
import HTTPSupport
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The engine's file operations interrupted at every point: the process killed (no operation
/// happens from the N-th on, not even a clean-up) and the disk full (every write from the N-th
/// on fails). Each time, the destination holds its old version or the exact new one, never
/// anything else, and a later run ends with the exact new file and nothing left beside it.
@Suite("Downloads under crashes and a full disk")
struct CrashSafetyTests {
    let clock = ManualClock()
    let transport: InMemoryHTTPTransport<ManualClock>
    let resource = resourceBytes(40_000, seed: 23)
    let oldVersion = Data("the lesson as it was before this download".utf8)
    let url = URL(literal: "https://cdn.example/lesson.bin")

    init() {
        transport = InMemoryHTTPTransport(clock: clock)
        transport.stub(url, reply: .resource(resource, headers: ["ETag": "\"v2\""]))
    }

    /// Four ranged parts of 10,000 bytes, one at a time so the operations come in one order.
    var parts: [DownloadPart] {
        (0..<4).map { DownloadPart(url: url, byteRange: ByteRange(length: 10_000, offset: UInt64($0) * 10_000)) }
    }

    /// An engine whose downloads write through `fileSystem` (the device's by default).
    func engine(_ fileSystem: any DownloadFileSystem = LocalFileSystem()) -> DownloadEngine<ManualClock> {
        DownloadEngine(concurrency: 1, retry: .none, clock: clock, fileSystem: fileSystem, transport: transport)
    }

    /// A file system that numbers the operations of the kinds in `counted` (every kind when
    /// `nil`) from 1 and shows each to `fault` first.
    func counting(
        _ counted: Set<FileOperation>? = nil,
        _ fault: @escaping @Sendable (_ number: Int, _ operation: FileOperation) throws -> Void
    ) -> TestFileSystem {
        let count = LockedState(0)
        return TestFileSystem(plan: { operation, _ in
            guard counted?.contains(operation) ?? true else { return }
            let number = count.withLock {
                $0 += 1
                return $0
            }
            try fault(number, operation)
        })
    }

    /// A folder holding the old version of the destination.
    func prepareFolder(_ label: String) throws -> (folder: URL, destination: URL) {
        let folder = temporaryFolder(label)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let destination = folder.appendingPathComponent("lesson.bin")
        try oldVersion.write(to: destination)
        return (folder, destination)
    }

    struct Killed: Error {}

    /// The operations of one uninterrupted download, in order, with the name of each file.
    func operations() async throws -> [(operation: FileOperation, file: String)] {
        let (_, destination) = try prepareFolder("crash-count")
        let log = LockedState<[(operation: FileOperation, file: String)]>([])
        let recording = TestFileSystem(plan: { operation, file in
            log.withLock { $0.append((operation, file.lastPathComponent)) }
        })
        _ = try await engine(recording).download(parts, to: destination)
        #expect(try Data(contentsOf: destination) == resource)
        return log.withLock { $0 }
    }

    @Test("each part's bytes are flushed before its journal line, and the journal line is flushed before the next part")
    func flushOrder() async throws {
        let operations = try await operations()
        var stagingDirty = false
        var journalLines = 0
        var journalDirty = false
        for (operation, file) in operations {
            switch (operation, file) {
            case (.write, ".lesson.bin.partial"):
                #expect(!journalDirty, "a part was written before the previous journal line was flushed")
                stagingDirty = true
            case (.flush, ".lesson.bin.partial"): stagingDirty = false
            case (.write, ".lesson.bin.journal"):
                #expect(!stagingDirty, "a journal line was written before its part was flushed")
                journalLines += 1
                journalDirty = true
            case (.flush, ".lesson.bin.journal"): journalDirty = false
            case (.rename, _): #expect(!stagingDirty && !journalDirty, "renamed before the last flush")
            default: break
            }
        }
        #expect(journalLines == 4)
        #expect(operations.contains { $0.operation == .rename })
    }

    @Test("killed before the N-th file operation, for every N: the old file or the new one, and a later run ends exact")
    func killedAtEveryOperation() async throws {
        let total = try await operations().count
        #expect(total >= 15)  // create ×2, then per part write, flush, line, flush; truncate, flush, rename…
        for n in 1...total {
            let (folder, destination) = try prepareFolder("crash-kill")
            // Dead from the n-th operation: nothing more happens on disk.
            let killed = counting { number, _ in if number >= n { throw Killed() } }
            let interrupted = (try? await engine(killed).download(parts, to: destination)) == nil
            let after = try Data(contentsOf: destination)
            #expect(after == oldVersion || after == resource, "killed at operation \(n)")
            #expect(interrupted || after == resource, "killed at operation \(n)")
            // The next launch resumes (or finds the download done) and leaves only the file.
            _ = try await engine().download(parts, to: destination)
            #expect(try Data(contentsOf: destination) == resource, "after a kill at operation \(n)")
            #expect(files(in: folder) == ["lesson.bin"], "after a kill at operation \(n)")
        }
    }

    @Test(
        "the disk full from the N-th write on, for every N: a typed file error and the old file; with space back, the exact file"
    )
    func diskFullAtEveryWrite() async throws {
        let writes = try await operations().filter { [.create, .write, .flush, .rename].contains($0.operation) }.count
        for n in 1...writes {
            let (folder, destination) = try prepareFolder("crash-full")
            // Removing frees space: only the operations that take some fail.
            let full = counting([.create, .write, .flush, .rename]) { number, _ in
                if number >= n { throw CocoaError(.fileWriteOutOfSpace) }
            }
            do {
                _ = try await engine(full).download(parts, to: destination)
                Issue.record("succeeded with the disk full from write \(n)")
            } catch {
                guard case .file = error.kind else {
                    Issue.record("write \(n): \(error)")
                    continue
                }
            }
            #expect(try Data(contentsOf: destination) == oldVersion, "disk full from write \(n)")
            _ = try await engine().download(parts, to: destination)
            #expect(try Data(contentsOf: destination) == resource, "after the disk filled at write \(n)")
            #expect(files(in: folder) == ["lesson.bin"], "after the disk filled at write \(n)")
        }
    }

    // MARK: A real kill, in a child process

    /// The environment that makes ``downloadUntilKilled()`` run: the folder and the operation
    /// before which the child process kills itself.
    static let childFolder = ProcessInfo.processInfo.environment["MEDIACORE_CRASH_FOLDER"]
    static let childKillsAt = ProcessInfo.processInfo.environment["MEDIACORE_CRASH_AT"].flatMap { Int($0) }

    /// The test binary, when it can be run again as a child (the Linux test runner is one
    /// executable; Apple's runners host the tests in a helper, so there only the in-process
    /// model above runs).
    static var testBinary: String? {
        let path = CommandLine.arguments.first ?? ""
        return path.hasSuffix(".xctest") && FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }

    @Test(
        "the child: downloads into MEDIACORE_CRASH_FOLDER and dies by _exit before operation MEDIACORE_CRASH_AT",
        .enabled(if: childFolder != nil && childKillsAt != nil))
    func downloadUntilKilled() async throws {
        let folder = URL(fileURLWithPath: try #require(Self.childFolder))
        let killAt = try #require(Self.childKillsAt)
        // No clean-up, no unwinding, no flush.
        let dying = counting { number, _ in if number >= killAt { _exit(9) } }
        _ = try await engine(dying).download(parts, to: folder.appendingPathComponent("lesson.bin"))
    }

    /// Runs `binary` with `arguments` and `environment`, its output discarded, and returns its
    /// exit status (`nil` when it could not start or ended by a signal). It spawns the child
    /// itself: Foundation's `Process.run()` reads each `/proc/self/fd` entry past the end of the
    /// directory buffer, which AddressSanitizer reports once the test process has over a thousand
    /// descriptors open (the loopback suites running beside this one). The child inherits the
    /// descriptors not marked close-on-exec (the loopback servers mark theirs) and uses none.
    static func runChild(_ binary: String, _ arguments: [String], environment: [String: String]) -> Int32? {
        #if canImport(Darwin)
            var actions: posix_spawn_file_actions_t? = nil
        #else
            var actions = posix_spawn_file_actions_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv: [UnsafeMutablePointer<CChar>?] = ([binary] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid = pid_t()
        guard posix_spawn(&pid, binary, &actions, nil, argv, envp) == 0 else { return nil }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        // WIFEXITED and WEXITSTATUS, which Swift does not import.
        return status & 0x7f == 0 ? (status >> 8) & 0xff : nil
    }

    @Test(
        "a child process killed before its N-th file operation, for every N: the old file or the new one, and a resume ends exact",
        .enabled(if: testBinary != nil && childFolder == nil))
    func childKilledAtEveryOperation() async throws {
        let binary = try #require(Self.testBinary)
        let total = try await operations().count
        var killed = 0
        for n in 1...total {
            let (folder, destination) = try prepareFolder("crash-child")
            var environment = ProcessInfo.processInfo.environment
            environment["MEDIACORE_CRASH_FOLDER"] = folder.path
            environment["MEDIACORE_CRASH_AT"] = String(n)
            let status = try #require(
                Self.runChild(
                    binary, ["--testing-library", "swift-testing", "--filter", "downloadUntilKilled"],
                    environment: environment))
            if status == 9 { killed += 1 }
            let after = try Data(contentsOf: destination)
            #expect(after == oldVersion || after == resource, "killed at operation \(n)")
            _ = try await engine().download(parts, to: destination)
            #expect(try Data(contentsOf: destination) == resource, "after a kill at operation \(n)")
            #expect(files(in: folder) == ["lesson.bin"], "after a kill at operation \(n)")
        }
        #expect(killed == total, "every child died at its operation")
    }
}

/// A transfer that the session or the system cancels while the app still wants the download is
/// not the learner's cancel: the bytes already written stay, and the part is retried.
@Suite("Downloads when the session cancels a transfer")
struct SessionCancellationTests {
    @Test("URLError.cancelled without a cancel from the app is retried like a lost connection, and the file is exact")
    func sessionCancelIsRetried() async throws {
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        let resource = resourceBytes(30_000, seed: 5)
        let url = URL(literal: "https://cdn.example/lesson.bin")
        let folder = temporaryFolder("session-cancel")
        let destination = folder.appendingPathComponent("lesson.bin")
        let attempted = OnceFlag()
        transport.stub(
            url,
            reply: .handler { request in
                // The second part's first attempt is cancelled by the session.
                if request.value(forHTTPHeaderField: "Range") == "bytes=10000-19999", !attempted.exchange() {
                    return .failure(URLError(.cancelled))
                }
                return .resource(resource)
            })
        let parts = (0..<3).map {
            DownloadPart(url: url, byteRange: ByteRange(length: 10_000, offset: UInt64($0) * 10_000))
        }
        let engine = DownloadEngine(
            concurrency: 1, retry: RetryPolicy(maximumAttempts: 3, initialDelay: .seconds(1), jitter: 0), clock: clock,
            transport: transport)
        let job = engine.start(parts, to: destination)
        await clock.waitForSleepers(count: 1)  // the backoff before the retry
        clock.advance(by: .seconds(1))
        let result = try await job.result()
        #expect(try Data(contentsOf: destination) == resource)
        #expect(result.partsFetched == 3)
        #expect(files(in: folder) == ["lesson.bin"])
    }
}

/// A flag that reports whether it was already set, and sets it.
private final class OnceFlag: Sendable {
    private let state = LockedState(false)

    func exchange() -> Bool {
        state.withLock { was in
            defer { was = true }
            return was
        }
    }
}

/// One process at a time writes a destination's staging files.
@Suite("Downloads shared between processes")
struct DestinationFileLockTests {
    @Test(
        "while another process holds the destination's lock, a download fails at once changing nothing; once it is free, the file is exact and no lock file stays"
    )
    func otherProcessHoldsTheLock() async throws {
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        let resource = resourceBytes(20_000, seed: 9)
        let url = URL(literal: "https://cdn.example/lesson.bin")
        transport.stub(url, reply: .resource(resource))
        let folder = temporaryFolder("process-lock")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let destination = folder.appendingPathComponent("lesson.bin")
        let parts = (0..<2).map {
            DownloadPart(url: url, byteRange: ByteRange(length: 10_000, offset: UInt64($0) * 10_000))
        }
        let engine = DownloadEngine(concurrency: 1, retry: .none, clock: clock, transport: transport)
        // flock(2) locks belong to an open file: a second open stands for another process.
        let lockPath = folder.appendingPathComponent(".lesson.bin.lock").path
        let other = open(lockPath, O_RDWR | O_CREAT, 0o644)
        try #require(other >= 0 && flock(other, LOCK_EX | LOCK_NB) == 0)
        let error = await #expect(throws: DownloadError.self) { try await engine.download(parts, to: destination) }
        #expect(error?.kind == .destinationInUse)
        #expect(transport.requests.isEmpty)
        #expect(files(in: folder) == [".lesson.bin.lock"])
        unlink(lockPath)  // the other process ends: it removes its lock file, then releases it
        close(other)
        _ = try await engine.download(parts, to: destination)
        #expect(try Data(contentsOf: destination) == resource)
        #expect(files(in: folder) == ["lesson.bin"])
    }
}
