import Downloads
import Foundation

/// The offline library's state file, `offline-library.json` in its folder: one record per item,
/// under a version number. It reads, writes (atomically, through the library's file system) and
/// moves itself aside, and knows nothing of what the records mean, as Media3's `DownloadIndex`
/// keeps the downloads apart from the `DownloadManager` that drives them.
struct LibraryStateFile: Sendable {
    /// The version this library writes, and the newest it reads.
    static let version = 1

    /// The file.
    let url: URL
    /// The file system writes go through (so that a test can fail them).
    let fileSystem: any DownloadFileSystem

    private struct Contents: Codable {
        var version: Int
        var items: [String: LibraryMachine.Record]
    }

    /// The state file in `directory`.
    init(in directory: URL, fileSystem: any DownloadFileSystem) {
        url = directory.appendingPathComponent("offline-library.json")
        self.fileSystem = fileSystem
    }

    /// The temporary file an interrupted write leaves beside it.
    var temporaryFile: URL { StateFileWriting.temporaryFile(of: url) }

    /// The records the file holds, or `nil` when there is no file yet.
    ///
    /// - Throws: ``OfflineLibrary/LibraryError`` of kind `readFailed` when the file is there but
    ///   cannot be read now, `corruptedStateFile` when it is not a state file of a known version,
    ///   `newerVersion` when a newer library wrote it.
    /// - Complexity: O(*n*) for a file of *n* bytes.
    func read() throws(OfflineLibrary.LibraryError) -> [String: LibraryMachine.Record]? {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            guard FileManager.default.fileExists(atPath: url.path) else { return nil }
            throw OfflineLibrary.LibraryError(
                .readFailed(reason: error.localizedDescription, code: DownloadError.fileErrorCode(of: error)),
                path: url.path)
        }
        let contents: Contents
        do {
            contents = try JSONDecoder().decode(Contents.self, from: data)
        } catch {
            throw OfflineLibrary.LibraryError(.corruptedStateFile(reason: String(describing: error)), path: url.path)
        }
        guard contents.version == Self.version else {
            if contents.version > Self.version {
                throw OfflineLibrary.LibraryError(.newerVersion(contents.version), path: url.path)
            }
            throw OfflineLibrary.LibraryError(
                .corruptedStateFile(reason: "version \(contents.version) is not one this app reads"), path: url.path)
        }
        return contents.items
    }

    /// Replaces the file with `records`, atomically: a kill leaves the old file or the new one.
    ///
    /// - Throws: ``OfflineLibrary/LibraryError`` of kind `saveFailed`, with the file system's
    ///   code (a full disk, a read-only folder).
    /// - Complexity: O(*n*) for the *n* records.
    func write(_ records: [String: LibraryMachine.Record]) throws(OfflineLibrary.LibraryError) {
        do {
            try fileSystem.willPerform(.write, on: url)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            try StateFileWriting.write(encoder.encode(Contents(version: Self.version, items: records)), to: url)
            fileSystem.didPerform(.write, on: url)
        } catch {
            throw OfflineLibrary.LibraryError(
                .saveFailed(reason: error.localizedDescription, code: DownloadError.fileErrorCode(of: error)),
                path: url.path)
        }
    }

    /// Moves the file aside, beside it, as `offline-library.json.damaged-N`, and returns where;
    /// `nil` when it could not be moved.
    func moveAside() -> URL? {
        StateFileWriting.moveAside(url)
    }
}
