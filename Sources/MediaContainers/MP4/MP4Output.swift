public import Foundation

/// Where an ``MP4Writer`` puts its bytes: a file written at offsets.
///
/// ``MP4FileOutput`` writes a local file; the `Downloads` module wraps it in an output that
/// announces every operation to its file system and digests the bytes for its journal.
public protocol MP4Output: AnyObject, Sendable {
    /// Writes `bytes` at `offset`, growing the file as needed.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws
    /// Reads up to `count` bytes at `offset`; fewer at the end of the file.
    func read(at offset: UInt64, count: Int) throws -> Data
    /// Cuts the file to `length` bytes.
    func truncate(to length: UInt64) throws
    /// Makes every byte written so far durable (`fsync(2)`).
    func synchronize() throws
}

/// A local file as an ``MP4Output``, written with `pwrite(2)`.
public final class MP4FileOutput: MP4Output, Sendable {
    private let descriptor: Int32
    /// The file.
    public let url: URL

    /// Opens `url` for writing, creating it if needed; with `truncating`, empties it first.
    ///
    /// - Throws: ``ContainerError/Kind/writeFailed(reason:code:)``.
    public init(url: URL, truncating: Bool = true) throws(ContainerError) {
        self.url = url
        let flags = O_RDWR | O_CREAT | O_CLOEXEC | (truncating ? O_TRUNC : 0)
        let descriptor = open(url.path, flags, 0o644)
        guard descriptor >= 0 else {
            throw Self.failure("open", url, errno)
        }
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    /// Writes `bytes` at `offset`.
    public func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
        var done = 0
        while done < bytes.count {
            guard let base = bytes.baseAddress else { return }
            let wrote = pwrite(descriptor, base + done, bytes.count - done, off_t(offset) + off_t(done))
            if wrote < 0, errno == EINTR { continue }
            guard wrote > 0 else { throw Self.failure("write", url, errno) }
            done += wrote
        }
    }

    /// Reads up to `count` bytes at `offset`.
    public func read(at offset: UInt64, count: Int) throws -> Data {
        var data = Data(count: max(count, 0))
        var done = 0
        // The `errno` of a failed read, taken before anything else can change it.
        let code: Int32 = data.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return 0 }
            while done < buffer.count {
                let got = pread(descriptor, base + done, buffer.count - done, off_t(offset) + off_t(done))
                if got < 0, errno == EINTR { continue }
                if got < 0 { return errno }
                if got == 0 { break }
                done += got
            }
            return 0
        }
        if code != 0 { throw Self.failure("read", url, code) }
        return data.prefix(done)
    }

    /// Cuts the file to `length` bytes.
    public func truncate(to length: UInt64) throws {
        guard ftruncate(descriptor, off_t(length)) == 0 else {
            throw Self.failure("truncate", url, errno)
        }
    }

    /// Flushes the file to stable storage.
    public func synchronize() throws {
        guard fsync(descriptor) == 0 else { throw Self.failure("flush", url, errno) }
    }

    /// The file's length in bytes (0 when it cannot be read).
    package var length: UInt64 {
        var status = stat()
        return fstat(descriptor, &status) == 0 ? UInt64(status.st_size) : 0
    }

    /// The write failure of `operation` on `url` with `code`, typed by its `errno`.
    private static func failure(_ operation: String, _ url: URL, _ code: Int32) -> ContainerError {
        ContainerError(
            .writeFailed(reason: "could not \(operation) \(url.path): \(FileErrorCode.reason(code))", code: code))
    }
}
