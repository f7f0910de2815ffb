import TestSupport
import Testing

@Suite("State diagrams")
struct StateDiagramTests {
    /// The curves of `figure` (`M x y Q cx cy x y` paths): their start and end points.
    static func curveEnds(_ figure: SVGFigure) -> [(start: (Double, Double), end: (Double, Double))] {
        figure.svg(.light).matches(of: #/d="M([-\d.]+) ([-\d.]+) Q[-\d.]+ [-\d.]+ ([-\d.]+) ([-\d.]+)"/#).compactMap {
            guard let x1 = Double($0.output.1), let y1 = Double($0.output.2), let x2 = Double($0.output.3),
                let y2 = Double($0.output.4)
            else { return nil }
            return ((x1, y1), (x2, y2))
        }
    }

    /// The numbered markers of `figure`: their centres.
    static func markers(_ figure: SVGFigure) -> [(Double, Double)] {
        figure.svg(.light).matches(of: #/<circle cx="([-\d.]+)" cy="([-\d.]+)" r="10"/#).compactMap {
            guard let x = Double($0.output.1), let y = Double($0.output.2) else { return nil }
            return (x, y)
        }
    }

    static func distance(_ a: (Double, Double), _ b: (Double, Double)) -> Double {
        ((a.0 - b.0) * (a.0 - b.0) + (a.1 - b.1) * (a.1 - b.1)).squareRoot()
    }

    /// Two transitions out of `source` towards states in nearly the same direction, and one
    /// back, as the audio circle's `playing` has them.
    static func diagram() -> StateDiagram {
        var diagram = StateDiagram(
            subject: "A test machine's",
            positions: ["source": (300, 100), "near": (170, 260), "far": (80, 330)], initial: "source",
            isQuiet: { _ in false })
        for state in ["source", "near", "far"] { diagram.tried(state) }
        diagram.record(from: "source", to: "near", label: "first")
        diagram.record(from: "source", to: "far", label: "second")
        diagram.record(from: "near", to: "source", label: "back")
        return diagram
    }

    @Test("curves that leave or reach one side of a state are spread along it, 16 points apart or more")
    func endsSpread() throws {
        let ends = Self.curveEnds(try Self.diagram().figure())
        #expect(ends.count == 3)
        let points = ends.flatMap { [$0.start, $0.end] }
        for (index, point) in points.enumerated() {
            for other in points[(index + 1)...] {
                #expect(Self.distance(point, other) >= 16 - 0.01, "\(point) and \(other)")
            }
        }
    }

    @Test("no two numbers sit on each other")
    func markersApart() throws {
        let markers = Self.markers(try Self.diagram().figure())
        #expect(markers.count == 3)
        for (index, marker) in markers.enumerated() {
            for other in markers[(index + 1)...] { #expect(Self.distance(marker, other) >= 20) }
        }
    }

    @Test("a transition whose state has no position is an error naming the state, not a missing arrow")
    func unplacedState() {
        var diagram = Self.diagram()
        diagram.record(from: "source", to: "elsewhere", label: "lost")
        #expect(throws: StateDiagram.UnplacedState.self) { try diagram.figure() }
    }

    @Test("a state transitions lead to, in which no event was tried, is an error: its ways out would be missing")
    func untriedState() {
        var diagram = StateDiagram(
            subject: "A test machine's", positions: ["source": (100, 100), "near": (300, 100)], initial: "source",
            isQuiet: { _ in false })
        diagram.tried("source")
        diagram.record(from: "source", to: "near", label: "go")
        #expect(throws: StateDiagram.UntriedState.self) { try diagram.figure() }
        diagram.tried("near")
        #expect(throws: Never.self) { try diagram.figure() }
    }
}
