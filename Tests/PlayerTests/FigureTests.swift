import Foundation
import Player
import TestSupport
import Testing

/// The article *The audio circle* shows the machine's states and transitions as a figure drawn
/// from the machine itself: every event is tried in every state, and each accepted one is an
/// arrow, so a new transition appears in the figure (and fails this test until it is committed).
@Suite("Figures of the Player catalog")
struct PlayerFigureTests {
    typealias Machine = CirclePlayerMachine

    static let file = URL(fileURLWithPath: "/lessons/salsa.m4a")
    static let error = PlayerError(.fetchFailed(message: "offline"))

    /// One machine in each state, reached by the events a learner and the fetcher produce.
    static var machines: [Machine] {
        var idle = Machine()
        var fetching = idle
        _ = fetching.handle(.tap)
        var playing = fetching
        if case .fetching(let id, _) = fetching.state { _ = playing.handle(.fetchFinished(id, file: file)) }
        var paused = playing
        _ = paused.handle(.tap)
        var completed = playing
        _ = completed.handle(.playbackEnded)
        var discarding = playing
        _ = discarding.handle(.playbackFailed(PlayerError(.unplayable(message: "bad"))))
        _ = idle.handle(.exit)
        return [idle, fetching, playing, paused, completed, discarding]
    }

    static func name(_ state: Machine.State) -> String {
        switch state {
        case .uninitialized: "uninitialized"
        case .fetching: "fetching"
        case .playing: "playing"
        case .paused: "paused"
        case .completed: "completed"
        case .discarding: "discarding"
        }
    }

    /// Every event, with the fetch the machine is on (a stale fetch is rejected, never drawn).
    static func events(for machine: Machine) -> [(String, Machine.Event)] {
        let id: Machine.FetchID
        if case .fetching(let current, _) = machine.state { id = current } else { id = .init(rawValue: 1) }
        return [
            ("tap", .tap), ("exit", .exit), ("progress", .fetchProgressed(id, fraction: 0.5)),
            ("finished", .fetchFinished(id, file: file)), ("failed", .fetchFailed(id, error)),
            ("ended", .playbackEnded), ("unplayable", .playbackFailed(error)), ("cache deleted", .cacheDeleted),
            ("deletion failed", .cacheDeletionFailed(error)),
        ]
    }

    static func name(_ effect: Machine.Effect) -> String {
        switch effect {
        case .startFetch: "startFetch"
        case .cancelFetch: "cancelFetch"
        case .play: "play"
        case .pause: "pause"
        case .resume: "resume"
        case .stop: "stop"
        case .deleteCachedFile: "delete file"
        }
    }

    /// The accepted transitions, by (from, to), each labelled "event / effects".
    static var transitions: [(from: String, to: String, labels: [String])] {
        var found: [(from: String, to: String, labels: [String])] = []
        for machine in machines {
            for (label, event) in events(for: machine) {
                var copy = machine
                guard case .accepted(let effects) = copy.handle(event) else { continue }
                let from = name(machine.state)
                let to = name(copy.state)
                let text = effects.isEmpty ? label : label + " / " + effects.map(name).joined(separator: ", ")
                if let index = found.firstIndex(where: { $0.from == from && $0.to == to }) {
                    if !found[index].labels.contains(text) { found[index].labels.append(text) }
                } else {
                    found.append((from, to, [text]))
                }
            }
        }
        return found
    }

    static let positions: [String: (Double, Double)] = [
        "uninitialized": (140, 90), "fetching": (720, 90), "playing": (720, 300), "paused": (720, 520),
        "completed": (400, 320), "discarding": (140, 520),
    ]

    static func stateDiagram() -> SVGFigure {
        let edges = transitions
        let halfWidth = 62.0
        let halfHeight = 20.0
        var figure = SVGFigure(
            width: 900, height: 610,
            description:
                "The audio circle's states and transitions: "
                + edges.map { "\($0.from) to \($0.to) on \($0.labels.joined(separator: " or "))" }
                .joined(separator: "; ") + ".")
        /// Where the line from `center` towards `target` leaves the state's box.
        func boundary(_ center: (Double, Double), towards target: (Double, Double)) -> (Double, Double) {
            let dx = target.0 - center.0
            let dy = target.1 - center.1
            let t = min(dx == 0 ? .infinity : halfWidth / abs(dx), dy == 0 ? .infinity : halfHeight / abs(dy), 1)
            return (center.0 + dx * t, center.1 + dy * t)
        }
        var labels: [(x: Double, y: Double, lines: [String])] = []
        for edge in edges {
            guard let start = positions[edge.from], let end = positions[edge.to] else { continue }
            if edge.from == edge.to, edge.labels.allSatisfy({ !$0.contains("/") }), edge.labels != ["progress"] {
                continue  // an event accepted with nothing to do: listed in the note below
            }
            if edge.from == edge.to {
                // A loop above the state.
                figure.curve(
                    from: (start.0 - 30, start.1 - halfHeight), control: (start.0, start.1 - 90),
                    to: (start.0 + 30, start.1 - halfHeight))
                labels.append((start.0, start.1 - 62, edge.labels))
                continue
            }
            let dx = end.0 - start.0
            let dy = end.1 - start.1
            let length = (dx * dx + dy * dy).squareRoot()
            // Bend every edge to its left, so the two directions between a pair never overlap.
            let bend = 36.0
            let control = ((start.0 + end.0) / 2 + dy / length * bend, (start.1 + end.1) / 2 - dx / length * bend)
            let from = boundary(start, towards: control)
            let to = boundary(end, towards: control)
            figure.curve(from: from, control: control, to: to)
            // Beside the curve on its outer side, far enough that the text's box clears it; along
            // the curve, the first place whose box overlaps no label placed before.
            let widest = Double(edge.labels.map(\.count).max() ?? 0) * 6.4 + 10
            let tall = Double(edge.labels.count) * 15 + 4
            let offset = 8 + abs(dy / length) * widest / 2 + abs(dx / length) * tall / 2
            func place(_ t: Double) -> (Double, Double) {
                let u = 1 - t
                let x = u * u * from.0 + 2 * u * t * control.0 + t * t * to.0
                let y = u * u * from.1 + 2 * u * t * control.1 + t * t * to.1
                return (x + dy / length * offset, y - dx / length * offset)
            }
            func overlaps(_ point: (Double, Double)) -> Bool {
                labels.contains { other in
                    let otherWidth = Double(other.lines.map(\.count).max() ?? 0) * 6.4 + 10
                    let otherHeight = Double(other.lines.count) * 15 + 4
                    return abs(other.x - point.0) < (widest + otherWidth) / 2 + 4
                        && abs(other.y - point.1) < (tall + otherHeight) / 2 + 2
                }
            }
            let spot = [0.5, 0.35, 0.65, 0.25, 0.75].map(place).first { !overlaps($0) } ?? place(0.5)
            labels.append((spot.0, spot.1, edge.labels))
        }
        for (state, center) in positions.sorted(by: { $0.key < $1.key }) {
            figure.rect(
                x: center.0 - halfWidth, y: center.1 - halfHeight, width: halfWidth * 2, height: halfHeight * 2,
                radius: 10, fill: .surface, stroke: state == "uninitialized" ? .highlight : .text)
            figure.text(state, x: center.0, y: center.1 + 5, size: 14, anchor: "middle", bold: true)
        }
        let idle = edges.filter {
            $0.from == $0.to && $0.labels.allSatisfy { !$0.contains("/") } && $0.labels != ["progress"]
        }
        figure.text(
            "Accepted with nothing to do: "
                + idle.map { "\($0.labels.joined(separator: ", ")) in \($0.from)" }
                .joined(separator: "; ") + ".",
            x: 20, y: 596, size: 12, ink: .muted)
        // Labels last, on a background, so no line crosses their text.
        for label in labels {
            let widest = label.lines.map(\.count).max() ?? 0
            let boxWidth = Double(widest) * 6.4 + 10
            let boxHeight = Double(label.lines.count) * 15 + 4
            let top = label.y - boxHeight / 2
            figure.rect(
                x: label.x - boxWidth / 2, y: top, width: boxWidth, height: boxHeight, radius: 4, fill: .background,
                stroke: nil)
            for (index, line) in label.lines.enumerated() {
                figure.text(
                    line, x: label.x, y: top + 14 + Double(index) * 15, size: 12, ink: .muted, anchor: "middle")
            }
        }
        return figure
    }

    @Test("circle-states.svg (light and dark) is the machine's own transition table")
    func stateDiagramFigure() {
        let problems = CommittedFigure.problems(
            Self.stateDiagram(), name: "circle-states", module: "Player",
            article: "Sources/Player/Player.docc/TheAudioCircle.md")
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    @Test("the figure draws every transition the article's table lists")
    func everyTransition() {
        let pairs = Set(Self.transitions.map { "\($0.from)→\($0.to)" })
        for expected in [
            "uninitialized→fetching", "fetching→fetching", "fetching→uninitialized", "fetching→playing",
            "playing→paused", "paused→playing", "playing→completed", "paused→completed", "playing→discarding",
            "completed→uninitialized", "discarding→uninitialized",
        ] {
            #expect(pairs.contains(expected), "\(expected) missing from \(pairs.sorted())")
        }
    }
}
