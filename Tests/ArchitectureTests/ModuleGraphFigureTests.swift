import Foundation
import TestSupport
import Testing

/// The README's module graph, drawn from `Package.swift`'s library targets and their
/// dependencies, and checked against the import rules of ``ModuleGraphTests``.
@Suite("The module graph figure")
struct ModuleGraphFigureTests {
    /// A library target of the manifest: its name, its dependencies, and whether a product
    /// exports it.
    struct Target: Equatable {
        var name: String
        var dependencies: [String]
        var isProduct: Bool
    }

    /// The library targets of `Package.swift` (those before its test targets), in order.
    static func targets() throws -> [Target] {
        let manifest = try String(
            contentsOf: CommittedFigure.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let libraries = manifest.components(separatedBy: "// MARK: Tests").first ?? manifest
        let products = Set(
            libraries.matches(of: #/\.library\(name: "(\w+)"/#).map { String($0.output.1) })
        return libraries.matches(of: #/\.target\(\s*name: "(\w+)"(?:,\s*dependencies: \[([^\]]*)\])?/#).map { match in
            let dependencies = (match.output.2.map(String.init) ?? "").matches(of: #/"(\w+)"/#).map {
                String($0.output.1)
            }
            return Target(
                name: String(match.output.1), dependencies: dependencies,
                isProduct: products.contains(String(match.output.1)))
        }
    }

    /// Each target's layer: 0 for a target that depends on nothing, else one more than its
    /// deepest dependency. O(*t* + *d*) with memoization, for *t* targets and *d* dependencies.
    static func layers(_ targets: [Target]) -> [String: Int] {
        var layer: [String: Int] = [:]
        let byName = Dictionary(uniqueKeysWithValues: targets.map { ($0.name, $0) })
        func depth(_ name: String) -> Int {
            if let known = layer[name] { return known }
            let value = (byName[name]?.dependencies.map { depth($0) + 1 }.max()) ?? 0
            layer[name] = value
            return value
        }
        for target in targets { _ = depth(target.name) }
        return layer
    }

    /// Each target's row, counted from the bottom: its layer (``layers(_:)``), with a layer of
    /// more than `perRow` modules split evenly into rows of at most `perRow`, so that the figure stays
    /// narrow enough to read on a phone. Within a split layer, the modules more targets import
    /// go in the upper rows (fewer arrows pass through a row to reach them), ties by name. A
    /// split keeps every import pointing down: modules of one layer never import each other.
    /// A module that imports none and that none imports stands in the top row, beside the
    /// modules an app imports first, rather than under the modules it has nothing to do with.
    ///
    /// - Complexity: O(*t* log *t* + *d*) for *t* targets and *d* dependencies.
    static func rows(_ targets: [Target], perRow: Int = 3) -> [String: Int] {
        let layer = layers(targets)
        var importers: [String: Int] = [:]
        for target in targets {
            for dependency in target.dependencies { importers[dependency, default: 0] += 1 }
        }
        let alone = Set(targets.filter { $0.dependencies.isEmpty && importers[$0.name] == nil }.map(\.name))
        var row: [String: Int] = [:]
        var next = 0
        for level in 0...(layer.values.max() ?? 0) {
            let members = targets.map(\.name).filter { layer[$0] == level && !alone.contains($0) }.sorted {
                (importers[$0] ?? 0, $1) > (importers[$1] ?? 0, $0)
            }
            let count = (members.count + perRow - 1) / perRow
            // As many in each row as the split allows evenly (four make two rows of two).
            let each = (members.count + max(count, 1) - 1) / max(count, 1)
            for (index, name) in members.enumerated() {
                // The first ones go in the highest of the layer's rows.
                row[name] = next + count - 1 - index / max(each, 1)
            }
            next += max(count, 1)
        }
        let top = max((row.values.max() ?? 0), 0)
        for name in alone { row[name] = top }
        return row
    }

    /// A slot in a row of the drawing: a module, or a point an arrow passes through on its way
    /// to a module more than one row below (so that no arrow crosses a box).
    struct Slot {
        var name: String
        var isModule: Bool
        var width: Double
    }

    /// The figure: modules in rows (``rows(_:perRow:)``: a module above what it imports), ordered within a
    /// row by the mean position of what points at them, then of what they point at (the
    /// barycenter heuristic, one sweep down and one up), and each
    /// import an arrow that passes between the boxes of the rows it crosses.
    ///
    /// - Complexity: O(*t*² + *d*·*r*) for *t* targets, *d* dependencies and *r* rows.
    static func figure(_ targets: [Target], highlighting module: String? = nil) -> SVGFigure {
        let layer = Self.rows(targets)
        let top = layer.values.max() ?? 0
        let boxWidth = 112.0
        let boxHeight = 34.0
        let rowGap = 46.0
        let gap = 8.0
        let edges = targets.flatMap { target in target.dependencies.map { (from: target.name, to: $0) } }
        // Rows from the top; a long arrow gets a pass-through slot in every row between its ends.
        var rows: [[Slot]] = (0...top).reversed().map { level in
            targets.filter { layer[$0.name] == level }.map(\.name).sorted().map {
                Slot(name: $0, isModule: true, width: boxWidth)
            }
        }
        // Each arrow's slots from its source down to its target.
        var routes: [String: [String]] = [:]
        for edge in edges {
            guard let from = layer[edge.from], let to = layer[edge.to] else { continue }
            var route = [edge.from]
            for level in stride(from: from - 1, to: to, by: -1) {
                let name = "\(edge.from)→\(edge.to)@\(level)"
                rows[top - level].append(Slot(name: name, isModule: false, width: 2))
                route.append(name)
            }
            routes["\(edge.from)→\(edge.to)"] = route + [edge.to]
        }
        // Order the rows by the barycenter heuristic: each slot goes to the mean position of the
        // slots it connects to in the row above (sweeping down) or below (sweeping up), positions
        // counted as fractions of their row's width so that rows of different lengths compare. A
        // slot with no neighbour that way follows its neighbours the other way (a module nothing
        // imports sits above what it imports), and one with none keeps its place. Four sweeps each
        // way settle these small graphs.
        var position: [String: Double] = [:]
        func place(_ row: Int) {
            let last = Double(max(rows[row].count - 1, 1))
            for (index, slot) in rows[row].enumerated() { position[slot.name] = Double(index) / last }
        }
        for row in rows.indices { place(row) }
        func neighbours(of name: String, step: Int) -> [Double] {
            routes.values.compactMap { route -> Double? in
                guard let at = route.firstIndex(of: name), route.indices.contains(at + step) else { return nil }
                return position[route[at + step]]
            }
        }
        func sweep(_ row: Int, towards step: Int) {
            let keyed = rows[row].map { slot -> (Slot, Double, Double) in
                let current = position[slot.name] ?? 0
                let near = neighbours(of: slot.name, step: step)
                let far = near.isEmpty ? neighbours(of: slot.name, step: -step) : near
                return (slot, far.isEmpty ? current : far.reduce(0, +) / Double(far.count), current)
            }
            rows[row] = keyed.sorted { ($0.1, $0.2, $0.0.name) < ($1.1, $1.2, $1.0.name) }.map(\.0)
            place(row)
        }
        for _ in 0..<4 {
            for row in rows.indices.dropFirst() { sweep(row, towards: -1) }
            for row in rows.indices.dropLast().reversed() { sweep(row, towards: 1) }
        }
        let rowWidths = rows.map { row in row.reduce(0) { $0 + $1.width } + Double(max(row.count - 1, 0)) * gap }
        let width = (rowWidths.max() ?? 0) + 24
        let keyLines = module == nil ? 2.0 : 3.0
        let height = Double(rows.count) * boxHeight + Double(rows.count - 1) * rowGap + 40 + keyLines * 18
        var centers: [String: (Double, Double)] = [:]
        for (row, slots) in rows.enumerated() {
            var x = (width - rowWidths[row]) / 2
            for slot in slots {
                centers[slot.name] = (x + slot.width / 2, 20 + Double(row) * (boxHeight + rowGap) + boxHeight / 2)
                x += slot.width + gap
            }
        }
        let internalTargets = targets.filter { !$0.isProduct }.map(\.name)
        // A module's own page says first where it sits: what it imports, and what imports it.
        let focus = module.map { name in
            let imports = targets.first { $0.name == name }?.dependencies ?? []
            let importers = targets.filter { $0.dependencies.contains(name) }.map(\.name)
            return "\(name), outlined in orange, "
                + (imports.isEmpty ? "imports no other module" : "imports \(imports.joined(separator: ", "))")
                + (importers.isEmpty
                    ? " and no module imports it"
                    : "; \(importers.joined(separator: ", ")) \(importers.count == 1 ? "imports" : "import") it")
                + ". "
        }
        var figure = SVGFigure(
            width: width, height: height,
            description: (focus ?? "") + "MediaCore's modules and what each imports, from Package.swift: "
                + targets.map { target in
                    target.dependencies.isEmpty
                        ? "\(target.name) imports no other module"
                        : "\(target.name) imports \(target.dependencies.joined(separator: ", "))"
                }.joined(separator: "; ")
                + ". \(internalTargets.joined(separator: " and ")) \(internalTargets.count == 1 ? "is" : "are") "
                + "package-internal, not \(internalTargets.count == 1 ? "a product" : "products"). No cycle.")
        // Where each arrow leaves its source and reaches its target: the arrows at one box are
        // spread along its edge, ordered by where their other end lies, so that no two
        // arrowheads meet at one point.
        func spread(_ ends: [(edge: String, toward: Double)]) -> [String: Double] {
            let sorted = ends.sorted { ($0.toward, $0.edge) < ($1.toward, $1.edge) }
            let spacing = min(18, (boxWidth - 24) / Double(max(sorted.count - 1, 1)))
            var offsets: [String: Double] = [:]
            for (index, end) in sorted.enumerated() {
                offsets[end.edge] = (Double(index) - Double(sorted.count - 1) / 2) * spacing
            }
            return offsets
        }
        var departures: [String: Double] = [:]
        var arrivals: [String: Double] = [:]
        for target in targets {
            let outgoing = routes.filter { $0.value.first == target.name }.compactMap { key, route in
                route.dropFirst().first.flatMap { centers[$0] }.map { (edge: key, toward: $0.0) }
            }
            departures.merge(spread(outgoing)) { first, _ in first }
            let incoming = routes.filter { $0.value.last == target.name }.compactMap { key, route in
                route.dropLast().last.flatMap { centers[$0] }.map { (edge: key, toward: $0.0) }
            }
            arrivals.merge(spread(incoming)) { first, _ in first }
        }
        for edge in edges {
            let key = "\(edge.from)→\(edge.to)"
            guard let route = routes[key] else { continue }
            var points: [(Double, Double)] = []
            for (index, name) in route.enumerated() {
                guard let center = centers[name] else { continue }
                if index == 0 {
                    points.append((center.0 + (departures[key] ?? 0), center.1 + boxHeight / 2))
                } else if index == route.count - 1 {
                    points.append((center.0 + (arrivals[key] ?? 0), center.1 - boxHeight / 2 - 2))
                } else {
                    points += [(center.0, center.1 - boxHeight / 2), (center.0, center.1 + boxHeight / 2)]
                }
            }
            figure.polyline(points, ink: .muted, width: 1.25, arrow: true)
        }
        for target in targets {
            guard let center = centers[target.name] else { continue }
            if target.name == module {
                // A second outline around the page's module, so that it stands out at a glance.
                figure.rect(
                    x: center.0 - boxWidth / 2 - 3, y: center.1 - boxHeight / 2 - 3, width: boxWidth + 6,
                    height: boxHeight + 6, radius: 10, fill: nil, stroke: .highlight)
            }
            figure.rect(
                x: center.0 - boxWidth / 2, y: center.1 - boxHeight / 2, width: boxWidth, height: boxHeight, radius: 8,
                fill: target.isProduct ? .surface : nil,
                stroke: target.name == module ? .highlight : target.isProduct ? .text : .muted)
            figure.text(
                target.name, x: center.0, y: center.1 + 4, size: 12, ink: target.isProduct ? .text : .muted,
                anchor: "middle", bold: target.isProduct)
        }
        var key = ["An arrow from A to B: A imports B.", "Outlined in grey: package-internal, not a product."]
        if let module { key.append("Outlined in orange: \(module), this page's module.") }
        for (index, line) in key.enumerated() {
            figure.text(line, x: 12, y: height - 14 - Double(key.count - 1 - index) * 18, size: 12, ink: .muted)
        }
        return figure
    }

    @Test(
        "each module's landing page shows the module graph with that module outlined, drawn from Package.swift",
        arguments: ModuleGraphTests.allowed.keys.sorted())
    func moduleFigure(module: String) throws {
        let problems = CommittedFigure.problems(
            Self.figure(try Self.targets(), highlighting: module), name: "modules", module: module,
            article: "Sources/\(module)/\(module).docc/\(module).md")
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    @Test("a module that imports none and that none imports stands in the top row, not below the others")
    func moduleAloneStandsOnTop() {
        let targets = [
            Target(name: "App", dependencies: ["Network"], isProduct: true),
            Target(name: "Network", dependencies: [], isProduct: true),
            Target(name: "Physics", dependencies: [], isProduct: true),
        ]
        #expect(Self.rows(targets) == ["App": 1, "Network": 0, "Physics": 1])
    }

    @Test("Package.swift's library targets are the modules, with the dependencies the import rules allow")
    func manifestMatchesImportRules() throws {
        let targets = try Self.targets()
        #expect(targets.count == ModuleGraphTests.allowed.count)
        for target in targets {
            #expect(Set(target.dependencies) == ModuleGraphTests.allowed[target.name], "\(target.name)")
        }
    }

    @Test("Docs/Figures/modules.svg (light and dark) is drawn from Package.swift, and the README shows it")
    func figureMatches() throws {
        let figure = Self.figure(try Self.targets())
        let problems = CommittedFigure.differences(figure, name: "modules", folder: "Docs/Figures")
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
        let readme = try String(contentsOf: CommittedFigure.root.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.contains("srcset=\"Docs/Figures/modules~dark.svg\""))
        #expect(
            readme.contains("<img alt=\"\(figure.description)\" src=\"Docs/Figures/modules.svg\""),
            "README.md should show <img alt=\"\(figure.description)\" src=\"Docs/Figures/modules.svg\">")
    }
}
