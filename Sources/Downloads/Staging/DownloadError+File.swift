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
}
