import Foundation
import TestSupport
import Testing

/// The check every committed figure passes: read at a phone's column width, its smallest text is
/// still 9 pixels, nothing runs off it, no text overlaps other text, and no line crosses text.
@Suite("Figure legibility")
struct FigureLegibilityTests {
    @Test(
        "the smallest text is measured where the figure is narrowest: scaled down to a 322-px column",
        arguments: [
            // (figure width, smallest text, legible)
            (420.0, 12.0, true),  // 9.2 px
            (560.0, 12.0, false),  // 6.9 px: the Gestures throw figure before it was redrawn
            (900.0, 12.0, false),  // 4.3 px
            (300.0, 9.0, true),  // narrower than the column: shown at its own size
            (300.0, 8.0, false),
            (644.0, 18.0, true),  // exactly 9 px
        ])
    func smallestText(width: Double, size: Double, legible: Bool) {
        var figure = SVGFigure(width: width, height: 100, description: "a label")
        figure.text("label", x: 10, y: 50, size: size)
        figure.text("title", x: 10, y: 80, size: 20, bold: true)
        #expect(figure.legibilityProblems().isEmpty == legible, "\(figure.legibilityProblems())")
    }

    @Test("text that runs off the figure or overlaps other text is reported, text apart is not")
    func placement() {
        var figure = SVGFigure(width: 300, height: 100, description: "labels")
        figure.text("at the start", x: 10, y: 30, size: 12)
        figure.text("apart", x: 200, y: 30, size: 12)
        figure.text("below", x: 10, y: 60, size: 12)
        #expect(figure.legibilityProblems().isEmpty)

        var overlapping = figure
        overlapping.text("over", x: 30, y: 34, size: 12)
        #expect(overlapping.legibilityProblems() == ["\"at the start\" overlaps \"over\""])

        var offEdge = figure
        offEdge.text("too far right", x: 290, y: 90, size: 12)
        offEdge.text("centred at the left edge", x: 0, y: 90, size: 12, anchor: "middle")
        #expect(
            offEdge.legibilityProblems() == [
                "\"too far right\" runs off the figure", "\"centred at the left edge\" runs off the figure",
            ])
    }

    @Test(
        "a line, a curve or an outline through text is reported, unless an opaque shape drawn between them covers the text"
    )
    func linesThroughText() {
        var figure = SVGFigure(width: 300, height: 120, description: "a label and lines")
        figure.line(from: (0, 100), to: (300, 100))  // well below the label
        figure.curve(from: (0, 10), control: (150, 0), to: (300, 10))  // well above it
        figure.text("a label", x: 100, y: 50, size: 12)
        #expect(figure.legibilityProblems().isEmpty)

        var crossed = figure
        crossed.line(from: (90, 46), to: (160, 46))
        #expect(crossed.legibilityProblems() == ["a line crosses \"a label\""])

        var curved = figure
        curved.curve(from: (80, 80), control: (120, 20), to: (160, 80))
        #expect(curved.legibilityProblems() == ["a line crosses \"a label\""])

        var outlined = figure
        outlined.rect(x: 110, y: 30, width: 60, height: 30, fill: nil, stroke: .muted)
        #expect(outlined.legibilityProblems() == ["a line crosses \"a label\""])

        // Drawn before the label with a background under it, as tick labels over the lines to
        // the file in the download figure: covered.
        var covered = SVGFigure(width: 300, height: 120, description: "a label on the background")
        covered.line(from: (90, 46), to: (160, 46))
        covered.rect(x: 96, y: 36, width: 50, height: 18, fill: .background, stroke: nil)
        covered.text("a label", x: 100, y: 50, size: 12)
        #expect(covered.legibilityProblems().isEmpty)
    }

    @Test("estimated widths: wide letters set wider than narrow ones, bold wider than regular, and size scales")
    func estimatedWidths() {
        let narrow = SVGFigure.estimatedWidth("iiii", size: 12)
        let wide = SVGFigure.estimatedWidth("mmmm", size: 12)
        #expect(narrow < wide)
        #expect(SVGFigure.estimatedWidth("mmmm", size: 24) == 2 * wide)
        #expect(SVGFigure.estimatedWidth("abc", size: 12, bold: true) > SVGFigure.estimatedWidth("abc", size: 12))
        // Helvetica sets "DecimalFormatting" about 101 points wide at 12 points: the estimate
        // errs wide, never narrow.
        #expect((102...115).contains(SVGFigure.estimatedWidth("DecimalFormatting", size: 12)))
    }
}
