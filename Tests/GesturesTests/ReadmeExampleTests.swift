import Foundation
import Gestures
import Testing

/// The README's Gestures example, compiled and run. `.ci/run` checks that the README shows
/// exactly the lines between the `README` markers.
@Suite("README examples")
struct ReadmeExampleTests {
    @Test("the Gestures example throws the player to the right edge")
    func gesturesExample() {
        // README: begin Gestures
        let layout = FloatingLayout(
            bounds: CGRect(x: 0, y: 0, width: 390, height: 844),
            safeArea: LayoutInsets(top: 47, left: 0, bottom: 34, right: 0),
            playerSize: CGSize(width: 72, height: 72))
        var session = FloatingPlayerSession(layout: layout)  // starts centred

        // A quick swipe to the right, with event timestamps (seconds).
        session.touchBegan(at: CGPoint(x: 195, y: 428), time: 10.000)
        session.touchMoved(to: CGPoint(x: 215, y: 430), time: 10.008)
        session.touchMoved(to: CGPoint(x: 240, y: 431), time: 10.016)
        let decision = session.touchEnded(at: CGPoint(x: 270, y: 432), time: 10.024)

        let target = decision?.target  // x = 338: the safe area's right edge, less margin and half the player
        let frame = session.frame(at: 10.1)  // mid-flight: sample it at any frame rate
        // README: end Gestures
        #expect(target?.x == 338)
        #expect(decision?.isThrow == true)
        #expect(frame.midX > 270)
    }
}
