public import Foundation  // TimeInterval

// Geometry comes from CoreGraphics on Apple platforms (Foundation alone brings neither its members
// nor its Hashable conformances there) and from Foundation on Linux.
#if canImport(CoreGraphics)
    import CoreGraphics
#endif

/// How a touch on the player is told apart: a tap, a press, or a drag.
///
/// A finger that moves no further than ``distance`` from where it touched down is not dragging:
/// lifted within ``tapDuration`` it is a tap (the app sends it to the player's model, to play or
/// pause); held longer, a press. Either way the player does not move. The defaults are the
/// platforms': UIKit's pan recognizer starts after about 10 points (Android's touch slop is
/// 8 dp), and a touch held for half a second is a long press (`UILongPressGestureRecognizer`).
public struct TouchSlop: Sendable, Hashable {
    /// How far a finger may move, in points, and still be a tap or a press.
    public var distance: Double
    /// The longest touch, in seconds, that is a tap.
    public var tapDuration: Double

    /// Creates a touch slop; negative or non-finite values are replaced by the defaults.
    public init(distance: Double = 10, tapDuration: Double = 0.5) {
        self.distance = distance.isFinite && distance >= 0 ? distance : 10
        self.tapDuration = tapDuration.isFinite && tapDuration >= 0 ? tapDuration : 0.5
    }
}

/// How a touch on the player ended.
public enum TouchEnd: Sendable, Hashable {
    /// A tap: the finger stayed within the touch slop and lifted within its tap duration. The
    /// player did not move; the app forwards the tap to the player's model.
    case tap
    /// A press: the finger stayed within the touch slop for longer than a tap. The player did
    /// not move.
    case press
    /// A drag was released: the player is thrown or dropped as the decision says.
    case release(SnapDecision)

    /// The release's decision; `nil` for a tap or a press.
    public var decision: SnapDecision? {
        if case .release(let decision) = self { return decision }
        return nil
    }
}

/// The whole life of a draggable floating player: resting, pressed, dragged, thrown, settling,
/// resting.
///
/// Feed it the touch events with their timestamps and ask it where the player is at any time
/// with ``center(at:)``. A display link of any rate (or a test, with no UI at all) drives it by
/// sampling; nothing in it reads a clock.
///
/// ```text
/// resting(anchor) ──touch on player──▶ pressing ──moves past the slop──▶ dragging ──release──▶ settling ──done──▶ resting
///        ▲   ▲                            │                                 ▲                     │
///        │   └──── tap or press ends ─────┘                                 └─ touch interrupts ──┘ (no jump)
///        └──── layout change keeps anchor
/// ```
///
/// A touch that never moves past the ``TouchSlop`` is a tap or a press and leaves the player
/// where it is; a drag starts where the finger crossed the slop, so the player does not jump by
/// the slop's distance.
public struct FloatingPlayerSession: Sendable {
    /// What to do when the player is dragged past the edge of its container.
    public enum Boundary: Sendable, Hashable {
        /// Stop at the edge.
        case clamp
        /// Follow the finger with growing resistance (UIScrollView's 0.55 is the usual coefficient).
        case rubberBand(coefficient: Double)
    }

    /// Where the player is in its gesture.
    public enum Phase: Sendable, Hashable {
        /// At rest on an anchor.
        case resting(SnapAnchor)
        /// A finger is down on the player but has not moved past the touch slop: the player
        /// holds still at `center`.
        case pressing(center: CGPoint)
        /// Following a finger; `grabOffset` is the finger's position minus the player's center.
        case dragging(grabOffset: CGVector)
        /// Moving to an anchor since `startTime`.
        case settling(SnapAnimation, anchor: SnapAnchor, startTime: TimeInterval)
    }

    /// The container, safe area and player size.
    public private(set) var layout: FloatingLayout
    /// How releases are decided.
    public var planner: SnapPlanner
    /// What happens at the container's edge while dragging.
    public var boundary: Boundary
    /// How thrown players move (``ThrowMotion/glide`` by default: no overshoot, never off screen).
    public var throwMotion: ThrowMotion
    /// What tells a tap or press from a drag.
    public var touchSlop: TouchSlop
    /// The current phase (settling may have finished by a later time; see ``phase(at:)``).
    public private(set) var phase: Phase
    /// The last decision, for diagnostics and for views that show where the player is headed.
    public private(set) var lastDecision: SnapDecision?
    private var tracker: VelocityTracker
    /// The center the finger asks for (finger minus grab offset), before the boundary applies.
    private var rawDragCenter: CGPoint
    /// The region the drag is constrained to: the dragging region, widened to take in the point
    /// where a player outside it was caught, so catching it never moves it.
    private var dragRegion: CGRect
    /// Where the player was caught, and the constrained raw center then: the display adds the
    /// change since the catch to the caught point, so an unmoved finger shows it exactly there.
    private var catchPoint: CGPoint
    private var catchConstrained: CGPoint
    /// While pressing: where and when the finger touched down, and the anchor the player returns
    /// to (or goes on to, when it was caught mid-flight) if the touch is not a drag.
    private var press: (location: CGPoint, time: TimeInterval, anchor: SnapAnchor, wasResting: Bool)?

    /// Creates a session with the player resting at `anchor` (the center by default).
    ///
    /// - Parameters:
    ///   - layout: The container, safe area and player size.
    ///   - anchor: Where the player starts.
    ///   - planner: How releases are decided.
    ///   - boundary: What happens at the container's edge while dragging.
    ///   - throwMotion: How thrown players move.
    ///   - touchSlop: What tells a tap or press from a drag.
    public init(
        layout: FloatingLayout,
        anchor: SnapAnchor = .center,
        planner: SnapPlanner = SnapPlanner(),
        boundary: Boundary = .rubberBand(coefficient: 0.55),
        throwMotion: ThrowMotion = .glide,
        touchSlop: TouchSlop = TouchSlop()
    ) {
        self.layout = layout
        self.planner = planner
        self.boundary = boundary
        self.throwMotion = throwMotion
        self.touchSlop = touchSlop
        phase = .resting(anchor)
        tracker = VelocityTracker()
        rawDragCenter = anchor.point(in: layout)
        dragRegion = layout.draggingRegion
        catchPoint = rawDragCenter
        catchConstrained = rawDragCenter
    }

    // MARK: Sampling

    /// The phase at `time`: a settling animation that has finished by then is resting.
    public func phase(at time: TimeInterval) -> Phase {
        // Compare absolute times: `(start + d) - start` can round to just below `d`.
        if case .settling(let animation, let anchor, let start) = phase, time >= start + animation.duration {
            return .resting(anchor)
        }
        return phase
    }

    /// The player's center at `time`.
    ///
    /// - Complexity: O(1).
    public func center(at time: TimeInterval) -> CGPoint {
        switch phase(at: time) {
        case .resting(let anchor): anchor.point(in: layout)
        case .pressing(let center): center
        case .dragging: displayedDragCenter
        case .settling(let animation, _, let start): animation.position(at: time - start)
        }
    }

    /// The player's frame at `time`, for the view to draw.
    public func frame(at time: TimeInterval) -> CGRect {
        layout.frame(center: center(at: time))
    }

    /// The player's velocity at `time`, in points per second (the finger's while dragging).
    public func velocity(at time: TimeInterval) -> CGVector {
        switch phase(at: time) {
        case .resting, .pressing: CGVector(dx: 0, dy: 0)
        case .dragging: tracker.estimate(at: time).velocity
        case .settling(let animation, _, let start): animation.velocity(at: time - start)
        }
    }

    // MARK: Events

    /// A finger touched down at `location`; if the touch is on the player, the player holds
    /// still until the finger moves past the touch slop (a drag) or lifts (a tap or a press).
    ///
    /// A settling player is caught where it is at `time`, so it never jumps.
    ///
    /// - Returns: Whether the touch is on the player.
    @discardableResult
    public mutating func touchBegan(at location: CGPoint, time: TimeInterval) -> Bool {
        guard location.x.isFinite, location.y.isFinite, time.isFinite else { return false }
        switch phase {
        case .dragging, .pressing: return false
        case .resting, .settling: break
        }
        let current = phase(at: time)
        let center = center(at: time)
        guard layout.frame(center: center).contains(location) else { return false }
        let anchor: SnapAnchor
        let wasResting: Bool
        switch current {
        case .resting(let resting):
            anchor = resting
            wasResting = true
        case .settling(_, let target, _):
            anchor = target
            wasResting = false
        case .pressing, .dragging:
            return false
        }
        tracker.reset()
        tracker.add(TouchSample(time: time, location: location))
        press = (location, time, anchor, wasResting)
        phase = .pressing(center: center)
        return true
    }

    /// The finger moved to `location`; past the touch slop, the player follows it from there.
    public mutating func touchMoved(to location: CGPoint, time: TimeInterval) {
        guard location.x.isFinite, location.y.isFinite, time.isFinite else { return }
        switch phase {
        case .pressing(let center):
            tracker.add(TouchSample(time: time, location: location))
            guard let press else { return }
            let dx = Double(location.x - press.location.x)
            let dy = Double(location.y - press.location.y)
            let moved = hypot(dx, dy)
            guard moved > touchSlop.distance else { return }
            // The drag starts where the finger crossed the slop: from there the player follows
            // the finger's further motion, so it does not jump by the slop's distance.
            let along = moved > 0 ? touchSlop.distance / moved : 0
            let crossing = CGPoint(
                x: Double(press.location.x) + dx * along, y: Double(press.location.y) + dy * along)
            beginDrag(center: center, grabbedAt: crossing)
            self.press = nil
            moveDrag(to: location)
        case .dragging:
            tracker.add(TouchSample(time: time, location: location))
            moveDrag(to: location)
        case .resting, .settling:
            return
        }
    }

    /// The finger lifted at `location`: a tap or a press leaves the player where it is; a drag
    /// is thrown or dropped, and settles.
    ///
    /// - Returns: How the touch ended, or `nil` when no touch on the player was in progress.
    @discardableResult
    public mutating func touchEnded(at location: CGPoint, time: TimeInterval) -> TouchEnd? {
        guard time.isFinite else { return nil }
        switch phase {
        case .pressing:
            touchMoved(to: location, time: time)
            guard case .pressing(let center) = phase, let press else { return release(time: time) }
            endPress(center: center, press: press, time: time)
            return time - press.time <= touchSlop.tapDuration ? .tap : .press
        case .dragging:
            touchMoved(to: location, time: time)
            return release(time: time)
        case .resting, .settling:
            return nil
        }
    }

    /// The touch was cancelled by the system: a dragged player settles as if dropped, without
    /// velocity; a pressed one goes back to what it was doing. Nothing counts as a tap.
    ///
    /// - Returns: The drop's decision, or `nil` when no drag was in progress.
    @discardableResult
    public mutating func touchCancelled(time: TimeInterval) -> SnapDecision? {
        guard time.isFinite else { return nil }
        switch phase {
        case .pressing(let center):
            if let press { endPress(center: center, press: press, time: time) }
            return nil
        case .dragging:
            return release(velocity: CGVector(dx: 0, dy: 0), time: time)
        case .resting, .settling:
            return nil
        }
    }

    /// The container changed (rotation, split view, keyboard): a resting or settling player keeps
    /// its anchor in the new layout; a settling one turns towards it from where it is, at the
    /// speed it has.
    public mutating func updateLayout(_ newLayout: FloatingLayout, time: TimeInterval) {
        switch phase(at: time) {
        case .resting(let anchor):
            layout = newLayout
            phase = .resting(anchor)
        case .pressing(let center):
            layout = newLayout
            // A resting player held by a finger moves with its anchor; a caught one stays caught.
            if let press, press.wasResting {
                phase = .pressing(center: press.anchor.point(in: newLayout))
            } else {
                phase = .pressing(center: center)
            }
        case .dragging:
            let shown = displayedDragCenter
            layout = newLayout
            dragRegion = newLayout.draggingRegion.union(CGRect(origin: shown, size: .zero))
            catchPoint = shown
            catchConstrained = constrained(rawDragCenter)
        case .settling(_, let anchor, _):
            let position = center(at: time)
            let velocity = velocity(at: time)
            layout = newLayout
            let animation = SnapAnimation(
                from: position, to: anchor.point(in: newLayout), velocity: velocity, motion: throwMotion,
                within: newLayout.restingRegion)
            phase = .settling(animation, anchor: anchor, startTime: time)
        }
    }

    // MARK: Private

    /// Releases a drag with the tracker's velocity estimate.
    private mutating func release(time: TimeInterval) -> TouchEnd {
        .release(release(velocity: tracker.estimate(at: time).velocity, time: time))
    }

    private mutating func release(velocity: CGVector, time: TimeInterval) -> SnapDecision {
        let released = displayedDragCenter
        let decision = planner.decide(releasedAt: released, velocity: velocity, in: layout)
        let animation = SnapAnimation(
            from: released, to: decision.target, velocity: decision.releaseVelocity, motion: throwMotion,
            within: layout.restingRegion)
        phase = .settling(animation, anchor: decision.anchor, startTime: time)
        lastDecision = decision
        tracker.reset()
        return decision
    }

    /// Ends a tap or press: a resting player rests on; a player caught mid-flight settles from
    /// where it was caught to the anchor it was going to.
    private mutating func endPress(
        center: CGPoint, press: (location: CGPoint, time: TimeInterval, anchor: SnapAnchor, wasResting: Bool),
        time: TimeInterval
    ) {
        self.press = nil
        tracker.reset()
        if press.wasResting {
            phase = .resting(press.anchor)
        } else {
            let animation = SnapAnimation(
                from: center, to: press.anchor.point(in: layout), velocity: CGVector(dx: 0, dy: 0))
            phase = .settling(animation, anchor: press.anchor, startTime: time)
        }
    }

    /// Starts a drag of the player at `center`, held by a finger at `grab`.
    private mutating func beginDrag(center: CGPoint, grabbedAt grab: CGPoint) {
        let region = layout.draggingRegion
        switch boundary {
        case .clamp:
            // Widen only when needed: a union's recomputed edges can round off by an ulp.
            dragRegion = region.clamping(center) == center ? region : region.union(CGRect(origin: center, size: .zero))
            rawDragCenter = center
        case .rubberBand(let coefficient):
            dragRegion = region
            // The raw center whose rubber-banded position is exactly where the player is now.
            rawDragCenter = CGPoint(
                x: Self.unbanded(Double(center.x), Double(region.minX), Double(region.maxX), coefficient),
                y: Self.unbanded(Double(center.y), Double(region.minY), Double(region.maxY), coefficient))
        }
        catchPoint = center
        catchConstrained = constrained(rawDragCenter)
        phase = .dragging(grabOffset: CGVector(dx: grab.x - rawDragCenter.x, dy: grab.y - rawDragCenter.y))
    }

    /// Moves a dragged player's raw center with the finger.
    private mutating func moveDrag(to location: CGPoint) {
        guard case .dragging(let offset) = phase else { return }
        rawDragCenter = CGPoint(x: location.x - offset.dx, y: location.y - offset.dy)
    }

    /// The dragged player's center as shown: the caught point moved by the constrained motion since.
    private var displayedDragCenter: CGPoint {
        let now = constrained(rawDragCenter)
        // Usually the catch is exact already and no correction (nor its rounding) is needed.
        guard catchPoint != catchConstrained else { return now }
        return CGPoint(x: now.x + (catchPoint.x - catchConstrained.x), y: now.y + (catchPoint.y - catchConstrained.y))
    }

    /// Keeps a dragged center within the container, clamped or rubber-banded.
    private func constrained(_ point: CGPoint) -> CGPoint {
        let region = dragRegion
        switch boundary {
        case .clamp:
            return region.clamping(point)
        case .rubberBand(let coefficient):
            return CGPoint(
                x: Self.rubberBand(Double(point.x), Double(region.minX), Double(region.maxX), coefficient),
                y: Self.rubberBand(Double(point.y), Double(region.minY), Double(region.maxY), coefficient))
        }
    }

    /// UIScrollView's rubber band: past an edge, `overshoot` shows as
    /// `(1 − 1 / (overshoot · c / d + 1)) · d`, where `d` is the extent of the region.
    static func rubberBand(_ value: Double, _ low: Double, _ high: Double, _ coefficient: Double) -> Double {
        let extent = Swift.max(high - low, 1)
        let c = coefficient.isFinite && coefficient > 0 ? coefficient : 0.55
        func band(_ overshoot: Double) -> Double { (1 - 1 / (overshoot * c / extent + 1)) * extent }
        if value < low { return low - band(low - value) }
        if value > high { return high + band(value - high) }
        return value
    }

    /// The inverse of ``rubberBand(_:_:_:_:)``: the raw value that shows as `value`.
    static func unbanded(_ value: Double, _ low: Double, _ high: Double, _ coefficient: Double) -> Double {
        let extent = Swift.max(high - low, 1)
        let c = coefficient.isFinite && coefficient > 0 ? coefficient : 0.55
        // band = (1 − 1/(o·c/d + 1))·d  ⇒  o = d·(1/(1 − band/d) − 1)/c, for band < d.
        func overshoot(_ band: Double) -> Double {
            let ratio = Swift.min(band / extent, 1 - 1e-9)
            return extent * (1 / (1 - ratio) - 1) / c
        }
        if value < low { return low - overshoot(low - value) }
        if value > high { return high + overshoot(value - high) }
        return value
    }
}

extension FloatingPlayerSession.Phase {
    /// Hashes the case and its values (`CGPoint` and `CGVector` are `Hashable` only from iOS 18).
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .resting(let anchor):
            hasher.combine(0)
            hasher.combine(anchor)
        case .pressing(let center):
            hasher.combine(1)
            hasher.combine(point: center)
        case .dragging(let grabOffset):
            hasher.combine(2)
            hasher.combine(vector: grabOffset)
        case .settling(let animation, let anchor, let startTime):
            hasher.combine(3)
            hasher.combine(animation)
            hasher.combine(anchor)
            hasher.combine(startTime)
        }
    }
}
