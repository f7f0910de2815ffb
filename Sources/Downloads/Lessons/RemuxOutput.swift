import Foundation
import Locking
import MediaContainers

/// The MP4 being built, as the remuxer's output: an ``MP4FileOutput`` whose every write, cut and
/// flush is first announced to the download's ``DownloadFileSystem``, and whose bytes written
/// since the last checkpoint are digested as they go, so the journal can vouch for them.
final class RemuxOutput: MP4Output, Sendable {
    private let file: MP4FileOutput
    private let fileSystem: any DownloadFileSystem
    /// The digest of the bytes written since the last checkpoint.
    private let digest = Locked(ChunkDigest())

    /// The file.
    var url: URL { file.url }

    /// Opens (creating) `url`, keeping what it holds.
    ///
    /// - Throws: ``DownloadError`` of kind ``DownloadError/Kind/file(operation:reason:code:)``.
    init(url: URL, fileSystem: any DownloadFileSystem) throws(DownloadError) {
        self.fileSystem = fileSystem
        if !FileManager.default.fileExists(atPath: url.path) {
            do {
                try fileSystem.willPerform(.create, on: url)
            } catch {
                throw DownloadError.file("create", error, path: url.path)
            }
        }
        do {
            file = try MP4FileOutput(url: url, truncating: false)
        } catch {
            throw DownloadError.file("open", error, path: url.path)
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
        try fileSystem.willPerform(.write, on: url)
        try file.write(bytes, at: offset)
        digest.withLock { $0.add(bytes) }
    }

    func read(at offset: UInt64, count: Int) throws -> Data {
        try file.read(at: offset, count: count)
    }

    func truncate(to length: UInt64) throws {
        try fileSystem.willPerform(.write, on: url)
        try file.truncate(to: length)
    }

    func synchronize() throws {
        try fileSystem.willPerform(.flush, on: url)
        try file.synchronize()
    }

    /// The digest of the bytes written since the last call, and a fresh start.
    func takeDigest() -> UInt64 {
        digest.withLock { digest in
            defer { digest = ChunkDigest() }
            return digest.value
        }
    }

    /// The file's length.
    var length: UInt64 { file.length }
}
