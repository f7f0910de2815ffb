import Foundation
import Progress
import Testing

/// The three cases of the article *Counting watched progress*, played as its timelines say (a tick
/// each second, under the default jump limit), give the figures it states.
@Suite("The article's watched-progress cases")
struct ArticleCaseTests {
    /// Ticks each second from `start` to `end`, a second of wall clock apart.
    static func ticks(_ start: Int, _ end: Int) -> [PlaybackEvent] {
        ((start + 1)...end).map { .tick(at: Double($0)) }
    }

    static let cases: [(name: String, events: [PlaybackEvent], fraction: Double)] = [
        (
            "the first 10% twice is 10%",
            [.play(at: 0)] + ticks(0, 10) + [.pause(at: 10), .seek(from: 10, to: 0), .play(at: 0)] + ticks(0, 10)
                + [.pause(at: 10)], 0.1
        ),
        (
            "0–15%, back to 0, on to 20% is 20%",
            [.play(at: 0)] + ticks(0, 15) + [.seek(from: 15, to: 0)] + ticks(0, 20), 0.2
        ),
        (
            "the first and the last 10% is 20%",
            [.play(at: 0)] + ticks(0, 10) + [.seek(from: 10, to: 90)] + ticks(90, 100) + [.ended(at: 100)], 0.2
        ),
    ]

    @Test("each case's figure", arguments: cases.indices)
    func figure(index: Int) {
        let example = Self.cases[index]
        var tracker = WatchTracker(deviceID: "ipad", duration: 100)
        var now = Date(timeIntervalSince1970: 1_763_700_000)
        for event in example.events {
            tracker.handle(event, at: now)
            now += 1
        }
        let fraction = tracker.progress.watchedFraction ?? -1
        #expect(abs(fraction - example.fraction) < 1e-9, "\(example.name): \(fraction)")
    }
}
