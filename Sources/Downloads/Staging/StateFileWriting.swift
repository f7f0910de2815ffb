package import Foundation

/// How the library and the queue save their small state files: the bytes go to a hidden
/// temporary file of a name of their own beside the file (`.NAME.saving`), which `rename(2)`
/// then puts in place, so a reader (or a relaunch after a kill) finds the old file or the new
/// one, never a torn one. A kill between the two leaves the temporary file, which its owner
/// removes at its next start (``removeLeftover(of:)``): the name is the owner's alone, so no
/// other writer's save under way is touched.
package enum StateFileWriting {
    /// The temporary file a save of `file` writes first.
    package static func temporaryFile(of file: URL) -> URL {
        file.deletingLastPathComponent().appendingPathComponent(".\(file.lastPathComponent).saving")
    }

    /// Writes `data` to `file` atomically, creating its folder when missing.
    ///
    /// - Throws: the file system's error (a `CocoaError` or a `POSIXError` with its `errno`).
    package static func write(_ data: Data, to file: URL) throws {
        try FileManager.default.createDirectory(
            at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        let temporary = temporaryFile(of: file)
        try data.write(to: temporary)
        guard rename(temporary.path, file.path) == 0 else {
            let code = errno
            try? FileManager.default.removeItem(at: temporary)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
    }

    /// Moves a damaged `file` aside, beside it, as `NAME.damaged-N` (the first free N up to
    /// 1,000), and returns where; `nil` when it could not be moved (it is then left as it is).
    package static func moveAside(_ file: URL) -> URL? {
        let directory = file.deletingLastPathComponent()
        for number in 1...1_000 {
            let candidate = directory.appendingPathComponent("\(file.lastPathComponent).damaged-\(number)")
            guard !FileManager.default.fileExists(atPath: candidate.path) else { continue }
            return (try? FileManager.default.moveItem(at: file, to: candidate)) != nil ? candidate : nil
        }
        return nil
    }

    /// Removes what a save of `file` that a kill interrupted left.
    package static func removeLeftover(of file: URL) {
        try? FileManager.default.removeItem(at: temporaryFile(of: file))
    }
}
