import Foundation

/// The hidden files a download to a destination keeps beside it for a resume, found by name.
///
/// A download to `lesson.mp4` keeps `.lesson.mp4.partial`, `.lesson.mp4.journal`,
/// `.lesson.mp4.validators` and `.lesson.mp4.lock`; one whose media decides the extension
/// (`downloadLesson` writes `lesson.m4a` for sound alone) keeps them under that name, so every
/// extension of the destination's stem is matched.
enum StagingCleanup {
    /// The suffixes of the files a download keeps for a resume.
    static let suffixes = [".partial", ".journal", ".validators", ".lock"]

    /// The staging files of downloads to `destination` (any extension) that are in its folder.
    ///
    /// - Complexity: O(*n*) for the *n* entries of the folder.
    static func files(for destination: URL) -> [URL] {
        let folder = destination.deletingLastPathComponent()
        let stem = destination.deletingPathExtension().lastPathComponent
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { name in
            name.hasPrefix(".\(stem).") && suffixes.contains { name.hasSuffix($0) }
        }.map { folder.appendingPathComponent($0) }
    }

    /// Removes the staging files of downloads to `destination`, best effort.
    static func remove(for destination: URL) {
        for file in files(for: destination) { StagingFiles.removeIfAllowed(file) }
    }

    /// Whether a download that failed with `category` could resume from what it kept: every
    /// failure of a source that may come back (a segment missing for a while, a portal's page
    /// until the Wi-Fi is signed in to, a server error) keeps it; a lesson the library cannot
    /// save at all (``DownloadError/Category/unsupported``) and a cancel do not.
    static func keepsFiles(after category: DownloadError.Category) -> Bool {
        switch category {
        case .unsupported, .cancelled: false
        case .offline, .server, .notFound, .accessDenied, .notMedia, .storageFull, .notWritable, .paused, .other: true
        }
    }
}
