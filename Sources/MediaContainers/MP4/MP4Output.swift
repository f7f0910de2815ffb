public import Foundation

/// Where an ``MP4Writer`` puts its bytes: a file written at offsets.
///
/// ``MP4FileOutput`` writes a local file; the `Downloads` module passes its own output, which
/// watches every operation for its crash tests.
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
            let code = errno
            throw ContainerError(
                .writeFailed(reason: "cannot open \(url.path): \(FileErrorCode.reason(code))", code: code))
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
            guard wrote > 0 else { throw Self.failure("write", errno) }
            done += wrote
        }
    }

    /// Reads up to `count` bytes at `offset`.
    public func read(at offset: UInt64, count: Int) throws -> Data {
        var data = Data(count: max(count, 0))
        var done = 0
        let failed: Bool = data.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return false }
            while done < buffer.count {
                let got = pread(descriptor, base + done, buffer.count - done, off_t(offset) + off_t(done))
                if got < 0, errno == EINTR { continue }
                if got < 0 { return true }
                if got == 0 { break }
                done += got
            }
            return false
        }
        if failed { throw Self.failure("read", errno) }
        return data.prefix(done)
    }

    /// Cuts the file to `length` bytes.
    public func truncate(to length: UInt64) throws {
        guard ftruncate(descriptor, off_t(length)) == 0 else {
            throw Self.failure("truncate", errno)
        }
    }

    /// Flushes the file to stable storage.
    public func synchronize() throws {
        guard fsync(descriptor) == 0 else { throw Self.failure("fsync", errno) }
    }

    /// The write failure of `operation` with `code`, typed by its `errno`.
    private static func failure(_ operation: String, _ code: Int32) -> ContainerError {
        ContainerError(.writeFailed(reason: "\(operation) failed: \(FileErrorCode.reason(code))", code: code))
    }
}
