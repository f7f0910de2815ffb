public import Foundation

/// The whole life of a draggable floating player: resting, dragged, thrown, settling, resting.
///
/// Feed it the touch events with their timestamps and ask it where the player is at any time
/// with ``center(at:)``. A display link of any rate (or a test, with no UI at all) drives it by
/// sampling; nothing in it reads a clock.
///
/// ```
/// resting(anchor) ──touch on player──▶ dragging ──release──▶ settling(animation) ──done──▶ resting
///        ▲                                 ▲                        │
///        └──── layout change keeps anchor  └──── touch interrupts ──┘ (no jump)
/// ```
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
    /// The spring for thrown players.
    public var spring: Spring
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

    /// Creates a session with the player resting at `anchor` (the center by default).
    public init(
        layout: FloatingLayout,
        anchor: SnapAnchor = .center,
        planner: SnapPlanner = SnapPlanner(),
        boundary: Boundary = .rubberBand(coefficient: 0.55),
        spring: Spring = Spring(response: 0.45, dampingFraction: 1)
    ) {
        self.layout = layout
        self.planner = planner
        self.boundary = boundary
        self.spring = spring
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
        case .resting: CGVector(dx: 0, dy: 0)
        case .dragging: tracker.estimate(at: time).velocity
        case .settling(let animation, _, let start): animation.velocity(at: time - start)
        }
    }

    // MARK: Events

    /// A finger touched down at `location`; the player follows it if the touch is on the player.
    ///
    /// A settling player is caught where it is at `time`: the drag continues from the animated
    /// position, so the player never jumps.
    ///
    /// - Returns: Whether the touch grabbed the player.
    @discardableResult
    public mutating func touchBegan(at location: CGPoint, time: TimeInterval) -> Bool {
        guard location.x.isFinite, location.y.isFinite, time.isFinite else { return false }
        if case .dragging = phase { return false }
        let center = center(at: time)
        guard layout.frame(center: center).contains(location) else { return false }
        tracker.reset()
        tracker.add(TouchSample(time: time, location: location))
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
        phase = .dragging(grabOffset: CGVector(dx: location.x - rawDragCenter.x, dy: location.y - rawDragCenter.y))
        return true
    }

    /// The finger moved to `location`.
    public mutating func touchMoved(to location: CGPoint, time: TimeInterval) {
        guard case .dragging(let offset) = phase, location.x.isFinite, location.y.isFinite, time.isFinite else {
            return
        }
        tracker.add(TouchSample(time: time, location: location))
        rawDragCenter = CGPoint(x: location.x - offset.dx, y: location.y - offset.dy)
    }

    /// The finger lifted at `location`: the player is thrown or dropped, and settles.
    ///
    /// - Returns: The decision, or `nil` when no drag was in progress.
    @discardableResult
    public mutating func touchEnded(at location: CGPoint, time: TimeInterval) -> SnapDecision? {
        guard case .dragging = phase, time.isFinite else { return nil }
        touchMoved(to: location, time: time)
        let estimate = tracker.estimate(at: time)
        return release(velocity: estimate.velocity, time: time)
    }

    /// The touch was cancelled by the system: the player settles as if dropped, without velocity.
    @discardableResult
    public mutating func touchCancelled(time: TimeInterval) -> SnapDecision? {
        guard case .dragging = phase, time.isFinite else { return nil }
        return release(velocity: CGVector(dx: 0, dy: 0), time: time)
    }

    /// The container changed (rotation, split view, keyboard): a resting or settling player keeps
    /// its anchor in the new layout; a settling one turns towards it from where it is, at the
    /// speed it has.
    public mutating func updateLayout(_ newLayout: FloatingLayout, time: TimeInterval) {
        switch phase(at: time) {
        case .resting(let anchor):
            layout = newLayout
            phase = .resting(anchor)
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
                from: position, to: anchor.point(in: newLayout), velocity: velocity, spring: spring)
            phase = .settling(animation, anchor: anchor, startTime: time)
        }
    }

    // MARK: Private

    private mutating func release(velocity: CGVector, time: TimeInterval) -> SnapDecision {
        let released = displayedDragCenter
        let decision = planner.decide(releasedAt: released, velocity: velocity, in: layout)
        let animation = SnapAnimation(
            from: released, to: decision.target, velocity: decision.releaseVelocity, spring: spring)
        phase = .settling(animation, anchor: decision.anchor, startTime: time)
        lastDecision = decision
        tracker.reset()
        return decision
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
