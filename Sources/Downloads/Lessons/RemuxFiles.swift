import Foundation

/// The hidden files of a lesson being remuxed beside its destination: the MP4 being built
/// (`.NAME.partial`) and the journal of its checkpoints (`.NAME.journal`).
struct RemuxFiles: Sendable {
    let destination: URL
    let partial: URL
    let journal: URL
    /// The file system they are in.
    let fileSystem: any DownloadFileSystem

    init(destination: URL, fileSystem: any DownloadFileSystem) {
        self.destination = destination
        self.fileSystem = fileSystem
        let folder = destination.deletingLastPathComponent()
        partial = folder.appendingPathComponent(".\(destination.lastPathComponent).partial")
        journal = folder.appendingPathComponent(".\(destination.lastPathComponent).journal")
    }

    /// Every file a lesson download of `destination` may leave beside it.
    var all: [URL] { [partial, journal] }

    /// Removes the partial file and the journal, best effort.
    func remove() {
        for file in all { fileSystem.remove(file) }
    }
}
