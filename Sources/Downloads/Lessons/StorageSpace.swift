import Foundation

/// The free space of a destination's volume, checked before a download writes its first byte.
///
/// On Apple platforms it is the capacity available for important resources (what the system
/// frees for a download the user asked for); elsewhere `statvfs(2)`'s space available to
/// unprivileged users. A download asks its engine's ``DownloadFileSystem``, whose local one
/// asks here.
package enum StorageSpace {
    /// The bytes free on the volume of `folder`, or `nil` when the system does not say (a folder
    /// that does not exist yet included).
    static func systemFigure(in folder: URL) -> UInt64? {
        var importantUsage: Int64?
        #if os(iOS) || os(macOS) || os(visionOS)
            importantUsage =
                (try? folder.resourceValues(forKeys: [.volumeAvailableCapacityForImportantUsageKey]))?
                .volumeAvailableCapacityForImportantUsage
        #endif
        return figure(importantUsage: importantUsage) {
            var status = statvfs()
            guard statvfs(folder.path, &status) == 0 else { return nil }
            return UInt64(status.f_bavail) &* UInt64(status.f_frsize)
        }
    }

    /// The free space to go by: the capacity for important usage where the system reports one
    /// (Apple platforms; the value is an `Int64`, and a negative one is taken as none free), else
    /// the file system's own figure, read only then.
    ///
    /// - Complexity: O(1).
    package static func figure(importantUsage: Int64?, fileSystemFree: () -> UInt64?) -> UInt64? {
        if let importantUsage { return UInt64(max(importantUsage, 0)) }
        return fileSystemFree()
    }

    /// The free space a download still needs: the source's size with 2% and 1 MiB to spare
    /// (the MP4's index and the journal), less what is already written; saturating, so a
    /// playlist's absurd sizes cannot overflow it.
    ///
    /// - Complexity: O(1).
    package static func room(forSource bytes: UInt64, written: UInt64) -> UInt64 {
        let (withMargin, overflow) = bytes.addingReportingOverflow(bytes / 50)
        let (total, overflowAgain) = withMargin.addingReportingOverflow(1 << 20)
        guard !overflow, !overflowAgain else { return UInt64.max }
        return total > written ? total - written : 0
    }

    /// Checks that `needed` bytes fit in `folder`'s volume.
    ///
    /// - Throws: ``DownloadError`` of kind
    ///   ``DownloadError/Kind/insufficientStorage(needed:available:)``.
    static func check(
        _ needed: UInt64, in folder: URL, for destination: URL, fileSystem: any DownloadFileSystem
    ) throws(DownloadError) {
        guard let available = fileSystem.availableCapacity(in: folder), available < needed else { return }
        throw DownloadError(.insufficientStorage(needed: needed, available: available), path: destination.path)
    }
}
