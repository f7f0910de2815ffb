import Downloads
import Foundation

#if canImport(Network)
    import Network
#endif

/// Where a download queue learns what network it has: a stream of paths, the current one first
/// (a queue's ``DownloadQueue/start()`` waits for it).
///
/// On Apple platforms `SystemNetworkPathMonitor` reads `NWPathMonitor`; tests and previews give
/// a queue a monitor of their own that yields the paths they choose.
public protocol NetworkPathMonitor: Sendable {
    /// The network's paths as they change, starting with the current one.
    func paths() -> AsyncStream<NetworkPath>
}

/// A monitor whose path never changes: for a queue on a platform without `NWPathMonitor`, or a
/// preview.
public struct FixedNetworkPathMonitor: NetworkPathMonitor {
    /// The path it reports.
    public var path: NetworkPath

    /// A monitor that always reports `path`.
    public init(_ path: NetworkPath = .unmetered) {
        self.path = path
    }

    /// One path, then nothing.
    public func paths() -> AsyncStream<NetworkPath> {
        AsyncStream { continuation in
            continuation.yield(path)
        }
    }
}

#if canImport(Network)
    /// The device's network, read through `NWPathMonitor`: available when the path is
    /// satisfied, expensive, constrained and cellular as the path says.
    public struct SystemNetworkPathMonitor: NetworkPathMonitor {
        /// A monitor of every interface.
        public init() {}

        /// The paths `NWPathMonitor` reports; a monitor runs while the stream is read.
        public func paths() -> AsyncStream<NetworkPath> {
            AsyncStream { continuation in
                let monitor = NWPathMonitor()
                monitor.pathUpdateHandler = { path in
                    continuation.yield(
                        NetworkPath(
                            isAvailable: path.status == .satisfied, isExpensive: path.isExpensive,
                            isConstrained: path.isConstrained, isCellular: path.usesInterfaceType(.cellular)))
                }
                continuation.onTermination = { _ in monitor.cancel() }
                monitor.start(queue: DispatchQueue(label: "MediaCore.Downloads.network"))
            }
        }
    }
#endif
