import Downloads
import Foundation

/// How an offline library keeps its downloaded files on the device.
///
/// On iOS a downloaded lesson is excluded from iCloud and iTunes backups by default (it can be
/// downloaded again, and a course would fill the learner's backup), and its file is readable from
/// the first unlock after a restart until the next restart (the data protection class
/// `completeUntilFirstUserAuthentication`), so that a download finishing, or a lesson playing,
/// while the phone is locked still reads and writes its files. Elsewhere the options do nothing.
public struct OfflineFileOptions: Hashable, Sendable, Codable {
    /// A file's data protection class on iOS (Apple's `FileProtectionType`).
    public enum Protection: String, Hashable, Sendable, Codable {
        /// No protection beyond the device's.
        case none
        /// Readable only while the device is unlocked.
        case complete
        /// Readable while unlocked, and while a file opened before the lock stays open.
        case completeUnlessOpen
        /// Readable from the first unlock after a restart: the default.
        case completeUntilFirstUserAuthentication
    }

    /// Whether downloaded files are left out of backups (true by default).
    public var excludesFromBackup: Bool
    /// The data protection class of downloaded files.
    public var protection: Protection

    /// Creates options: excluded from backup, readable from the first unlock, by default.
    public init(excludesFromBackup: Bool = true, protection: Protection = .completeUntilFirstUserAuthentication) {
        self.excludesFromBackup = excludesFromBackup
        self.protection = protection
    }

    /// Applies the options to `file`, best effort (a file system that has no such attributes
    /// keeps the file as it is).
    func apply(to file: URL) {
        #if canImport(Darwin)
            var file = file
            var values = URLResourceValues()
            values.isExcludedFromBackup = excludesFromBackup
            try? file.setResourceValues(values)
        #endif
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
            let type: FileProtectionType =
                switch protection {
                case .none: .none
                case .complete: .complete
                case .completeUnlessOpen: .completeUnlessOpen
                case .completeUntilFirstUserAuthentication: .completeUntilFirstUserAuthentication
                }
            try? FileManager.default.setAttributes([.protectionKey: type], ofItemAtPath: file.path)
        #endif
    }
}
