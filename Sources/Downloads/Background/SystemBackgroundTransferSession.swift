import Foundation

/// The app's choices for its background transfers.
struct BackgroundTransferOptions: Hashable, Sendable {
    /// The session's identifier: the app's own, the same at every launch, so that a relaunched
    /// process recreates the session and receives its events.
    var identifier: String
    /// Whether tasks may use a cellular network at all.
    var allowsCellularAccess = true
    /// Whether tasks may use a network the system marks expensive (cellular, a hotspot).
    var allowsExpensiveNetworkAccess = true
    /// Whether tasks may use a network in Low Data Mode.
    var allowsConstrainedNetworkAccess = true
    /// Whether the system may wait for a good moment (on Wi-Fi, charging): for transfers that
    /// can wait, never for a learner waiting to watch.
    var isDiscretionary = false
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
        private let session = Locked<URLSession?>(nil)

        /// Creates (or, in a relaunched process, recreates) the session `options` names.
        init(options: BackgroundTransferOptions, landing: URL) {
            (events, continuation) = AsyncStream.makeStream()
            self.landing = landing
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
                let download =
                    task.resumeData.map { session.downloadTask(withResumeData: $0) }
                    ?? session.downloadTask(with: task.request)
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

        func urlSession(
            _ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL
        ) {
            let description = downloadTask.taskDescription ?? ""
            let destination = landing.appendingPathComponent(UUID().uuidString)
            do {
                try FileManager.default.createDirectory(at: landing, withIntermediateDirectories: true)
                try FileManager.default.moveItem(at: location, to: destination)
            } catch {
                continuation.yield(
                    .failed(
                        taskDescription: description, failure: .network(code: URLError.Code.cannotMoveFile.rawValue),
                        resumeData: nil))
                return
            }
            guard let http = downloadTask.response as? HTTPURLResponse else {
                // No HTTP response: nothing says what the file holds.
                try? FileManager.default.removeItem(at: destination)
                continuation.yield(
                    .failed(
                        taskDescription: description,
                        failure: .network(code: URLError.Code.badServerResponse.rawValue), resumeData: nil))
                return
            }
            var headers: [String: String] = [:]
            for (name, value) in http.allHeaderFields {
                if let name = name as? String, let value = value as? String { headers[name] = value }
            }
            continuation.yield(
                .finished(
                    taskDescription: description,
                    response: BackgroundTransferResponse(statusCode: http.statusCode, headers: headers),
                    file: destination))
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
            continuation.yield(
                .failed(taskDescription: task.taskDescription ?? "", failure: reason, resumeData: resumeData))
        }

        func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession) {
            continuation.yield(.eventsDelivered)
        }
    }
#endif
