import Catalog
import Foundation
import HTTPSupport
import TestSupport
import Testing

/// The Catalog article shows a catalog screen's phases as a figure drawn from the screen model
/// itself: a real ``CatalogScreenModel`` over a repository (in-memory server, manual clock, a
/// store in a fresh folder) is brought into each phase, loaded or refreshed against each answer
/// the network can give, and every phase it passes through is recorded, the one it shows while
/// the request is in flight included.
@MainActor
@Suite("The catalog screen's phases, drawn from the model")
struct CatalogFigureTests {
    nonisolated static let url = URL(literal: "https://catalog.example/lessons")
    nonisolated static let fetched = Date(timeIntervalSince1970: 1_763_900_000)

    /// What the network answers.
    enum Answer: String, CaseIterable, Sendable {
        case list = "a list"
        case emptyList = "an empty list"
        case serverError = "a server error"
        case
            noConnection = "no connection"
        case offline = "the app says offline"
    }

    /// How a screen is brought into a phase before the action is tried: a load against an
    /// answer, with or without a copy in the cache.
    struct Start: Sendable {
        var cached: Bool
        var answer: Answer?
    }

    static let starts: [Start] = [
        Start(cached: false, answer: nil), Start(cached: true, answer: nil), Start(cached: true, answer: .list),
        Start(cached: true, answer: .emptyList), Start(cached: true, answer: .serverError),
        Start(cached: true, answer: .offline), Start(cached: false, answer: .serverError),
    ]

    nonisolated static func name(_ phase: CatalogScreenModel<[String], ManualClock>.Phase) -> String {
        switch phase {
        case .loading: "loading"
        case .loaded: "loaded"
        case .refreshing: "refreshing"
        case .empty: "empty"
        case .offline: "offline"
        case .showingCache: "showingCache"
        case .failed: "failed"
        }
    }

    /// A model over a fresh store, the network answering after a second of the manual clock.
    @MainActor
    final class Bench {
        let clock = ManualClock()
        let transport: InMemoryHTTPTransport<ManualClock>
        let folder = temporaryFolder("catalog-phases")
        let repository: CatalogRepository<ManualClock>
        let model: CatalogScreenModel<[String], ManualClock>

        init() {
            transport = InMemoryHTTPTransport(clock: clock)
            repository = CatalogRepository(
                store: CatalogStore(directory: folder), clock: clock, throttle: .zero, requestTimeout: nil,
                now: { CatalogFigureTests.fetched }, transport: transport)
            let resource = CatalogResource(key: "lessons", url: CatalogFigureTests.url) { data in
                String(decoding: data, as: UTF8.self).split(separator: ",").map(String.init)
            }
            model = CatalogScreenModel(repository: repository, resource: resource)
        }

        /// Makes the network give `answer` from now on.
        func answer(_ answer: Answer) async {
            await repository.setOffline(answer == .offline)
            let reply: InMemoryHTTPTransport<ManualClock>.Reply =
                switch answer {
                case .list, .offline: .response(status: 200, body: Data("salsa,tango".utf8), latency: .seconds(1))
                case .emptyList: .response(status: 200, body: Data(), latency: .seconds(1))
                case .serverError: .response(status: 503, body: Data("busy".utf8), latency: .seconds(1))
                case .noConnection: .failure(URLError(.notConnectedToInternet), latency: .seconds(1))
                }
            transport.stub(CatalogFigureTests.url, reply: reply)
        }

        /// Runs `action` against `answer`: the phase it shows while its request is in flight,
        /// then the phase it ends in (no request goes out while the app says it is offline).
        func run(_ action: String, against answer: Answer) async -> (during: String?, after: String) {
            await self.answer(answer)
            let model = self.model
            let task = Task { @MainActor in
                if action == "refresh()" { await model.refresh() } else { await model.load() }
            }
            var during: String?
            if answer != .offline {
                await clock.waitForSleepers(count: 1)
                // A launch yields the cached copy before it asks the network: the phase is read
                // once the model has shown that copy (it stays `refreshing` until the answer).
                if action == "load()", await repository.store.entry(for: "lessons") != nil {
                    #expect(await waitUntilObserved { model.value != nil }, "the cached copy never showed")
                }
                during = CatalogFigureTests.name(model.phase)
                clock.advance(by: .seconds(1))
            }
            await task.value
            return (during, CatalogFigureTests.name(model.phase))
        }
    }

    /// A bench whose screen shows `start`'s phase.
    static func bench(_ start: Start) async -> Bench {
        let bench = Bench()
        if start.cached {
            // A first screen fills the cache.
            let filler = Bench()
            _ = await filler.run("load()", against: .list)
            try? FileManager.default.removeItem(at: bench.folder)
            try? FileManager.default.copyItem(at: filler.folder, to: bench.folder)
            try? FileManager.default.removeItem(at: filler.folder)
        }
        if let answer = start.answer { _ = await bench.run("load()", against: answer) }
        return bench
    }

    static func diagram() async -> StateDiagram {
        // The outcomes, by (from, to): each action or answer that leads there, before the two
        // actions' labels are merged.
        var found = StateDiagram(subject: "", positions: [:], initial: "") { _ in false }
        for start in starts {
            for action in ["load()", "refresh()"] {
                for answer in Answer.allCases {
                    let bench = await bench(start)
                    let before = name(bench.model.phase)
                    let (during, after) = await bench.run(action, against: answer)
                    try? FileManager.default.removeItem(at: bench.folder)
                    found.tried(before)
                    if let during {
                        found.tried(during)
                        found.record(from: before, to: during, label: action)
                        found.record(from: during, to: after, label: answer.rawValue)
                    } else {
                        found.record(from: before, to: after, label: "\(action) while offline")
                    }
                }
            }
        }
        var diagram = StateDiagram(
            subject: "A catalog screen's",
            positions: [
                "failed": (78, 60), "loaded": (208, 60), "offline": (338, 60), "loading": (78, 230),
                "refreshing": (338, 230), "empty": (208, 400), "showingCache": (338, 400),
            ],
            initial: "loading"
        ) { $0.from == $0.to }
        // Going offline, and pulling to refresh a screen that shows a list, lead to one phase
        // from nearly every other: written out, not drawn.
        diagram.isWrittenOut = { $0.to == "offline" || ($0.to == "refreshing" && $0.from != "loading") }
        for state in found.triedStates { diagram.tried(state) }
        for transition in found.transitions {
            // Both actions with the same outcome are one label.
            var merged = transition.labels
            for (one, other, both) in [
                ("load()", "refresh()", "load() or refresh()"),
                ("load() while offline", "refresh() while offline", "load() or refresh() while offline"),
            ] where merged.contains(one) && merged.contains(other) {
                merged.removeAll { $0 == one || $0 == other }
                merged.append(both)
            }
            for label in merged { diagram.record(from: transition.from, to: transition.to, label: label) }
        }
        return diagram
    }

    @Test(
        "screen-phases.svg (light and dark) is what the screen model shows, loaded and refreshed against every answer")
    func phasesFigure() async throws {
        let problems = CommittedFigure.problems(
            try await Self.diagram().figure(), name: "screen-phases", module: "Catalog",
            article: "Sources/Catalog/Catalog.docc/Catalog.md")
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }
}
