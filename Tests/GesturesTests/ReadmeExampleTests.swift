import Foundation
import Gestures
import Testing

// CoreGraphics brings the geometry's members on Apple platforms (Foundation does on Linux).
#if canImport(CoreGraphics)
    import CoreGraphics
#endif

/// The README's Gestures example, compiled and run. `DocumentationExampleTests` checks that
/// the README shows exactly the lines between the `example` markers.
@Suite("README examples")
struct ReadmeExampleTests {
    @Test("the Gestures example throws the player to the right edge")
    func gesturesExample() {
        // example: begin Gestures
        let layout = FloatingLayout(
            bounds: CGRect(x: 0, y: 0, width: 390, height: 844),
            safeArea: LayoutInsets(top: 47, left: 0, bottom: 34, right: 0),
            playerSize: CGSize(width: 72, height: 72))
        var session = FloatingPlayerSession(layout: layout)  // starts centred

        // A quick swipe to the right, with event timestamps (seconds).
        session.touchBegan(at: CGPoint(x: 195, y: 428), time: 10.000)
        session.touchMoved(to: CGPoint(x: 215, y: 430), time: 10.008)
        session.touchMoved(to: CGPoint(x: 240, y: 431), time: 10.016)
        let end = session.touchEnded(at: CGPoint(x: 270, y: 432), time: 10.024)  // .release: a throw

        let target = end?.decision?.target  // x = 338: the safe area's right edge, less margin and half the player
        let frame = session.frame(at: 10.05)  // mid-flight: sample it at any frame rate
        // example: end Gestures
        #expect(target?.x == 338)
        #expect(end?.decision?.isThrow == true)
        #expect(frame.midX > 270 && frame.midX < 338)
        // The whole flight stays on screen: never past the resting edge at x = 338.
        for millisecond in 0...1_000 {
            #expect(session.center(at: 10.024 + Double(millisecond) / 1_000).x <= 338)
        }
    }
}
