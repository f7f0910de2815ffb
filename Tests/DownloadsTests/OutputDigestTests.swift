import Foundation
import HTTPSupport
import MediaContainers
import TestSupport
import Testing

@testable import Downloads

/// Every fixture lesson downloads to the bytes recorded in `Fixtures/output-digests.json`: a
/// change to the pipeline that changes a written byte shows here, named by lesson and file.
///
/// Run with `MEDIACORE_WRITE_DIGESTS=1` to record the digests again after a change that is meant
/// to change the output; then read the diff of the JSON file before committing it.
@Suite("Every fixture lesson downloads to its recorded bytes")
struct OutputDigestTests {
    /// The option sets each lesson is downloaded with: the default choice and every rendition.
    static let variants: [String] = ["best", "all"]

    static let cases: [String] = NoDuplicateTracksTests.lessons.flatMap { name in
        variants.map { "\(name) \($0)" }
    }

    static let recordedURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/output-digests.json")

    /// Downloads the lesson and returns "file name: byte count fnv1a" for every file written.
    static func digests(_ testCase: String) async throws -> [String] {
        let parts = testCase.split(separator: " ").map(String.init)
        let lesson = try ServedLesson(parts[0])
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        lesson.serve(on: transport)
        let downloader = MediaDownloader(
            engine: DownloadEngine(concurrency: 2, retry: .none, clock: clock, transport: transport))
        let folder = temporaryFolder("digests")
        _ = try await downloader.downloadLesson(
            from: lesson.entry, to: folder.appendingPathComponent("lesson"),
            preferredLanguages: [], audioRenditions: parts[1] == "all" ? .all : .best
        ).result()
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        return try names.map { name in
            let data = try Data(contentsOf: folder.appendingPathComponent(name))
            return "\(name): \(data.count) \(SampleDigest.fnv1a(data))"
        }
    }

    @Test("the recorded digests name every case")
    func everyCaseRecorded() throws {
        guard ProcessInfo.processInfo.environment["MEDIACORE_WRITE_DIGESTS"] == nil else { return }
        let recorded = try JSONDecoder().decode(
            [String: [String]].self, from: Data(contentsOf: Self.recordedURL))
        #expect(Set(recorded.keys) == Set(Self.cases))
    }

    @Test("the lesson's files hold the recorded bytes", arguments: cases)
    func recordedBytes(testCase: String) async throws {
        let written = try await Self.digests(testCase)
        if ProcessInfo.processInfo.environment["MEDIACORE_WRITE_DIGESTS"] != nil {
            try DigestRecord.shared.record(testCase, written, at: Self.recordedURL)
            return
        }
        let recorded = try JSONDecoder().decode(
            [String: [String]].self, from: Data(contentsOf: Self.recordedURL))
        #expect(recorded[testCase] == written, "\(testCase)")
    }
}

/// Serializes the rewriting of the digest file across parallel test cases.
final class DigestRecord: Sendable {
    static let shared = DigestRecord()
    private let lock = LockedState<Void>(())

    func record(_ key: String, _ value: [String], at url: URL) throws {
        try lock.withLock { _ in
            var all =
                (try? JSONDecoder().decode([String: [String]].self, from: Data(contentsOf: url))) ?? [:]
            all[key] = value
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(all).write(to: url, options: .atomic)
        }
    }
}
