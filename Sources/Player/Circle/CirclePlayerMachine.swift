public import Foundation

/// The audio circle's life as a pure state machine: `(state, event) → (state, [effect])`.
///
/// ```text
///            tap                 fetch finished            tap
/// uninitialized ──▶ fetching(fill) ─────────────▶ playing ◀────▶ paused
///      ▲   ▲            │ tap (cancels)              │ end          │ end
///      │   └────────────┘ or failure (error kept)   ▼              ▼
///      └──────── delete finished ◀──────────── completed (deleting the cached file)
/// ```
///
/// The machine performs nothing itself: it returns ``Effect``s (start or cancel a fetch, play,
/// pause, resume, stop, delete the cached file) for its owner to carry out, and the owner
/// reports results as events. Every fetch has a ``FetchID``; progress or a result for any other
/// fetch (cancelled or superseded) is rejected and changes nothing. Every event is accepted or
/// rejected in every state, never a trap.
///
/// Decisions a learner would expect:
/// - A tap while fetching cancels the download and returns to the start.
/// - A failed download returns to the start with the error kept for display; a tap retries.
/// - An unplayable file is deleted and reported the same way.
/// - The end of playback completes exactly once, even if the player reports it twice or while
///   paused; the cached file is then deleted and the circle returns to the start.
/// - Exiting stops everything and removes the cached file.
public struct CirclePlayerMachine: Sendable, Hashable {
    /// Identifies one fetch, so that news from an abandoned fetch is recognised.
    public struct FetchID: Sendable, Hashable, Comparable, CustomStringConvertible {
        /// The fetch's sequence number in this machine.
        public let rawValue: Int

        /// Creates the id of fetch number `rawValue` (machines number their fetches from 1).
        public init(rawValue: Int) {
            self.rawValue = rawValue
        }

        /// Whether `lhs` was started before `rhs`.
        public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

        /// `fetch #3`.
        public var description: String { "fetch #\(rawValue)" }
    }

    /// Where the player is.
    public enum State: Sendable, Hashable {
        /// Nothing loaded; `error` is why the last attempt failed, if it did.
        case uninitialized(error: PlayerError?)
        /// Downloading; `fraction` (0…1) fills the circle and never goes back within one fetch.
        case fetching(FetchID, fraction: Double)
        /// Playing the downloaded file.
        case playing(file: URL)
        /// Paused.
        case paused(file: URL)
        /// Playback finished; the cached file is being deleted.
        case completed(file: URL)
        /// The file could not be played; it is being deleted, then the error is shown.
        case discarding(file: URL, error: PlayerError)
    }

    /// Something that happened: a learner's action or news from the fetcher, the audio output
    /// or the file system.
    public enum Event: Sendable, Hashable {
        /// The learner tapped the circle.
        case tap
        /// The learner left the screen (or the app closes the player).
        case exit
        /// The fetch made progress (0…1).
        case fetchProgressed(FetchID, fraction: Double)
        /// The fetch finished; the audio is at `file`.
        case fetchFinished(FetchID, file: URL)
        /// The fetch failed.
        case fetchFailed(FetchID, PlayerError)
        /// The audio output reached the end of the file.
        case playbackEnded
        /// The audio output could not play the file.
        case playbackFailed(PlayerError)
        /// The cached file was deleted.
        case cacheDeleted
        /// Deleting the cached file failed.
        case cacheDeletionFailed(PlayerError)
    }

    /// Work for the machine's owner.
    public enum Effect: Sendable, Hashable {
        /// Start downloading; report progress and the result with this id.
        case startFetch(FetchID)
        /// Cancel the download; its late news will be rejected anyway.
        case cancelFetch(FetchID)
        /// Start playing the local file from the beginning.
        case play(file: URL)
        /// Pause playback.
        case pause
        /// Resume paused playback.
        case resume
        /// Stop playback for good.
        case stop
        /// Delete the cached file; report `cacheDeleted` or `cacheDeletionFailed`.
        case deleteCachedFile(URL)
    }

    /// Why an event changed nothing.
    public enum Rejection: Sendable, Hashable {
        /// The event does not apply now (a tap while the file is being deleted, say).
        case notApplicable(event: Event, state: State)
        /// The event is about a fetch that is no longer wanted.
        case staleFetch(FetchID)
        /// Playback already completed; a second end is ignored.
        case alreadyCompleted
    }

    /// What handling an event did.
    public enum Transition: Sendable, Hashable {
        /// The state changed (or stayed, on purpose); carry out the effects in order.
        case accepted([Effect])
        /// The event was not taken; the state is unchanged.
        case rejected(Rejection)
    }

    /// The current state.
    public private(set) var state: State
    private var lastFetchID = 0

    /// Creates a machine in the uninitialized state.
    public init() {
        state = .uninitialized(error: nil)
    }

    /// Handles `event`, updating the state and returning the effects to carry out.
    ///
    /// - Complexity: O(1).
    @discardableResult
    public mutating func handle(_ event: Event) -> Transition {
        switch (state, event) {
        // Tapping.
        case (.uninitialized, .tap):
            lastFetchID += 1
            let fetch = FetchID(rawValue: lastFetchID)
            state = .fetching(fetch, fraction: 0)
            return .accepted([.startFetch(fetch)])
        case (.fetching(let fetch, _), .tap):
            // Documented choice: a tap during the download cancels it (the spinner is the stop button).
            state = .uninitialized(error: nil)
            return .accepted([.cancelFetch(fetch)])
        case (.playing(let file), .tap):
            state = .paused(file: file)
            return .accepted([.pause])
        case (.paused(let file), .tap):
            state = .playing(file: file)
            return .accepted([.resume])

        // Fetch news.
        case (.fetching(let current, let fraction), .fetchProgressed(let fetch, let reported)):
            guard fetch == current else { return .rejected(.staleFetch(fetch)) }
            let clean = reported.isFinite ? Swift.min(Swift.max(reported, 0), 1) : fraction
            state = .fetching(current, fraction: Swift.max(fraction, clean))
            return .accepted([])
        case (.fetching(let current, _), .fetchFinished(let fetch, let file)):
            guard fetch == current else { return .rejected(.staleFetch(fetch)) }
            state = .playing(file: file)
            return .accepted([.play(file: file)])
        case (.fetching(let current, _), .fetchFailed(let fetch, let error)):
            guard fetch == current else { return .rejected(.staleFetch(fetch)) }
            state = .uninitialized(error: error)
            return .accepted([])
        case (_, .fetchProgressed(let fetch, _)), (_, .fetchFinished(let fetch, _)), (_, .fetchFailed(let fetch, _)):
            return .rejected(.staleFetch(fetch))

        // Playback news.
        case (.playing(let file), .playbackEnded), (.paused(let file), .playbackEnded):
            // An end that races a pause still means the whole file was played.
            state = .completed(file: file)
            return .accepted([.deleteCachedFile(file)])
        case (.completed, .playbackEnded):
            return .rejected(.alreadyCompleted)
        case (.playing(let file), .playbackFailed(let error)), (.paused(let file), .playbackFailed(let error)):
            state = .discarding(file: file, error: error)
            return .accepted([.stop, .deleteCachedFile(file)])

        // Clean-up news.
        case (.completed, .cacheDeleted):
            state = .uninitialized(error: nil)
            return .accepted([])
        case (.completed, .cacheDeletionFailed(let error)):
            state = .uninitialized(error: error)
            return .accepted([])
        case (.discarding(_, let error), .cacheDeleted), (.discarding(_, let error), .cacheDeletionFailed):
            state = .uninitialized(error: error)
            return .accepted([])

        // Leaving.
        case (.uninitialized, .exit), (.completed, .exit), (.discarding, .exit):
            return .accepted([])
        case (.fetching(let fetch, _), .exit):
            state = .uninitialized(error: nil)
            return .accepted([.cancelFetch(fetch)])
        case (.playing(let file), .exit), (.paused(let file), .exit):
            state = .completed(file: file)
            return .accepted([.stop, .deleteCachedFile(file)])

        default:
            return .rejected(.notApplicable(event: event, state: state))
        }
    }
}
