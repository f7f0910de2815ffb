import Downloads
package import Foundation

#if canImport(FoundationNetworking)
    package import FoundationNetworking
#endif

/// One download task for a background session: a request, the label that tells a relaunched
/// process what it is for, and the bytes it expects.
package struct BackgroundTransferTask: Hashable, Sendable {
    /// The request (a `Range` header for a byte range).
    package var request: URLRequest
    /// The task's `taskDescription`: a ``BackgroundTaskLabel``'s text.
    package var taskDescription: String
    /// `countOfBytesClientExpectsToReceive`, or `nil` when not known.
    package var expectedBytesToReceive: Int64?
    /// What a cancelled or failed earlier task left to go on from, when there is any.
    package var resumeData: Data?
    /// The networks the task may use (a download queue's rule): the system session sets the
    /// request's own `allowsExpensiveNetworkAccess` and `allowsConstrainedNetworkAccess` from it,
    /// which narrow the session's.
    package var network: DownloadRequirements.Network = .any

    /// A task for `request`, labelled `taskDescription`.
    package init(
        request: URLRequest, taskDescription: String, expectedBytesToReceive: Int64? = nil, resumeData: Data? = nil,
        network: DownloadRequirements.Network = .any
    ) {
        self.request = request
        self.taskDescription = taskDescription
        self.expectedBytesToReceive = expectedBytesToReceive
        self.resumeData = resumeData
        self.network = network
    }
}

/// The status and headers of a background task's response.
package struct BackgroundTransferResponse: Hashable, Sendable {
    /// The HTTP status.
    package var statusCode: Int
    /// The headers, by their names as sent.
    package var headers: [String: String]

    /// A response of `statusCode` with `headers`.
    package init(statusCode: Int, headers: [String: String]) {
        self.statusCode = statusCode
        self.headers = headers
    }

    /// The value of header `name`, its case ignored (RFC 9110 §5.1).
    package func value(of name: String) -> String? {
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

/// Why a background task ended without a body.
package enum BackgroundTransferFailure: Hashable, Sendable {
    /// The learner force-quit the app, which cancels every task of its background sessions
    /// (`NSURLErrorCancelledReasonUserForceQuitApplication`).
    case forceQuit
    /// The task was cancelled (by the app, or by the system for another reason).
    case cancelled
    /// The transfer failed (`URLError`'s code: offline, timed out, connection lost…).
    case network(code: Int)
}

/// What a background session reports, in the order it happens.
package enum BackgroundTransferEvent: Hashable, Sendable {
    /// A task's response arrived whole. Its body is in `file`, already moved out of the
    /// system's temporary location (which is deleted when the delegate call returns) into the
    /// session's landing folder, with a record of the event (``BackgroundLanding``). An error
    /// status (a 404, a 503) arrives this way too, its body the server's error page.
    case finished(taskDescription: String, response: BackgroundTransferResponse, file: URL)
    /// A task ended without a response, with what it left to resume from.
    case failed(taskDescription: String, failure: BackgroundTransferFailure, resumeData: Data?)
    /// Every event of this wake-up was delivered (`urlSessionDidFinishEvents(forBackgroundURLSession:)`):
    /// the app may call the completion handler the system gave it once its state is saved.
    case eventsDelivered
    /// A running task has written `bytesWritten` bytes of its body, of `bytesExpected` when the
    /// response said (`urlSession(_:downloadTask:didWriteData:totalBytesWritten:totalBytesExpectedToWrite:)`,
    /// which the system calls while the app runs). Nothing is landed for it: a process that
    /// dies before hearing it loses nothing but a figure on a screen.
    case progressed(taskDescription: String, bytesWritten: UInt64, bytesExpected: UInt64?)
}

/// A background transfer service: the system's background `URLSession` on Apple platforms,
/// transfers that go on out of process while the app is suspended or not running.
///
/// As Apple documents it: only download tasks; events go to a delegate, never to completion
/// handlers; a relaunched process recreates the session with the same identifier, finds the
/// tasks still running, and receives the events that happened meanwhile, in a batch, ending with
/// `urlSessionDidFinishEvents`.
package protocol BackgroundTransferSession: Sendable {
    /// The events an earlier process received and did not record, read from the landing folder
    /// (``BackgroundLanding``) when the session was created, before it could land anything.
    var leftovers: [BackgroundTransferEvent] { get }
    /// Where the session lands finished files and the records of the tasks that failed.
    var landing: URL { get }
    /// Every event, in order, from the session's creation on.
    var events: AsyncStream<BackgroundTransferEvent> { get }
    /// Starts `tasks`, in their order.
    func submit(_ tasks: [BackgroundTransferTask]) async
    /// The descriptions of the tasks the session still runs (after a relaunch too).
    func runningTaskDescriptions() async -> [String]
    /// Cancels the tasks whose descriptions are in `descriptions` (`URLSessionTask.cancel()`):
    /// each ends with a ``BackgroundTransferFailure/cancelled`` event, as the system reports it.
    func cancel(taskDescriptions descriptions: Set<String>) async
}
