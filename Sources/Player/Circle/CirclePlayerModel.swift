import Downloads
public import Foundation
public import Observation

/// Runs the audio circle for a SwiftUI or UIKit view: draw ``presentation``, call ``tap()``.
///
/// The model owns a ``CirclePlayerMachine`` and carries out its effects: it consumes the
/// fetcher's stream, drives the audio output, and deletes cached files. It never runs two
/// fetches at once, cancels everything in flight on ``exit()``, and keeps files whose deletion
/// failed to remove them on the next start.
///
/// <!-- example: circle-model-view -->
/// ```swift
/// struct AudioCircleButton: View {
///     @State var model: CirclePlayerModel
///
///     var body: some View {
///         let shown = model.presentation
///         Button(action: model.tap) {
///             ZStack {
///                 Circle().trim(from: 0, to: shown.fillFraction ?? 0).stroke(.tint, lineWidth: 6)
///                 if shown.icon == .spinner { ProgressView() } else { Image(systemName: shown.icon.systemImageName) }
///             }
///         }
///         .accessibilityLabel(shown.accessibilityLabel)
///         .accessibilityHint(shown.accessibilityHint)
///         .onDisappear(perform: model.exit)
///     }
/// }
/// ```
@MainActor
@Observable
public final class CirclePlayerModel {
    /// The machine's state.
    public var state: CirclePlayerMachine.State { machine.state }
    /// What the circle shows now.
    public var presentation: CirclePresentation { CirclePresentation(machine.state) }
    /// The most recent event the machine rejected, for diagnostics.
    public private(set) var lastRejection: CirclePlayerMachine.Rejection?
    /// Cached files whose deletion failed; they are deleted again on the next start.
    public private(set) var leftoverFiles: [URL] = []

    private var machine = CirclePlayerMachine()
    @ObservationIgnored private let fetcher: any AudioFetcher
    @ObservationIgnored private let output: any AudioOutput
    @ObservationIgnored private let cache: any AudioCache
    @ObservationIgnored private var fetchTask: (id: CirclePlayerMachine.FetchID, task: Task<Void, Never>)?
    @ObservationIgnored private var cleanupTasks: [Task<Void, Never>] = []
    /// Cancelled fetches still unwinding (their streams' termination cancels the download).
    @ObservationIgnored private var cancelledFetches: [Task<Void, Never>] = []

    /// Creates a model that downloads with `fetcher`, plays through `output` and deletes with `cache`.
    public init(fetcher: any AudioFetcher, output: any AudioOutput, cache: any AudioCache = FileManagerAudioCache()) {
        self.fetcher = fetcher
        self.output = output
        self.cache = cache
    }

    /// The learner tapped the circle.
    public func tap() { send(.tap) }

    /// The learner left: stop playback, cancel the download, delete the cached file.
    public func exit() { send(.exit) }

    /// Waits until no fetch or clean-up is running and the state shows its outcome: for tests
    /// and previews, which then check the state without polling or sleeping.
    public func waitUntilSettled() async {
        while true {
            if let fetch = fetchTask {
                await fetch.task.value
                if fetchTask?.id == fetch.id { fetchTask = nil }
            } else if let cleanup = cleanupTasks.first {
                await cleanup.value
                cleanupTasks.removeFirst()
            } else if let cancelled = cancelledFetches.first {
                await cancelled.value
                cancelledFetches.removeFirst()
            } else {
                return
            }
        }
    }

    // MARK: Running the machine

    private func send(_ event: CirclePlayerMachine.Event) {
        switch machine.handle(event) {
        case .accepted(let effects):
            lastRejection = nil
            for effect in effects { perform(effect) }
        case .rejected(let rejection):
            lastRejection = rejection
        }
    }

    private func perform(_ effect: CirclePlayerMachine.Effect) {
        switch effect {
        case .startFetch(let id):
            // The machine never asks for two fetches, but a player must never run two: be sure.
            if let running = fetchTask {
                running.task.cancel()
                cancelledFetches.append(running.task)
            }
            retryLeftoverDeletions()
            let stream = fetcher.fetch()
            fetchTask = (id, Task { await self.consume(stream, for: id) })
        case .cancelFetch(let id):
            if let running = fetchTask, running.id == id {
                running.task.cancel()
                cancelledFetches.append(running.task)
                fetchTask = nil
            }
        case .play(let file):
            do {
                try output.play(file) { [weak self] in self?.send(.playbackEnded) }
            } catch {
                send(.playbackFailed(PlayerError(.unplayable(message: String(describing: error)), file: file)))
            }
        case .pause:
            output.pause()
        case .resume:
            output.resume()
        case .stop:
            output.stop()
        case .deleteCachedFile(let file):
            let cache = cache
            cleanupTasks.append(
                Task {
                    do {
                        try await cache.delete(file)
                        self.send(.cacheDeleted)
                    } catch {
                        self.leftoverFiles.append(file)
                        self.send(
                            .cacheDeletionFailed(
                                PlayerError(.deleteFailed(message: String(describing: error)), file: file)))
                    }
                })
        }
    }

    private func consume(_ stream: AsyncThrowingStream<FetchUpdate, any Error>, for id: CirclePlayerMachine.FetchID)
        async
    {
        // Iterating a cancelled task's stream ends it at once and runs its termination handler,
        // which cancels the download, even when the cancellation came before the first update.
        do {
            for try await update in stream {
                guard !Task.isCancelled else { return }
                switch update {
                case .progress(let fraction): send(.fetchProgressed(id, fraction: fraction))
                case .finished(let file): send(.fetchFinished(id, file: file))
                }
            }
            guard !Task.isCancelled else { return }
            if case .fetching(let current, _) = machine.state, current == id {
                send(
                    .fetchFailed(
                        id,
                        PlayerError(
                            .fetchFailed(
                                DownloadFailure(category: .other, message: "The download ended without a file")))))
            }
        } catch {
            // A cancelled fetch is not a failure: the machine already moved on.
            guard !Task.isCancelled, !(error is CancellationError) else { return }
            send(.fetchFailed(id, .fetchFailed(error)))
        }
    }

    private func retryLeftoverDeletions() {
        guard !leftoverFiles.isEmpty else { return }
        let files = leftoverFiles
        leftoverFiles = []
        let cache = cache
        cleanupTasks.append(
            Task {
                for file in files {
                    do {
                        try await cache.delete(file)
                    } catch {
                        self.leftoverFiles.append(file)
                    }
                }
            })
    }
}
