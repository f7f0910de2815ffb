public import Foundation

/// A fresh folder path for one test's files, under the system's temporary directory; `label`
/// names the suite in the folder name.
public func temporaryFolder(_ label: String = "mediacore") -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID().uuidString)")
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
