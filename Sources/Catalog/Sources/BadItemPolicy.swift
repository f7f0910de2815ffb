/// What a catalog reader does with an item it cannot read: a spreadsheet's row, a videos API
/// entry, a HAL page's section.
public enum BadItemPolicy: Sendable, Hashable {
    /// Stop at the first bad item: the whole body is refused with its error.
    case fail
    /// Skip bad items and report them beside the items read, so that one broken entry never
    /// blanks a catalog screen.
    case skip
}

/// An item a JSON catalog reader skipped, and why.
public struct SkippedItem: Hashable, Sendable, CustomStringConvertible {
    /// The item's position in its list, from 0.
    public var index: Int
    /// The item's id, when it could be read.
    public var id: String?
    /// What was wrong, with the key path of the problem (`missing 'name' at videos.3`).
    public var reason: String

    /// Creates a report.
    public init(index: Int, id: String?, reason: String) {
        self.index = index
        self.id = id
        self.reason = reason
    }

    /// The item's position, its id when known, and the reason.
    public var description: String {
        "item \(index)" + (id.map { " (id \($0))" } ?? "") + ": " + reason
    }
}

/// One element of a JSON list decoded on its own: what it held, or why it could not be read
/// and its id when that much could be read. Decoding it never throws, so a list of them reads
/// every element however many are bad.
struct LenientElement<Element: Decodable>: Decodable {
    enum Outcome {
        case read(Element)
        case failed(reason: String, id: String?)
    }

    private struct IDKey: CodingKey {
        var stringValue: String { "id" }
        var intValue: Int? { nil }
        init() {}
        init?(stringValue: String) {}
        init?(intValue: Int) { nil }
    }

    var outcome: Outcome

    init(from decoder: any Decoder) {
        do {
            outcome = .read(try Element(from: decoder))
        } catch {
            // Only a bad element needs its id read apart: a good one carries it.
            let container = try? decoder.container(keyedBy: IDKey.self)
            let text = try? container?.decode(String.self, forKey: IDKey())
            let number = try? container?.decode(Int64.self, forKey: IDKey())
            let id = text ?? number.map { String($0) }
            outcome = .failed(reason: CatalogDecodingError.describe(error), id: id)
        }
    }
}
