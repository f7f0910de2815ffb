public import Downloads
public import Foundation
public import Observation

/// One lesson's download button and progress, for a SwiftUI (or UIKit) screen: bind the view to
/// ``phase`` and call the actions.
///
/// The model follows an ``OfflineLibrary`` item: ``observe()`` keeps ``phase`` true to the
/// library's state and to the bytes arriving, whichever screen started the download (a list row
/// and a detail screen can each have a model for the same lesson).
///
/// <!-- example: lesson-download-model -->
/// ```swift
/// let model = LessonDownloadModel(library: library, lessonID: lesson.id, remote: mediaURL)
/// let following = Task { await model.observe() }  // a view's `.task { await model.observe() }`
/// await model.download()  // starts it: .downloading(fraction:bytesReceived:bytesExpected:), then .downloaded
/// ```
///
/// Cancel the observing task when the screen goes; a view's `.task` does so by itself.
///
/// (`LessonDownloadModelTests` runs these lines.)
@MainActor
@Observable
public final class LessonDownloadModel {
    /// What the screen shows.
    public enum Phase: Hashable, Sendable {
        /// Nothing downloaded: offer the download.
        case notDownloaded
        /// Downloading: the share done (it never goes back, across a pause and a resume too),
        /// the bytes received from the server so far, and the bytes expected in all (an estimate
        /// for an HLS lesson, refined as its segments arrive; `nil` when unknown).
        case downloading(fraction: Double, bytesReceived: UInt64, bytesExpected: UInt64?)
        /// Downloading in the background, but waiting: for a network the library's background
        /// options allow ("Waiting for Wi-Fi"), or for any network. Not a failure: it goes on by
        /// itself. `fraction` is the share done so far.
        case waiting(WaitReason, fraction: Double)
        /// Paused, or interrupted by the app being killed: downloading again resumes.
        case paused
        /// Downloaded: the local file to play, and its size.
        case downloaded(file: URL, byteCount: UInt64)
        /// The last attempt failed: switch on the failure's `DownloadFailure/category` for the
        /// words and the action; ``LessonDownloadModel/retry()`` tries again (resuming what can
        /// be), ``LessonDownloadModel/delete()`` discards it.
        case failed(DownloadFailure)
    }

    /// What the screen shows.
    public private(set) var phase: Phase = .notDownloaded

    /// The lesson's id in the library.
    public let lessonID: String
    @ObservationIgnored private let library: OfflineLibrary
    @ObservationIgnored private let remote: URL
    @ObservationIgnored private var bytes: (received: UInt64, expected: UInt64?) = (0, nil)
    /// Why the download, handed to background transfers, waits (``OfflineLibrary/waitReason(of:)``).
    @ObservationIgnored private var wait: WaitReason?
    /// The library's state of the lesson as last shown.
    @ObservationIgnored private var shown: OfflineLibrary.ItemState = .notDownloaded
    /// The library's state of the lesson when an action of this model failed without changing
    /// it (a state that could not be saved): ``phase`` keeps showing that failure until the
    /// library's state moves on or another action starts, so no later refresh brings back the
    /// state from before.
    @ObservationIgnored private var failedAt: OfflineLibrary.ItemState?

    /// Creates a model for the lesson `lessonID`, downloaded from `remote` into `library`.
    public init(library: OfflineLibrary, lessonID: String, remote: URL) {
        self.library = library
        self.lessonID = lessonID
        self.remote = remote
    }

    /// Keeps ``phase`` up to date until the calling task is cancelled: from the library's
    /// current state, then with every change and every progress report of this lesson.
    public func observe() async {
        let id = lessonID
        let library = library
        // Every report of the library: a bounded stream that fell behind (a busy main actor,
        // many lessons downloading) could lose this lesson's last one and show it downloading.
        let states = library.everyUpdate
        let reports = library.progressUpdates
        let waits = library.waitUpdates
        if let progress = await library.progress(of: id) { bytes = (progress.bytesReceived, progress.bytesExpected) }
        wait = await library.waitReason(of: id)
        show(await library.state(of: id))
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await update in states where update.id == id { await self.show(update.state) }
            }
            group.addTask {
                for await report in reports where report.id == id { await self.show(report.progress) }
            }
            group.addTask {
                for await update in waits where update.id == id { await self.show(update.reason) }
            }
        }
    }

    /// Starts the download, or resumes a paused one; nothing when it is downloading or done.
    ///
    /// When the library cannot record the start (a read-only folder, a full disk), ``phase``
    /// becomes ``Phase/failed(_:)`` with that failure's category, and stays so until the next
    /// action: calling this again tries again.
    public func download() async {
        failedAt = nil
        do throws(OfflineLibrary.LibraryError) {
            try await library.download(lessonID, from: remote)
            show(await library.state(of: lessonID))
        } catch {
            failedAt = await library.state(of: lessonID)
            phase = .failed(DownloadFailure(error))
        }
    }

    /// Pauses the download, keeping what was downloaded: ``download()`` resumes it.
    public func pause() async { await library.pause(lessonID) }

    /// Cancels the download, discarding what was downloaded: the phase becomes
    /// ``Phase/notDownloaded`` once it has stopped, and ``download()`` starts over.
    public func cancel() async {
        await library.cancel(lessonID)
        await library.waitForDownload(lessonID)
        show(await library.state(of: lessonID))
    }

    /// Waits until the lesson's download (if any) has ended and ``phase`` shows how: for tests
    /// and previews, which then check ``phase`` without polling or sleeping.
    public func waitUntilSettled() async {
        await library.waitForDownload(lessonID)
        let state = await library.state(of: lessonID)
        // A failed action left the library as it was: its failure is still what happened last.
        if let failedAt, failedAt == state { return }
        show(state)
    }

    /// Tries a failed download again (resuming what can be).
    public func retry() async { await download() }

    /// Deletes the downloaded file, or a paused or failed download's partial files (see
    /// ``OfflineLibrary/delete(_:)``).
    public func delete() async {
        failedAt = nil
        do throws(OfflineLibrary.LibraryError) {
            try await library.delete(lessonID)
            show(.notDownloaded)
        } catch {
            failedAt = await library.state(of: lessonID)
            phase = .failed(DownloadFailure(error))
        }
    }

    private func show(_ state: OfflineLibrary.ItemState) {
        if let failedAt {
            guard failedAt != state else { return }
            self.failedAt = nil
        }
        shown = state
        switch state {
        case .notDownloaded:
            bytes = (0, nil)
            phase = .notDownloaded
        case .downloading(let fraction):
            if let wait {
                phase = .waiting(wait, fraction: fraction)
            } else {
                phase = .downloading(fraction: fraction, bytesReceived: bytes.received, bytesExpected: bytes.expected)
            }
        case .downloaded(let fileName, let byteCount):
            phase = .downloaded(file: library.directory.appendingPathComponent(fileName), byteCount: byteCount)
        case .failed(let failure):
            phase = .failed(failure)
        case .cancelled:
            // A cancelled download kept nothing.
            bytes = (0, nil)
            phase = .notDownloaded
        case .paused:
            phase = .paused
        }
    }

    private func show(_ reason: WaitReason?) {
        wait = reason
        if failedAt == nil { show(shown) }
    }

    private func show(_ progress: DownloadProgress) {
        bytes = (progress.bytesReceived, progress.bytesExpected)
        if case .downloading(let shown, _, _) = phase {
            phase = .downloading(
                fraction: max(shown, progress.fraction), bytesReceived: progress.bytesReceived,
                bytesExpected: progress.bytesExpected
            )
        }
    }
}
