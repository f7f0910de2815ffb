package import Foundation

/// A file operation of a download, as the crash-safety tests see it: every change the engine
/// makes to its staging file, its journal, its validators, its destination and the subtitle
/// files beside it.
package enum FileOperation: Sendable, Hashable, CustomStringConvertible {
    /// A file is created.
    case create
    /// Bytes are written (or a file is cut to a length, or rewritten whole).
    case write
    /// A file's bytes are flushed to stable storage.
    case flush
    /// The staging file is renamed over the destination.
    case rename
    /// A file is removed.
    case remove

    package var description: String {
        switch self {
        case .create: "create"
        case .write: "write"
        case .flush: "flush"
        case .rename: "rename"
        case .remove: "remove"
        }
    }
}

/// The file system a download works in, as its engine is given it: each change a download makes
/// to its files is announced to it first, and the free space a download checks is asked of it.
///
/// ``LocalFileSystem`` is the device's. The package's tests give an engine one that fails an
/// operation to model a full disk, or stops every operation from one on to model a killed
/// process, or reports the free space they choose: a fault belongs to the engine a test made,
/// never to a folder in a registry every download consults.
package protocol DownloadFileSystem: Sendable {
    /// Called before `operation` on `file`: returning lets it happen, throwing fails it with
    /// the error thrown.
    func willPerform(_ operation: FileOperation, on file: URL) throws
    /// Called once `operation` on `file` has happened, for the saves of a state file (the
    /// library's and the queue's), so that a test can stop everything right after one.
    func didPerform(_ operation: FileOperation, on file: URL)
    /// The bytes free on the volume of `folder`, or `nil` when the system does not say.
    func availableCapacity(in folder: URL) -> UInt64?
}

extension DownloadFileSystem {
    /// Does nothing: most file systems only need to hear of an operation before it happens.
    package func didPerform(_ operation: FileOperation, on file: URL) {}

    /// Whether `operation` on `file` may happen, for best-effort operations.
    package func allows(_ operation: FileOperation, on file: URL) -> Bool {
        (try? willPerform(operation, on: file)) != nil
    }

    /// Removes `file`, best effort.
    func remove(_ file: URL) {
        guard allows(.remove, on: file) else { return }
        try? FileManager.default.removeItem(at: file)
    }
}

/// The device's file system: every operation happens, and the free space is the system's.
package struct LocalFileSystem: DownloadFileSystem {
    /// The device's file system.
    package init() {}

    /// Lets every operation happen.
    package func willPerform(_ operation: FileOperation, on file: URL) {}

    /// The system's figure for `folder`'s volume (see `StorageSpace`).
    package func availableCapacity(in folder: URL) -> UInt64? {
        StorageSpace.systemFigure(in: folder)
    }
}
