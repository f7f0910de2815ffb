import Foundation
import MediaContainers

/// The hidden files of a lesson being remuxed beside its destination: the MP4 being built
/// (`.NAME.partial`) and the journal of its checkpoints (`.NAME.journal`).
struct RemuxFiles: Sendable {
    let destination: URL
    let partial: URL
    let journal: URL

    init(destination: URL) {
        self.destination = destination
        let folder = destination.deletingLastPathComponent()
        partial = folder.appendingPathComponent(".\(destination.lastPathComponent).partial")
        journal = folder.appendingPathComponent(".\(destination.lastPathComponent).journal")
    }

    /// Every file a lesson download of `destination` may leave beside it.
    var all: [URL] { [partial, journal] }

    /// Removes the partial file and the journal, best effort.
    func remove() {
        for file in all { StagingFiles.removeIfAllowed(file) }
    }
}

/// The MP4 being built, as the remuxer's output: every write, cut and flush goes through the
/// crash tests' ``FileFaults`` seam, and the bytes written since the last checkpoint are digested
/// as they go, so the journal can vouch for them.
final class RemuxOutput: MP4Output, @unchecked Sendable {
    private let descriptor: Int32
    let url: URL
    private let lock = NSLock()
    private var digest = ChunkDigest()

    /// Opens (creating) `url`.
    ///
    /// - Throws: ``DownloadError`` of kind ``DownloadError/Kind/file(operation:reason:)``.
    init(url: URL) throws(DownloadError) {
        self.url = url
        if !FileManager.default.fileExists(atPath: url.path) {
            do {
                try FileFaults.check(.create, url)
            } catch {
                throw DownloadError(.file(operation: "create", reason: "\(error)"), path: url.path)
            }
        }
        let descriptor = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw DownloadError(.file(operation: "open", reason: "errno \(errno)"), path: url.path)
        }
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
        try FileFaults.check(.write, url)
        var done = 0
        while done < bytes.count {
            guard let base = bytes.baseAddress else { break }
            let wrote = pwrite(descriptor, base + done, bytes.count - done, off_t(offset) + off_t(done))
            if wrote < 0, errno == EINTR { continue }
            guard wrote > 0 else {
                throw DownloadError(.file(operation: "write", reason: Self.reason(errno)), path: url.path)
            }
            done += wrote
        }
        lock.lock()
        digest.add(bytes)
        lock.unlock()
    }

    func read(at offset: UInt64, count: Int) throws -> Data {
        var data = Data(count: max(count, 0))
        var done = 0
        var failure: Int32 = 0
        data.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            while done < buffer.count {
                let got = pread(descriptor, base + done, buffer.count - done, off_t(offset) + off_t(done))
                if got < 0, errno == EINTR { continue }
                if got < 0 {
                    failure = errno
                    return
                }
                if got == 0 { return }
                done += got
            }
        }
        if failure != 0 { throw DownloadError(.file(operation: "read", reason: Self.reason(failure)), path: url.path) }
        return data.prefix(done)
    }

    func truncate(to length: UInt64) throws {
        try FileFaults.check(.write, url)
        guard ftruncate(descriptor, off_t(length)) == 0 else {
            throw DownloadError(.file(operation: "truncate", reason: Self.reason(errno)), path: url.path)
        }
    }

    func synchronize() throws {
        try FileFaults.check(.flush, url)
        guard fsync(descriptor) == 0 else {
            throw DownloadError(.file(operation: "flush", reason: Self.reason(errno)), path: url.path)
        }
    }

    /// The digest of the bytes written since the last call, and a fresh start.
    func takeDigest() -> UInt64 {
        lock.lock()
        defer {
            digest = ChunkDigest()
            lock.unlock()
        }
        return digest.value
    }

    /// The file's length.
    var length: UInt64 {
        var status = stat()
        return fstat(descriptor, &status) == 0 ? UInt64(status.st_size) : 0
    }

    /// The file system's words for `code`, with a full disk named as such.
    static func reason(_ code: Int32) -> String {
        code == ENOSPC ? diskFull : String(cString: strerror(code))
    }

    /// How ``reason(_:)`` words `ENOSPC`.
    static let diskFull = "the disk is full"
}
