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
        guard let saved = try store.stateFile.read() else {
            store.sweep(keepingResumable: machine.records)
            return
        }
        adopt(saved)
        saveReporting()
        store.sweep(keepingResumable: machine.records)
        store.writeMissingRecords(of: machine.records)
    }

    /// Takes in saved entries, reconciled with the files by the store: items this launch
    /// already changed win, a missing file is not downloaded, an interrupted download is
    /// paused, and one whose finished file is there (a kill before its state was saved) is
    /// downloaded.
    func adopt(_ items: [String: Entry]) {
        let found = store.reconcile(items)
        perform(
            machine.load(
                items, downloaded: found.downloaded, missingFiles: found.missingFiles,
                badFileNames: found.badFileNames))
    }

    /// Moves a state file that could not be read aside and rebuilds the states from the records
    /// kept beside the downloaded files; when it cannot be moved, refuses every save instead.
    func recover(from error: LibraryError) {
        guard case .corruptedStateFile(let reason) = error.kind, let recovery = store.recover() else {
            loadFailure = error
            return
        }
        adopt(recovery.records)
        notices.append(
            .stateFileRecovered(
                reason: reason, movedTo: recovery.movedTo, recovered: recovery.records.keys.sorted(),
                unclaimed: recovery.unclaimed))
        saveReporting()
    }

    func save() throws(LibraryError) {
        try save(machine.savedRecords)
    }

    /// Saves, and tells the machine how it went: a failure is ``saveFailure`` and is saved again
    /// with the next change.
    func saveReporting() {
        do {
            try save()
            send(.saved(nil))
        } catch {
            send(.saved(error))
        }
    }

    /// Saves `records` as the library's state file.
    func save(_ records: [String: Entry]) throws(LibraryError) {
        loadIfNeeded()
        if let loadFailure { throw loadFailure }
        guard isLoaded else { return }  // unreachable: a load that failed for now sets loadFailure
        try store.stateFile.write(records)
        if !isFolderPrepared {
            // The folder too: its backup exclusion covers every file in it (partial files,
            // records, subtitles), and on iOS files created in it take its protection class.
            fileOptions.apply(to: directory)
            isFolderPrepared = true
        }
    }

}
