import Foundation
import Player
import TestSupport
import Testing

/// A fetcher whose downloads the test scripts: progress every second on a manual clock, then a
/// file or a failure. It counts downloads running at once.
final class ScriptedFetcher: AudioFetcher, @unchecked Sendable {
    enum Outcome: Sendable {
        case file(URL)
        case failure(URLError.Code)
    }

    let clock: ManualClock
    let steps: Int
    private let lock = NSLock()
    private var outcomes: [Outcome]
    private(set) var running = 0
    private(set) var maximumRunning = 0
    private(set) var started = 0
    private(set) var cancelled = 0

    init(clock: ManualClock, steps: Int = 4, outcomes: [Outcome]) {
        self.clock = clock
        self.steps = steps
        self.outcomes = outcomes
    }

    private func update(_ body: (ScriptedFetcher) -> Void) {
        lock.lock()
        body(self)
        lock.unlock()
    }

    func fetch() -> AsyncThrowingStream<FetchUpdate, any Error> {
        var outcome = Outcome.failure(.unknown)
        update { fetcher in
            outcome = fetcher.outcomes.count > 1 ? fetcher.outcomes.removeFirst() : (fetcher.outcomes.first ?? outcome)
            fetcher.started += 1
            fetcher.running += 1
            fetcher.maximumRunning = max(fetcher.maximumRunning, fetcher.running)
        }
        let (stream, continuation) = AsyncThrowingStream<FetchUpdate, any Error>.makeStream()
        let work = Task { [clock, steps] in
            do {
                for step in 1...steps {
                    try await clock.sleep(for: .seconds(1))
                    continuation.yield(.progress(Double(step) / Double(steps)))
                }
                switch outcome {
                case .file(let url): continuation.yield(.finished(url))
                case .failure(let code): throw URLError(code)
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
            self.update { $0.running -= 1 }
        }
        continuation.onTermination = { termination in
            if case .cancelled = termination {
                work.cancel()
                self.update { $0.cancelled += 1 }
            }
        }
        return stream
    }
}

@MainActor
final class FakeAudioOutput: AudioOutput {
    var calls: [String] = []
    var failNextPlay = false
    private var onEnd: (@MainActor () -> Void)?

    func play(_ file: URL, onEnd: @escaping @MainActor () -> Void) throws {
        if failNextPlay {
            failNextPlay = false
            throw URLError(.cannotDecodeContentData)
        }
        calls.append("play \(file.lastPathComponent)")
        self.onEnd = onEnd
    }

    func pause() { calls.append("pause") }
    func resume() { calls.append("resume") }
    func stop() {
        calls.append("stop")
        onEnd = nil
    }

    /// The file reached its end.
    func finish() { onEnd?() }
}

final class FakeAudioCache: AudioCache, @unchecked Sendable {
    private let lock = NSLock()
    private var failures: Int
    private(set) var deleted: [URL] = []

    init(failures: Int = 0) { self.failures = failures }

    func delete(_ url: URL) async throws {
        try deleteNow(url)
    }

    private func deleteNow(_ url: URL) throws {
        lock.lock()
        defer { lock.unlock() }
        if failures > 0 {
            failures -= 1
            throw CocoaError(.fileWriteNoPermission)
        }
        deleted.append(url)
    }
}

@MainActor
@Suite("CirclePlayerModel")
struct CirclePlayerModelTests {
    let clock = ManualClock()
    let file = URL(fileURLWithPath: "/tmp/cache/audio.ts")

    /// Moves the fetch one step (it sleeps a second per step), then waits until the circle
    /// shows that step: the model's machine has taken what the fetch sent.
    func advanceFetch(of model: CirclePlayerModel) async {
        await clock.waitForSleepers(count: 1)
        let before = model.state
        clock.advance(by: .seconds(1))
        #expect(await waitUntilObserved { model.state != before }, "the circle never took the step")
    }

    @Test("the brief's flow: fetch with a filling circle, play, pause, resume, end, clean up")
    func briefFlow() async {
        let fetcher = ScriptedFetcher(clock: clock, outcomes: [.file(file)])
        let output = FakeAudioOutput()
        let cache = FakeAudioCache()
        let model = CirclePlayerModel(fetcher: fetcher, output: output, cache: cache)
        model.tap()
        #expect(model.presentation.icon == .spinner)
        var fills: [Double] = []
        for _ in 0..<3 {
            await advanceFetch(of: model)
            fills.append(model.presentation.fillFraction ?? -1)
        }
        #expect(fills == [0.25, 0.5, 0.75])
        clock.advance(by: .seconds(1))
        await model.waitUntilSettled()
        #expect(model.state == .playing(file: file))
        #expect(model.presentation.icon == .pause)
        model.tap()
        model.tap()
        output.finish()
        await model.waitUntilSettled()
        #expect(model.state == .uninitialized(error: nil))
        #expect(output.calls == ["play audio.ts", "pause", "resume"])
        #expect(cache.deleted == [file])
    }

    @Test("a tap during the download cancels it; a tap storm never runs two fetches")
    func tapStorm() async {
        let fetcher = ScriptedFetcher(clock: clock, outcomes: [.file(file)])
        let model = CirclePlayerModel(fetcher: fetcher, output: FakeAudioOutput(), cache: FakeAudioCache())
        for _ in 0..<9 { model.tap() }
        #expect(model.state == .fetching(.init(rawValue: 5), fraction: 0))
        model.exit()
        await model.waitUntilSettled()
        #expect(fetcher.started == 5)
        #expect(fetcher.cancelled == 5)
        #expect(model.state == .uninitialized(error: nil))
    }

    @Test("a failed download shows its error, and a tap retries")
    func failedFetch() async {
        let fetcher = ScriptedFetcher(
            clock: clock, steps: 1, outcomes: [.failure(.notConnectedToInternet), .file(file)])
        let model = CirclePlayerModel(fetcher: fetcher, output: FakeAudioOutput(), cache: FakeAudioCache())
        model.tap()
        await advanceFetch(of: model)
        await model.waitUntilSettled()
        #expect(model.presentation.errorMessage != nil)
        #expect(model.presentation.icon == .play)
        model.tap()
        await advanceFetch(of: model)
        await model.waitUntilSettled()
        #expect(model.state == .playing(file: file))
    }

    @Test("an unplayable file is deleted and reported")
    func unplayable() async {
        let output = FakeAudioOutput()
        output.failNextPlay = true
        let cache = FakeAudioCache()
        let model = CirclePlayerModel(
            fetcher: ScriptedFetcher(clock: clock, steps: 1, outcomes: [.file(file)]), output: output, cache: cache)
        model.tap()
        await advanceFetch(of: model)
        await model.waitUntilSettled()
        #expect(cache.deleted == [file])
        guard case .uninitialized(let error?) = model.state, case .unplayable = error.kind else {
            Issue.record("not reported: \(model.state)")
            return
        }
    }

    @Test("exit cancels the download; exit while playing stops and deletes the file")
    func exit() async {
        let fetcher = ScriptedFetcher(clock: clock, outcomes: [.file(file)])
        let output = FakeAudioOutput()
        let cache = FakeAudioCache()
        let model = CirclePlayerModel(fetcher: fetcher, output: output, cache: cache)
        model.tap()
        await advanceFetch(of: model)
        model.exit()
        await model.waitUntilSettled()
        #expect(fetcher.cancelled == 1)
        #expect(model.state == .uninitialized(error: nil))

        let playing = CirclePlayerModel(
            fetcher: ScriptedFetcher(clock: clock, steps: 1, outcomes: [.file(file)]), output: output, cache: cache)
        playing.tap()
        await advanceFetch(of: playing)
        await playing.waitUntilSettled()
        playing.exit()
        await playing.waitUntilSettled()
        #expect(output.calls.suffix(1) == ["stop"])
        #expect(cache.deleted == [file])
        output.finish()
        #expect(playing.state == .uninitialized(error: nil))
    }

    @Test("a failed clean-up is hidden from the learner and retried on the next start")
    func failedCleanup() async {
        let cache = FakeAudioCache(failures: 1)
        let output = FakeAudioOutput()
        let model = CirclePlayerModel(
            fetcher: ScriptedFetcher(clock: clock, steps: 1, outcomes: [.file(file)]), output: output, cache: cache)
        model.tap()
        await advanceFetch(of: model)
        await model.waitUntilSettled()
        output.finish()
        await model.waitUntilSettled()
        #expect(model.presentation.errorMessage == nil)
        #expect(model.leftoverFiles == [file])
        model.tap()
        model.exit()
        await model.waitUntilSettled()
        #expect(cache.deleted.contains(file))
        #expect(model.leftoverFiles.isEmpty)
    }
}
