import Foundation
import Progress
import TestSupport
import Testing

/// A fresh directory under the system's temporary folder, removed when the test ends.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("MediaCoreTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}

@Suite("Progress persistence")
struct ProgressFormatTests {
    static let sample = WatchProgress(
        watched: [0..<12.5, 14..<30],
        duration: 600,
        isCompleted: false,
        resumePoint: ResumePoint(
            position: 30, recordedAt: Date(timeIntervalSince1970: 1_763_700_000), deviceID: "ipad"),
        timeSpentByDevice: ["ipad": 41.5]
    )

    @Test("the persisted form is stable, versioned JSON that round-trips")
    func roundTrip() throws {
        let data = ProgressFormat.encode(Self.sample)
        let text = String(decoding: data, as: UTF8.self)
        #expect(
            text == #"{"completed":false,"duration":600,"format":"mediacore.watch-progress","#
                + #""resume":{"deviceID":"ipad","position":30,"recordedAt":1763700000},"#
                + #""timeSpent":{"ipad":41.5},"version":1,"watched":[[0,12.5],[14,30]]}"#)
        #expect(try ProgressFormat.decode(data) == Self.sample)
    }

    /// Documents beyond each limit, built when the test runs.
    enum Oversized: String, CaseIterable, CustomTestStringConvertible {
        case intervals, devices, bytes

        var data: Data {
            let head = #"{"completed":false,"format":"mediacore.watch-progress","version":1,"#
            switch self {
            case .intervals:
                let pairs = Array(repeating: "[1,2]", count: ProgressFormat.maximumIntervalCount + 100)
                return Data((head + #""timeSpent":{},"watched":["# + pairs.joined(separator: ",") + "]}").utf8)
            case .devices:
                let devices = (0..<(ProgressFormat.maximumDeviceCount + 100)).map { "\"d\($0)\":1" }
                return Data((head + #""watched":[],"timeSpent":{"# + devices.joined(separator: ",") + "}}").utf8)
            case .bytes:
                return Data(repeating: UInt8(ascii: " "), count: ProgressFormat.maximumDocumentSize + 1)
            }
        }

        var testDescription: String { rawValue }
    }

    @Test("documents beyond the limits are refused before decoding", arguments: Oversized.allCases)
    func limits(_ oversized: Oversized) {
        let data = oversized.data
        do {
            _ = try ProgressFormat.decode(data)
            Issue.record("decoded")
        } catch {
            switch (oversized, error.kind) {
            case (.intervals, .tooManyIntervals(let count, let limit)):
                #expect(
                    count == ProgressFormat.maximumIntervalCount + 100 && limit == ProgressFormat.maximumIntervalCount)
            case (.devices, .tooManyDevices(_, let limit)): #expect(limit == ProgressFormat.maximumDeviceCount)
            case (.bytes, .tooLarge(let size, _)): #expect(size == data.count)
            default: Issue.record("\(error)")
            }
        }
    }

    @Test("a document at the device limit decodes; one past it, found only by decoding, is refused")
    func deviceLimitExactly() throws {
        let head = #"{"completed":false,"format":"mediacore.watch-progress","version":1,"watched":[],"timeSpent":{"#
        func document(devices: Int) -> Data {
            Data((head + (0..<devices).map { "\"d\($0)\":1" }.joined(separator: ",") + "}}").utf8)
        }
        let limit = ProgressFormat.maximumDeviceCount
        #expect(try ProgressFormat.decode(document(devices: limit)).timeSpentByDevice.count == limit)
        #expect(throws: ProgressFormat.DecodingFailure(.tooManyDevices(count: limit + 1, limit: limit))) {
            try ProgressFormat.decode(document(devices: limit + 1))
        }
    }

    @Test(
        "bad data gets a typed error saying what is wrong",
        arguments: [
            ("not json", "corrupted"),
            (#"{"format":"other","version":1}"#, "corrupted"),
            (#"{"format":"mediacore.watch-progress"}"#, "corrupted"),
            (#"{"format":"mediacore.watch-progress","version":2,"anything":true}"#, "unsupportedVersion"),
            (#"{"format":"mediacore.watch-progress","version":1}"#, "corrupted"),
            (
                #"{"format":"mediacore.watch-progress","version":1,"watched":[[5,1]],"completed":false,"timeSpent":{}}"#,
                "corrupted"
            ),
            (
                #"{"format":"mediacore.watch-progress","version":1,"watched":[],"completed":false,"timeSpent":{"a":-1}}"#,
                "corrupted"
            ),
        ]
    )
    func rejects(json: String, kind: String) {
        do {
            _ = try ProgressFormat.decode(Data(json.utf8))
            Issue.record("decoded \(json)")
        } catch {
            switch error.kind {
            case .corrupted: #expect(kind == "corrupted")
            case .unsupportedVersion(let found, let newest):
                #expect(kind == "unsupportedVersion")
                #expect(found == 2 && newest == 1)
            case .tooManyIntervals, .tooLarge, .tooManyDevices: Issue.record("unexpected \(error)")
            }
            #expect(!error.description.isEmpty)
        }
    }
}

@Suite("ProgressStore")
struct ProgressStoreTests {
    @Test("saves, merges, reloads and removes per lesson")
    func lifecycle() async throws {
        let folder = try TemporaryDirectory()
        let store = ProgressStore(directory: folder.url.appendingPathComponent("nested/progress"))
        #expect(try await store.progress(for: "lesson-1") == nil)
        try await store.save(ProgressFormatTests.sample, for: "lesson-1")
        #expect(try await store.progress(for: "lesson-1") == ProgressFormatTests.sample)
        let merged = try await store.merge(WatchProgress(watched: [30..<60], duration: 600), into: "lesson-1")
        #expect(merged.watched.intervals == [0..<12.5, 14..<60])
        // A new store on the same folder (an app relaunch) sees the same data.
        let relaunched = ProgressStore(directory: store.directory)
        #expect(try await relaunched.progress(for: "lesson-1") == merged)
        try await relaunched.removeProgress(for: "lesson-1")
        #expect(try await relaunched.progress(for: "lesson-1") == nil)
    }

    @Test("progress with fractional wall-clock times reloads equal to what was saved")
    func exactRoundTrip() async throws {
        let folder = try TemporaryDirectory()
        let store = ProgressStore(directory: folder.url)
        var generator = SplitMix64(seed: 5)
        for index in 0..<200 {
            var tracker = WatchTracker(deviceID: "device-\(index % 3)", duration: 100)
            let time = Date(timeIntervalSinceReferenceDate: Double.random(in: 0..<1e9, using: &generator))
            tracker.handle(.play(at: Double.random(in: 0..<50, using: &generator)), at: time)
            tracker.handle(.pause(at: Double.random(in: 50..<120, using: &generator)), at: time + 0.123_456_789)
            try await store.save(tracker.progress, for: "lesson-\(index)")
            #expect(try await store.progress(for: "lesson-\(index)") == tracker.progress, "case \(index)")
        }
    }

    @Test("lesson identifiers that differ only in case or punctuation get their own files")
    func distinctFiles() async throws {
        let folder = try TemporaryDirectory()
        let store = ProgressStore(directory: folder.url)
        let ids = ["Lesson", "lesson", "lesson/1", "lesson:1", String(repeating: "é", count: 300), ""]
        for (index, id) in ids.enumerated() {
            try await store.save(WatchProgress(watched: [0..<Double(index + 1)], duration: 10), for: id)
        }
        for (index, id) in ids.enumerated() {
            #expect(try await store.progress(for: id)?.watchedSeconds == Double(index + 1), "\(id)")
        }
        #expect(await store.loadAll().progress.count == ids.count)
    }

    @Test("a corrupted or future file is reported, and the other lessons still load")
    func corruptionIsIsolated() async throws {
        let folder = try TemporaryDirectory()
        let store = ProgressStore(directory: folder.url)
        try await store.save(ProgressFormatTests.sample, for: "good")
        try await store.save(ProgressFormatTests.sample, for: "truncated")
        try await store.save(ProgressFormatTests.sample, for: "future")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.url.path)
        let truncatedFile = try #require(files.first { $0.hasPrefix("truncated-") })
        let futureFile = try #require(files.first { $0.hasPrefix("future-") })
        let truncatedURL = folder.url.appendingPathComponent(truncatedFile)
        let bytes = try Data(contentsOf: truncatedURL)
        try bytes.prefix(bytes.count / 2).write(to: truncatedURL)
        let futureURL = folder.url.appendingPathComponent(futureFile)
        let future = String(decoding: try Data(contentsOf: futureURL), as: UTF8.self)
            .replacingOccurrences(of: #""version":1"#, with: #""version":7"#)
        try Data(future.utf8).write(to: futureURL)

        await #expect(throws: ProgressStoreError.self) { try await store.progress(for: "truncated") }
        do {
            _ = try await store.progress(for: "future")
            Issue.record("a future version loaded")
        } catch {
            #expect(
                error
                    == ProgressStoreError(
                        .corrupted(.init(.unsupportedVersion(found: 7, newestSupported: 1))), lessonID: "future",
                        file: futureFile))
        }
        let contents = await store.loadAll()
        #expect(contents.progress.keys.sorted() == ["good"])
        #expect(contents.failures.count == 2)
    }

    @Test(
        "merging into a damaged lesson sets the damaged file aside and saves the new progress, every pause",
        arguments: ["truncated", "future", "another lesson's file"])
    func mergeSetsAside(damage: String) async throws {
        let folder = try TemporaryDirectory()
        let store = ProgressStore(directory: folder.url)
        try await store.save(ProgressFormatTests.sample, for: "lesson")
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).first)
        let url = folder.url.appendingPathComponent(name)
        let original = try Data(contentsOf: url)
        let damaged: Data =
            switch damage {
            case "truncated": original.prefix(original.count / 2)
            case "future":
                Data(
                    String(decoding: original, as: UTF8.self)
                        .replacingOccurrences(of: #""version":1"#, with: #""version":7"#).utf8)
            default:
                Data(
                    String(decoding: original, as: UTF8.self)
                        .replacingOccurrences(of: #""lessonID":"lesson""#, with: #""lessonID":"other""#).utf8)
            }
        #expect(damaged != original)
        try damaged.write(to: url)
        let first = WatchProgress(watched: [0..<5], duration: 600)
        #expect(try await store.merge(first, into: "lesson") == first)
        // The next pause merges with what the first one saved.
        let merged = try await store.merge(WatchProgress(watched: [10..<20], duration: 600), into: "lesson")
        #expect(merged.watched.intervals == [0..<5, 10..<20])
        #expect(try await store.progress(for: "lesson") == merged)
        let aside = try FileManager.default.contentsOfDirectory(atPath: folder.url.path).filter {
            $0.contains(".corrupt-")
        }
        #expect(aside.count == 1)
        #expect(try Data(contentsOf: folder.url.appendingPathComponent(try #require(aside.first))) == damaged)
    }

    @Test("saving over a corrupted file sets the old file aside instead of deleting it")
    func setAside() async throws {
        let folder = try TemporaryDirectory()
        let store = ProgressStore(directory: folder.url)
        try await store.save(ProgressFormatTests.sample, for: "lesson")
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).first)
        try Data("garbage".utf8).write(to: folder.url.appendingPathComponent(name))
        try await store.save(WatchProgress(watched: [0..<1], duration: 10), for: "lesson")
        #expect(try await store.progress(for: "lesson")?.watchedSeconds == 1)
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.url.path)
        let aside = try #require(names.first { $0.contains(".corrupt-") })
        #expect(try Data(contentsOf: folder.url.appendingPathComponent(aside)) == Data("garbage".utf8))
    }

    /// A crash during a write leaves a partial temporary file beside the real one; the store
    /// must read the previous state and ignore the debris.
    @Test("the debris of a write interrupted by a crash leaves the previous state")
    func interruptedWrite() async throws {
        let folder = try TemporaryDirectory()
        let store = ProgressStore(directory: folder.url)
        try await store.save(ProgressFormatTests.sample, for: "lesson")
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).first)
        let partial = ProgressFormat.encode(WatchProgress(watched: [0..<600], duration: 600)).prefix(40)
        try partial.write(to: folder.url.appendingPathComponent(".\(name).tmp-crashed"))
        #expect(try await store.progress(for: "lesson") == ProgressFormatTests.sample)
        let contents = await store.loadAll()
        #expect(contents.progress == ["lesson": ProgressFormatTests.sample])
        #expect(contents.failures.isEmpty)
    }

    @Test("a write that cannot happen is a typed error and the previous state stays")
    func failedWrite() async throws {
        let folder = try TemporaryDirectory()
        // A regular file where the store's directory should be: every write must fail.
        let blocked = folder.url.appendingPathComponent("blocked")
        try Data("x".utf8).write(to: blocked)
        let store = ProgressStore(directory: blocked)
        await #expect(throws: ProgressStoreError.self) {
            try await store.save(ProgressFormatTests.sample, for: "lesson")
        }
        #expect(await store.loadAll().failures.count == 1)
    }
}
