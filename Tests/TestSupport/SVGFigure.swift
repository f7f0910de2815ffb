public import Foundation

// CoreGraphics brings the geometry's members on Apple platforms (Foundation does on Linux).
#if canImport(CoreGraphics)
    import CoreGraphics
#endif

/// A small SVG writer for the documentation's figures: lines, boxes, circles, arrows and text,
/// in a light and a dark palette, written byte for byte the same on every run so that a test can
/// compare a figure with the committed one.
///
/// Coordinates are points in the figure's own box (the `viewBox`); numbers are written with at
/// most two decimals. Text is escaped. Linear in the number of elements.
public struct SVGFigure: Sendable {
    /// A colour by its role, so that one drawing renders in either palette.
    public enum Ink: Sendable, Hashable {
        /// Text and outlines.
        case text
        /// Secondary text, axes and grid lines.
        case muted
        /// The main data (a played interval, a chosen path).
        case accent
        /// A second series (the union, a highlighted state).
        case highlight
        /// A box's fill.
        case surface
        /// The figure's background.
        case background

        /// The role's name, as the figure's marker IDs use it.
        var name: String {
            switch self {
            case .text: "text"
            case .muted: "muted"
            case .accent: "accent"
            case .highlight: "highlight"
            case .surface: "surface"
            case .background: "background"
            }
        }
    }

    /// The two palettes DocC shows: `name.svg` in light mode and `name~dark.svg` in dark mode.
    public enum Palette: String, Sendable, CaseIterable {
        /// Dark ink on a light page.
        case light
        /// Light ink on a dark page.
        case dark

        /// The colour of `ink` in this palette.
        public func color(_ ink: Ink) -> String {
            switch (self, ink) {
            case (.light, .text): "#1d1d1f"
            case (.light, .muted): "#6e6e73"
            case (.light, .accent): "#0066cc"
            case (.light, .highlight): "#c2410c"
            case (.light, .surface): "#f2f2f7"
            case (.light, .background): "#ffffff"
            case (.dark, .text): "#f5f5f7"
            case (.dark, .muted): "#a1a1a6"
            case (.dark, .accent): "#4da3ff"
            case (.dark, .highlight): "#ff9f5a"
            case (.dark, .surface): "#2c2c2e"
            case (.dark, .background): "#1c1c1e"
            }
        }
    }

    private enum Element: Sendable {
        case line(x1: Double, y1: Double, x2: Double, y2: Double, ink: Ink, width: Double, dashed: Bool, arrow: Bool)
        case path(String, ink: Ink, width: Double, dashed: Bool, arrow: Bool)
        case rect(x: Double, y: Double, width: Double, height: Double, radius: Double, fill: Ink?, stroke: Ink?)
        case circle(x: Double, y: Double, radius: Double, fill: Ink?, stroke: Ink?)
        case text(x: Double, y: Double, String, size: Double, ink: Ink, anchor: String, bold: Bool)
    }

    /// The figure's width and height, in points.
    public let width: Double
    /// The figure's height, in points.
    public let height: Double
    /// What the figure shows, for readers who cannot see it (its `<title>` and `aria-label`).
    public let description: String
    private var elements: [Element] = []

    /// Creates an empty figure of `width` × `height` points described by `description`.
    public init(width: Double, height: Double, description: String) {
        self.width = width
        self.height = height
        self.description = description
    }

    /// A straight line, optionally dashed or ending in an arrowhead.
    public mutating func line(
        from start: (Double, Double), to end: (Double, Double), ink: Ink = .muted, width: Double = 1,
        dashed: Bool = false, arrow: Bool = false
    ) {
        elements.append(
            .line(x1: start.0, y1: start.1, x2: end.0, y2: end.1, ink: ink, width: width, dashed: dashed, arrow: arrow))
    }

    /// A polyline through `points`, optionally dashed or ending in an arrowhead.
    public mutating func polyline(
        _ points: [(Double, Double)], ink: Ink = .accent, width: Double = 2, dashed: Bool = false, arrow: Bool = false
    ) {
        guard let first = points.first else { return }
        let path =
            "M\(Self.number(first.0)) \(Self.number(first.1))"
            + points.dropFirst().map { " L\(Self.number($0.0)) \(Self.number($0.1))" }.joined()
        elements.append(.path(path, ink: ink, width: width, dashed: dashed, arrow: arrow))
    }

    /// A quadratic curve from `start` to `end` bending towards `control`, optionally with an
    /// arrowhead at its end.
    public mutating func curve(
        from start: (Double, Double), control: (Double, Double), to end: (Double, Double), ink: Ink = .muted,
        width: Double = 1.25, dashed: Bool = false, arrow: Bool = true
    ) {
        let path =
            "M\(Self.number(start.0)) \(Self.number(start.1)) Q\(Self.number(control.0)) \(Self.number(control.1))"
            + " \(Self.number(end.0)) \(Self.number(end.1))"
        elements.append(.path(path, ink: ink, width: width, dashed: dashed, arrow: arrow))
    }

    /// A rectangle, rounded by `radius`, filled and outlined as given.
    public mutating func rect(
        x: Double, y: Double, width: Double, height: Double, radius: Double = 0, fill: Ink? = .surface,
        stroke: Ink? = .text
    ) {
        elements.append(.rect(x: x, y: y, width: width, height: height, radius: radius, fill: fill, stroke: stroke))
    }

    /// A circle.
    public mutating func circle(x: Double, y: Double, radius: Double, fill: Ink? = .accent, stroke: Ink? = nil) {
        elements.append(.circle(x: x, y: y, radius: radius, fill: fill, stroke: stroke))
    }

    /// Text whose baseline starts (`anchor` `start`), centres (`middle`) or ends (`end`) at `x`.
    public mutating func text(
        _ string: String, x: Double, y: Double, size: Double = 13, ink: Ink = .text, anchor: String = "start",
        bold: Bool = false
    ) {
        elements.append(.text(x: x, y: y, string, size: size, ink: ink, anchor: anchor, bold: bold))
    }

    /// The inks of the lines and paths that end in an arrowhead, each once, in a fixed order.
    var arrowInks: [Ink] {
        let used = Set(
            elements.compactMap { element -> Ink? in
                switch element {
                case .line(_, _, _, _, let ink, _, _, true), .path(_, let ink, _, _, true): ink
                default: nil
                }
            })
        return [Ink.muted, .text, .accent, .highlight, .surface, .background].filter { used.contains($0) }
    }

    /// The arrowhead marker of `ink`, filled with its colour, so that an arrow's head is the
    /// colour of its line.
    static func marker(for ink: Ink, in palette: Palette) -> String {
        "<marker id=\"arrow-\(ink.name)\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" "
            + "markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0 0 L10 5 L0 10 z\" "
            + "fill=\"\(palette.color(ink))\"/></marker>"
    }

    /// The figure as an SVG document in `palette`.
    public func svg(_ palette: Palette) -> String {
        var out = """
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(Self.number(width)) \(Self.number(height))" \
            width="\(Self.number(width))" height="\(Self.number(height))" role="img" \
            aria-label="\(Self.escaped(description))">
            <title>\(Self.escaped(description))</title>
            <defs>\(arrowInks.map { Self.marker(for: $0, in: palette) }.joined())</defs>
            <rect x="0" y="0" width="\(Self.number(width))" height="\(Self.number(height))" \
            fill="\(palette.color(.background))"/>

            """
        for element in elements {
            out += render(element, palette) + "\n"
        }
        return out + "</svg>\n"
    }

    private func render(_ element: Element, _ palette: Palette) -> String {
        func paint(_ ink: Ink?) -> String { ink.map { palette.color($0) } ?? "none" }
        switch element {
        case .line(let x1, let y1, let x2, let y2, let ink, let width, let dashed, let arrow):
            return "<line x1=\"\(Self.number(x1))\" y1=\"\(Self.number(y1))\" x2=\"\(Self.number(x2))\" "
                + "y2=\"\(Self.number(y2))\" stroke=\"\(paint(ink))\" stroke-width=\"\(Self.number(width))\""
                + (dashed ? " stroke-dasharray=\"4 3\"" : "") + (arrow ? " marker-end=\"url(#arrow-\(ink.name))\"" : "")
                + "/>"
        case .path(let data, let ink, let width, let dashed, let arrow):
            return "<path d=\"\(data)\" fill=\"none\" stroke=\"\(paint(ink))\" stroke-width=\"\(Self.number(width))\" "
                + "stroke-linejoin=\"round\" stroke-linecap=\"round\""
                + (dashed ? " stroke-dasharray=\"4 3\"" : "") + (arrow ? " marker-end=\"url(#arrow-\(ink.name))\"" : "")
                + "/>"
        case .rect(let x, let y, let width, let height, let radius, let fill, let stroke):
            return "<rect x=\"\(Self.number(x))\" y=\"\(Self.number(y))\" width=\"\(Self.number(width))\" "
                + "height=\"\(Self.number(height))\" rx=\"\(Self.number(radius))\" fill=\"\(paint(fill))\" "
                + "stroke=\"\(paint(stroke))\"/>"
        case .circle(let x, let y, let radius, let fill, let stroke):
            return "<circle cx=\"\(Self.number(x))\" cy=\"\(Self.number(y))\" r=\"\(Self.number(radius))\" "
                + "fill=\"\(paint(fill))\" stroke=\"\(paint(stroke))\"/>"
        case .text(let x, let y, let string, let size, let ink, let anchor, let bold):
            return "<text x=\"\(Self.number(x))\" y=\"\(Self.number(y))\" font-family=\"-apple-system, "
                + "'Helvetica Neue', Helvetica, Arial, sans-serif\" font-size=\"\(Self.number(size))\" "
                + "fill=\"\(paint(ink))\" text-anchor=\"\(anchor)\"" + (bold ? " font-weight=\"600\"" : "")
                + ">\(Self.escaped(string))</text>"
        }
    }

    /// The text of the figure, each with the box it covers (estimated from Helvetica's advance
    /// widths, a little wide rather than narrow), in the order drawn.
    public var textBoxes: [(text: String, size: Double, box: CGRect)] {
        elements.compactMap { element in
            guard case .text(let x, let y, let string, let size, _, let anchor, let bold) = element else { return nil }
            let width = Self.estimatedWidth(string, size: size, bold: bold)
            let left =
                switch anchor {
                case "middle": x - width / 2
                case "end": x - width
                default: x
                }
            // From the tallest capital above the baseline to the lowest descender below it.
            return (string, size, CGRect(x: left, y: y - size * 0.76, width: width, height: size * 0.98))
        }
    }

    /// How wide `string` sets at `size` points: Helvetica's advance widths by kind of character
    /// (narrow letters, digits, capitals, wide letters), rounded up.
    ///
    /// - Complexity: O(*n*) in the string's length.
    public static func estimatedWidth(_ string: String, size: Double, bold: Bool = false) -> Double {
        var ems = 0.0
        for character in string {
            switch character {
            case "i", "j", "l", "I", "'", ".", ",", ":", ";", "|", "!": ems += 0.28
            case " ", "f", "t", "r", "(", ")", "[", "]", "/", "-", "\u{2013}": ems += 0.36
            case "m", "w", "M", "W", "%", "@": ems += 0.89
            case "0"..."9", "a"..."z", "→", "×", "÷", "≤", "≥", "=", "+", "<", ">": ems += 0.57
            default: ems += 0.7
            }
        }
        return ems * size * (bold ? 1.06 : 1)
    }

    /// The straight pieces of a line, a path (a quadratic curve as 24 chords) or a rectangle's
    /// outline, with the element's index; nothing for elements that draw no stroke across.
    var strokes: [(index: Int, from: CGPoint, to: CGPoint)] {
        var pieces: [(Int, CGPoint, CGPoint)] = []
        for (index, element) in elements.enumerated() {
            switch element {
            case .line(let x1, let y1, let x2, let y2, _, _, _, _):
                pieces.append((index, CGPoint(x: x1, y: y1), CGPoint(x: x2, y: y2)))
            case .path(let data, _, _, _, _):
                var current = CGPoint.zero
                var words = data.replacingOccurrences(of: "M", with: "M ").replacingOccurrences(of: "L", with: "L ")
                    .replacingOccurrences(of: "Q", with: "Q ").split(separator: " ").map(String.init)[...]
                func point() -> CGPoint? {
                    guard let x = words.popFirst().flatMap(Double.init), let y = words.popFirst().flatMap(Double.init)
                    else { return nil }
                    return CGPoint(x: x, y: y)
                }
                while let command = words.popFirst() {
                    switch command {
                    case "M": current = point() ?? current
                    case "L":
                        guard let next = point() else { break }
                        pieces.append((index, current, next))
                        current = next
                    case "Q":
                        guard let control = point(), let end = point() else { break }
                        var previous = current
                        for step in 1...24 {
                            let t = Double(step) / 24
                            let a = (1 - t) * (1 - t)
                            let b = 2 * (1 - t) * t
                            let c = t * t
                            let next = CGPoint(
                                x: a * current.x + b * control.x + c * end.x,
                                y: a * current.y + b * control.y + c * end.y)
                            pieces.append((index, previous, next))
                            previous = next
                        }
                        current = end
                    default: break
                    }
                }
            case .rect(let x, let y, let width, let height, _, _, let stroke) where stroke != nil:
                let corners = [
                    CGPoint(x: x, y: y), CGPoint(x: x + width, y: y), CGPoint(x: x + width, y: y + height),
                    CGPoint(x: x, y: y + height),
                ]
                for side in 0..<4 { pieces.append((index, corners[side], corners[(side + 1) % 4])) }
            default: break
            }
        }
        return pieces
    }

    /// Whether the segment from `a` to `b` passes through `box` (Liang–Barsky clipping).
    static func crosses(_ a: CGPoint, _ b: CGPoint, _ box: CGRect) -> Bool {
        var low = 0.0
        var high = 1.0
        let dx = b.x - a.x
        let dy = b.y - a.y
        for (p, q) in [(-dx, a.x - box.minX), (dx, box.maxX - a.x), (-dy, a.y - box.minY), (dy, box.maxY - a.y)] {
            if p == 0 {
                if q < 0 { return false }
            } else {
                let r = q / p
                if p < 0 { low = max(low, r) } else { high = min(high, r) }
                if low > high { return false }
            }
        }
        return true
    }

    /// Whether an opaque rectangle or circle drawn after element `after` and before element
    /// `before` covers `box`: a line under it does not show through the text on it.
    func isCovered(_ box: CGRect, after: Int, before: Int) -> Bool {
        guard after + 1 < before else { return false }
        return elements[(after + 1)..<before].contains { element in
            switch element {
            case .rect(let x, let y, let width, let height, _, let fill, _) where fill != nil:
                // By comparison, not CGRect.contains, which on Linux compares a union for equality
                // and so misses by rounding.
                return x <= box.minX && y <= box.minY && x + width >= box.maxX && y + height >= box.maxY
            case .circle(let x, let y, let radius, let fill, _) where fill != nil:
                return [
                    (box.minX, box.minY), (box.maxX, box.minY), (box.minX, box.maxY), (box.maxX, box.maxY),
                ].allSatisfy { ($0.0 - x) * ($0.0 - x) + ($0.1 - y) * ($0.1 - y) <= radius * radius }
            default:
                return false
            }
        }
    }

    /// What keeps the figure from being read where it is shown narrowest, one sentence each: text
    /// smaller than `minimumPixels` once the figure is scaled to `columnWidth` (a phone's column:
    /// DocC scales a wider image down to fit), text that runs off the figure, text that
    /// overlaps other text, and text a line crosses (a line, a curve or an outline through its
    /// box, unless an opaque shape drawn between the line and the text covers it).
    ///
    /// - Complexity: O(*t*² + *t*·*s*·*e*) for *t* texts, *s* stroke pieces and *e* elements.
    public func legibilityProblems(columnWidth: Double = 322, minimumPixels: Double = 9) -> [String] {
        let scale = min(1, columnWidth / width)
        var found: [String] = []
        let boxes = textBoxes
        if let smallest = boxes.min(by: { $0.size < $1.size }), smallest.size * scale < minimumPixels {
            found.append(
                "\"\(smallest.text)\" is \(Self.number(smallest.size)) pt in a figure \(Self.number(width)) wide: "
                    + "\(Self.number(smallest.size * scale)) px at a \(Self.number(columnWidth))-px column, under "
                    + "\(Self.number(minimumPixels)) px")
        }
        for item in boxes
        where item.box.minX < 0 || item.box.minY < 0 || item.box.maxX > width || item.box.maxY > height {
            found.append("\"\(item.text)\" runs off the figure")
        }
        for (index, item) in boxes.enumerated() {
            for other in boxes[(index + 1)...] {
                let overlap = item.box.intersection(other.box)
                if !overlap.isNull, overlap.width > 0.5, overlap.height > 0.5 {
                    found.append("\"\(item.text)\" overlaps \"\(other.text)\"")
                }
            }
        }
        let textIndices = elements.indices.filter {
            if case .text = elements[$0] { return true }
            return false
        }
        let pieces = strokes
        for (item, textIndex) in zip(boxes, textIndices) {
            // A line may touch a letter's edge; it may not pass through the text.
            let inner = item.box.insetBy(dx: 1, dy: 1.5)
            let crossing = pieces.first { piece in
                Self.crosses(piece.from, piece.to, inner) && !isCovered(inner, after: piece.index, before: textIndex)
            }
            if crossing != nil { found.append("a line crosses \"\(item.text)\"") }
        }
        return found
    }

    /// `value` with at most two decimals and no trailing zeros.
    public static func number(_ value: Double) -> String {
        let rounded = (value * 100).rounded() / 100
        if rounded == rounded.rounded() { return String(Int(rounded)) }
        var text = String(format: "%.2f", rounded)
        while text.hasSuffix("0") { text.removeLast() }
        return text
    }

    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}

extension SVGFigure {
    /// One curve of a chart: a function sampled over the chart's time axis.
    public struct Series {
        /// Its name in the legend.
        public var label: String
        /// Its ink.
        public var ink: Ink
        /// Whether it is dashed.
        public var dashed: Bool
        /// Where it is defined (it is drawn only there).
        public var domain: ClosedRange<Double>
        /// Its value at a time.
        public var value: (Double) -> Double

        /// A series named `label` drawn in `ink`, defined over `domain`.
        public init(
            _ label: String, ink: Ink, dashed: Bool = false, domain: ClosedRange<Double>,
            value: @escaping (Double) -> Double
        ) {
            self.label = label
            self.ink = ink
            self.dashed = dashed
            self.domain = domain
            self.value = value
        }
    }

    /// A line chart in the box at (`x`, `y`) of `width` × `height` points: axes with the ticks
    /// given (labelled by `format`), the axis titles, a dashed reference line at each of
    /// `guides`, and each series sampled at 200 points of its domain, clipped to `yRange`.
    ///
    /// - Complexity: O(*s*) samples for *s* series.
    public mutating func chart(
        x: Double, y: Double, width: Double, height: Double, xRange: ClosedRange<Double>,
        yRange: ClosedRange<Double>, xTicks: [Double], yTicks: [Double], xTitle: String, yTitle: String,
        format: (Double) -> String = { SVGFigure.number($0) }, guides: [(value: Double, label: String)] = [],
        series: [Series]
    ) {
        func px(_ value: Double) -> Double {
            x + (value - xRange.lowerBound) / (xRange.upperBound - xRange.lowerBound) * width
        }
        func py(_ value: Double) -> Double {
            y + height - (value - yRange.lowerBound) / (yRange.upperBound - yRange.lowerBound) * height
        }
        line(from: (x, y + height), to: (x + width, y + height), ink: .muted)
        line(from: (x, y), to: (x, y + height), ink: .muted)
        for tick in xTicks {
            line(from: (px(tick), y + height), to: (px(tick), y + height + 4), ink: .muted)
            text(format(tick), x: px(tick), y: y + height + 17, size: 12, ink: .muted, anchor: "middle")
        }
        for tick in yTicks {
            line(from: (x - 4, py(tick)), to: (x, py(tick)), ink: .muted)
            text(SVGFigure.number(tick), x: x - 7, y: py(tick) + 4, size: 12, ink: .muted, anchor: "end")
        }
        text(xTitle, x: x + width / 2, y: y + height + 34, size: 12, ink: .muted, anchor: "middle")
        text(yTitle, x: x, y: y - 10, size: 12, ink: .muted, anchor: "start")
        for guide in guides {
            line(from: (x, py(guide.value)), to: (x + width, py(guide.value)), ink: .muted, dashed: true)
            // Above the line at its right end, or below it where a series passes above.
            let labelWidth = Self.estimatedWidth(guide.label, size: 12)
            let isClear = { (baseline: Double) -> Bool in
                series.allSatisfy { item in
                    (0...400).allSatisfy { step in
                        let time =
                            item.domain.lowerBound
                            + (item.domain.upperBound - item.domain.lowerBound) * Double(step) / 400
                        let point = (px(time), py(item.value(time)))
                        return point.0 < x + width - 4 - labelWidth || point.0 > x + width
                            || point.1 < baseline - 12 || point.1 > baseline + 5
                    }
                }
            }
            let baseline = [py(guide.value) - 5, py(guide.value) + 15].first(where: isClear) ?? py(guide.value) - 5
            text(guide.label, x: x + width - 2, y: baseline, size: 12, ink: .muted, anchor: "end")
        }
        for item in series {
            let samples = 200
            var run: [(Double, Double)] = []
            var runs: [[(Double, Double)]] = []
            for index in 0...samples {
                let time =
                    item.domain.lowerBound + (item.domain.upperBound - item.domain.lowerBound) * Double(index)
                    / Double(samples)
                guard xRange.contains(time) else { continue }
                let value = item.value(time)
                if yRange.contains(value) {
                    run.append((px(time), py(value)))
                } else if !run.isEmpty {
                    runs.append(run)
                    run = []
                }
            }
            if !run.isEmpty { runs.append(run) }
            for part in runs { polyline(part, ink: item.ink, width: 2, dashed: item.dashed) }
        }
    }

    /// A legend of `series` from (`x`, `y`), one line each, `spacing` points apart.
    public mutating func legend(_ series: [Series], x: Double, y: Double, spacing: Double = 18) {
        for (index, item) in series.enumerated() {
            let rowY = y + Double(index) * spacing
            line(from: (x, rowY - 4), to: (x + 22, rowY - 4), ink: item.ink, width: 2, dashed: item.dashed)
            text(item.label, x: x + 28, y: rowY, size: 12)
        }
    }
}

/// The committed figures of a DocC catalog: each is compared with what the code draws now, and
/// rewritten when the environment variable `MEDIACORE_WRITE_FIGURES` is set (then the test
/// still fails, so that a regenerated figure is looked at before it is committed).
public enum CommittedFigure {
    /// The repository's root, found from this file's path.
    public static var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    /// The differences between `figure` and the committed `name.svg` and `name~dark.svg` in
    /// `Sources/<module>/<module>.docc/Resources`, one sentence each; empty when they agree.
    public static func differences(_ figure: SVGFigure, name: String, module: String) -> [String] {
        differences(figure, name: name, folder: "Sources/\(module)/\(module).docc/Resources")
    }

    /// The differences between `figure` and the committed `name.svg` and `name~dark.svg` in
    /// `folder` (from the repository's root), and its ``SVGFigure/legibilityProblems(columnWidth:minimumPixels:)``,
    /// one sentence each; empty when they agree and it reads on a phone.
    public static func differences(_ figure: SVGFigure, name: String, folder path: String) -> [String] {
        let folder = root.appendingPathComponent(path)
        var found = figure.legibilityProblems().map { "\(name).svg: \($0)" }
        let rewrite = ProcessInfo.processInfo.environment["MEDIACORE_WRITE_FIGURES"] != nil
        for palette in SVGFigure.Palette.allCases {
            let file = folder.appendingPathComponent(palette == .light ? "\(name).svg" : "\(name)~dark.svg")
            let drawn = figure.svg(palette)
            let committed = try? String(contentsOf: file, encoding: .utf8)
            guard committed != drawn else { continue }
            found.append(
                "\(file.lastPathComponent) differs from what the code draws"
                    + (rewrite
                        ? " (rewritten: look at it, then commit it)" : "; run the tests with MEDIACORE_WRITE_FIGURES=1")
            )
            if rewrite {
                try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                try? Data(drawn.utf8).write(to: file)
            }
        }
        return found
    }

    /// How an article shows figure `name` with `description` as its alternative text: DocC's
    /// image directive, `@Image(source: "name.svg", alt: "description")`, which also picks
    /// `name~dark.svg` in dark mode. A directive's argument keeps a backslash before a quotation
    /// mark as it is, so the description's double quotation marks become single ones.
    public static func directive(_ description: String, name: String) -> String {
        "@Image(source: \"\(name).svg\", alt: \"\(description.replacingOccurrences(of: "\"", with: "'"))\")"
    }

    /// Whether the article at `path` (from the repository's root) shows the figure with its
    /// description as the alternative text (``directive(_:name:)``).
    public static func isShown(_ description: String, name: String, inArticle path: String) -> Bool {
        let text = (try? String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)) ?? ""
        return text.contains(directive(description, name: name))
    }

    /// Everything wrong with `figure` in the documentation, one sentence each: the committed
    /// files that differ (``differences(_:name:module:)``) and, when the article at `article`
    /// does not show it with its description as alt text (``isShown(_:name:inArticle:)``), that.
    public static func problems(_ figure: SVGFigure, name: String, module: String, article: String) -> [String] {
        var found = differences(figure, name: name, module: module)
        if !isShown(figure.description, name: name, inArticle: article) {
            found.append("\(article) should show \(directive(figure.description, name: name))")
        }
        return found
    }
}
