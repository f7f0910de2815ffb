import Downloads
import Foundation

/// The offline library's persistence: its state file, the record kept beside each downloaded
/// file, the names of a download's files, what a launch finds on disk, the recovery from a
/// damaged state file and the sweep of what an interrupted run left.
///
/// As Media3 keeps its `DownloadIndex` apart from the `DownloadManager` that drives the
/// downloads, the store knows what is on disk and nothing of what the library does with it:
/// ``OfflineLibrary`` asks it, and feeds what it finds to ``LibraryMachine``.
struct LibraryStore: Sendable {
    /// The folder holding the downloads, their records and the state file.
    let directory: URL
    /// The file system writes go through (so that a test can fail them).
    let fileSystem: any DownloadFileSystem
    /// When the library was created: an atomic save's temporary file older than this (by
    /// ``atomicSaveMargin``) was left by an earlier process.
    let createdAt: Date
    /// The state file.
    let stateFile: LibraryStateFile

    /// The start of the name Foundation gives the temporary file of an atomic write
    /// (`Data.write(to:options: .atomic)`), in the folder written to, before it renames it.
    static let atomicSavePrefix = ".dat.nosync"
    /// How much older than the library such a temporary file must be to be another process's:
    /// file times come from a coarse clock, and a save under way may have begun a little before.
    static let atomicSaveMargin: TimeInterval = 10

    /// The store of the library in `directory`.
    init(directory: URL, fileSystem: any DownloadFileSystem, createdAt: Date = Date()) {
        self.directory = directory
        self.fileSystem = fileSystem
        self.createdAt = createdAt
        stateFile = LibraryStateFile(in: directory, fileSystem: fileSystem)
    }

    /// What a downloaded file's hidden record beside it (`.NAME.item`) says: whose download it
    /// is, so that a library whose state file was damaged finds its downloads again.
    struct ItemRecord: Codable {
        static let suffix = ".item"
        var id: String
        var remoteURL: URL
    }

    /// A download a record beside its file names.
    struct RecordedDownload: Sendable, Hashable {
        var fileName: String
        var byteCount: UInt64
        var remoteURL: URL
    }

    /// A finished file found in the folder.
    typealias FoundFile = (fileName: String, byteCount: UInt64)

    // MARK: The files of a download

    /// The files of item `id`'s download among a folder's `names`: the one place that says
    /// which names are a download's.
    struct DownloadFiles: Sendable, Hashable {
        /// Its finished file, `<stem>.<extension>` (the extension the downloader chose), if there.
        var finished: String?
        /// Its hidden files: `.<stem>.<extension>.partial`, `.journal`, `.validators`, `.lock`,
        /// the `.staged` folder of what background transfers brought, and the `.item` record.
        var hidden: [String]
        /// The folders of bodies background transfers staged (`.<stem>.<extension>.staged`).
        var staged: [String]
        /// Its sidecar subtitles, `<stem>.<language>.vtt`.
        var sidecars: [String]
    }

    /// The files of item `id`'s download to a file named for `remote`, among `names` (the
    /// folder's entries).
    ///
    /// - Complexity: O(*n* log *n*) for the *n* names.
    static func files(of id: String, remote: URL, among names: [String]) -> DownloadFiles {
        let stem = (fileName(for: id, remote: remote) as NSString).deletingPathExtension
        var files = DownloadFiles(finished: nil, hidden: [], staged: [], sidecars: [])
        for name in names.sorted() {
            if name.hasPrefix(".\(stem).") {
                files.hidden.append(name)
                if name.hasSuffix(".staged") { files.staged.append(name) }
            } else if name.hasPrefix("\(stem).") && isPlainFileName(name) {
                let pathExtension = name.dropFirst(stem.count + 1)
                if name.hasSuffix(".vtt") {
                    files.sidecars.append(name)
                } else if files.finished == nil, !pathExtension.isEmpty, !pathExtension.contains(".") {
                    // One extension only: `<stem>.<language>.vtt` is a sidecar's.
                    files.finished = name
                }
            }
        }
        return files
    }

    /// The folder's entries (none when it cannot be listed).
    func names() -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
    }

    /// The URL of `name` in the folder.
    func file(named name: String) -> URL {
        directory.appendingPathComponent(name)
    }

    /// The size of the file `name` in the folder, when it is there.
    func size(of name: String) -> UInt64? {
        ((try? FileManager.default.attributesOfItem(atPath: file(named: name).path))?[.size] as? NSNumber)?
            .uint64Value
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
    static func fileName(for id: String, remote: URL) -> String {
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

    // MARK: Records

    /// The downloads the records beside the files name, by item: the file's name and size, and
    /// the item's URL. Only records whose file is there count.
    ///
    /// - Complexity: O(*n*) for the *n* entries of the folder.
    func recordedDownloads(among names: [String]? = nil) -> [String: RecordedDownload] {
        var found: [String: RecordedDownload] = [:]
        for name in names ?? self.names() where name.hasPrefix(".") && name.hasSuffix(ItemRecord.suffix) {
            let fileName = String(name.dropFirst().dropLast(ItemRecord.suffix.count))
            guard Self.isPlainFileName(fileName),
                let data = try? Data(contentsOf: file(named: name)),
                let record = try? JSONDecoder().decode(ItemRecord.self, from: data),
                let size = size(of: fileName)
            else { continue }
            found[record.id] = RecordedDownload(fileName: fileName, byteCount: size, remoteURL: record.remoteURL)
        }
        return found
    }

    /// The finished file of item `id`'s download, when one is there. A download's file appears
    /// only once it is complete (its bytes are written beside it, hidden, until one rename), so
    /// one there is whole.
    ///
    /// - Complexity: O(*n* log *n*) for the *n* entries of the folder.
    func completedFile(of id: String, remote: URL, among names: [String]) -> FoundFile? {
        guard let name = Self.files(of: id, remote: remote, among: names).finished, let size = size(of: name) else {
            return nil
        }
        return (name, size)
    }

    /// Writes the record beside a downloaded file that finds it again should the state file be
    /// damaged (best effort), unless `onlyIfMissing` and one is there.
    func writeRecord(of id: String, fileName: String, remote: URL, onlyIfMissing: Bool = false) {
        let record = file(named: ".\(fileName)\(ItemRecord.suffix)")
        guard !onlyIfMissing || !FileManager.default.fileExists(atPath: record.path),
            fileSystem.allows(.write, on: record),
            let data = try? JSONEncoder().encode(ItemRecord(id: id, remoteURL: remote))
        else { return }
        try? StateFileWriting.write(data, to: record)
    }

    /// Gives the downloads of `records` that completed before records were kept theirs, so
    /// that a damaged state file later still finds them.
    func writeMissingRecords(of records: [String: LibraryMachine.Record]) {
        for (id, entry) in records {
            guard case .downloaded(let fileName, _) = entry.state, Self.isPlainFileName(fileName) else { continue }
            writeRecord(of: id, fileName: fileName, remote: entry.remoteURL, onlyIfMissing: true)
        }
    }

    // MARK: What a launch finds

    /// What the folder says of saved records, for ``LibraryMachine/load(_:downloaded:missingFiles:badFileNames:)``.
    struct Reconciliation: Sendable {
        /// Unfinished items whose finished file is there (a kill before their end was saved).
        var downloaded: [String: FoundFile] = [:]
        /// Downloaded items whose file is gone.
        var missingFiles: Set<String> = []
        /// Downloaded items whose saved name is not a file in the folder.
        var badFileNames: [String: String] = [:]
    }

    /// Reconciles saved `records` with the files: an unfinished item whose finished file is
    /// there (its record, or its name, says so) is downloaded; a downloaded one whose file is
    /// gone is not.
    ///
    /// - Complexity: O(*r* × *n* log *n*) for *r* records and *n* folder entries.
    func reconcile(_ records: [String: LibraryMachine.Record]) -> Reconciliation {
        var found = Reconciliation()
        // A download that completed but whose end could not be saved (a full disk at the end,
        // a kill, a pause or cancel saved as it completed) has its file, and maybe its record.
        let unsaved = records.values.contains { if case .downloaded = $0.state { false } else { true } }
        let downloading = records.values.contains { if case .downloading = $0.state { true } else { false } }
        let names = unsaved ? names() : []
        let recorded = downloading ? recordedDownloads(among: names) : [:]
        for (id, entry) in records {
            switch entry.state {
            case .downloading, .paused, .failed, .cancelled, .notDownloaded:
                if case .downloading = entry.state, let record = recorded[id], record.remoteURL == entry.remoteURL {
                    found.downloaded[id] = (record.fileName, record.byteCount)
                } else if let file = completedFile(of: id, remote: entry.remoteURL, among: names) {
                    found.downloaded[id] = file
                }
            case .downloaded(let fileName, _) where !Self.isPlainFileName(fileName):
                // A hand-edited or hostile state file must not point the library (and `delete`)
                // outside its folder.
                found.badFileNames[id] = fileName
            case .downloaded(let fileName, _) where !FileManager.default.fileExists(atPath: file(named: fileName).path):
                found.missingFiles.insert(id)
            default:
                break
            }
        }
        return found
    }

    /// What the records beside the files say when the state file was damaged.
    struct Recovery: Sendable {
        /// Where the damaged state file was moved.
        var movedTo: URL
        /// The downloads the records name, as downloaded items.
        var records: [String: LibraryMachine.Record]
        /// The visible files no record claims (the app's to look at: nothing is deleted).
        var unclaimed: [String]
    }

    /// Moves the damaged state file aside and rebuilds the downloaded items from the records
    /// beside their files; `nil` when the file could not be moved (it is then left as it is).
    ///
    /// - Complexity: O(*n*) for the *n* entries of the folder.
    func recover() -> Recovery? {
        guard let aside = stateFile.moveAside() else { return nil }
        let names = names()
        var records: [String: LibraryMachine.Record] = [:]
        var claimed: Set<String> = []
        for (id, found) in recordedDownloads(among: names) {
            claimed.insert(found.fileName)
            records[id] = LibraryMachine.Record(
                remoteURL: found.remoteURL, state: .downloaded(fileName: found.fileName, byteCount: found.byteCount))
        }
        let unclaimed = names.filter {
            !$0.hasPrefix(".") && !claimed.contains($0) && !$0.hasPrefix("offline-library.json")
                && $0 != "background-transfers.json" && !$0.hasSuffix(".vtt")
        }
        return Recovery(movedTo: aside, records: records, unclaimed: unclaimed.sorted())
    }

    // MARK: Removing

    /// Removes the files a download of item `id` made beside its file: the hidden ones and the
    /// sidecar subtitles (``DownloadFiles``).
    func removeFiles(of id: String, remote: URL) {
        let files = Self.files(of: id, remote: remote, among: names())
        for name in files.hidden + files.sidecars { try? FileManager.default.removeItem(at: file(named: name)) }
    }

    /// Removes the folders of bodies background transfers staged for item `id`'s download.
    func removeStagedBodies(of id: String, remote: URL) {
        for name in Self.files(of: id, remote: remote, among: names()).staged {
            try? FileManager.default.removeItem(at: file(named: name))
        }
    }

    /// Removes a downloaded file, when `name` is one in the folder.
    func removeDownloaded(_ name: String) {
        guard Self.isPlainFileName(name) else { return }
        try? FileManager.default.removeItem(at: file(named: name))
    }

    /// Removes the hidden files of downloads that cannot resume: those of no item, or of an item
    /// of `records` that is downloaded, cancelled or not downloaded (a partial file an
    /// interruption left, a lock, a journal). Those of paused, failed and interrupted items are
    /// kept for the resume. The temporary file of a save that a kill interrupted goes too: the
    /// library's own at once, a download's (Foundation's atomic writes) when it is older than
    /// the library by ``atomicSaveMargin``.
    ///
    /// - Complexity: O(*m* × *n* log *n*) for *n* folder entries and *m* resumable items.
    func sweep(keepingResumable records: [String: LibraryMachine.Record]) {
        let names = names()
        // What a resumable item's next run resumes from: its hidden files, as
        // ``files(of:remote:among:)`` names them (the one definition of a download's files).
        var resumable: Set<String> = []
        for (id, entry) in records {
            switch entry.state {
            case .paused, .failed, .downloading:
                resumable.formUnion(Self.files(of: id, remote: entry.remoteURL, among: names).hidden)
            default:
                break
            }
        }
        for name in names where name.hasPrefix(".") {
            let file = file(named: name)
            if name == stateFile.temporaryFile.lastPathComponent || name.hasSuffix("\(ItemRecord.suffix).saving") {
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
            guard !resumable.contains(name) else { continue }
            try? FileManager.default.removeItem(at: file(named: name))
        }
    }
}
