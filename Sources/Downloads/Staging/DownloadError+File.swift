import Foundation
import MediaContainers

extension DownloadError {
    /// A file operation that failed with `error`, typed by the `errno` behind it.
    static func file(_ operation: String, _ error: any Error, path: String?) -> DownloadError {
        if let error = error as? DownloadError { return error }
        let reason =
            (error as? ContainerError).flatMap { error -> String? in
                if case .writeFailed(let reason, _) = error.kind { return reason }
                return nil
            } ?? error.localizedDescription
        return DownloadError(.file(operation: operation, reason: reason, code: FileErrorCode.of(error)), path: path)
    }

    /// A file operation that failed with the system's `code` (`errno`).
    static func file(_ operation: String, errno code: Int32, path: String?) -> DownloadError {
        DownloadError(.file(operation: operation, reason: FileErrorCode.reason(code), code: code), path: path)
    }

    /// The `errno` behind a file operation's error, whatever layer threw it (a `POSIXError`, a
    /// Cocoa file error, a container's write failure), or `nil` when nothing says: for the state
    /// files an offline library and its queue write beside the downloads.
    package static func fileErrorCode(of error: any Error) -> Int32? {
        FileErrorCode.of(error)
    }
}
