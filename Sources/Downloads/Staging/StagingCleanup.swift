package import Foundation

/// The hidden files a download to a destination keeps beside it for a resume, found by name.
///
/// A download to `lesson.mp4` keeps `.lesson.mp4.partial`, `.lesson.mp4.journal`,
/// `.lesson.mp4.validators` and `.lesson.mp4.lock`, and the folder `.lesson.mp4.staged` of what
/// background transfers brought (``StagedBodies``); one whose media decides the extension
/// (`downloadLesson` writes `lesson.m4a` for sound alone) keeps them under that name, so every
/// one-word extension of the destination's stem is matched (`.lesson.m4a.journal`, not
/// `.lesson.hd.mp4.journal`, which is another destination's).
package enum StagingCleanup {
    /// The suffixes of the files a download keeps for a resume.
    package static let suffixes = [".partial", ".journal", ".validators", ".lock", ".staged"]

    /// Whether `name` is `.<stem>.<extension><suffix>` or `.<stem><suffix>`, with a one-word
    /// extension of letters and digits.
    package static func isStaging(_ name: String, stem: String) -> Bool {
        guard let suffix = suffixes.first(where: { name.hasSuffix($0) }), name.hasPrefix(".\(stem)") else {
            return false
        }
        let middle = name.dropFirst(stem.count + 1).dropLast(suffix.count)
        if middle.isEmpty { return true }
        guard middle.first == "." else { return false }
        let fileExtension = middle.dropFirst()
        return !fileExtension.isEmpty && fileExtension.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
    }

    /// Whether `name` is a subtitle file written beside a download of `stem`:
    /// `<stem>.<language>.vtt` or `<stem>.<language>.forced.vtt`.
    package static func isSidecar(_ name: String, stem: String) -> Bool {
        guard name.hasPrefix("\(stem)."), name.hasSuffix(".vtt") else { return false }
        var middle = name.dropFirst(stem.count + 1).dropLast(4)
        if middle.hasSuffix(".forced") { middle = middle.dropLast(7) }
        return !middle.isEmpty && !middle.contains(".")
    }

    /// The staging files of downloads to `destination` (any one-word extension) in its folder,
    /// and, when no download of it is complete (no visible file of its stem but subtitles), the
    /// subtitle files an unfinished one wrote beside it.
    ///
    /// - Complexity: O(*n*) for the *n* entries of the folder.
    package static func files(for destination: URL) -> [URL] {
        let folder = destination.deletingLastPathComponent()
        let stem = destination.deletingPathExtension().lastPathComponent
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        let completed = names.contains { name in
            !name.hasPrefix(".") && !isSidecar(name, stem: stem)
                && (name == stem || (name.hasPrefix("\(stem).") && !name.dropFirst(stem.count + 1).contains(".")))
        }
        return names.filter { name in
            isStaging(name, stem: stem) || (!completed && isSidecar(name, stem: stem))
        }.map { folder.appendingPathComponent($0) }
    }

    /// Removes the staging files of downloads to `destination` while holding its locks, so no
    /// run of this process or another uses them meanwhile; when another process holds the
    /// destination, removes nothing.
    package static func removeHoldingLocks(for destination: URL) async {
        let key = destination.standardizedFileURL.path
        guard (try? await DestinationLocks.shared.acquire(key)) != nil else { return }
        defer { DestinationLocks.shared.release(key) }
        guard let lock = try? DestinationFileLock.acquire(for: destination) else { return }
        for file in files(for: destination) where !file.lastPathComponent.hasSuffix(".lock") {
            LocalFileSystem().remove(file)
        }
        lock.release()  // removes the destination's own lock file
    }

    /// Whether a download that failed with `category` could resume from what it kept: every
    /// failure of a source that may come back (a segment missing for a while, a portal's page
    /// until the Wi-Fi is signed in to, a server error) keeps it; a lesson the library cannot
    /// save at all (``DownloadError/Category/unsupported``) does not. (A cancel's files are
    /// removed by the run itself.)
    package static func keepsFiles(after category: DownloadError.Category) -> Bool {
        category != .unsupported
    }
}
