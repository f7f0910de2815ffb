import Foundation
import Gestures
import TestSupport
import Testing

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
        return session.touchEnded(at: end, time: start + duration)
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
        #expect(session.center(at: 0.1) == CGPoint(x: 245, y: 528.5))
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
            let end = CGPoint(
                x: Double.random(in: 0...390, using: &generator), y: Double.random(in: 0...844, using: &generator))
            let duration = Double.random(in: 0.05...0.4, using: &generator)
            let decision = try #require(throwPlayer(&session, to: end, duration: duration), "seed \(seed)")
            guard case .settling(let animation, let anchor, let startTime) = session.phase else {
                Issue.record("seed \(seed): not settling")
                continue
            }
            #expect(startTime == duration)
            #expect(session.center(at: duration) == animation.start, "seed \(seed)")
            let velocity = session.velocity(at: duration)
            #expect(abs(velocity.dx - decision.releaseVelocity.dx) < 1e-6, "seed \(seed)")
            #expect(abs(velocity.dy - decision.releaseVelocity.dy) < 1e-6, "seed \(seed)")
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
            let end = CGPoint(
                x: Double.random(in: 0...390, using: &generator), y: Double.random(in: 0...844, using: &generator))
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
}
