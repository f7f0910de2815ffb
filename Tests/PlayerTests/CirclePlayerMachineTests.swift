import Downloads
import Foundation
import Player
import Testing

typealias Machine = CirclePlayerMachine
let audioFile = URL(fileURLWithPath: "/tmp/cache/lesson.ts")

/// Builds an event for "the current fetch" (or an older one) at replay time.
enum Step: Sendable, CustomTestStringConvertible {
    case event(Machine.Event)
    case progress(Double)
    case finished
    case failed
    case staleFinished

    var testDescription: String {
        switch self {
        case .event(let event): "\(event)"
        case .progress(let fraction): "progress \(fraction)"
        case .finished: "finished"
        case .failed: "failed"
        case .staleFinished: "finished (stale fetch)"
        }
    }
}

struct Replay {
    var machine = Machine()
    var fetches: [Machine.FetchID] = []
    var transitions: [Machine.Transition] = []

    mutating func run(_ steps: [Step]) {
        for step in steps {
            let event: Machine.Event
            switch step {
            case .event(let e): event = e
            case .progress(let f): event = .fetchProgressed(fetches.last ?? .init(rawValue: 0), fraction: f)
            case .finished: event = .fetchFinished(fetches.last ?? .init(rawValue: 0), file: audioFile)
            case .failed:
                event = .fetchFailed(
                    fetches.last ?? .init(rawValue: 0),
                    PlayerError(.fetchFailed(DownloadFailure(category: .offline, message: "offline"))))
            case .staleFinished: event = .fetchFinished(fetches.first ?? .init(rawValue: 0), file: audioFile)
            }
            let transition = machine.handle(event)
            if case .accepted(let effects) = transition {
                for case .startFetch(let id) in effects { fetches.append(id) }
            }
            transitions.append(transition)
        }
    }
}

@Suite("CirclePlayerMachine")
struct CirclePlayerMachineTests {
    @Test(
        "the brief's flows and the races users hit",
        arguments: [
            // The brief: tap, download, play, pause, resume, end, delete, back to the start.
            (
                [
                    Step.event(.tap), .progress(0.4), .progress(1), .finished, .event(.tap), .event(.tap),
                    .event(.playbackEnded),
                    .event(.cacheDeleted),
                ],
                Machine.State.uninitialized(error: nil)
            ),
            // A tap while fetching cancels; the late result of that fetch is dropped.
            ([.event(.tap), .progress(0.3), .event(.tap), .finished], .uninitialized(error: nil)),
            // Cancel, start again: the first fetch's result arrives late and is dropped.
            ([.event(.tap), .event(.tap), .event(.tap), .staleFinished], .fetching(.init(rawValue: 2), fraction: 0)),
            // A failed fetch keeps the error; a tap retries.
            (
                [.event(.tap), .failed],
                .uninitialized(
                    error: PlayerError(.fetchFailed(DownloadFailure(category: .offline, message: "offline"))))
            ),
            ([.event(.tap), .failed, .event(.tap)], .fetching(.init(rawValue: 2), fraction: 0)),
            // A double end completes once.
            ([.event(.tap), .finished, .event(.playbackEnded), .event(.playbackEnded)], .completed(file: audioFile)),
            // An end arriving while paused still completes.
            ([.event(.tap), .finished, .event(.tap), .event(.playbackEnded)], .completed(file: audioFile)),
            // Tap storms during clean-up are ignored.
            (
                [.event(.tap), .finished, .event(.playbackEnded), .event(.tap), .event(.tap)],
                .completed(file: audioFile)
            ),
            // An unplayable file is discarded, then the error shows.
            (
                [
                    .event(.tap), .finished, .event(.playbackFailed(PlayerError(.unplayable(message: "bad")))),
                    .event(.cacheDeleted),
                ],
                .uninitialized(error: PlayerError(.unplayable(message: "bad")))
            ),
            // Exit while playing stops and cleans up.
            ([.event(.tap), .finished, .event(.exit), .event(.cacheDeleted)], .uninitialized(error: nil)),
            // A failed delete is not shown to the learner but is remembered.
            (
                [
                    .event(.tap), .finished, .event(.playbackEnded),
                    .event(.cacheDeletionFailed(PlayerError(.deleteFailed(message: "busy")))),
                ],
                .uninitialized(error: PlayerError(.deleteFailed(message: "busy")))
            ),
        ]
    )
    func sequences(steps: [Step], final: Machine.State) {
        var replay = Replay()
        replay.run(steps)
        #expect(replay.machine.state == final)
    }

    @Test("a tap while fetching cancels the fetch: documented behaviour")
    func tapCancelsFetch() {
        var machine = Machine()
        let fetch = Machine.FetchID(rawValue: 1)
        #expect(machine.handle(.tap) == .accepted([.startFetch(fetch)]))
        #expect(machine.handle(.tap) == .accepted([.cancelFetch(fetch)]))
        #expect(machine.handle(.fetchProgressed(fetch, fraction: 0.5)) == .rejected(.staleFetch(fetch)))
    }

    @Test("progress fills monotonically, clamped to 0…1, ignoring nonsense")
    func monotoneFill() {
        var replay = Replay()
        replay.run([.event(.tap), .progress(0.5), .progress(0.2), .progress(.nan), .progress(7)])
        #expect(replay.machine.state == .fetching(.init(rawValue: 1), fraction: 1))
    }

    @Test("effects are what the caller must do")
    func effects() {
        var replay = Replay()
        replay.run([.event(.tap), .finished, .event(.tap), .event(.tap), .event(.exit)])
        let effects = replay.transitions.flatMap { transition -> [Machine.Effect] in
            if case .accepted(let effects) = transition { return effects }
            return []
        }
        #expect(
            effects == [
                .startFetch(.init(rawValue: 1)), .play(file: audioFile), .pause, .resume, .stop,
                .deleteCachedFile(audioFile),
            ])
    }

    @Test(
        "presentation: icon, fill, accessibility, error",
        arguments: [
            (Machine.State.uninitialized(error: nil), CirclePresentation.Icon.play, Double?.none, false),
            (.fetching(.init(rawValue: 1), fraction: 0.42), .spinner, 0.42, false),
            (.playing(file: audioFile), .pause, nil, false),
            (.paused(file: audioFile), .play, nil, false),
            (.completed(file: audioFile), .spinner, nil, false),
            (
                .uninitialized(error: PlayerError(.fetchFailed(DownloadFailure(category: .offline, message: "x")))),
                .play, nil, true
            ),
            (.uninitialized(error: PlayerError(.deleteFailed(message: "x"))), .play, nil, false),
        ]
    )
    func presentation(state: Machine.State, icon: CirclePresentation.Icon, fill: Double?, showsError: Bool) {
        let shown = CirclePresentation(state)
        #expect(shown.icon == icon)
        #expect(shown.fillFraction == fill)
        #expect(!shown.accessibilityLabel.isEmpty && !shown.accessibilityHint.isEmpty)
        #expect((shown.errorMessage != nil) == showsError)
        if fill != nil { #expect(shown.accessibilityValue == "42 percent") }
    }

    @Test(
        "presentation of a hand-built fetching state shows a fraction within 0…1",
        arguments: [
            (1e300, 1.0, "100 percent"), (-3, 0, "0 percent"), (.nan, 0, "0 percent"), (.infinity, 0, "0 percent"),
        ]
    )
    func presentationClampsFraction(fraction: Double, fill: Double, spoken: String) {
        let shown = CirclePresentation(.fetching(.init(rawValue: 1), fraction: fraction))
        #expect(shown.fillFraction == fill)
        #expect(shown.accessibilityValue == spoken)
    }
}

/// Breadth-first over every reachable state and every event (with current and stale fetch ids),
/// checking the invariants on every transition of every path up to the depth.
@Suite("CirclePlayerMachine exhaustive check")
struct CirclePlayerExhaustiveTests {
    /// What a path has done so far, for the path invariants.
    struct Node: Hashable {
        var machine: Machine
        var inFlight: Set<Machine.FetchID>
        var hasPlayed: Bool
        var undeletedFile: URL?
    }

    static func events(for node: Node) -> [Machine.Event] {
        let current: Machine.FetchID? =
            if case .fetching(let id, _) = node.machine.state { id } else { nil }
        let stale = Machine.FetchID(rawValue: 1)
        var events: [Machine.Event] = [
            .tap, .exit, .playbackEnded, .playbackFailed(PlayerError(.unplayable(message: "x"))), .cacheDeleted,
            .cacheDeletionFailed(PlayerError(.deleteFailed(message: "x"))),
            .fetchProgressed(stale, fraction: 0.9), .fetchFinished(stale, file: audioFile),
            .fetchFailed(stale, PlayerError(.fetchFailed(DownloadFailure(category: .offline, message: "x")))),
        ]
        if let current {
            events += [
                .fetchProgressed(current, fraction: 0.3), .fetchProgressed(current, fraction: 0.6),
                .fetchFinished(current, file: audioFile),
                .fetchFailed(current, PlayerError(.fetchFailed(DownloadFailure(category: .offline, message: "x")))),
            ]
        }
        return events
    }

    @Test("no trap, one fetch at most, completion only after playing, files deleted, fill monotone")
    func exhaustive() {
        var frontier = [Node(machine: Machine(), inFlight: [], hasPlayed: false, undeletedFile: nil)]
        var seen: Set<Node> = Set(frontier)
        var transitions = 0
        var kinds: Set<String> = []
        // Fetch ids grow with every tap, so the space is explored to a depth, deduplicated.
        for _ in 0..<14 {
            var next: [Node] = []
            for node in frontier {
                for event in Self.events(for: node) {
                    var child = node
                    let before = child.machine.state
                    let transition = child.machine.handle(event)
                    transitions += 1
                    switch transition {
                    case .rejected:
                        #expect(child.machine.state == before, "\(before) + \(event)")
                        continue
                    case .accepted(let effects):
                        for effect in effects {
                            switch effect {
                            case .startFetch(let id): child.inFlight.insert(id)
                            case .cancelFetch(let id): child.inFlight.remove(id)
                            case .deleteCachedFile(let file):
                                if file == child.undeletedFile { child.undeletedFile = nil }
                            case .play: child.hasPlayed = true
                            case .pause, .resume, .stop: break
                            }
                        }
                    }
                    switch event {
                    case .fetchFinished(let id, _), .fetchFailed(let id, _): child.inFlight.remove(id)
                    default: break
                    }
                    let after = child.machine.state
                    kinds.insert(String(describing: after).prefix { $0 != "(" }.description)
                    // At most one fetch in flight.
                    #expect(child.inFlight.count <= 1, "\(before) + \(event)")
                    // Completed only after playing.
                    if case .completed = after { #expect(child.hasPlayed, "\(before) + \(event)") }
                    // A downloaded file is remembered until its deletion is requested.
                    switch after {
                    case .playing(let file), .paused(let file):
                        if child.undeletedFile == nil, case .fetching = before { child.undeletedFile = file }
                    case .uninitialized:
                        #expect(
                            child.undeletedFile == nil, "re-entered uninitialized with a file: \(before) + \(event)")
                    default: break
                    }
                    // Fill never goes back within one fetch.
                    if case .fetching(let a, let old) = before, case .fetching(let b, let new) = after, a == b {
                        #expect(new >= old)
                    }
                    if child.machine.state == .uninitialized(error: nil) { child.hasPlayed = false }
                    if seen.insert(child).inserted { next.append(child) }
                }
            }
            frontier = next
        }
        #expect(kinds == ["uninitialized", "fetching", "playing", "paused", "completed", "discarding"])
        #expect(transitions > 500)
    }
}
