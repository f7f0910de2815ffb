public import Foundation

/// Why a catalog body could not be read, and which source it was meant to be.
public struct CatalogDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong.
    public enum Kind: Hashable, Sendable {
        /// The body is larger than ``CatalogJSONLimits/maximumBodySize``.
        case tooLarge(bytes: Int, limit: Int)
        /// Arrays and objects nest deeper than the limit.
        case tooDeep(limit: Int)
        /// The body holds more objects than the limit.
        case tooManyObjects(limit: Int)
        /// The body holds more values than the limit.
        case tooManyValues(limit: Int)
        /// The JSON does not have the expected shape: the decoder's finding with its key path
        /// (`DecodingError` itself is neither `Sendable` nor `Hashable`, so its description is
        /// kept).
        case invalidJSON(String)
        /// A HAL section's `href` is not a valid URI template.
        case invalidTemplate(section: String, URITemplate.TemplateError)
        /// The class spreadsheet could not be read.
        case spreadsheet(CSVError)
    }

    /// What was wrong.
    public var kind: Kind
    /// What the body was supposed to be ("videos API", "HAL page", "class spreadsheet").
    public var source: String

    /// Creates an error.
    public init(_ kind: Kind, source: String) {
        self.kind = kind
        self.source = source
    }

    /// What was wrong, as a phrase.
    public var reason: String {
        switch kind {
        case .tooLarge(let bytes, let limit): "the body is \(bytes) bytes, more than the \(limit) allowed"
        case .tooDeep(let limit): "arrays and objects nest deeper than \(limit) levels"
        case .tooManyObjects(let limit): "the body holds more than \(limit) objects"
        case .tooManyValues(let limit): "the body holds more than \(limit) values"
        case .invalidJSON(let finding): finding
        case .invalidTemplate(let section, let error): "section \(section) has a malformed href: \(error)"
        case .spreadsheet(let error): error.description
        }
    }

    /// A sentence naming the source and the problem.
    public var description: String { "\(source): \(reason)" }

    static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return String(describing: error) }
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }
            return keys.isEmpty ? "" : " at \(keys.joined(separator: "."))"
        }
        switch error {
        case .dataCorrupted(let context): return context.debugDescription + path(context)
        case .keyNotFound(let key, let context): return "missing '\(key.stringValue)'" + path(context)
        case .typeMismatch(let type, let context): return "expected \(type)" + path(context)
        case .valueNotFound(let type, let context): return "missing \(type)" + path(context)
        @unknown default: return String(describing: error)
        }
    }
}

/// The bounds every catalog JSON body must keep before it is decoded.
///
/// A server MediaCore does not control could send a body of gigabytes, `[[[[…` nested deeper
/// than any decoder's stack, or millions of tiny objects that a decoder holds at several times
/// their size; each is refused with a ``CatalogDecodingError`` before decoding, so decoding a
/// body costs at most a few hundred megabytes whatever the server sends (the `Hostile/memory`
/// benchmark measures it).
public enum CatalogJSONLimits {
    /// The largest body read: 32 MiB (the largest real catalog seen is under 1 MiB).
    public static let maximumBodySize = 32 << 20
    /// The deepest nesting of arrays and objects: 64 (catalog shapes nest at most 6 deep).
    public static let maximumNestingDepth = 64
    /// The most objects in one body: 100,000 (one per lesson or section, like the spreadsheet's
    /// row limit).
    public static let maximumObjectCount = 100_000
    /// The most values in one body, counted as commas plus arrays and objects: 1,000,000.
    public static let maximumValueCount = 1_000_000

    /// Throws when `data` is larger, nested deeper, or holds more objects or values than the limits.
    ///
    /// - Complexity: O(*n*) in the body's size, one pass that skips string contents.
    static func check(_ data: Data, source: String) throws(CatalogDecodingError) {
        guard data.count <= maximumBodySize else {
            throw CatalogDecodingError(.tooLarge(bytes: data.count, limit: maximumBodySize), source: source)
        }
        var depth = 0
        var objects = 0
        var values = 0
        var inString = false
        var escaped = false
        for byte in data {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                values += 1
                guard depth <= maximumNestingDepth else {
                    throw CatalogDecodingError(.tooDeep(limit: maximumNestingDepth), source: source)
                }
                if byte == UInt8(ascii: "{") {
                    objects += 1
                    guard objects <= maximumObjectCount else {
                        throw CatalogDecodingError(.tooManyObjects(limit: maximumObjectCount), source: source)
                    }
                }
                guard values <= maximumValueCount else {
                    throw CatalogDecodingError(.tooManyValues(limit: maximumValueCount), source: source)
                }
            case UInt8(ascii: ","):
                values += 1
                guard values <= maximumValueCount else {
                    throw CatalogDecodingError(.tooManyValues(limit: maximumValueCount), source: source)
                }
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
            default: break
            }
        }
    }
}

/// A videos API, as a photography course's server sends it: `{"videos": [{id, name, thumbnail, description, video_link}]}`.
public enum VideosAPI {
    /// The lessons read, and the entries skipped.
    public struct ImportResult: Sendable, Hashable {
        /// The lessons, in the server's order.
        public var lessons: [Lesson]
        /// The entries skipped, with why (empty unless the policy is ``BadItemPolicy/skip``).
        public var skipped: [SkippedItem]
    }

    private struct Body: Decodable {
        var videos: [LenientElement<Video>]
    }

    private struct Video: Decodable {
        var id: FlexibleID
        var name: String
        var thumbnail: String?
        var description: String?
        var videoLink: String?

        enum CodingKeys: String, CodingKey {
            case id, name, thumbnail, description
            case videoLink = "video_link"
        }
    }

    /// An id written as a number or a string.
    private struct FlexibleID: Decodable {
        var text: String

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Int64.self) {
                text = String(number)
            } else {
                text = try container.decode(String.self)
            }
        }
    }

    /// The lessons, in the server's order (its ids are not sorted, and order is editorial).
    ///
    /// An entry is bad when it lacks an `id` or a `name`, holds a value of the wrong type, or
    /// repeats an earlier entry's id (a list keyed by id could not show both). The body itself
    /// (not JSON, no `videos` list, past ``CatalogJSONLimits``) is refused whatever the policy.
    ///
    /// A `video_link` is a URL reference (RFC 3986 §4.1): with `documentURL`, a relative one
    /// (`videos/1.m3u8`, `/media/1.mp4`, `../1.mp4`) is resolved against it (§5.2), so every
    /// ``Lesson/mediaURL`` is absolute; without it, a relative link stays relative (and a
    /// download refuses it as an unsupported URL). A `thumbnail` that is a path (it holds a `/`
    /// or a `.`, and no scheme) is resolved the same way; a bare name (`sunset`) stays a name the
    /// app resolves. Links keep their scheme: one that is not `http` or `https` reaches the
    /// lesson as it is, and `Downloads` refuses it with a typed error.
    ///
    /// - Parameters:
    ///   - data: The body.
    ///   - policy: Whether a bad entry refuses the body or is skipped and reported.
    ///   - documentURL: The URL the body was fetched from, which relative links resolve against.
    /// - Throws: ``CatalogDecodingError`` naming the key path of the first problem.
    /// - Complexity: O(*n*) in the body's size.
    public static func lessons(
        from data: Data, policy: BadItemPolicy = .fail, relativeTo documentURL: URL? = nil
    ) throws(CatalogDecodingError) -> ImportResult {
        let source = "videos API"
        try CatalogJSONLimits.check(data, source: source)
        let body: Body
        do {
            body = try JSONDecoder().decode(Body.self, from: data)
        } catch {
            throw CatalogDecodingError(.invalidJSON(CatalogDecodingError.describe(error)), source: source)
        }
        var lessons: [Lesson] = []
        var skipped: [SkippedItem] = []
        var firstIndex: [String: Int] = [:]
        for (index, element) in body.videos.enumerated() {
            let reason: String
            let id: String?
            switch element.outcome {
            case .read(let video):
                if let first = firstIndex[video.id.text] {
                    reason = "id \(video.id.text) repeats videos.\(first)'s at videos.\(index)"
                    id = video.id.text
                } else {
                    firstIndex[video.id.text] = index
                    lessons.append(
                        Lesson(
                            id: video.id.text, title: video.name, summary: video.description,
                            mediaURL: video.videoLink.flatMap { Self.resolve($0, against: documentURL) },
                            thumbnail: video.thumbnail.map { Self.resolveThumbnail($0, against: documentURL) }))
                    continue
                }
            case .failed(let finding, let readID):
                reason = finding
                id = readID
            }
            guard policy == .skip else { throw CatalogDecodingError(.invalidJSON(reason), source: source) }
            skipped.append(SkippedItem(index: index, id: id, reason: reason))
        }
        return ImportResult(lessons: lessons, skipped: skipped)
    }

    /// `reference` as a URL, resolved against `base` when it is relative and a base is known.
    static func resolve(_ reference: String, against base: URL?) -> URL? {
        let trimmed = reference.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { return nil }
        guard let base else { return URL(string: trimmed) }
        return URL(string: trimmed, relativeTo: base)?.absoluteURL
    }

    /// A thumbnail path resolved against `base`; a bare name, or an absolute URL, as it is.
    static func resolveThumbnail(_ thumbnail: String, against base: URL?) -> String {
        guard let base, thumbnail.contains(where: { $0 == "/" || $0 == "." }),
            URL(string: thumbnail)?.scheme == nil,
            let resolved = URL(string: thumbnail, relativeTo: base)?.absoluteURL
        else { return thumbnail }
        return resolved.absoluteString
    }
}

/// A HAL page: sections linked by URI templates.
///
/// The sections are the page's links of one relation, `sections` by default. HAL servers often
/// write relations as CURIEs (`acme:sections`), so a relation matches by its name alone or with
/// any CURIE prefix; an app whose server calls them otherwise passes its relation's name.
public struct HALPage: Hashable, Sendable {
    /// One section a page links to.
    public struct Section: Hashable, Sendable, Identifiable {
        /// The section's id.
        public var id: String
        /// Its title, for display.
        public var title: String
        /// Its machine name (`series`, `movie`…), if given.
        public var name: String?
        /// Where it lives, as an RFC 6570 template.
        public var href: URITemplate
        /// The server's sort key; not unique, so ties keep the page's order.
        public var sectionSort: Int?

        /// The section's URL with the template's variables filled in.
        public func url(_ values: [String: String] = [:]) -> URL? {
            URL(string: href.expand(values))
        }
    }

    /// The page's type (`page`).
    public var type: String?
    /// What the page is (`root`, `section`).
    public var pageType: String?
    /// The title.
    public var title: String?
    /// The description, for the page's header.
    public var description: String?
    /// The sections, sorted by `sectionSort` (ties in page order; unsorted ones last).
    public var sections: [Section]
    /// The page's own link.
    public var selfLink: String?
    /// The sections skipped, with why (empty unless the page was read with
    /// ``BadItemPolicy/skip``): a section without an `id` or `href`, or whose `href` is not a
    /// valid URI template.
    public var skippedSections: [SkippedItem] = []
    /// The resources the page embeds (`_embedded`) by relation, each a ``HALResource`` (a
    /// section's items, a page's blocks…).
    public var embedded: [String: [HALResource]]

    /// The resources embedded under `relation`, alone or behind a CURIE prefix (`blocks` finds
    /// `viaplay:blocks`); empty when there are none.
    public func embedded(_ relation: String) -> [HALResource] {
        HALRelation.first(matching: relation, in: embedded) ?? []
    }

    private struct Body: Decodable {
        var type: String?
        var pageType: String?
        var title: String?
        var description: String?
        var links: Links?
        var embedded: [String: OneOrMany<HALResource>]?

        enum CodingKeys: String, CodingKey {
            case type, pageType, title, description
            case links = "_links"
            case embedded = "_embedded"
        }
    }

    private struct Links: Decodable {
        var selfLink: Link?
        var sections: [LenientElement<RawSection>]?

        /// Any link relation's name.
        struct RelationKey: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        /// The relation whose links are the sections, from the decoder's user info.
        static let relationKey = CodingUserInfoKey(rawValue: "mediacore.hal.sectionRelation")

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: RelationKey.self)
            let relation = Self.relationKey.flatMap { decoder.userInfo[$0] as? String } ?? "sections"
            selfLink = try container.decodeIfPresent(Link.self, forKey: RelationKey(stringValue: "self"))
            // The exact name first, then a CURIE of it (`prefix:name`), in the keys' sorted order
            // so that a page naming two prefixes decodes the same every time.
            let matching = container.allKeys.filter { HALRelation.matches($0.stringValue, relation: relation) }
                .sorted {
                    ($0.stringValue != relation ? 1 : 0, $0.stringValue) < (
                        $1.stringValue != relation ? 1 : 0, $1.stringValue
                    )
                }
            sections = try matching.first.map { try container.decode([LenientElement<RawSection>].self, forKey: $0) }
        }

    }

    private struct Link: Decodable {
        var href: String
    }

    private struct RawSection: Decodable {
        var id: String
        var title: String?
        var name: String?
        var href: String
        var sectionSort: Int?
    }

    /// Reads a page; unknown keys are ignored.
    ///
    /// - Parameters:
    ///   - data: The page's JSON.
    ///   - sectionRelation: The link relation of the sections: `sections` matches `sections`
    ///     and any CURIE of it, such as `acme:sections`.
    ///   - policy: Whether a bad section refuses the page or is skipped and reported in
    ///     ``skippedSections``.
    /// - Throws: ``CatalogDecodingError`` for a body that is not a HAL page, or (when failing) a
    ///   section without an `id` or `href` or whose `href` is not a valid URI template.
    /// - Complexity: O(*n*) in the body's size.
    public static func decode(
        _ data: Data, sectionRelation: String = "sections", policy: BadItemPolicy = .fail
    ) throws(CatalogDecodingError) -> HALPage {
        try CatalogJSONLimits.check(data, source: "HAL page")
        let body: Body
        do {
            let decoder = JSONDecoder()
            if let key = Links.relationKey { decoder.userInfo[key] = sectionRelation }
            body = try decoder.decode(Body.self, from: data)
        } catch {
            throw CatalogDecodingError(.invalidJSON(CatalogDecodingError.describe(error)), source: "HAL page")
        }
        var sections: [(offset: Int, section: Section)] = []
        var skipped: [SkippedItem] = []
        for (offset, element) in (body.links?.sections ?? []).enumerated() {
            let failure: CatalogDecodingError
            let id: String?
            switch element.outcome {
            case .read(let raw):
                id = raw.id
                do throws(URITemplate.TemplateError) {
                    let template = try URITemplate(raw.href)
                    sections.append(
                        (
                            offset,
                            Section(
                                id: raw.id, title: raw.title ?? raw.name ?? raw.id, name: raw.name, href: template,
                                sectionSort: raw.sectionSort)
                        ))
                    continue
                } catch {
                    failure = CatalogDecodingError(.invalidTemplate(section: raw.id, error), source: "HAL page")
                }
            case .failed(let finding, let readID):
                failure = CatalogDecodingError(.invalidJSON(finding), source: "HAL page")
                id = readID
            }
            guard policy == .skip else { throw failure }
            skipped.append(SkippedItem(index: offset, id: id, reason: failure.reason))
        }
        sections.sort { lhs, rhs in
            switch (lhs.section.sectionSort, rhs.section.sectionSort) {
            case (let a?, let b?) where a != b: return a < b
            case (nil, _?): return false
            case (_?, nil): return true
            default: return lhs.offset < rhs.offset
            }
        }
        return HALPage(
            type: body.type, pageType: body.pageType, title: body.title, description: body.description,
            sections: sections.map(\.section), selfLink: body.links?.selfLink?.href,
            skippedSections: skipped, embedded: (body.embedded ?? [:]).mapValues(\.values))
    }
}
