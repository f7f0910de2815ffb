package import Foundation

/// A file operation of a download, as the crash-safety tests see it: every change the engine
/// makes to its staging file, its journal, its validators and its destination.
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

/// Faults injected into the file operations in one folder, for the package's tests: a plan
/// sees each operation before it happens and may throw to make it fail (a full disk) or to
/// stop every operation from then on (a killed process). Outside tests no plan is installed,
/// and a check costs one lock and an empty-dictionary lookup.
package enum FileFaults {
    /// Decides the fate of one operation on `file`: return to let it happen, throw to fail it.
    package typealias Plan = @Sendable (_ operation: FileOperation, _ file: URL) throws -> Void

    private final class Registry: @unchecked Sendable {
        let lock = NSLock()
        var plans: [String: Plan] = [:]
    }

    private static let registry = Registry()

    /// Installs `plan` for the files directly in `folder` until ``remove(in:)``.
    package static func install(_ plan: @escaping Plan, in folder: URL) {
        registry.lock.lock()
        defer { registry.lock.unlock() }
        registry.plans[folder.standardizedFileURL.path] = plan
    }

    /// Removes the plan of `folder`.
    package static func remove(in folder: URL) {
        registry.lock.lock()
        defer { registry.lock.unlock() }
        registry.plans[folder.standardizedFileURL.path] = nil
    }

    /// Runs the plan of `file`'s folder, if any, for `operation`.
    ///
    /// - Throws: What the plan throws.
    static func check(_ operation: FileOperation, _ file: URL) throws {
        registry.lock.lock()
        let plan =
            registry.plans.isEmpty ? nil : registry.plans[file.deletingLastPathComponent().standardizedFileURL.path]
        registry.lock.unlock()
        try plan?(operation, file)
    }

    /// Whether the plan of `file`'s folder lets `operation` happen, for best-effort operations.
    static func allows(_ operation: FileOperation, _ file: URL) -> Bool {
        (try? check(operation, file)) != nil
    }
}
