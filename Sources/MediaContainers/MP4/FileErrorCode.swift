import Foundation

/// The `errno` behind a file operation's error, whatever layer threw it.
///
/// Codes are kept as `Int32` rather than `POSIXErrorCode`, which the macOS 14 SDK does not mark
/// `Sendable`.
package enum FileErrorCode {
    /// The POSIX code of `error`: a `POSIXError`'s, a ``ContainerError`` write failure's, an
    /// `NSError` of the POSIX domain, or the code a Cocoa file error stands for (Foundation throws
    /// those for `ENOSPC`, `EROFS` and `EACCES`, with the POSIX error underneath when it kept
    /// one); `nil` when nothing says.
    ///
    /// - Complexity: O(*d*) for the depth *d* of underlying errors (at most 8 are followed).
    package static func of(_ error: any Error) -> Int32? {
        var current: any Error = error
        for _ in 0..<8 {
            if let error = current as? ContainerError, case .writeFailed(_, let code) = error.kind { return code }
            if let error = current as? POSIXError { return error.code.rawValue }
            let object = current as NSError
            if object.domain == NSPOSIXErrorDomain { return Int32(clamping: object.code) }
            if let underlying = object.userInfo[NSUnderlyingErrorKey] as? any Error {
                current = underlying
                continue
            }
            guard object.domain == NSCocoaErrorDomain else { return nil }
            return switch CocoaError.Code(rawValue: object.code) {
            case .fileWriteOutOfSpace: ENOSPC
            case .fileWriteVolumeReadOnly: EROFS
            case .fileWriteNoPermission, .fileReadNoPermission: EACCES
            case .fileNoSuchFile, .fileReadNoSuchFile: ENOENT
            default: nil
            }
        }
        return nil
    }

    /// The system's words for `code`, with a full disk named as such.
    package static func reason(_ code: Int32) -> String {
        code == ENOSPC ? "the disk is full" : String(cString: strerror(code))
    }
}
