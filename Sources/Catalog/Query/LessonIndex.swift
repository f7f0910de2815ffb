import Foundation

/// What a catalog screen asks for: filters, an order, and a page.
public struct LessonQuery: Hashable, Sendable {
    /// How to order the results.
    public enum Order: Hashable, Sendable {
        /// The catalog's own order.
        case catalog
        /// By title.
        case title
        /// By instructor, then title.
        case instructor
        /// By level (in the index's level order), then title.
        case level
    }

    /// Words that must each begin a word of the title, instructor, level, song or description
    /// (case and diacritics ignored: "jose" finds "José").
    public var text: String
    /// Levels to keep; empty keeps all.
    public var levels: Set<String>
    /// Instructors to keep; empty keeps all.
    public var instructors: Set<String>
    /// The order.
    public var order: Order
    /// The page, from 0.
    public var page: Int
    /// The page's size.
    public var pageSize: Int

    /// Creates a query.
    public init(
        text: String = "", levels: Set<String> = [], instructors: Set<String> = [], order: Order = .catalog,
        page: Int = 0,
        pageSize: Int = 50
    ) {
        self.text = text
        self.levels = levels
        self.instructors = instructors
        self.order = order
        self.page = max(0, page)
        self.pageSize = max(1, pageSize)
    }
}

/// The answer to a query: one page, and how many lessons match in all.
public struct LessonQueryResult: Hashable, Sendable {
    /// The lessons of the requested page, in order.
    public var lessons: [Lesson]
    /// How many lessons match.
    public var totalCount: Int
    /// How many pages the matches fill.
    public var pageCount: Int
}

/// An index over a catalog's lessons that answers each keystroke without scanning the catalog.
///
/// Building folds every searchable word once (case and diacritics removed) into a sorted token
/// list, lists the lessons of each level and instructor, and precomputes the three sort orders.
/// A query word is then a binary search for its prefix range in the token list.
///
/// - Complexity: Building is O(*w* log *w*) for *w* words in the catalog. A query is
///   O(*q* · (log *w* + *m*) + *n*) for *q* words matching *m* tokens and *n* lessons (the final
///   pass walks the precomputed order).
public struct LessonIndex: Sendable {
    /// The lessons, in catalog order.
    public let lessons: [Lesson]
    /// The order of levels for sorting and grouping; unknown levels come after, alphabetically.
    public let levelOrder: [String]
    private let tokens: [(token: String, lesson: Int32)]
    private let byLevel: [String: [Int32]]
    private let byInstructor: [String: [Int32]]
    private let titleOrder: [Int32]
    private let instructorOrder: [Int32]
    private let levelSortOrder: [Int32]

    /// Indexes `lessons`.
    public init(_ lessons: [Lesson], levelOrder: [String] = ["beginner", "intermediate", "advanced"]) {
        self.lessons = lessons
        self.levelOrder = levelOrder
        var tokens: [(String, Int32)] = []
        var byLevel: [String: [Int32]] = [:]
        var byInstructor: [String: [Int32]] = [:]
        for (index, lesson) in lessons.enumerated() {
            let position = Int32(index)
            let fields = [lesson.title, lesson.instructor, lesson.level, lesson.extra["song"], lesson.summary]
                .compactMap { $0 }
            var seen: Set<String> = []
            for field in fields {
                for word in Self.words(field) where seen.insert(word).inserted { tokens.append((word, position)) }
            }
            if let level = lesson.level { byLevel[level, default: []].append(position) }
            if let instructor = lesson.instructor { byInstructor[instructor, default: []].append(position) }
        }
        tokens.sort { $0.0 < $1.0 }
        self.tokens = tokens
        self.byLevel = byLevel
        self.byInstructor = byInstructor
        let titles = lessons.map { Self.fold($0.title) }
        let instructors = lessons.map { Self.fold($0.instructor ?? "") }
        let rank = Dictionary(levelOrder.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        let positions = (0..<Int32(lessons.count)).map { $0 }
        titleOrder = positions.sorted {
            titles[Int($0)] != titles[Int($1)] ? titles[Int($0)] < titles[Int($1)] : $0 < $1
        }
        instructorOrder = positions.sorted {
            let (a, b) = (Int($0), Int($1))
            if instructors[a] != instructors[b] { return instructors[a] < instructors[b] }
            return titles[a] != titles[b] ? titles[a] < titles[b] : a < b
        }
        levelSortOrder = positions.sorted {
            let (a, b) = (Int($0), Int($1))
            let levelA = lessons[a].level ?? ""
            let levelB = lessons[b].level ?? ""
            let rankA = rank[levelA] ?? Int.max
            let rankB = rank[levelB] ?? Int.max
            if rankA != rankB { return rankA < rankB }
            if levelA != levelB { return levelA < levelB }
            return titles[a] != titles[b] ? titles[a] < titles[b] : a < b
        }
    }

    /// The lessons matching `query`, ordered and paginated.
    public func search(_ query: LessonQuery) -> LessonQueryResult {
        let matches = matching(query)
        let order: [Int32]? =
            switch query.order {
            case .catalog: nil
            case .title: titleOrder
            case .instructor: instructorOrder
            case .level: levelSortOrder
            }
        var ordered: [Int] = []
        if let order {
            for position in order where matches.map({ $0[Int(position)] }) ?? true { ordered.append(Int(position)) }
        } else if let matches {
            for index in matches.indices where matches[index] { ordered.append(index) }
        } else {
            ordered = Array(lessons.indices)
        }
        let start = min(ordered.count, query.page * query.pageSize)
        let end = min(ordered.count, start + query.pageSize)
        return LessonQueryResult(
            lessons: ordered[start..<end].map { lessons[$0] }, totalCount: ordered.count,
            pageCount: (ordered.count + query.pageSize - 1) / query.pageSize)
    }

    /// The lessons matching `query` grouped by level, in level order (unpaginated).
    public func groupedByLevel(_ query: LessonQuery) -> [(level: String, lessons: [Lesson])] {
        var all = query
        all.order = .level
        all.page = 0
        all.pageSize = max(1, lessons.count)
        var groups: [(level: String, lessons: [Lesson])] = []
        for lesson in search(all).lessons {
            let level = lesson.level ?? ""
            if groups.last?.level == level {
                groups[groups.count - 1].lessons.append(lesson)
            } else {
                groups.append((level, [lesson]))
            }
        }
        return groups
    }

    /// The instructors, sorted, for a filter menu.
    public var instructors: [String] { byInstructor.keys.sorted() }

    /// A mask of the lessons passing the filters, or `nil` when nothing is filtered.
    private func matching(_ query: LessonQuery) -> [Bool]? {
        var mask: [Bool]?
        func intersect(_ positions: [Int32]) {
            var next = [Bool](repeating: false, count: lessons.count)
            for position in positions where mask?[Int(position)] ?? true { next[Int(position)] = true }
            mask = next
        }
        if !query.levels.isEmpty { intersect(query.levels.flatMap { byLevel[$0] ?? [] }) }
        if !query.instructors.isEmpty { intersect(query.instructors.flatMap { byInstructor[$0] ?? [] }) }
        for word in Set(Self.words(query.text)) {
            intersect(postings(withPrefix: word))
        }
        return mask
    }

    /// The lessons with a word starting with `prefix` (binary search for the prefix's range).
    private func postings(withPrefix prefix: String) -> [Int32] {
        var low = 0
        var high = tokens.count
        while low < high {
            let middle = (low + high) / 2
            if tokens[middle].token < prefix { low = middle + 1 } else { high = middle }
        }
        var result: [Int32] = []
        while low < tokens.count, tokens[low].token.hasPrefix(prefix) {
            result.append(tokens[low].lesson)
            low += 1
        }
        return result
    }

    /// The words of `text`, folded: lowercased, diacritics removed, split at non-alphanumerics.
    static func words(_ text: String) -> [String] {
        fold(text).split { !$0.isLetter && !$0.isNumber }.map(String.init)
    }

    /// `text` lowercased with its diacritics removed: "José" and "jose" are the same word.
    static func fold(_ text: String) -> String {
        // Most catalog text is ASCII, where folding is lowercasing; Foundation's folding is slow.
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return text.lowercased() }
        return text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil).lowercased()
    }
}
