public import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Whether `condition`, which reads files in `folder`, comes to hold: it is checked now and
/// again each time a file there is created, written, closed or renamed in; `false` only when
/// the whole test process stood still first (``ProcessStandstill``).
///
/// A wait for an event, not a count of turns nor of seconds: the bytes a download writes come
/// from threads of their own (the loopback server's, URLSession's), so how many turns of the
/// cooperative pool they take says nothing. On Linux the events are inotify's; elsewhere the
/// condition is read again every 10 ms. Either way the wait blocks a thread of its own, never
/// one of the pool's, and spends next to no processor time.
public func waitUntil(changesIn folder: URL, satisfy condition: @escaping @Sendable () -> Bool) async -> Bool {
    let stoodStill = LockedState(false)
    let watch = ProcessStandstill.shared.watch { stoodStill.withLock { $0 = true } }
    defer { ProcessStandstill.shared.end(watch) }
    return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
        Thread.detachNewThread {
            continuation.resume(
                returning: FolderEvents(folder).wait(until: condition, or: { stoodStill.withLock { $0 } }))
        }
    }
}

/// The changes of the files in one folder, as the system reports them.
private final class FolderEvents {
    #if canImport(Glibc)
        private let descriptor: Int32
    #endif

    init(_ folder: URL) {
        #if canImport(Glibc)
            descriptor = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
            try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            if descriptor >= 0 {
                _ = inotify_add_watch(
                    descriptor, folder.path, UInt32(IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO))
            }
        #endif
    }

    deinit {
        #if canImport(Glibc)
            if descriptor >= 0 { close(descriptor) }
        #endif
    }

    /// Blocks until `condition` holds (`true`) or `stop` does (`false`), reading `condition`
    /// again at each event (and at least once a second, for an event the folder cannot see).
    func wait(until condition: () -> Bool, or stop: () -> Bool) -> Bool {
        while true {
            if condition() { return true }
            if stop() { return false }
            #if canImport(Glibc)
                guard descriptor >= 0 else {
                    usleep(10_000)
                    continue
                }
                var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                if poll(&ready, 1, 1_000) > 0 {
                    var buffer = [UInt8](repeating: 0, count: 4_096)
                    while read(descriptor, &buffer, buffer.count) > 0 {}
                }
            #else
                usleep(10_000)
            #endif
        }
    }
}
