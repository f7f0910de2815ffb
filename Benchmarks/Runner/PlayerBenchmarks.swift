import BenchmarkHarness
import Downloads
import Foundation
import Player
import TestSupport

/// The Player module's cases.
enum PlayerBenchmarks {
    static func cases(quick: Bool) -> [Benchmark] {
        [transitions(count: quick ? 20_000 : 1_000_000)]
    }

    /// The kinds of event in the random stream (ids are filled in at run time).
    enum EventKind: Int, CaseIterable {
        case tap, progress, finished, failed, ended, deleted, exit
    }

    /// A random stream of events through the circle machine: taps, fetch news for the current
    /// fetch, ends, deletions, exits.
    static func transitions(count: Int) -> Benchmark {
        var generator = SplitMix64(seed: 21)
        let kinds = (0..<count).map { _ in
            EventKind.allCases[Int.random(in: 0..<EventKind.allCases.count, using: &generator)]
        }
        let file = URL(fileURLWithPath: "/tmp/audio.ts")
        return Benchmark(
            group: "Player",
            name: "\(count.formatted) circle-player transitions, random events",
            items: count,
            setup: {
                {
                    var machine = CirclePlayerMachine()
                    var fetch = CirclePlayerMachine.FetchID(rawValue: 0)
                    var accepted = 0
                    for kind in kinds {
                        let event: CirclePlayerMachine.Event =
                            switch kind {
                            case .tap: .tap
                            case .progress: .fetchProgressed(fetch, fraction: 0.5)
                            case .finished: .fetchFinished(fetch, file: file)
                            case .failed:
                                .fetchFailed(
                                    fetch, PlayerError(.fetchFailed(DownloadFailure(category: .offline, message: "x"))))
                            case .ended: .playbackEnded
                            case .deleted: .cacheDeleted
                            case .exit: .exit
                            }
                        if case .accepted(let effects) = machine.handle(event) {
                            accepted += 1
                            for case .startFetch(let id) in effects { fetch = id }
                        }
                    }
                    blackHole(accepted)
                }
            },
            baselineName: "dictionary-driven table",
            baseline: {
                {
                    var state = TableMachine.State.uninitialized
                    var accepted = 0
                    for kind in kinds {
                        if let next = TableMachine.table[state]?[kind] {
                            state = next.state
                            accepted += 1
                            blackHole(next.effects)
                        }
                    }
                    blackHole(accepted)
                }
            }
        )
    }
}

/// The same circle player as a lookup table of state → event → (state, effects): the usual
/// "data-driven" alternative to a `switch`. It carries no fetch ids or files, so it does less.
enum TableMachine {
    enum State: Hashable { case uninitialized, fetching, playing, paused, completed }

    typealias Kind = PlayerBenchmarks.EventKind

    static let table: [State: [Kind: (state: State, effects: [String])]] = [
        .uninitialized: [.tap: (.fetching, ["startFetch"]), .exit: (.uninitialized, [])],
        .fetching: [
            .tap: (.uninitialized, ["cancelFetch"]), .progress: (.fetching, []), .finished: (.playing, ["play"]),
            .failed: (.uninitialized, []), .exit: (.uninitialized, ["cancelFetch"]),
        ],
        .playing: [
            .tap: (.paused, ["pause"]), .ended: (.completed, ["delete"]), .exit: (.completed, ["stop", "delete"]),
        ],
        .paused: [
            .tap: (.playing, ["resume"]), .ended: (.completed, ["delete"]), .exit: (.completed, ["stop", "delete"]),
        ],
        .completed: [.deleted: (.uninitialized, []), .exit: (.completed, [])],
    ]
}
