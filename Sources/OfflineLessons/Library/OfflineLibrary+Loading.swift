import Downloads
import Foundation

/// Loading the saved states, recovering from a damaged state file, and saving.
extension OfflineLibrary {
    /// Loads the saved states and reconciles them with the files on disk, once; the library
    /// does so by itself on first use, and this reports what it found up front.
    ///
    /// A state file that cannot be read (damaged, cut short, of an unknown version) is moved
    /// aside, beside it, as `offline-library.json.damaged-N`, and the library rebuilds its states
    /// from the record each download keeps beside its file: completed downloads stay downloaded,
    /// and the returned ``Notice`` says so.
    ///
    /// - Returns: The notices of this load (also kept in ``notices``).
    /// - Throws: ``LibraryError``: of kind ``LibraryError/Kind/corruptedStateFile(reason:)`` when
    ///   the damaged file could not be moved aside (a read-only folder: it is left as it is, and
    ///   downloads refuse to start until the folder is writable);
    ///   ``LibraryError/Kind/newerVersion(_:)`` for a file of a newer version of the library, which
    ///   is kept for it; ``LibraryError/Kind/readFailed(reason:code:)`` when the file could not be
    ///   read just now (it is read again on the next use).
    @discardableResult
    public func load() throws(LibraryError) -> [Notice] {
        let before = notices.count
        loadIfNeeded()
        if let loadFailure { throw loadFailure }
        return Array(notices[before...])
    }

    /// Reads the saved states on first use (and again on the next use after a read that failed
    /// for the moment).
    func loadIfNeeded() {
        guard !isLoaded else { return }
        isLoaded = true  // before reading: reading saves, and a save loads first
        loadFailure = nil
        do {
            try readStateFile()
        } catch {
            if case .readFailed = error.kind {
                isLoaded = false  // read again on the next use
                loadFailure = error
                return
            }
            recover(from: error)
        }
        startBackgroundIfNeeded()
    }

    func readStateFile() throws(LibraryError) {
        // No file yet is an empty library (whose folder may hold what a kill before its first
        // save left); one that is there but cannot be read is not.
        guard let saved = try stateFile.read() else {
            removeOrphanedStagingFiles()
            return
        }
        adopt(saved)
        try? save()
        removeOrphanedStagingFiles()
        // Downloads completed before records were kept get theirs now, so that a damaged state
        // file later still finds them.
        for (id, entry) in machine.records {
            guard case .downloaded(let fileName, _) = entry.state, Self.isPlainFileName(fileName) else { continue }
            let record = directory.appendingPathComponent(".\(fileName)\(ItemRecord.suffix)")
            guard !FileManager.default.fileExists(atPath: record.path), fileSystem.allows(.write, on: record)
            else { continue }
            if let data = try? JSONEncoder().encode(ItemRecord(id: id, remoteURL: entry.remoteURL)) {
                try? StateFileWriting.write(data, to: record)
            }
        }
    }

    /// Takes in saved entries, reconciling them with the files: items this launch already
    /// changed win, a missing file is not downloaded, an interrupted download is paused, and one
    /// whose finished file is there (a kill before its state was saved) is downloaded.
    func adopt(_ items: [String: Entry]) {
        var found: [String: (fileName: String, byteCount: UInt64)] = [:]
        var missing: Set<String> = []
        var badNames: [String: String] = [:]
        // A download that completed but whose end could not be saved (a full disk at the end,
        // a kill, a pause or cancel saved as it completed) has its file, and maybe its record:
        // it is downloaded. One a delete was removing when a kill came goes with its files.
        let unsaved = items.contains { if case .downloaded = $0.value.state { false } else { true } }
        let downloading = items.contains { if case .downloading = $0.value.state { true } else { false } }
        let recorded = downloading ? recordedDownloads() : [:]
        let names =
            unsaved ? ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted() : []
        for (id, entry) in items {
            switch entry.state {
            case .downloading, .paused, .failed, .cancelled, .notDownloaded:
                if case .downloading = entry.state, let record = recorded[id], record.remoteURL == entry.remoteURL {
                    found[id] = (record.fileName, record.byteCount)
                } else if let file = completedFile(of: id, remote: entry.remoteURL, among: names) {
                    found[id] = file
                }
            case .downloaded(let fileName, _) where !Self.isPlainFileName(fileName):
                // A hand-edited or hostile state file must not point the library (and `delete`)
                // outside its folder.
                badNames[id] = fileName
            case .downloaded(let fileName, _) where !FileManager.default.fileExists(atPath: file(named: fileName).path):
                missing.insert(id)
            default:
                break
            }
        }
        perform(machine.load(items, downloaded: found, missingFiles: missing, badFileNames: badNames))
    }

    /// Moves a state file that could not be read aside and rebuilds the states from the records
    /// kept beside the downloaded files; when it cannot be moved, refuses every save instead.
    func recover(from error: LibraryError) {
        guard case .corruptedStateFile(let reason) = error.kind else {
            loadFailure = error
            return
        }
        let aside = stateFile.moveAside()
        guard let aside else {
            loadFailure = error
            return
        }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        var recovered: [String: Entry] = [:]
        var claimed: Set<String> = []
        for (id, found) in recordedDownloads() {
            claimed.insert(found.fileName)
            recovered[id] = Entry(
                remoteURL: found.remoteURL, state: .downloaded(fileName: found.fileName, byteCount: found.byteCount))
        }
        let unclaimed = names.filter {
            !$0.hasPrefix(".") && !claimed.contains($0) && !$0.hasPrefix("offline-library.json")
                && $0 != "background-transfers.json"
                && !$0.hasSuffix(".vtt")
        }
        adopt(recovered)
        notices.append(
            .stateFileRecovered(
                reason: reason, movedTo: aside, recovered: recovered.keys.sorted(), unclaimed: unclaimed.sorted()))
        try? save()
    }

    func save() throws(LibraryError) {
        try save(machine.savedRecords)
    }

    /// Saves `records` as the library's state file.
    func save(_ records: [String: Entry]) throws(LibraryError) {
        loadIfNeeded()
        if let loadFailure { throw loadFailure }
        guard isLoaded else { return }  // unreachable: a load that failed for now sets loadFailure
        try stateFile.write(records)
        if !isFolderPrepared {
            // The folder too: its backup exclusion covers every file in it (partial files,
            // records, subtitles), and on iOS files created in it take its protection class.
            fileOptions.apply(to: directory)
            isFolderPrepared = true
        }
    }

}
