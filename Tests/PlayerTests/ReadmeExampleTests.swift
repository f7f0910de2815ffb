import Foundation
import Player
import Testing

/// The README's Player example, compiled and run. `DocumentationExampleTests` checks that
/// the README shows exactly the lines between the `example` markers.
@Suite("README examples")
struct ReadmeExampleTests {
    @Test("the Player example walks the circle through its life")
    func playerExample() {
        let file = URL(fileURLWithPath: "/tmp/lesson-audio.m4a")
        // example: begin Player
        var circle = CirclePlayerMachine()
        circle.handle(.tap)  // .accepted([.startFetch(fetch #1)]): the view shows a spinner
        let fetch = CirclePlayerMachine.FetchID(rawValue: 1)
        circle.handle(.fetchProgressed(fetch, fraction: 0.4))
        let fill = CirclePresentation(circle.state).fillFraction  // 0.4 of the circle filled
        circle.handle(.fetchFinished(fetch, file: file))  // .accepted([.play(file:)])
        circle.handle(.playbackEnded)  // .accepted([.deleteCachedFile(file)])
        let again = circle.handle(.playbackEnded)  // .rejected(.alreadyCompleted): completes once
        // example: end Player
        #expect(fill == 0.4)
        #expect(again == .rejected(.alreadyCompleted))
        #expect(circle.state == .completed(file: file))
    }
}
