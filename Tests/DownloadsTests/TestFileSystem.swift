import Downloads
import Foundation

/// A file system for the crash and disk tests: `plan` sees each file operation of a download
/// before it happens and may throw to fail it (a full disk) or to stop every operation from then
/// on (a killed process); `freeSpace`, when set, is the free space every folder reports.
struct TestFileSystem: DownloadFileSystem {
    var plan: @Sendable (_ operation: FileOperation, _ file: URL) throws -> Void = { _, _ in }
    var freeSpace: UInt64?

    func willPerform(_ operation: FileOperation, on file: URL) throws {
        try plan(operation, file)
    }

    func availableCapacity(in folder: URL) -> UInt64? {
        freeSpace ?? LocalFileSystem().availableCapacity(in: folder)
    }
}
