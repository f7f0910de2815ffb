import Foundation
import Gestures
import TestSupport
import Testing

// CoreGraphics brings the geometry's members on Apple platforms (Foundation does on Linux).
#if canImport(CoreGraphics)
    import CoreGraphics
#endif

/// A phone in portrait: 390 × 844 points with a notch and a home indicator, a 72-point player.
let phone = FloatingLayout(
    bounds: CGRect(x: 0, y: 0, width: 390, height: 844),
    safeArea: LayoutInsets(top: 47, left: 0, bottom: 34, right: 0),
    playerSize: CGSize(width: 72, height: 72))

@Suite("Snap planning")
struct SnapPlannerTests {
    let region = phone.restingRegion

    @Test("the resting region keeps the player inside the safe area with its margin")
    func restingRegion() {
        #expect(region == CGRect(x: 52, y: 99, width: 286, height: 659))
    }

    @Test(
        "a drop goes to the nearest edge",
        arguments: [
            (CGPoint(x: 60, y: 400), CGPoint(x: 52, y: 400)),
            (CGPoint(x: 330, y: 300), CGPoint(x: 338, y: 300)),
            (CGPoint(x: 200, y: 110), CGPoint(x: 200, y: 99)),
            // Dropped at the bottom: the bottom edge, not a side.
            (CGPoint(x: 150, y: 800), CGPoint(x: 150, y: 758)),
        ]
    )
    func drop(release: CGPoint, target: CGPoint) {
        let decision = SnapPlanner().decide(releasedAt: release, velocity: CGVector(dx: 10, dy: 10), in: phone)
        #expect(!decision.isThrow)
        #expect(decision.target == target)
    }

    @Test(
        "a weak flick goes where its dominant axis points, even when another edge is nearer",
        arguments: [
            (CGVector(dx: -300, dy: 40), CGFloat(52)),
            (CGVector(dx: 300, dy: -40), CGFloat(338)),
        ]
    )
    func weakFlick(velocity: CGVector, edgeX: CGFloat) {
        // Released near the top, where the top edge is nearest.
        let decision = SnapPlanner().decide(releasedAt: CGPoint(x: 195, y: 120), velocity: velocity, in: phone)
        #expect(decision.isThrow)
        #expect(decision.target.x == edgeX)
    }

    @Test("a mostly horizontal throw loses most of its vertical drift")
    func offAxisDamping() {
        let decision = SnapPlanner().decide(
            releasedAt: CGPoint(x: 195, y: 400), velocity: CGVector(dx: 2_000, dy: 500), in: phone)
        #expect(decision.releaseVelocity == CGVector(dx: 2_000, dy: 125))
        #expect(decision.target.x == 338)
        #expect(abs(Double(decision.target.y) - (400 + 125 / (-1_000 * log(0.998)))) < 1e-9)
    }

    @Test("corners only: the nearest corner, or the one the throw points to")
    func corners() {
        let planner = SnapPlanner(policy: .cornersOnly)
        #expect(
            planner.decide(releasedAt: CGPoint(x: 100, y: 700), velocity: .zero, in: phone).target
                == CGPoint(x: 52, y: 758))
        let thrown = planner.decide(releasedAt: CGPoint(x: 100, y: 700), velocity: CGVector(dx: 0, dy: -400), in: phone)
        #expect(thrown.target == CGPoint(x: 52, y: 99))
    }

    @Test("corner magnets pull an edge point near a corner into it")
    func magnets() {
        let planner = SnapPlanner(policy: .edgesWithCornerMagnets(radius: 60))
        #expect(
            planner.decide(releasedAt: CGPoint(x: 60, y: 140), velocity: .zero, in: phone).target
                == CGPoint(x: 52, y: 99))
        #expect(
            planner.decide(releasedAt: CGPoint(x: 60, y: 400), velocity: .zero, in: phone).target
                == CGPoint(x: 52, y: 400))
    }

    @Test("free drop rests where the throw ends, inside the region")
    func freeDrop() {
        let planner = SnapPlanner(policy: .freeDrop)
        let decision = planner.decide(releasedAt: CGPoint(x: 195, y: 400), velocity: .zero, in: phone)
        #expect(decision.target == CGPoint(x: 195, y: 400))
        let far = planner.decide(releasedAt: CGPoint(x: 195, y: 400), velocity: CGVector(dx: 0, dy: 8_000), in: phone)
        #expect(far.target == CGPoint(x: 195, y: 758))
    }

    @Test("perimeter anchors round-trip and survive rotation")
    func anchorsSurviveRotation() throws {
        let rightMiddle = CGPoint(x: region.maxX, y: region.midY)
        let anchor = SnapAnchor.perimeter(nearest: rightMiddle, in: region)
        #expect(anchor.point(in: phone) == rightMiddle)
        let landscape = FloatingLayout(
            bounds: CGRect(x: 0, y: 0, width: 844, height: 390),
            safeArea: LayoutInsets(top: 0, left: 47, bottom: 21, right: 47), playerSize: phone.playerSize)
        #expect(anchor == .perimeter(0.375))
        let rotated = anchor.point(in: landscape)
        let newRegion = landscape.restingRegion
        // Same edge, same relative position: halfway down the right edge.
        #expect(rotated == CGPoint(x: newRegion.maxX, y: newRegion.midY))
        #expect(SnapAnchor.perimeter(0.5).point(in: landscape) == CGPoint(x: newRegion.maxX, y: newRegion.maxY))
        #expect(SnapAnchor.center.point(in: landscape) == CGPoint(x: newRegion.midX, y: newRegion.midY))
    }

    /// Random layouts, releases and velocities (2,000 seeds): the anchor is always inside the
    /// safe area, with the whole player frame in it.
    @Test("anchors are always inside the safe area")
    func anchorsInsideSafeArea() {
        let policies: [SnapPolicy] = [.nearestEdge, .cornersOnly, .edgesWithCornerMagnets(radius: 50), .freeDrop]
        for seed in UInt64(0)..<2_000 {
            var generator = SplitMix64(seed: seed)
            func random(_ range: ClosedRange<Double>) -> Double { Double.random(in: range, using: &generator) }
            let layout = FloatingLayout(
                bounds: CGRect(
                    x: random(-50...50), y: random(-50...50), width: random(200...1_200), height: random(200...1_200)),
                safeArea: LayoutInsets(
                    top: random(0...60), left: random(0...60), bottom: random(0...60), right: random(0...60)),
                playerSize: CGSize(width: random(40...120), height: random(40...120)))
            let planner = SnapPlanner(policy: policies[Int(seed % 4)])
            let release = CGPoint(x: random(-500...1_500), y: random(-500...1_500))
            let velocity = CGVector(dx: random(-9_000...9_000), dy: random(-9_000...9_000))
            let decision = planner.decide(releasedAt: release, velocity: velocity, in: layout)
            let frame = layout.frame(center: decision.anchor.point(in: layout))
            let safe = CGRect(
                x: layout.bounds.minX + layout.safeArea.left, y: layout.bounds.minY + layout.safeArea.top,
                width: layout.bounds.width - layout.safeArea.left - layout.safeArea.right,
                height: layout.bounds.height - layout.safeArea.top - layout.safeArea.bottom)
            // Edges compared directly: CGRect.contains(CGRect) is `union == self`, which rounding
            // breaks. On an axis where the player (with its margins) does not fit, it is centred.
            let fitsX = layout.playerSize.width + 2 * layout.margin <= safe.width
            let fitsY = layout.playerSize.height + 2 * layout.margin <= safe.height
            let insideX =
                fitsX
                ? frame.minX >= safe.minX - 1e-6 && frame.maxX <= safe.maxX + 1e-6 : abs(frame.midX - safe.midX) < 1e-6
            let insideY =
                fitsY
                ? frame.minY >= safe.minY - 1e-6 && frame.maxY <= safe.maxY + 1e-6 : abs(frame.midY - safe.midY) < 1e-6
            #expect(insideX && insideY, "seed \(seed)")
            let target = decision.target
            let anchored = decision.anchor.point(in: layout)
            #expect(abs(target.x - anchored.x) < 1e-6 && abs(target.y - anchored.y) < 1e-6, "seed \(seed)")
        }
    }
}

@Suite("Floating player session")
struct FloatingPlayerSessionTests {
    /// A random point on the phone's screen at least 20 points from its center, so that a drag
    /// there passes the touch slop.
    func farPoint(using generator: inout SplitMix64) -> CGPoint {
        while true {
            let point = CGPoint(
                x: Double.random(in: 0...390, using: &generator), y: Double.random(in: 0...844, using: &generator))
            if hypot(Double(point.x) - 195, Double(point.y) - 428.5) > 20 { return point }
        }
    }

    /// Drags the player from its center to `to` over `duration` seconds at 120 Hz, then lifts.
    func throwPlayer(
        _ session: inout FloatingPlayerSession, to end: CGPoint, duration: Double, start: Double = 0
    ) -> SnapDecision? {
        let from = session.center(at: start)
        let grabbed = session.touchBegan(at: from, time: start)
        #expect(grabbed)
        let frames = Int(duration * 120)
        for frame in 1...frames {
            let f = Double(frame) / Double(frames)
            session.touchMoved(
                to: CGPoint(
                    x: Double(from.x) + Double(end.x - from.x) * f, y: Double(from.y) + Double(end.y - from.y) * f),
                time: start + duration * f)
        }
        return session.touchEnded(at: end, time: start + duration)?.decision
    }

    @Test("the player starts centred and follows the finger with its grab offset")
    func drag() {
        var session = FloatingPlayerSession(layout: phone, boundary: .clamp)
        let center = session.center(at: 0)
        #expect(center == CGPoint(x: 195, y: 428.5))
        let missed = session.touchBegan(at: CGPoint(x: 10, y: 10), time: 0)
        #expect(!missed)
        let grabbed = session.touchBegan(at: CGPoint(x: 205, y: 420), time: 0)
        #expect(grabbed)
        session.touchMoved(to: CGPoint(x: 255, y: 520), time: 0.1)
        // The drag counts from where the finger crossed the 10-point slop, on its way.
        let beyond = 1 - 10 / hypot(50.0, 100.0)
        let followed = session.center(at: 0.1)
        #expect(abs(Double(followed.x) - (195 + 50 * beyond)) < 1e-9)
        #expect(abs(Double(followed.y) - (428.5 + 100 * beyond)) < 1e-9)
        session.touchMoved(to: CGPoint(x: 2_000, y: 520), time: 0.2)
        // Clamped at the container's right edge: 390 minus half the player.
        let rightmost: CGFloat = 354
        #expect(session.center(at: 0.2).x == rightmost)
    }

    @Test("past the edge, the rubber band resists more the further it goes")
    func rubberBand() {
        var session = FloatingPlayerSession(layout: phone)
        session.touchBegan(at: CGPoint(x: 195, y: 428.5), time: 0)
        var overshoots: [CGFloat] = []
        for x in [400.0, 500, 700, 1_100] {
            session.touchMoved(to: CGPoint(x: x, y: 428.5), time: 0.1)
            overshoots.append(session.center(at: 0.1).x - 354)
        }
        #expect(overshoots[0] > 0)
        #expect(zip(overshoots, overshoots.dropFirst()).allSatisfy { $0 < $1 })
        #expect(overshoots[3] < 1_100 - 354)
    }

    /// 500 random throws: the animation starts at the release point with the release velocity,
    /// and ends at rest exactly on the anchor.
    @Test("a throw's animation starts at the release with its velocity and ends at rest on the anchor")
    func throwContinuity() throws {
        for seed in UInt64(0)..<500 {
            var generator = SplitMix64(seed: seed)
            var session = FloatingPlayerSession(layout: phone)
            let end = farPoint(using: &generator)
            let duration = Double.random(in: 0.05...0.4, using: &generator)
            let decision = try #require(throwPlayer(&session, to: end, duration: duration), "seed \(seed)")
            guard case .settling(let animation, let anchor, let startTime) = session.phase else {
                Issue.record("seed \(seed): not settling")
                continue
            }
            #expect(startTime == duration)
            #expect(session.center(at: duration) == animation.start, "seed \(seed)")
            // Each axis leaves at its release velocity, unless it was released at or past the
            // resting region's edge and thrown further out: then it starts at rest.
            let velocity = session.velocity(at: duration)
            let region = phone.restingRegion
            let outwardX =
                (animation.start.x <= region.minX && decision.releaseVelocity.dx < 0)
                || (animation.start.x >= region.maxX && decision.releaseVelocity.dx > 0)
            let outwardY =
                (animation.start.y <= region.minY && decision.releaseVelocity.dy < 0)
                || (animation.start.y >= region.maxY && decision.releaseVelocity.dy > 0)
            #expect(
                abs(velocity.dx - decision.releaseVelocity.dx) < 1e-6 || (outwardX && velocity.dx == 0), "seed \(seed)")
            #expect(
                abs(velocity.dy - decision.releaseVelocity.dy) < 1e-6 || (outwardY && velocity.dy == 0), "seed \(seed)")
            let rest = duration + animation.duration
            #expect(session.center(at: rest) == anchor.point(in: phone), "seed \(seed)")
            #expect(session.velocity(at: rest) == CGVector(dx: 0, dy: 0), "seed \(seed)")
            // Just before the end it is already within half a point: no visible jump at the end.
            let nearlyDone = session.center(at: rest - 0.001)
            #expect(
                abs(nearlyDone.x - decision.target.x) <= 0.5 && abs(nearlyDone.y - decision.target.y) <= 0.5,
                "seed \(seed)")
            if case .resting(let resting) = session.phase(at: rest) {
                #expect(resting == anchor)
            } else {
                Issue.record("seed \(seed): not resting at the end")
            }
        }
    }

    @Test("sampling at 30 Hz and at 120 Hz traces the same path")
    func frameRateIndependence() throws {
        var session = FloatingPlayerSession(layout: phone)
        _ = try #require(throwPlayer(&session, to: CGPoint(x: 300, y: 300), duration: 0.1))
        for frame in 0..<30 {
            let time = 0.1 + Double(frame) / 30
            // A 120 Hz display samples this same instant every fourth frame.
            let fast = session.center(at: 0.1 + Double(frame * 4) / 120)
            let slow = session.center(at: time)
            #expect(abs(fast.x - slow.x) < 1e-9 && abs(fast.y - slow.y) < 1e-9)
        }
    }

    /// 500 random interruptions: catching a settling player never moves it, and letting go at
    /// once leaves it where it was caught, moving at the speed it had.
    @Test("interrupting a snap and resuming never moves the player")
    func interruption() throws {
        for seed in UInt64(0)..<500 {
            var generator = SplitMix64(seed: seed)
            var session = FloatingPlayerSession(layout: phone)
            let end = farPoint(using: &generator)
            _ = try #require(throwPlayer(&session, to: end, duration: 0.1))
            let caught = 0.1 + Double.random(in: 0...0.3, using: &generator)
            let before = session.center(at: caught)
            let grabbed = session.touchBegan(at: before, time: caught)
            #expect(grabbed, "seed \(seed)")
            #expect(session.center(at: caught) == before, "seed \(seed)")
            session.touchMoved(to: before, time: caught + 0.008)
            #expect(session.center(at: caught + 0.008) == before, "seed \(seed)")
            session.touchEnded(at: before, time: caught + 0.016)
            #expect(session.center(at: caught + 0.016) == before, "seed \(seed)")
        }
    }

    @Test("a layout change keeps a resting player on its anchor, and turns a settling one towards it")
    func layoutChanges() throws {
        var session = FloatingPlayerSession(layout: phone)
        _ = try #require(throwPlayer(&session, to: CGPoint(x: 380, y: 400), duration: 0.1))
        let landscape = FloatingLayout(
            bounds: CGRect(x: 0, y: 0, width: 844, height: 390), safeArea: .zero, playerSize: phone.playerSize)
        let midway = 0.15
        let position = session.center(at: midway)
        session.updateLayout(landscape, time: midway)
        #expect(session.center(at: midway) == position)
        guard case .settling(let animation, let anchor, _) = session.phase else {
            Issue.record("not settling")
            return
        }
        #expect(session.center(at: midway + animation.duration) == anchor.point(in: landscape))
        session.updateLayout(phone, time: 10)
        #expect(session.center(at: 10) == anchor.point(in: phone))
    }

    @Test("a cancelled touch settles like a drop; stray events are ignored")
    func cancellation() {
        var session = FloatingPlayerSession(layout: phone)
        let ended = session.touchEnded(at: .zero, time: 0)
        #expect(ended == nil)
        session.touchMoved(to: .zero, time: 0)
        #expect(session.center(at: 0) == CGPoint(x: 195, y: 428.5))
        session.touchBegan(at: CGPoint(x: 195, y: 428.5), time: 0)
        session.touchMoved(to: CGPoint(x: 100, y: 428.5), time: 0.05)
        let decision = session.touchCancelled(time: 0.06)
        #expect(decision?.isThrow == false)
        let grabbed = session.touchBegan(at: CGPoint(x: CGFloat.nan, y: 0), time: 1)
        #expect(!grabbed)
    }

    // MARK: Taps and drags (the audio brief: tapping play must not move the player)

    @Test(
        "a tap is a tap: reported as one, and the player does not move",
        arguments: [
            (CGPoint(x: 195, y: 428.5), [CGPoint](), 0.1),
            (CGPoint(x: 200, y: 430), [CGPoint(x: 203, y: 434), CGPoint(x: 207, y: 437)], 0.2),
            (CGPoint(x: 170, y: 410), [CGPoint(x: 179, y: 410)], 0.5),
        ] as [(CGPoint, [CGPoint], Double)]
    )
    func tap(down: CGPoint, moves: [CGPoint], duration: Double) {
        var session = FloatingPlayerSession(layout: phone)
        let center = session.center(at: 0)
        let grabbed = session.touchBegan(at: down, time: 0)
        #expect(grabbed)
        for (index, point) in moves.enumerated() {
            session.touchMoved(to: point, time: duration * Double(index + 1) / Double(moves.count + 1))
            #expect(session.center(at: duration / 2) == center)
        }
        let end = session.touchEnded(at: moves.last ?? down, time: duration)
        #expect(end == .tap)
        for time in stride(from: duration, through: duration + 2, by: 0.05) {
            #expect(session.center(at: time) == center)
        }
        #expect(session.phase == .resting(.center))
    }

    @Test("a long touch that never moves past the slop is a press: the player does not move either")
    func press() {
        var session = FloatingPlayerSession(layout: phone)
        let center = session.center(at: 0)
        session.touchBegan(at: center, time: 0)
        session.touchMoved(to: CGPoint(x: center.x + 4, y: center.y), time: 0.4)
        let end = session.touchEnded(at: CGPoint(x: center.x + 4, y: center.y), time: 0.9)
        #expect(end == .press)
        #expect(session.center(at: 2) == center)
    }

    @Test("the slop is configurable: with a 30-point slop, a 20-point wiggle is still a tap")
    func configurableSlop() {
        var session = FloatingPlayerSession(layout: phone, touchSlop: TouchSlop(distance: 30, tapDuration: 0.3))
        let center = session.center(at: 0)
        session.touchBegan(at: center, time: 0)
        session.touchMoved(to: CGPoint(x: center.x + 20, y: center.y), time: 0.1)
        let first = session.touchEnded(at: CGPoint(x: center.x + 20, y: center.y), time: 0.2)
        #expect(first == .tap)
        let grabbed = session.touchBegan(at: center, time: 1)
        #expect(grabbed)
        let second = session.touchEnded(at: center, time: 1.4)
        #expect(second == .press)
    }

    /// 500 random drags: the player holds still inside the slop, and once the finger crosses
    /// it the player moves only by the finger's motion beyond the crossing: no jump.
    @Test("a drag starts where the finger crossed the slop, without a jump")
    func dragFromSlopCrossing() {
        for seed in UInt64(0)..<500 {
            var generator = SplitMix64(seed: seed)
            var session = FloatingPlayerSession(layout: phone, boundary: .clamp)
            let center = session.center(at: 0)
            let down = CGPoint(
                x: Double(center.x) + Double.random(in: -30...30, using: &generator),
                y: Double(center.y) + Double.random(in: -30...30, using: &generator))
            session.touchBegan(at: down, time: 0)
            let angle = Double.random(in: 0..<(2 * .pi), using: &generator)
            var previous = center
            for step in 1...40 {
                let distance = Double(step) * 1.5
                let finger = CGPoint(
                    x: Double(down.x) + distance * cos(angle), y: Double(down.y) + distance * sin(angle))
                session.touchMoved(to: finger, time: Double(step) / 120)
                let now = session.center(at: Double(step) / 120)
                let expected = max(0, distance - 10)
                #expect(
                    abs(hypot(Double(now.x - center.x), Double(now.y - center.y)) - expected) < 1e-6, "seed \(seed)")
                // Never more than the finger's own step (1.5 points) between two events.
                #expect(hypot(Double(now.x - previous.x), Double(now.y - previous.y)) <= 1.5 + 1e-9, "seed \(seed)")
                previous = now
            }
        }
    }

    // MARK: Throws stay on screen (the audio brief: accelerate, decelerate near the edge, stick)

    /// 2,000 random throws on random screens, in both orientations, with random safe areas and
    /// players: sampled every millisecond, the player's center never leaves the resting region
    /// (the safe area less its margin and half the player), beyond where it was released.
    @Test("a throw never leaves the screen, whatever its velocity, size or rotation")
    func throwsStayOnScreen() {
        for seed in UInt64(0)..<2_000 {
            var generator = SplitMix64(seed: seed)
            var width = Double.random(in: 320...1_366, using: &generator)
            var height = Double.random(in: 480...1_024, using: &generator)
            if Bool.random(using: &generator) { swap(&width, &height) }
            let player = Double.random(in: 44...120, using: &generator)
            let layout = FloatingLayout(
                bounds: CGRect(x: 0, y: 0, width: width, height: height),
                safeArea: LayoutInsets(
                    top: Double.random(in: 0...59, using: &generator),
                    left: Double.random(in: 0...47, using: &generator),
                    bottom: Double.random(in: 0...34, using: &generator),
                    right: Double.random(in: 0...47, using: &generator)),
                playerSize: CGSize(width: player, height: player))
            let region = layout.restingRegion
            let release = CGPoint(
                x: Double.random(in: Double(region.minX)...Double(region.maxX), using: &generator),
                y: Double.random(in: Double(region.minY)...Double(region.maxY), using: &generator))
            let velocity = CGVector(
                dx: Double.random(in: -12_000...12_000, using: &generator),
                dy: Double.random(in: -12_000...12_000, using: &generator))
            let decision = SnapPlanner().decide(releasedAt: release, velocity: velocity, in: layout)
            let animation = SnapAnimation(
                from: release, to: decision.target, velocity: decision.releaseVelocity, within: region)
            #expect(animation.velocity(at: 0) == decision.releaseVelocity, "seed \(seed)")
            for millisecond in 0...Int((animation.duration * 1_000).rounded(.up)) {
                let point = animation.position(at: Double(millisecond) / 1_000)
                guard point.x >= region.minX - 1e-9, point.x <= region.maxX + 1e-9, point.y >= region.minY - 1e-9,
                    point.y <= region.maxY + 1e-9
                else {
                    Issue.record("seed \(seed): \(point) left \(region) at \(millisecond) ms")
                    break
                }
            }
            #expect(animation.position(at: animation.duration) == decision.target, "seed \(seed)")
        }
    }

    @Test("a spring, by contrast, overshoots the edge when thrown hard: why the glide is the default")
    func springOvershoots() {
        let region = phone.restingRegion
        let spring = SnapAnimation(
            from: CGPoint(x: 270, y: 432), to: CGPoint(x: 338, y: 432), velocity: CGVector(dx: 3_000, dy: 0),
            motion: .spring(Spring(response: 0.45, dampingFraction: 1)))
        let farthest =
            stride(from: 0.0, through: spring.duration, by: 0.001).map { spring.position(at: $0).x }.max() ?? 0
        #expect(farthest > region.maxX + 30)
        let glide = SnapAnimation(
            from: CGPoint(x: 270, y: 432), to: CGPoint(x: 338, y: 432), velocity: CGVector(dx: 3_000, dy: 0),
            within: region)
        let glideFarthest =
            stride(from: 0.0, through: glide.duration, by: 0.001).map { glide.position(at: $0).x }.max() ?? 0
        #expect(glideFarthest <= region.maxX)
    }

    @Test(
        "a fast throw only decelerates into the edge; a slow one first accelerates, then decelerates",
        arguments: [(3_000.0, false), (150.0, true)])
    func easing(velocity: Double, accelerates: Bool) {
        let motion = GlideMotion(from: 200, to: 338, initialVelocity: velocity, within: 52...338)
        let speeds = stride(from: 0.0, through: motion.duration, by: motion.duration / 50).map {
            motion.velocity(at: $0)
        }
        #expect(speeds.first == velocity)
        #expect(abs(speeds.last ?? 1) < 1e-9)
        let peak = speeds.max() ?? 0
        #expect(accelerates ? peak > velocity * 1.5 : peak == velocity)
        // Monotone towards the edge: never back, never past.
        let positions = stride(from: 0.0, through: motion.duration, by: motion.duration / 200).map {
            motion.position(at: $0)
        }
        #expect(zip(positions, positions.dropFirst()).allSatisfy { $0 <= $1 + 1e-9 })
        #expect(positions.allSatisfy { $0 <= 338 + 1e-9 })
    }

    @Test("a layout change mid-flight (the keyboard rises) keeps the position and the velocity: no jump, no jolt")
    func layoutChangeContinuity() throws {
        var session = FloatingPlayerSession(layout: phone)
        _ = try #require(throwPlayer(&session, to: CGPoint(x: 300, y: 450), duration: 0.1))
        let midway = 0.12
        let position = session.center(at: midway)
        let velocity = session.velocity(at: midway)
        #expect(velocity.dx > 0)
        let keyboard = FloatingLayout(
            bounds: phone.bounds, safeArea: LayoutInsets(top: 47, left: 0, bottom: 300, right: 0),
            playerSize: phone.playerSize)
        #expect(keyboard.restingRegion.contains(position))
        session.updateLayout(keyboard, time: midway)
        #expect(session.center(at: midway) == position)
        let after = session.velocity(at: midway)
        #expect(abs(after.dx - velocity.dx) < 1e-6 && abs(after.dy - velocity.dy) < 1e-6)
    }
}
