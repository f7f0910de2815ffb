public import Foundation

/// Why the progress store could not read or write a lesson's progress, naming the lesson and
/// the file.
public struct ProgressStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Hashable, Sendable {
        /// The file exists but cannot be decoded; it is left in place (and set aside on the next
        /// save or merge), never silently replaced.
        case corrupted(ProgressFormat.DecodingFailure)
        /// The file belongs to another lesson, named here (two identifiers share a file name).
        case lessonMismatch(found: String)
        /// The file system refused a read or a write: the operation and its message.
        case fileSystem(operation: String, reason: String)
    }

    /// What went wrong.
    public var kind: Kind
    /// The lesson concerned, when known.
    public var lessonID: String?
    /// The file's name in the store's folder (the folder itself for a listing failure).
    public var file: String

    /// Creates an error.
    public init(_ kind: Kind, lessonID: String?, file: String) {
        self.kind = kind
        self.lessonID = lessonID
        self.file = file
    }

    /// A sentence naming the lesson or file and what went wrong.
    public var description: String {
        switch kind {
        case .corrupted(let failure):
            "Progress of \(lessonID.map { "lesson '\($0)'" } ?? "an unknown lesson") in \(file): \(failure)"
        case .lessonMismatch(let found):
            "The file \(file) holds lesson '\(found)', not '\(lessonID ?? "?")'"
        case .fileSystem(let operation, let reason):
            "Could not \(operation) \(file): \(reason)"
        }
    }
}

/// Watched progress per lesson, kept on disk so it survives relaunches.
///
/// Each lesson has its own file in the store's directory, so a damaged file costs at most that
/// lesson, and its error says which. Every write goes to a temporary file that then replaces the
/// old one in a single rename: a crash mid-write leaves the previous state.
///
/// <!-- example: progress-store -->
/// ```swift
/// let store = ProgressStore(directory: applicationSupport.appending(path: "Progress"))
/// try await store.merge(tracker.progress, into: lesson.id)
/// let saved = try await store.progress(for: lesson.id)
/// ```
public actor ProgressStore {
    /// Lesson progress loaded from every file, and what could not be loaded.
    public struct Contents: Sendable {
        /// The readable progress, by lesson identifier.
        public var progress: [String: WatchProgress]
        /// One error per file that could not be read; the other lessons are unaffected.
        public var failures: [ProgressStoreError]
    }

    /// The folder that holds the progress files.
    public nonisolated let directory: URL
    private static let fileSuffix = ".progress.json"

    /// The file form of one lesson: its identifier beside its progress document.
    struct LessonFile: Codable {
        var lessonID: String
        var progress: ProgressFormat.Document
    }

    /// The part of a lesson file read first, to check the version before anything else.
    struct LessonFileHeader: Decodable {
        var lessonID: String?
        var progress: ProgressFormat.Header
    }

    /// Creates a store in `directory`, which is created on the first write.
    public init(directory: URL) {
        self.directory = directory
    }

    /// The stored progress of a lesson, or `nil` when none is stored.
    ///
    /// - Throws: ``ProgressStoreError`` naming `lessonID` when the file exists but cannot be read or
    ///   decoded.
    public func progress(for lessonID: String) throws(ProgressStoreError) -> WatchProgress? {
        let url = fileURL(for: lessonID)
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        let foundID: String
        let progress: WatchProgress
        do {
            (foundID, progress) = try read(url)
        } catch {
            // The file could not say whose it is; the caller asked for this lesson's.
            var named = error
            if named.lessonID == nil { named.lessonID = lessonID }
            throw named
        }
        guard foundID == lessonID else {
            throw ProgressStoreError(.lessonMismatch(found: foundID), lessonID: lessonID, file: url.lastPathComponent)
        }
        return progress
    }

    /// Stores `progress` as the lesson's, replacing what was stored.
    ///
    /// A corrupted file in the way is first renamed aside (`.<name>.corrupt-<UUID>`), not deleted.
    ///
    /// - Throws: ``ProgressStoreError`` of kind ``ProgressStoreError/Kind/fileSystem(operation:reason:)``
    ///   when the write fails; the previous file is then unchanged.
    public func save(_ progress: WatchProgress, for lessonID: String) throws(ProgressStoreError) {
        let url = fileURL(for: lessonID)
        if FileManager.default.fileExists(atPath: url.path) {
            do {
                _ = try read(url)
            } catch {
                switch error.kind {
                case .corrupted, .lessonMismatch:
                    // A damaged file, or another lesson's file under this name: keep it, with its
                    // data, beside ours.
                    try setAside(url)
                case .fileSystem:
                    throw error
                }
            }
        }
        try write(progress, for: lessonID, to: url)
    }

    /// Merges `progress` into the lesson's stored progress and stores the result.
    ///
    /// Merging (a CRDT join) rather than replacing means two trackers of the same lesson, or a
    /// sync that races local playback, never lose each other's coverage.
    ///
    /// A stored file that cannot be decoded, or that belongs to another lesson, is renamed aside
    /// (`.<name>.corrupt-<UUID>`, never deleted) as ``save(_:for:)`` does, and `progress` is
    /// stored alone: a damaged file must not stop a learner's new progress from being saved on
    /// every pause.
    ///
    /// - Returns: The merged progress now stored.
    /// - Throws: ``ProgressStoreError`` of kind ``ProgressStoreError/Kind/fileSystem(operation:reason:)``
    ///   when the file cannot be read, set aside or written; the previous file is then unchanged.
    @discardableResult
    public func merge(_ progress: WatchProgress, into lessonID: String) throws(ProgressStoreError) -> WatchProgress {
        let url = fileURL(for: lessonID)
        var merged = progress
        do {
            if let stored = try self.progress(for: lessonID) { merged = stored.merged(with: progress) }
        } catch {
            switch error.kind {
            case .corrupted, .lessonMismatch: try setAside(url)
            case .fileSystem: throw error
            }
        }
        try write(merged, for: lessonID, to: url)
        return merged
    }

    /// Deletes the lesson's stored progress, if any.
    ///
    /// - Throws: ``ProgressStoreError`` of kind ``ProgressStoreError/Kind/fileSystem(operation:reason:)`` when
    ///   the file cannot be removed.
    public func removeProgress(for lessonID: String) throws(ProgressStoreError) {
        let url = fileURL(for: lessonID)
        guard FileManager.default.fileExists(atPath: url.path) else { return }
        do {
            try FileManager.default.removeItem(at: url)
        } catch {
            throw ProgressStoreError(
                .fileSystem(operation: "remove", reason: error.localizedDescription), lessonID: lessonID,
                file: url.lastPathComponent)
        }
    }

    /// Loads every stored lesson, reporting each unreadable file separately.
    ///
    /// - Complexity: O(total size of the files).
    public func loadAll() -> Contents {
        var contents = Contents(progress: [:], failures: [])
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            if FileManager.default.fileExists(atPath: directory.path) {
                contents.failures.append(
                    ProgressStoreError(
                        .fileSystem(operation: "list", reason: error.localizedDescription), lessonID: nil,
                        file: directory.path))
            }
            return contents
        }
        for name in names.sorted() where name.hasSuffix(Self.fileSuffix) && !name.hasPrefix(".") {
            do {
                let (lessonID, progress) = try read(directory.appendingPathComponent(name))
                contents.progress[lessonID] = progress
            } catch {
                contents.failures.append(error)
            }
        }
        return contents
    }

    // MARK: Files

    /// The file of a lesson: a readable prefix of the identifier plus a hash of all of it.
    ///
    /// The hash keeps identifiers that differ only in case apart on case-insensitive file
    /// systems (APFS by default) and keeps long identifiers under file-name limits.
    nonisolated func fileURL(for lessonID: String) -> URL {
        directory.appendingPathComponent(Self.fileName(for: lessonID))
    }

    static func fileName(for lessonID: String) -> String {
        let readable = lessonID.unicodeScalars.prefix(48).map { scalar -> String in
            switch scalar {
            case "a"..."z", "0"..."9", "-": String(scalar)
            case "A"..."Z": String(scalar).lowercased()
            default: "_"
            }
        }
        let hash = String(fnv1a64(Array(lessonID.utf8)), radix: 16)
        return readable.joined() + "-" + String(repeating: "0", count: 16 - hash.count) + hash + fileSuffix
    }

    /// FNV-1a, 64-bit: a stable hash (unlike `Hasher`, which is seeded per process).
    static func fnv1a64(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return hash
    }

    private func read(_ url: URL) throws(ProgressStoreError) -> (String, WatchProgress) {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw ProgressStoreError(
                .fileSystem(operation: "read", reason: error.localizedDescription), lessonID: nil,
                file: url.lastPathComponent)
        }
        do {
            let file = try ProgressFormat.decodeDocument(
                data, as: LessonFile.self, header: \.progress, headerType: LessonFileHeader.self)
            return (file.lessonID, try file.progress.progress())
        } catch {
            // Name the lesson when the file can still say it; a file refused for its size is
            // not decoded at all.
            var lessonID: String?
            switch error.kind {
            case .corrupted, .unsupportedVersion:
                lessonID = (try? JSONDecoder().decode(LessonFileHeader.self, from: data))?.lessonID
            case .tooManyIntervals, .tooLarge, .tooManyDevices:
                lessonID = nil
            }
            throw ProgressStoreError(.corrupted(error), lessonID: lessonID, file: url.lastPathComponent)
        }
    }

    private func write(_ progress: WatchProgress, for lessonID: String, to url: URL) throws(ProgressStoreError) {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let file = LessonFile(lessonID: lessonID, progress: ProgressFormat.Document(progress))
            // `.atomic` writes a temporary file beside the target and renames it over the target.
            try ProgressFormat.encodeSorted(file).write(to: url, options: .atomic)
        } catch {
            throw ProgressStoreError(
                .fileSystem(operation: "write", reason: error.localizedDescription), lessonID: lessonID,
                file: url.lastPathComponent)
        }
    }

    private func setAside(_ url: URL) throws(ProgressStoreError) {
        let aside = url.deletingLastPathComponent().appendingPathComponent(
            ".\(url.lastPathComponent).corrupt-\(UUID().uuidString)")
        do {
            if FileManager.default.fileExists(atPath: aside.path) {
                try FileManager.default.removeItem(at: aside)
            }
            try FileManager.default.moveItem(at: url, to: aside)
        } catch {
            throw ProgressStoreError(
                .fileSystem(operation: "set aside", reason: error.localizedDescription), lessonID: nil,
                file: url.lastPathComponent)
        }
    }
}
