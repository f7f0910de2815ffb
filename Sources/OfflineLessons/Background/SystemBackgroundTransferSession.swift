import Downloads
package import Foundation
import HTTPSupport

/// The app's choices for the downloads an ``OfflineLibrary`` continues in the background.
///
/// They configure the system's background `URLSession`
/// (`URLSessionConfiguration.background(withIdentifier:)`), whose scheduler decides when each
/// transfer runs: a download that may not use the network there is waiting (for Wi-Fi, say),
/// not failed.
public struct BackgroundTransferOptions: Hashable, Sendable {
    /// The session's identifier: the app's own, the same at every launch, so that a relaunched
    /// process recreates the session and receives its events.
    public var identifier: String
    /// Whether transfers may use a cellular network at all.
    public var allowsCellularAccess: Bool
    /// Whether transfers may use a network the system marks expensive (cellular, a hotspot).
    public var allowsExpensiveNetworkAccess: Bool
    /// Whether transfers may use a network in Low Data Mode.
    public var allowsConstrainedNetworkAccess: Bool
    /// Whether the system may wait for a good moment (Wi-Fi and power): for transfers that can
    /// wait. It applies to transfers created in the foreground only: the system treats every
    /// transfer created while the app is in the background as discretionary.
    public var isDiscretionary: Bool
    /// When a download's parts go to the background session.
    public var handOver: HandOver

    /// When a download's parts go to the background session.
    public enum HandOver: Hashable, Sendable {
        /// When the app calls ``OfflineLibrary/continueInBackground()``, as it leaves the
        /// foreground: the foreground transfers, faster, run while the app is active.
        case whenLeavingForeground
        /// As soon as each download knows its parts (its playlists read): every download runs
        /// in the background session from its start, whatever the app does next.
        /// ``OfflineLibrary/continueInBackground()`` still hands over what a download asked for
        /// later is running.
        case always
    }

    /// Options for the session `identifier` (the app's, such as its bundle identifier with a
    /// suffix), every network allowed, nothing discretionary, and downloads handed over when the
    /// app leaves the foreground, unless chosen.
    public init(
        identifier: String, allowsCellularAccess: Bool = true, allowsExpensiveNetworkAccess: Bool = true,
        allowsConstrainedNetworkAccess: Bool = true, isDiscretionary: Bool = false,
        handOver: HandOver = .whenLeavingForeground
    ) {
        self.identifier = identifier
        self.allowsCellularAccess = allowsCellularAccess
        self.allowsExpensiveNetworkAccess = allowsExpensiveNetworkAccess
        self.allowsConstrainedNetworkAccess = allowsConstrainedNetworkAccess
        self.isDiscretionary = isDiscretionary
        self.handOver = handOver
    }
}

/// Where an ``OfflineLibrary``'s downloads go on in the background: the system's background
/// `URLSession` (``system``), or a simulation of it for tests.
///
/// An app passes nothing and gets ``system``. Its tests pass the simulated service of the
/// `OfflineLessonsTesting` module, whose daemon runs the tasks out of the library's process, as
/// the system does, so that the app's wiring (its app delegate, its scene-phase handlers, its
/// relaunch in the background) is tested on any machine, Linux included.
public struct BackgroundTransferService: Sendable {
    /// The session for `options`, landing finished files in `landing`; `nil` where there is none.
    package let session:
        @Sendable (_ options: BackgroundTransferOptions, _ landing: URL) -> (any BackgroundTransferSession)?

    /// A service whose sessions `session` makes.
    package init(
        session:
            @escaping @Sendable (_ options: BackgroundTransferOptions, _ landing: URL) -> (
                any BackgroundTransferSession
            )?
    ) {
        self.session = session
    }

    /// The system's background `URLSession` of the options' identifier (on Apple platforms;
    /// elsewhere there is none, and downloads run in the foreground only).
    public static var system: BackgroundTransferService {
        BackgroundTransferService { options, landing in
            #if canImport(Darwin)
                SystemBackgroundTransferSession(options: options, landing: landing)
            #else
                nil
            #endif
        }
    }
}

extension BackgroundTransfers {
    /// Background transfers through `service`'s session for `options`, keeping their journal in
    /// `folder`, landing finished files in a hidden folder there, and retrying a failed part as
    /// `retry` says (the downloader's policy), and writing the journal in `fileSystem`; `nil`
    /// where the service has no session.
    static func make(
        _ service: BackgroundTransferService, options: BackgroundTransferOptions, folder: URL, retry: RetryPolicy,
        fileSystem: any DownloadFileSystem
    ) -> BackgroundTransfers? {
        guard let session = service.session(options, folder.appendingPathComponent(".background-landing")) else {
            return nil
        }
        return BackgroundTransfers(session: session, folder: folder, retry: retry, fileSystem: fileSystem)
    }
}

#if canImport(Darwin)
    import Locking

    /// The system's background `URLSession` as a ``BackgroundTransferSession``: download tasks
    /// that go on out of process, their files moved into `landing` before the delegate returns
    /// (the system deletes them then), their events delivered in order on ``events``.
    final class SystemBackgroundTransferSession: NSObject, BackgroundTransferSession, URLSessionDownloadDelegate {
        let events: AsyncStream<BackgroundTransferEvent>
        private let continuation: AsyncStream<BackgroundTransferEvent>.Continuation
        /// Where finished files are moved.
        let landing: URL
        let leftovers: [BackgroundTransferEvent]
        private let session = Locked<URLSession?>(nil)

        /// Creates (or, in a relaunched process, recreates) the session `options` names.
        init(options: BackgroundTransferOptions, landing: URL) {
            (events, continuation) = AsyncStream.makeStream()
            self.landing = landing
            // Read before the session exists: from then on its delegate lands files there.
            leftovers = BackgroundLanding.leftovers(in: landing)
            super.init()
            let configuration = URLSessionConfiguration.background(withIdentifier: options.identifier)
            configuration.sessionSendsLaunchEvents = true
            configuration.isDiscretionary = options.isDiscretionary
            configuration.allowsCellularAccess = options.allowsCellularAccess
            configuration.allowsExpensiveNetworkAccess = options.allowsExpensiveNetworkAccess
            configuration.allowsConstrainedNetworkAccess = options.allowsConstrainedNetworkAccess
            let created = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
            session.withLock { $0 = created }
        }

        func submit(_ tasks: [BackgroundTransferTask]) async {
            guard let session = session.withLock({ $0 }) else { return }
            for task in tasks {
                var request = task.request
                // The queue's rule on the request itself: it narrows the session's settings.
                // (A task made from resume data is made from the request that data holds: the
                // first task's, with the same rule.)
                if task.network != .any { request.allowsExpensiveNetworkAccess = false }
                if task.network == .notConstrained { request.allowsConstrainedNetworkAccess = false }
                let download =
                    task.resumeData.map { session.downloadTask(withResumeData: $0) }
                    ?? session.downloadTask(with: request)
                download.taskDescription = task.taskDescription
                if let expected = task.expectedBytesToReceive { download.countOfBytesClientExpectsToReceive = expected }
                download.resume()
            }
        }

        func runningTaskDescriptions() async -> [String] {
            guard let session = session.withLock({ $0 }) else { return [] }
            return await session.allTasks.filter { $0.state == .running || $0.state == .suspended }
                .compactMap(\.taskDescription)
        }

        func cancel(taskDescriptions descriptions: Set<String>) async {
            guard let session = session.withLock({ $0 }) else { return }
            for task in await session.allTasks where descriptions.contains(task.taskDescription ?? "") {
                task.cancel()
            }
        }

        func urlSession(
            _ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL
        ) {
            let description = downloadTask.taskDescription ?? ""
            guard let http = downloadTask.response as? HTTPURLResponse else {
                // No HTTP response: nothing says what the file holds.
                fail(description, code: URLError.Code.badServerResponse.rawValue)
                return
            }
            var headers: [String: String] = [:]
            for (name, value) in http.allHeaderFields {
                if let name = name as? String, let value = value as? String { headers[name] = value }
            }
            let response = BackgroundTransferResponse(statusCode: http.statusCode, headers: headers)
            do {
                // Moved before this returns (the system deletes the file then), with a record of
                // the event, which a process that dies before recording it leaves for the next.
                continuation.yield(
                    try BackgroundLanding.land(location, in: landing, taskDescription: description, response: response))
            } catch {
                fail(description, code: URLError.Code.cannotMoveFile.rawValue)
            }
        }

        /// Reports task `description` failed with `code`, its record written first (as
        /// `didCompleteWithError`'s failures are), so that a process that dies before recording
        /// it finds it at its next start.
        private func fail(_ description: String, code: Int) {
            let failure = BackgroundTransferFailure.network(code: code)
            try? BackgroundLanding.landFailure(of: description, failure, resumeData: nil, in: landing)
            continuation.yield(.failed(taskDescription: description, failure: failure, resumeData: nil))
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            // A task that wrote a file was reported by `didFinishDownloadingTo`.
            guard let error else { return }
            let failure = error as NSError
            let resumeData = failure.userInfo[NSURLSessionDownloadTaskResumeData] as? Data
            let reason: BackgroundTransferFailure
            if failure.domain == NSURLErrorDomain, failure.code == NSURLErrorCancelled {
                let why = failure.userInfo[NSURLErrorBackgroundTaskCancelledReasonKey] as? Int
                reason = why == NSURLErrorCancelledReasonUserForceQuitApplication ? .forceQuit : .cancelled
            } else {
                reason = .network(code: failure.code)
            }
            let description = task.taskDescription ?? ""
            // Written before the event is delivered: a process that dies before recording it
            // finds it at its next start.
            try? BackgroundLanding.landFailure(of: description, reason, resumeData: resumeData, in: landing)
            continuation.yield(.failed(taskDescription: description, failure: reason, resumeData: resumeData))
        }

        func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession) {
            continuation.yield(.eventsDelivered)
        }

        /// The bytes each task had written when it was last reported, by task identifier.
        private let reported = Locked<[Int: Int64]>([:])

        func urlSession(
            _ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
            totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64
        ) {
            // Reported at every hundredth of the body (at least every 256 KiB when its size is
            // not known), not at every write: a screen needs no more, and each report costs a
            // wake-up of the app.
            let expected = totalBytesExpectedToWrite > 0 ? totalBytesExpectedToWrite : nil
            let step = max((expected ?? 0) / 100, 256 << 10)
            let due = reported.withLock { reported -> Bool in
                let last = reported[downloadTask.taskIdentifier] ?? 0
                guard totalBytesWritten - last >= step || totalBytesWritten == expected else { return false }
                reported[downloadTask.taskIdentifier] = totalBytesWritten
                return true
            }
            guard due else { return }
            continuation.yield(
                .progressed(
                    taskDescription: downloadTask.taskDescription ?? "",
                    bytesWritten: UInt64(max(totalBytesWritten, 0)),
                    bytesExpected: expected.map { UInt64($0) }))
        }
    }
#endif
