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

    /// Where each state's box is centred: two columns, narrow enough for a phone's screen.
    static let positions: [String: (Double, Double)] = [
        "uninitialized": (78, 60), "fetching": (338, 60), "playing": (338, 250), "paused": (338, 480),
        "completed": (180, 360), "discarding": (78, 520),
    ]

    /// The diagram: each transition a curve marked with a number, and below it the events and
    /// effects of each number, so that no label has to find room between the curves (a new
    /// transition adds a number and a legend entry wherever its curve goes).
    static func stateDiagram() -> SVGFigure {
        let edges = transitions
        let halfWidth = 58.0
        let halfHeight = 19.0
        // An event accepted with nothing to do is listed in a note, not drawn.
        func isIdle(_ edge: (from: String, to: String, labels: [String])) -> Bool {
            edge.from == edge.to && edge.labels.allSatisfy { !$0.contains("/") } && edge.labels != ["progress"]
        }
        let idle = edges.filter(isIdle)
        let drawn = edges.filter { !isIdle($0) }
        let notes = idle.map { "\($0.labels.joined(separator: ", ")) in \($0.from)" }
        // The legend: two columns, each entry a number and its labels, one per line.
        let columnLines = 18.0
        var entries: [(number: Int, lines: [String], column: Int, row: Double)] = []
        let totalLines = drawn.reduce(0) { $0 + $1.labels.count }
        var row = 0.0
        var column = 0
        var linesSoFar = 0
        for (index, edge) in drawn.enumerated() {
            // The first column takes entries while they fill no more than half the lines.
            linesSoFar += edge.labels.count
            if column == 0, row > 0, Double(linesSoFar) > (Double(totalLines) / 2).rounded(.up) {
                column = 1
                row = 0
            }
            entries.append((index + 1, edge.labels, column, row))
            row += Double(edge.labels.count) + 0.35
        }
        let legendTop = 580.0
        let legendRows = entries.map { $0.row + Double($0.lines.count) }.max() ?? 0
        let notesTop = legendTop + legendRows * columnLines + 20
        var figure = SVGFigure(
            width: 420, height: notesTop + Double(notes.count + 1) * 16 + 8,
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
        var markers: [(x: Double, y: Double, number: Int)] = []
        for (index, edge) in drawn.enumerated() {
            guard let start = positions[edge.from], let end = positions[edge.to] else { continue }
            if edge.from == edge.to {
                // A loop above the state, its number at the top.
                figure.curve(
                    from: (start.0 - 30, start.1 - halfHeight), control: (start.0, start.1 - 70),
                    to: (start.0 + 30, start.1 - halfHeight))
                markers.append((start.0, start.1 - 44, index + 1))
                continue
            }
            let dx = end.0 - start.0
            let dy = end.1 - start.1
            let length = (dx * dx + dy * dy).squareRoot()
            // Bend every edge to its left, so the two directions between a pair never overlap.
            let bend = 40.0
            let control = ((start.0 + end.0) / 2 + dy / length * bend, (start.1 + end.1) / 2 - dx / length * bend)
            let from = boundary(start, towards: control)
            let to = boundary(end, towards: control)
            figure.curve(from: from, control: control, to: to)
            // The curve's middle (t = 1/2 of the quadratic Bézier).
            markers.append(
                (
                    (from.0 + 2 * control.0 + to.0) / 4, (from.1 + 2 * control.1 + to.1) / 4, index + 1
                ))
        }
        for (state, center) in positions.sorted(by: { $0.key < $1.key }) {
            figure.rect(
                x: center.0 - halfWidth, y: center.1 - halfHeight, width: halfWidth * 2, height: halfHeight * 2,
                radius: 10, fill: .surface, stroke: state == "uninitialized" ? .highlight : .text)
            figure.text(state, x: center.0, y: center.1 + 5, size: 13, anchor: "middle", bold: true)
        }
        for marker in markers {
            figure.circle(x: marker.x, y: marker.y, radius: 10, fill: .background, stroke: .accent)
            figure.text(
                "\(marker.number)", x: marker.x, y: marker.y + 4.5, size: 12, ink: .accent, anchor: "middle", bold: true
            )
        }
        for entry in entries {
            let x = 12 + Double(entry.column) * 206
            let y = legendTop + entry.row * columnLines
            figure.text("\(entry.number)", x: x + 8, y: y, size: 12, ink: .accent, anchor: "middle", bold: true)
            for (index, line) in entry.lines.enumerated() {
                figure.text(line, x: x + 22, y: y + Double(index) * columnLines, size: 12, ink: .text)
            }
        }
        figure.text("Accepted with nothing to do:", x: 12, y: notesTop, size: 12, ink: .muted)
        for (index, note) in notes.enumerated() {
            figure.text(
                note + (index == notes.count - 1 ? "." : ";"), x: 24, y: notesTop + Double(index + 1) * 16, size: 12,
                ink: .muted)
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
