import Foundation

/// A state machine's diagram, drawn from transitions the machine itself accepted: a box for each
/// state, one numbered curve for each pair of states an event moves between, and below them the
/// events (and effects) of each number, so that no label has to find room between the curves.
///
/// The transitions come from trying events on the real machine (or model), so a new transition
/// appears as a new number. Transitions that change nothing (``isQuiet``) are listed in a note
/// instead of drawn.
public struct StateDiagram {
    /// The events that move the machine from one state to another (or back to the same one).
    public struct Transition: Sendable, Hashable {
        /// The state the events leave.
        public var from: String
        /// The state they lead to.
        public var to: String
        /// Each event that does so, with its effects (`"tap / startFetch"`).
        public var labels: [String]

        /// The events `labels` that lead from `from` to `to`.
        public init(from: String, to: String, labels: [String]) {
            self.from = from
            self.to = to
            self.labels = labels
        }
    }

    /// A state of a transition that has no place in the diagram.
    public struct UnplacedState: Error, CustomStringConvertible {
        /// The state's name.
        public var state: String
        /// A sentence naming it.
        public var description: String { "the state \(state) has no position in the diagram" }
    }

    /// A state that transitions lead to and in which no event was tried: what leaves it would
    /// be missing from the diagram.
    public struct UntriedState: Error, CustomStringConvertible {
        /// The state's name.
        public var state: String
        /// A sentence naming it.
        public var description: String { "transitions lead to \(state), but no event was tried in it" }
    }

    /// The states in which every event was tried, in the order noted.
    public private(set) var triedStates: [String] = []

    /// Notes that every event was tried in `state`, so that its outgoing transitions are all
    /// recorded (``figure()`` refuses a state that transitions lead to and that was not tried).
    public mutating func tried(_ state: String) {
        if !triedStates.contains(state) { triedStates.append(state) }
    }

    /// What the figure's description calls the machine ("The audio circle's").
    public var subject: String
    /// The transitions found, in the order they were found.
    public private(set) var transitions: [Transition] = []
    /// Where each state's box is centred, in points of a figure 420 points wide.
    public var positions: [String: (x: Double, y: Double)]
    /// The state the machine starts in (outlined in the highlight ink, as the figure's key says).
    public var initial: String
    /// Whether a transition is listed in the note of accepted events that change nothing,
    /// rather than drawn.
    public var isQuiet: (Transition) -> Bool
    /// Whether a transition is written out below the diagram rather than drawn (events that
    /// lead to one state from nearly every other, whose arrows would cross the others).
    public var isWrittenOut: (Transition) -> Bool = { _ in false }

    /// An empty diagram of `subject`'s machine, its states placed at `positions`, starting in
    /// `initial`.
    public init(
        subject: String, positions: [String: (x: Double, y: Double)], initial: String,
        isQuiet: @escaping (Transition) -> Bool
    ) {
        self.subject = subject
        self.positions = positions
        self.initial = initial
        self.isQuiet = isQuiet
    }

    /// Records that `label` moved the machine from `from` to `to`: a new label of the pair's
    /// transition, or a new transition.
    ///
    /// - Complexity: O(*t*) for *t* transitions.
    public mutating func record(from: String, to: String, label: String) {
        if let index = transitions.firstIndex(where: { $0.from == from && $0.to == to }) {
            if !transitions[index].labels.contains(label) { transitions[index].labels.append(label) }
        } else {
            transitions.append(Transition(from: from, to: to, labels: [label]))
        }
    }

    /// Records that `event` moved the machine from `from` to `to` with `effects` for its owner to
    /// perform: labelled `"event / effect, effect"`, or the event alone.
    ///
    /// - Complexity: O(*t*) for *t* transitions.
    public mutating func record(from: String, to: String, event: String, effects: [String]) {
        record(from: from, to: to, label: effects.isEmpty ? event : event + " / " + effects.joined(separator: ", "))
    }

    /// The figure. Throws ``UnplacedState`` when a transition's state has no position, and
    /// ``UntriedState`` when transitions lead to a state in which no event was tried, so that
    /// neither a new state nor the ways out of it can go missing from it.
    ///
    /// - Complexity: O(*t* + *s*) for *t* transitions and *s* states.
    public func figure() throws -> SVGFigure {
        for transition in transitions {
            for state in [transition.from, transition.to] where positions[state] == nil {
                throw UnplacedState(state: state)
            }
            if !triedStates.contains(transition.to) { throw UntriedState(state: transition.to) }
        }
        let halfWidth = 58.0
        let halfHeight = 19.0
        let quiet = transitions.filter(isQuiet)
        let writtenOut = transitions.filter { !isQuiet($0) && isWrittenOut($0) }
        let drawn = transitions.filter { !isQuiet($0) && !isWrittenOut($0) }
        // Written out: one sentence per target and events, naming every state they come from.
        var sentences: [(to: String, labels: [String], from: [String])] = []
        for transition in writtenOut {
            if let index = sentences.firstIndex(where: { $0.to == transition.to && $0.labels == transition.labels }) {
                sentences[index].from.append(transition.from)
            } else {
                sentences.append((transition.to, transition.labels, [transition.from]))
            }
        }
        var notes: [(text: String, ink: SVGFigure.Ink)] = sentences.flatMap { sentence in
            Self.wrapped(
                "\(sentence.labels.joined(separator: ", ")) in \(sentence.from.joined(separator: ", ")): to \(sentence.to).",
                width: 396, size: 12
            ).map { ($0, SVGFigure.Ink.text) }
        }
        if !quiet.isEmpty {
            notes.append(("Accepted with nothing to do:", .muted))
            for (index, transition) in quiet.enumerated() {
                let text =
                    "\(transition.labels.joined(separator: ", ")) in \(transition.from)"
                    + (index == quiet.count - 1 ? "." : ";")
                notes += Self.wrapped(text, width: 384, size: 12).enumerated().map { ($1, .muted) }
            }
        }
        // The legend: two columns, each entry a number and its labels, one per line.
        let lineHeight = 18.0
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
        let lowest = positions.values.map(\.y).max() ?? 0
        let keyTop = lowest + halfHeight + 30
        let legendTop = keyTop + 30
        let legendRows = entries.map { $0.row + Double($0.lines.count) }.max() ?? 0
        let notesTop = legendTop + legendRows * lineHeight + 20
        let height = notes.isEmpty ? notesTop - 8 : notesTop + Double(notes.count) * 16 + 8
        var figure = SVGFigure(
            width: 420, height: height,
            description:
                "\(subject) states and transitions, starting in \(initial): "
                + transitions.map { "\($0.from) to \($0.to) on \($0.labels.joined(separator: " or "))" }
                .joined(separator: "; ") + ".")
        /// Where the line from `center` towards `target` leaves the state's box.
        func boundary(_ center: (x: Double, y: Double), towards target: (Double, Double)) -> (Double, Double) {
            let dx = target.0 - center.x
            let dy = target.1 - center.y
            let t = min(dx == 0 ? .infinity : halfWidth / abs(dx), dy == 0 ? .infinity : halfHeight / abs(dy), 1)
            return (center.x + dx * t, center.y + dy * t)
        }
        var markers: [(x: Double, y: Double, number: Int)] = []
        // Each curve's ends where it leaves and reaches the boxes, before they are spread.
        var curves: [(number: Int, from: (Double, Double), control: (Double, Double), to: (Double, Double))] = []
        var ends: [String: [(curve: Int, isStart: Bool, point: (Double, Double))]] = [:]
        for (index, edge) in drawn.enumerated() {
            guard let start = positions[edge.from], let end = positions[edge.to] else { continue }
            if edge.from == edge.to {
                // A loop above the state, its number at the top.
                figure.curve(
                    from: (start.x - 30, start.y - halfHeight), control: (start.x, start.y - 70),
                    to: (start.x + 30, start.y - halfHeight))
                markers.append((start.x, start.y - 44, index + 1))
                continue
            }
            let dx = end.x - start.x
            let dy = end.y - start.y
            let length = (dx * dx + dy * dy).squareRoot()
            // Bend every edge to its left, so the two directions between a pair never overlap.
            let bend = 40.0
            let control = ((start.x + end.x) / 2 + dy / length * bend, (start.y + end.y) / 2 - dx / length * bend)
            let from = boundary(start, towards: control)
            let to = boundary(end, towards: control)
            ends[edge.from, default: []].append((curves.count, true, from))
            ends[edge.to, default: []].append((curves.count, false, to))
            curves.append((index + 1, from, control, to))
        }
        // Ends that meet on one side of a box are spread along it, 16 points apart at least, so
        // that two curves never seem to leave (or reach) a state as one.
        for (state, list) in ends {
            guard let center = positions[state] else { continue }
            for side in 0..<4 {
                let horizontal = side < 2
                let members = list.filter { end in
                    let (x, y) = end.point
                    switch side {
                    case 0: return abs(y - (center.y - halfHeight)) < 0.5
                    case 1: return abs(y - (center.y + halfHeight)) < 0.5
                    case 2:
                        return abs(y - (center.y - halfHeight)) >= 0.5 && abs(y - (center.y + halfHeight)) >= 0.5
                            && x < center.x
                    default:
                        return abs(y - (center.y - halfHeight)) >= 0.5 && abs(y - (center.y + halfHeight)) >= 0.5
                            && x >= center.x
                    }
                }.sorted { horizontal ? $0.point.0 < $1.point.0 : $0.point.1 < $1.point.1 }
                guard members.count > 1 else { continue }
                let original = members.map { horizontal ? $0.point.0 : $0.point.1 }
                var spread = original
                for index in spread.indices.dropFirst() { spread[index] = max(spread[index], spread[index - 1] + 16) }
                let shift = (original.reduce(0, +) - spread.reduce(0, +)) / Double(spread.count)
                let low = horizontal ? center.x - halfWidth + 10 : center.y - halfHeight + 4
                let high = horizontal ? center.x + halfWidth - 10 : center.y + halfHeight - 4
                let first = (spread.first ?? 0) + shift
                let last = (spread.last ?? 0) + shift
                let clamp = first < low ? low - first : last > high ? high - last : 0
                for (member, position) in zip(members, spread) {
                    let moved = position + shift + clamp
                    let point = horizontal ? (moved, member.point.1) : (member.point.0, moved)
                    if member.isStart { curves[member.curve].from = point } else { curves[member.curve].to = point }
                }
            }
        }
        /// Point `t` of the quadratic Bézier from `from` through `control` to `to`.
        func bezier(
            _ from: (Double, Double), _ control: (Double, Double), _ to: (Double, Double), _ t: Double
        ) -> (Double, Double) {
            let (a, b, c) = ((1 - t) * (1 - t), 2 * (1 - t) * t, t * t)
            return (a * from.0 + b * control.0 + c * to.0, a * from.1 + b * control.1 + c * to.1)
        }
        // Every curve sampled, loops included, so that a number is never put on another curve.
        let samples: [[(Double, Double)]] =
            curves.map { curve in (0...40).map { bezier(curve.from, curve.control, curve.to, Double($0) / 40) } }
        let loopSamples: [(Double, Double)] = drawn.filter { $0.from == $0.to }.compactMap { positions[$0.from] }
            .flatMap { start in
                (0...20).map {
                    bezier(
                        (start.x - 30, start.y - halfHeight), (start.x, start.y - 70),
                        (start.x + 30, start.y - halfHeight), Double($0) / 20)
                }
            }
        for (index, curve) in curves.enumerated() {
            figure.curve(from: curve.from, control: curve.control, to: curve.to)
            // The number goes at the curve's middle (t = 1/2), or a little along it where another
            // number, a box or another curve would be under it.
            func isClear(_ spot: (Double, Double)) -> Bool {
                func distance(_ other: (Double, Double)) -> Double {
                    ((other.0 - spot.0) * (other.0 - spot.0) + (other.1 - spot.1) * (other.1 - spot.1)).squareRoot()
                }
                let apart = markers.allSatisfy { distance(($0.x, $0.y)) >= 24 }
                let outside = positions.values.allSatisfy {
                    abs($0.x - spot.0) > halfWidth + 10 || abs($0.y - spot.1) > halfHeight + 10
                }
                let offOthers = samples.enumerated().allSatisfy { other, points in
                    other == index || points.allSatisfy { distance($0) >= 12 }
                }
                return apart && outside && offOthers && loopSamples.allSatisfy { distance($0) >= 12 }
            }
            let candidates = [0.5, 0.42, 0.58, 0.35, 0.65, 0.28, 0.72].map {
                bezier(curve.from, curve.control, curve.to, $0)
            }
            let spot = candidates.first(where: isClear) ?? candidates[0]
            markers.append((spot.0, spot.1, curve.number))
        }
        for (state, center) in positions.sorted(by: { $0.key < $1.key }) {
            figure.rect(
                x: center.x - halfWidth, y: center.y - halfHeight, width: halfWidth * 2, height: halfHeight * 2,
                radius: 10, fill: .surface, stroke: state == initial ? .highlight : .text)
            figure.text(state, x: center.x, y: center.y + 5, size: 13, anchor: "middle", bold: true)
        }
        for marker in markers {
            figure.circle(x: marker.x, y: marker.y, radius: 10, fill: .background, stroke: .accent)
            figure.text(
                "\(marker.number)", x: marker.x, y: marker.y + 4.5, size: 12, ink: .accent, anchor: "middle", bold: true
            )
        }
        // The key: what an outline and a number mean.
        figure.rect(x: 12, y: keyTop - 11, width: 22, height: 14, radius: 4, fill: .surface, stroke: .highlight)
        figure.text("where it starts", x: 40, y: keyTop, size: 12, ink: .muted)
        figure.circle(x: 192, y: keyTop - 4, radius: 8, fill: .background, stroke: .accent)
        figure.text("its events are listed below", x: 206, y: keyTop, size: 12, ink: .muted)
        for entry in entries {
            let x = 12 + Double(entry.column) * 206
            let y = legendTop + entry.row * lineHeight
            figure.text("\(entry.number)", x: x + 8, y: y, size: 12, ink: .accent, anchor: "middle", bold: true)
            for (index, line) in entry.lines.enumerated() {
                figure.text(line, x: x + 22, y: y + Double(index) * lineHeight, size: 12, ink: .text)
            }
        }
        for (index, note) in notes.enumerated() {
            figure.text(note.text, x: 12, y: notesTop + Double(index) * 16, size: 12, ink: note.ink)
        }
        return figure
    }

    /// `text` broken at spaces into lines no wider than `width` at `size` points (a longer word
    /// keeps a line of its own).
    ///
    /// - Complexity: O(*n*) in the text's length.
    public static func wrapped(_ text: String, width: Double, size: Double) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            let candidate = line.isEmpty ? String(word) : line + " " + word
            if line.isEmpty || SVGFigure.estimatedWidth(candidate, size: size) <= width {
                line = candidate
            } else {
                lines.append(line)
                line = String(word)
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }
}
