public import Foundation

/// A fresh folder path for one test's files; `label` names the suite in the folder name.
///
/// Every folder lies in one folder per test process under the system's temporary directory,
/// removed when the process exits, so a test run leaves nothing behind. A child process that a
/// test starts has its own.
public func temporaryFolder(_ label: String = "mediacore") -> URL {
    testProcessFolder.appendingPathComponent("\(label)-\(UUID().uuidString)")
}

/// The folder of this process's test files, created and registered for removal at exit on
/// first use.
private let testProcessFolder: URL = {
    let folder = processFolder(ProcessInfo.processInfo.processIdentifier)
    try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    atexit {
        try? FileManager.default.removeItem(at: processFolder(ProcessInfo.processInfo.processIdentifier))
    }
    return folder
}()

private func processFolder(_ process: Int32) -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("mediacore-tests-\(process)")
}

/// The names of the files in `folder`, hidden ones included, sorted; empty when it is missing.
public func files(in folder: URL) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
}

/// `count` deterministic pseudo-random bytes from a SplitMix64 stream seeded with `seed`, for a
/// fake resource whose bytes a test compares.
public func resourceBytes(_ count: Int, seed: UInt64 = 1) -> Data {
    var generator = SplitMix64(seed: seed)
    return Data((0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
}
