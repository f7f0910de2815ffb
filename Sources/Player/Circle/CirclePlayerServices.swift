public import Foundation

/// News from a download in progress.
public enum FetchUpdate: Sendable, Hashable {
    /// The share downloaded so far, 0…1.
    case progress(Double)
    /// The download is complete; the audio is in this local file.
    case finished(URL)
}

/// Downloads the circle's audio to a local file.
///
/// The stream reports progress and then the file; it finishes by throwing when the download
/// fails. Ending the iteration (the model cancels its task) must cancel the download: implement
/// the stream's `onTermination`. MediaCore's fetch engine implements this protocol; tests use a
/// scripted fake.
public protocol AudioFetcher: Sendable {
    /// Starts a download and returns its updates.
    func fetch() -> AsyncThrowingStream<FetchUpdate, any Error>
}

/// Plays a local audio file; an app implements it with `AVAudioPlayer` or `AVPlayer`.
@MainActor
public protocol AudioOutput: AnyObject {
    /// Starts playing `file` from the beginning and calls `onEnd` when it reaches the end.
    ///
    /// - Throws: When the file cannot be played (the model reports it as unplayable).
    func play(_ file: URL, onEnd: @escaping @MainActor () -> Void) throws
    /// Pauses playback.
    func pause()
    /// Resumes paused playback.
    func resume()
    /// Stops playback for good; no end is reported afterwards.
    func stop()
}

/// Removes cached audio files.
public protocol AudioCache: Sendable {
    /// Deletes the file at `url`; a file that is already gone is not an error.
    func delete(_ url: URL) async throws
}

/// Deletes cached files with `FileManager`.
public struct FileManagerAudioCache: AudioCache {
    /// Creates the cache.
    public init() {}

    /// Deletes the file at `url`; a missing file is fine.
    public func delete(_ url: URL) async throws {
        guard FileManager.default.fileExists(atPath: url.path) else { return }
        try FileManager.default.removeItem(at: url)
    }
}
