public import Downloads
public import Foundation

/// The circle player's fetcher, backed by the download engine: the circle fills from real
/// progress, a tap that cancels the fetch cancels the transfers, and the file it ends with is an
/// MPEG-4 audio file (name the destination `.m4a`) that `AVAudioPlayer` opens, remuxed from the
/// stream's transport stream or packed audio segments (see `MediaDownloader.downloadHLSAudio`).
public struct HLSAudioFetcher<C: Clock>: AudioFetcher where C.Duration == Duration {
    /// The stream to fetch.
    public let masterURL: URL
    /// Where the audio file goes.
    public let destination: URL
    /// The downloader.
    public let downloader: MediaDownloader<C>
    /// Preferred audio languages, best first.
    public let preferredLanguages: [String]

    /// Creates a fetcher of `masterURL`'s best audio track into `destination`.
    public init(masterURL: URL, destination: URL, downloader: MediaDownloader<C>, preferredLanguages: [String] = []) {
        self.masterURL = masterURL
        self.destination = destination
        self.downloader = downloader
        self.preferredLanguages = preferredLanguages
    }

    /// Starts the download and streams its progress, then the file.
    public func fetch() -> AsyncThrowingStream<FetchUpdate, any Error> {
        let job = downloader.downloadHLSAudio(from: masterURL, to: destination, preferredLanguages: preferredLanguages)
        let (stream, continuation) = AsyncThrowingStream<FetchUpdate, any Error>.makeStream()
        let forwarding = Task {
            for await progress in job.progress { continuation.yield(.progress(progress.fraction)) }
        }
        let finishing = Task {
            do {
                let result = try await job.result()
                await forwarding.value
                continuation.yield(.finished(result.file))
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { termination in
            if case .cancelled = termination {
                job.cancel()
                forwarding.cancel()
                finishing.cancel()
            }
        }
        return stream
    }
}
