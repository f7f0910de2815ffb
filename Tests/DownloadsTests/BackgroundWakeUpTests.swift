import Downloads
import Foundation
import Testing

@testable import OfflineLessons

@Suite("A background session's wake-ups, and the state of each request handed over")
struct BackgroundWakeUpTests {
    enum Step: CaseIterable, Hashable {
        /// `application(_:handleEventsForBackgroundURLSession:completionHandler:)`.
        case handlerGiven
        /// `urlSessionDidFinishEvents(forBackgroundURLSession:)`.
        case eventsEnded
        /// A task's event.
        case event
    }

    /// Every sequence of `length` steps.
    static func sequences(of length: Int) -> [[Step]] {
        (0..<length).reduce([[]]) { partial, _ in partial.flatMap { prefix in Step.allCases.map { prefix + [$0] } } }
    }

    @Test(
        "Apple's Downloading files in the background: in every order of handlers, events and their end (all 88,572 sequences of up to 10 steps), each handler is called once at most, never by a task's event, and every handler given before the events end is called by then"
    )
    func everyOrder() {
        var failures: [String] = []
        var checked = 0
        for length in 1...10 {
            for steps in Self.sequences(of: length) {
                checked += 1
                var wakeUp = BackgroundWakeUp<Int>()
                var calls: [Int: Int] = [:]
                var given: [Int] = []
                var unanswered: Set<Int> = []
                for step in steps {
                    var called: [Int] = []
                    switch step {
                    case .handlerGiven:
                        given.append(given.count)
                        unanswered.insert(given.count - 1)
                        called = wakeUp.handlerGiven(given.count - 1)
                    case .eventsEnded:
                        called = wakeUp.eventsEnded()
                        // Every handler given so far is answered by this end.
                        let missed = unanswered.subtracting(called)
                        if !missed.isEmpty { failures.append("\(steps): \(missed.sorted()) not called at the end") }
                    case .event:
                        wakeUp.eventReceived()
                    }
                    for handler in called {
                        calls[handler, default: 0] += 1
                        unanswered.remove(handler)
                    }
                }
                if let twice = calls.first(where: { $0.value > 1 }) {
                    failures.append("\(steps): handler \(twice.key) called \(twice.value) times")
                }
                if failures.count > 3 { break }
            }
        }
        #expect(failures.isEmpty, "\(failures)")
        #expect(checked == 88_572)
    }

    @Test("a handler given after the events ended is called at once; after another event, it waits for the next end")
    func lateHandler() {
        var wakeUp = BackgroundWakeUp<String>()
        #expect(wakeUp.eventsEnded().isEmpty)
        #expect(wakeUp.handlerGiven("late") == ["late"])
        #expect(wakeUp.eventsEnded().isEmpty)
        wakeUp.eventReceived()
        #expect(wakeUp.handlerGiven("next").isEmpty)
        #expect(wakeUp.eventsEnded() == ["next"])
    }

    typealias State = BackgroundTransfers.Handed.State

    static let states: [State] = [
        .unsubmitted(resumeData: nil), .unsubmitted(resumeData: Data("resume".utf8)), .submitted,
        .stopped(resumeData: nil), .stopped(resumeData: Data("resume".utf8)), .givenUp(.notFound),
        .givenUp(.offline),
    ]

    @Test("each request's state is saved in the journal and read back as it was", arguments: states)
    func roundTrip(state: State) throws {
        let handed = BackgroundTransfers.Handed(
            label: "mediacore/2 7 0 lesson", url: URL(fileURLWithPath: "/seg0.ts"), range: nil, expectedBytes: 10,
            attempts: 1, state: state)
        let read = try JSONDecoder().decode(BackgroundTransfers.Handed.self, from: JSONEncoder().encode(handed))
        #expect(read == handed)
    }

    @Test(
        "a journal's requests as the previous version wrote them (isSubmitted, isStopped, resumeData, failure) read as one state each",
        arguments: [
            (#"{"isSubmitted":false,"isStopped":false}"#, State.unsubmitted(resumeData: nil)),
            (
                #"{"isSubmitted":false,"isStopped":false,"resumeData":"cmVzdW1l"}"#,
                .unsubmitted(resumeData: Data("resume".utf8))
            ),
            (#"{"isSubmitted":true,"isStopped":false}"#, .submitted),
            (
                #"{"isSubmitted":true,"isStopped":true,"resumeData":"cmVzdW1l"}"#,
                .stopped(resumeData: Data("resume".utf8))
            ),
            (#"{"isSubmitted":false,"isStopped":true}"#, .stopped(resumeData: nil)),
            (#"{"isSubmitted":true,"isStopped":false,"failure":"notFound"}"#, .givenUp(.notFound)),
        ])
    func earlierJournals(fields: String, expected: State) throws {
        let json =
            #"{"label":"mediacore/1 0 lesson","url":"file:///seg0.ts","attempts":1,"#
            + fields.dropFirst()
        let read = try JSONDecoder().decode(BackgroundTransfers.Handed.self, from: Data(json.utf8))
        #expect(read.state == expected)
    }
}
