import Foundation
import Locking
import MediaContainers

/// The hidden files of a lesson being remuxed beside its destination: the MP4 being built
/// (`.NAME.partial`) and the journal of its checkpoints (`.NAME.journal`).
struct RemuxFiles: Sendable {
    let destination: URL
    let partial: URL
    let journal: URL
    /// The file system they are in.
    let fileSystem: any DownloadFileSystem

    init(destination: URL, fileSystem: any DownloadFileSystem) {
        self.destination = destination
        self.fileSystem = fileSystem
        let folder = destination.deletingLastPathComponent()
        partial = folder.appendingPathComponent(".\(destination.lastPathComponent).partial")
        journal = folder.appendingPathComponent(".\(destination.lastPathComponent).journal")
    }

    /// Every file a lesson download of `destination` may leave beside it.
    var all: [URL] { [partial, journal] }

    /// Removes the partial file and the journal, best effort.
    func remove() {
        for file in all { fileSystem.remove(file) }
    }
}

/// The MP4 being built, as the remuxer's output: every write, cut and flush is announced to the
/// download's ``DownloadFileSystem``, and the bytes written since the last checkpoint are
/// digested as they go, so the journal can vouch for them.
final class RemuxOutput: MP4Output, Sendable {
    private let descriptor: Int32
    let url: URL
    private let fileSystem: any DownloadFileSystem
    /// The digest of the bytes written since the last checkpoint.
    private let digest = Locked(ChunkDigest())

    /// Opens (creating) `url`.
    ///
    /// - Throws: ``DownloadError`` of kind ``DownloadError/Kind/file(operation:reason:code:)``.
    init(url: URL, fileSystem: any DownloadFileSystem) throws(DownloadError) {
        self.url = url
        self.fileSystem = fileSystem
        if !FileManager.default.fileExists(atPath: url.path) {
            do {
                try fileSystem.willPerform(.create, on: url)
            } catch {
                throw DownloadError.file("create", error, path: url.path)
            }
        }
        let descriptor = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw DownloadError.file("open", errno: errno, path: url.path)
        }
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
        try fileSystem.willPerform(.write, on: url)
        var done = 0
        while done < bytes.count {
            guard let base = bytes.baseAddress else { break }
            let wrote = pwrite(descriptor, base + done, bytes.count - done, off_t(offset) + off_t(done))
            if wrote < 0, errno == EINTR { continue }
            guard wrote > 0 else {
                throw failure("write", errno)
            }
            done += wrote
        }
        digest.withLock { $0.add(bytes) }
    }

    func read(at offset: UInt64, count: Int) throws -> Data {
        var data = Data(count: max(count, 0))
        var done = 0
        var code: Int32 = 0
        data.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            while done < buffer.count {
                let got = pread(descriptor, base + done, buffer.count - done, off_t(offset) + off_t(done))
                if got < 0, errno == EINTR { continue }
                if got < 0 {
                    code = errno
                    return
                }
                if got == 0 { return }
                done += got
            }
        }
        if code != 0 { throw failure("read", code) }
        return data.prefix(done)
    }

    func truncate(to length: UInt64) throws {
        try fileSystem.willPerform(.write, on: url)
        guard ftruncate(descriptor, off_t(length)) == 0 else {
            throw failure("truncate", errno)
        }
    }

    func synchronize() throws {
        try fileSystem.willPerform(.flush, on: url)
        guard fsync(descriptor) == 0 else {
            throw failure("flush", errno)
        }
    }

    /// The digest of the bytes written since the last call, and a fresh start.
    func takeDigest() -> UInt64 {
        digest.withLock { digest in
            defer { digest = ChunkDigest() }
            return digest.value
        }
    }

    /// The file's length.
    var length: UInt64 {
        var status = stat()
        return fstat(descriptor, &status) == 0 ? UInt64(status.st_size) : 0
    }

    /// The remuxer's write failure for `operation` with `code`: the writer passes it on with its
    /// `errno`, and the download reports it as a file failure of that code.
    private func failure(_ operation: String, _ code: Int32) -> ContainerError {
        ContainerError(
            .writeFailed(
                reason: "could not \(operation) \(url.path): \(FileErrorCode.reason(code))",
                code: code))
    }
}
