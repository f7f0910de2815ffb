import Downloads
package import Foundation

/// The library's files: the records beside the downloads, the hidden files a download makes
/// beside its file, their names, and what is swept at a launch.
extension OfflineLibrary {
    /// The start of the name Foundation gives the temporary file of an atomic write
    /// (`Data.write(to:options: .atomic)`), in the folder written to, before it renames it.
    static let atomicSavePrefix = ".dat.nosync"
    /// How much older than the library such a temporary file must be to be another process's:
    /// file times come from a coarse clock, and a save under way may have begun a little before.
    static let atomicSaveMargin: TimeInterval = 10

    /// The downloads the records beside the files name, by item: the file's name and size, and
    /// the item's URL. Only records whose file is there count.
    ///
    /// - Complexity: O(*n*) for the *n* entries of the folder.
    func recordedDownloads() -> [String: (fileName: String, byteCount: UInt64, remoteURL: URL)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        var found: [String: (fileName: String, byteCount: UInt64, remoteURL: URL)] = [:]
        for name in names where name.hasPrefix(".") && name.hasSuffix(ItemRecord.suffix) {
            let fileName = String(name.dropFirst().dropLast(ItemRecord.suffix.count))
            guard Self.isPlainFileName(fileName),
                let data = try? Data(contentsOf: directory.appendingPathComponent(name)),
                let record = try? JSONDecoder().decode(ItemRecord.self, from: data),
                let size = (try? FileManager.default.attributesOfItem(atPath: file(named: fileName).path))?[.size]
                    as? NSNumber
            else { continue }
            found[record.id] = (fileName, size.uint64Value, record.remoteURL)
        }
        return found
    }

    /// The finished file of item `id`'s download, when one is there: `<name>.<extension>`, the
    /// name the library gives it with the extension the downloader chose. A download's file
    /// appears only once it is complete (its bytes are written beside it, hidden, until one
    /// rename), so one there is whole.
    ///
    /// - Parameter names: The folder's entries, when the caller has listed them already.
    /// - Complexity: O(*n* log *n*) for the *n* entries of the folder.
    func completedFile(of id: String, remote: URL, among names: [String]? = nil) -> (
        fileName: String, byteCount: UInt64
    )? {
        let base = (Self.fileName(for: id, remote: remote) as NSString).deletingPathExtension
        let names = names ?? (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in names.sorted() where name.hasPrefix("\(base).") && Self.isPlainFileName(name) {
            // Its sidecar subtitles are `<name>.<language>.vtt`: one extension only.
            let pathExtension = String(name.dropFirst(base.count + 1))
            guard !pathExtension.isEmpty, !pathExtension.contains("."), pathExtension != "vtt",
                let size = (try? FileManager.default.attributesOfItem(atPath: file(named: name).path))?[.size]
                    as? NSNumber
            else { continue }
            return (name, size.uint64Value)
        }
        return nil
    }

    /// Writes the record beside a downloaded file that finds it again should the state file be
    /// damaged (best effort).
    func writeRecord(of id: String, fileName: String, remote: URL) {
        let record = directory.appendingPathComponent(".\(fileName)\(ItemRecord.suffix)")
        guard fileSystem.allows(.write, on: record),
            let data = try? JSONEncoder().encode(ItemRecord(id: id, remoteURL: remote))
        else { return }
        try? StateFileWriting.write(data, to: record)
    }

    /// Removes the files a download of item `id` made beside its file: the hidden ones
    /// (`.<name>.<ext>.partial`, `.journal`, `.validators`, `.lock`) and sidecar subtitles
    /// (`<name>.<language>.vtt`).
    func removeFiles(of id: String, remote: URL) {
        let base = (Self.fileName(for: id, remote: remote) as NSString).deletingPathExtension
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in names
        where name.hasPrefix(".\(base).") || (name.hasPrefix("\(base).") && name.hasSuffix(".vtt")) {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        }
    }

    /// Removes the folders of bodies background transfers staged for item `id`'s download
    /// (`.<name>.<ext>.staged`).
    func removeStagedBodies(of id: String, remote: URL) {
        let base = (Self.fileName(for: id, remote: remote) as NSString).deletingPathExtension
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in names where name.hasPrefix(".\(base).") && name.hasSuffix(".staged") {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        }
    }

    /// Removes the hidden files of downloads that cannot resume: those of no item, or of an item
    /// that is downloaded, cancelled or not downloaded (a partial file an interruption left, a
    /// lock, a journal). Those of paused, failed and interrupted items are kept for the resume.
    /// The temporary file of a save that a kill interrupted goes too: the library's own at
    /// once, a download's (Foundation's atomic writes) when it is older than the library by
    /// `atomicSaveMargin`.
    ///
    /// - Complexity: O(*n* × *m*) for *n* folder entries and *m* resumable items.
    func removeOrphanedStagingFiles() {
        let resumable = machine.records.compactMap { id, entry -> String? in
            switch entry.state {
            case .paused, .failed, .downloading:
                return (Self.fileName(for: id, remote: entry.remoteURL) as NSString).deletingPathExtension
            default:
                return nil
            }
        }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in names where name.hasPrefix(".") {
            let file = directory.appendingPathComponent(name)
            if name == stateFile.temporaryFile.lastPathComponent
                || name.hasSuffix("\(ItemRecord.suffix).saving")
            {
                // The library's own save that a kill stopped before its rename.
                try? FileManager.default.removeItem(at: file)
            } else if name.hasPrefix(Self.atomicSavePrefix) {
                // A download's atomic save (validators, a journal rewritten, subtitles) that a
                // kill stopped; one under way in this process is younger than the margin.
                let attributes = try? FileManager.default.attributesOfItem(atPath: file.path)
                if let modified = attributes?[.modificationDate] as? Date,
                    modified < createdAt.addingTimeInterval(-Self.atomicSaveMargin)
                {
                    try? FileManager.default.removeItem(at: file)
                }
            }
        }
        for name in names where name.hasPrefix(".") && StagingCleanup.suffixes.contains(where: name.hasSuffix) {
            guard !resumable.contains(where: { StagingCleanup.isStaging(name, stem: $0) }) else { continue }
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        }
    }

    /// Whether `name` names a file directly inside the library's folder: one non-empty path
    /// component, not `.` or `..`, without separators or NUL.
    static func isPlainFileName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.contains("/") && !name.contains("\\")
            && !name.contains("\u{0}")
    }

    /// A file name for an item: a readable prefix of its id, 128 bits of the SHA-256 of all of
    /// it (ids that differ only in case stay apart on case-insensitive volumes, and a catalog
    /// cannot craft two ids that share a file, as it could with a 64-bit FNV hash), and the
    /// remote extension when it is short and plain (`bin` otherwise): every character is from
    /// `[a-z0-9_.-]`.
    package static func fileName(for id: String, remote: URL) -> String {
        let readable = String(
            id.unicodeScalars.prefix(40).map { scalar -> Character in
                switch scalar {
                case "a"..."z", "0"..."9", "-": Character(scalar)
                case "A"..."Z": Character(String(scalar).lowercased())
                default: "_"
                }
            })
        let hash = SHA256.hexDigest(id.utf8).prefix(32)
        // The remote's extension only when it is 1–8 ASCII letters or digits: a URL can carry a
        // NUL, a separator or a bidirectional override there, none of which belongs in a file name.
        let remoteExtension = remote.pathExtension.lowercased()
        let isPlain =
            (1...8).contains(remoteExtension.utf8.count)
            && remoteExtension.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) }
        let pathExtension = isPlain ? remoteExtension : "bin"
        return "\(readable)-\(hash).\(pathExtension)"
    }
}
