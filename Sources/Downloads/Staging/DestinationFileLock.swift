import Foundation

/// A destination held by one process at a time: an exclusive `flock(2)` on a hidden lock file
/// beside it, `.NAME.lock`.
///
/// ``DestinationLocks`` orders the runs of one process; this lock keeps another process (an app
/// extension, say) from writing the same staging files at the same time. The kernel releases
/// the lock when its process dies, so a killed download never leaves a destination locked. The
/// holder removes the lock file before releasing it; a process that opened the file just before
/// that finds, once it holds the lock, that the path now names another file (or none), and
/// starts again.
struct DestinationFileLock {
    private let descriptor: Int32
    private let url: URL

    /// Locks `destination` for this process.
    ///
    /// - Throws: ``DownloadError`` of kind ``DownloadError/Kind/destinationInUse`` when another
    ///   process holds it, or of kind ``DownloadError/Kind/file(operation:reason:code:)`` when the
    ///   lock file cannot be opened.
    static func acquire(for destination: URL) throws(DownloadError) -> DestinationFileLock {
        let url = destination.deletingLastPathComponent().appendingPathComponent(
            ".\(destination.lastPathComponent).lock")
        // A few rounds cover a holder that removes the file between our open and our lock.
        for _ in 0..<8 {
            let descriptor = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else {
                throw DownloadError.file("open the lock", errno: errno, path: url.path)
            }
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                let failure = errno
                close(descriptor)
                if failure == EWOULDBLOCK { throw DownloadError(.destinationInUse, path: destination.path) }
                throw DownloadError.file("lock", errno: failure, path: url.path)
            }
            var held = stat()
            var named = stat()
            if fstat(descriptor, &held) == 0, stat(url.path, &named) == 0, held.st_ino == named.st_ino,
                held.st_dev == named.st_dev
            {
                return DestinationFileLock(descriptor: descriptor, url: url)
            }
            close(descriptor)  // the file was removed by its last holder: lock the new one
        }
        throw DownloadError(.destinationInUse, path: destination.path)
    }

    /// Removes the lock file and releases the lock.
    func release() {
        unlink(url.path)
        close(descriptor)
    }
}
