import Catalog
import Foundation
import TestSupport
import Testing

@Suite("Catalog sources")
struct SourcesTests {
    let fixtures = FixtureLoader(bundle: .module)

    @Test(
        "CSV by RFC 4180",
        arguments: [
            ("a,b\n1,2\n", [["a", "b"], ["1", "2"]]),
            ("a,b\r\n1,2\r\n", [["a", "b"], ["1", "2"]]),
            ("a,b\n1,2", [["a", "b"], ["1", "2"]]),
            ("\u{FEFF}a,b\n1,2\n", [["a", "b"], ["1", "2"]]),
            ("a\n\"x,y\"\n", [["a"], ["x,y"]]),
            ("a\n\"say \"\"hi\"\"\"\n", [["a"], ["say \"hi\""]]),
            ("a,b\n\"line 1\nline 2\",z\n", [["a", "b"], ["line 1\nline 2", "z"]]),
            ("a,b\n,\n", [["a", "b"], ["", ""]]),
            ("a\n\n\nb\n", [["a"], ["b"]]),
            ("a,b\n\"\",\"\"\r\n", [["a", "b"], ["", ""]]),
            ("é,ü\n", [["é", "ü"]]),
        ] as [(String, [[String]])]
    )
    func csv(text: String, records: [[String]]) throws {
        #expect(try CSVReader().records(Data(text.utf8)) == records)
    }

    @Test(
        "malformed CSV names the row and column",
        arguments: [
            ("a,b\n1,\"open\n", CSVError(.unterminatedQuote, row: 2, column: 2)),
            ("a,b\n\"x\"y,2\n", CSVError(.textAfterQuote, row: 2, column: 1)),
        ]
    )
    func malformedCSV(text: String, error: CSVError) {
        #expect(throws: error) { try CSVReader().records(Data(text.utf8)) }
    }

    /// Ill-formed UTF-8 (Unicode 15, §3.9, table 3-7) in the second field of row 2. A four-byte
    /// sequence cut after three bytes repairs to one U+FFFD of the same length.
    @Test(
        "a field that is not UTF-8 names its row and column (RFC 4180 §4 with charset=utf-8)",
        arguments: [[0xFF], [0xC3, 0x28], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF0, 0x90, 0x80], [0xE2, 0x82]]
            as [[UInt8]]
    )
    func fieldNotUTF8(sequence: [UInt8]) {
        let data = Data(Array("a,b\né,x".utf8) + sequence + Array("y\n".utf8))
        #expect(throws: CSVError(.notUTF8, row: 2, column: 2)) { try CSVReader().records(data) }
    }

    /// Writes records with every field quoted, escaping quotes byte by byte. (Escaping with
    /// `replacingOccurrences(of:with:)` would miss a quote that a following combining mark joins
    /// into one `Character`; that was the fuzzer's finding, in its harness, not in the reader.)
    static func quotedCSV(_ records: [[String]]) -> Data {
        var bytes: [UInt8] = []
        for (number, record) in records.enumerated() {
            if number > 0 { bytes += [13, 10] }
            for (column, field) in record.enumerated() {
                if column > 0 { bytes.append(UInt8(ascii: ",")) }
                bytes.append(UInt8(ascii: "\""))
                for byte in field.utf8 {
                    bytes.append(byte)
                    if byte == UInt8(ascii: "\"") { bytes.append(byte) }
                }
                bytes.append(UInt8(ascii: "\""))
            }
        }
        return Data(bytes)
    }

    @Test("a quote followed by a combining mark is still a quote (fuzz finding)")
    func quoteBeforeCombiningMark() throws {
        let input = Data(
            [0x74, 0x2C] + Array(repeating: 0x22, count: 7) + [0xD6, 0x9D] + Array("ddc919x6!519c".utf8)
                + [0x22, 0x22, 0x22])
        let records = try CSVReader().records(input)
        #expect(records == [["t", "\"\"\"\u{59D}ddc919x6!519c\""]])
        #expect(try CSVReader().records(Self.quotedCSV(records)) == records)
        #expect(try CSVReader().records(Data("\"a\"\"\u{301}b\"\n".utf8)) == [["a\"\u{301}b"]])
    }

    @Test("records written fully quoted read back unchanged", arguments: 0..<8)
    func quotedRoundTrip(seed: UInt64) throws {
        var generator = SplitMix64(seed: seed)
        let alphabet: [String] = ["a", "Z", "0", " ", ",", "\"", "\n", "\r", "\r\n", "\u{301}", "\u{59D}", "é", "🎵"]
        for _ in 0..<200 {
            let width = Int.random(in: 1...5, using: &generator)
            let records = (0..<Int.random(in: 1...6, using: &generator)).map { _ in
                (0..<width).map { _ in
                    (0..<Int.random(in: 0...8, using: &generator)).map { _ in
                        alphabet.randomElement(using: &generator) ?? ""
                    }.joined()
                }
            }
            // A record of one empty field is a blank line, which is not a record.
            let expected = records.filter { $0 != [""] }
            #expect(try CSVReader().records(Self.quotedCSV(records)) == expected)
        }
    }

    @Test("the class spreadsheet: 351 classes with stable ids that survive a re-import")
    func spreadsheet() throws {
        let data = try fixtures.data("steezy-classes.csv")
        let result = try ClassSpreadsheet.lessons(from: data)
        #expect(result.lessons.count == 351)
        #expect(Set(result.lessons.map(\.id)).count == 351)
        #expect(result.lessons[0].title == "Nisi veritatis doloremque quidem et eos.")
        #expect(result.lessons[0].instructor == "Adolph Moen")
        #expect(result.lessons[0].level == "beginner")
        #expect(result.lessons[0].extra["song"] == "Quasi molestias.")
        #expect(result.lessons[1].instructor == "Mr. Lilyan O'Conner")
        let again = try ClassSpreadsheet.lessons(from: data)
        #expect(again.lessons.map(\.id) == result.lessons.map(\.id))
        // Reordering rows keeps every lesson's id.
        let text = String(decoding: data, as: UTF8.self)
        var lines = text.split(separator: "\n")
        let header = lines.removeFirst()
        let shuffled = ([header] + lines.reversed()).joined(separator: "\n")
        let reordered = try ClassSpreadsheet.lessons(from: Data(shuffled.utf8))
        #expect(Set(reordered.lessons.map(\.id)) == Set(result.lessons.map(\.id)))
    }

    @Test("bad rows fail the import, or are skipped and reported")
    func badRows() throws {
        let text = """
            title,instructor,level,song,videoUrl,thumbnailSlug
            A,Ann,beginner,S,https://v.example/a.mp4,a.jpg
            B,Bob,beginner,https://v.example/b.mp4
            ,Cy,advanced,S,https://v.example/c.mp4,c.jpg
            A,Ann,beginner,S,https://v.example/a.mp4,a.jpg
            """
        #expect(throws: CSVError(.wrongFieldCount(expected: 6, found: 4), row: 3)) {
            try ClassSpreadsheet.lessons(from: Data(text.utf8))
        }
        let result = try ClassSpreadsheet.lessons(from: Data(text.utf8), policy: .skip)
        #expect(result.lessons.map(\.title) == ["A", "A"])
        #expect(result.lessons[1].id == result.lessons[0].id + "-2")
        #expect(
            result.skipped == [
                CSVError(.wrongFieldCount(expected: 6, found: 4), row: 3),
                CSVError(.emptyField(column: "title"), row: 4, column: 1),
            ])
        #expect(throws: CSVError(.missingColumn("videoUrl"), row: 1)) {
            try ClassSpreadsheet.lessons(from: Data("title,instructor,level\nA,B,C\n".utf8))
        }
    }

    @Test("the videos API keeps the server's order")
    func videos() throws {
        let imported = try VideosAPI.lessons(from: fixtures.data("ips-videos.json"))
        let lessons = imported.lessons
        #expect(imported.skipped.isEmpty)
        #expect(lessons.count == 14)
        #expect(lessons[0].id == "950")
        #expect(lessons[0].title == "How To Hold Your iPhone When Taking Photos")
        #expect(lessons.map(\.id) != lessons.map(\.id).sorted())
        #expect(Set(lessons.compactMap(\.mediaURL)).count == 1)
        #expect(throws: CatalogDecodingError.self) {
            try VideosAPI.lessons(from: Data("{\"videos\":[{\"id\":1}]}".utf8))
        }
    }

    @Test(
        "a bad videos API entry refuses the list, or is skipped and reported with its key path and id",
        arguments: [
            (#"{"id": 2}"#, "missing 'name' at videos.1", "2"),
            (#"{"name": "No id"}"#, "missing 'id' at videos.1", nil),
            (#"{"id": 2, "name": 7}"#, "expected String at videos.1.name", "2"),
            (#"{"id": [2], "name": "Array id"}"#, "expected String at videos.1.id", nil),
            (#""not an object""#, "expected Dictionary<String, Any> at videos.1", nil),
            (#"{"id": "1", "name": "Same id as the first"}"#, "id 1 repeats videos.0's at videos.1", "1"),
        ] as [(String, String, String?)])
    func badVideoEntry(entry: String, reason: String, id: String?) throws {
        let body = #"{"videos": [{"id": 1, "name": "First"}, "# + entry + #", {"id": 3, "name": "Third"}]}"#
        let data = Data(body.utf8)
        let error = Result { () throws(CatalogDecodingError) in _ = try VideosAPI.lessons(from: data) }.failure
        #expect(error == CatalogDecodingError(.invalidJSON(reason), source: "videos API"))
        let imported = try VideosAPI.lessons(from: data, policy: .skip)
        #expect(imported.lessons.map(\.title) == ["First", "Third"])
        #expect(imported.skipped == [SkippedItem(index: 1, id: id, reason: reason)])
    }

    @Test("a body that is not a videos list is refused whatever the policy", arguments: [BadItemPolicy.fail, .skip])
    func notAVideosList(policy: BadItemPolicy) {
        for body in [#"{"items": []}"#, #"{"videos": {"id": 1}}"#, "[]", "not json"] {
            #expect(throws: CatalogDecodingError.self) {
                try VideosAPI.lessons(from: Data(body.utf8), policy: policy)
            }
        }
    }

    @Test("the videos resource skips a bad entry by default: one missing name no longer blanks the screen")
    func videosResourceSkips() throws {
        let data = Data(#"{"videos": [{"id": 1}, {"id": 2, "name": "Kept"}]}"#.utf8)
        let url = URL(literal: "https://api.example/videos")
        #expect(try CatalogResource<[Lesson]>.videos(at: url).decode(data).map(\.id) == ["2"])
        #expect(throws: CatalogDecodingError.self) {
            try CatalogResource<[Lesson]>.videos(at: url, policy: .fail).decode(data)
        }
    }

    @Test("a HAL page's bad section refuses the page, or is skipped and listed")
    func badHALSection() throws {
        let body = #"""
            {"_links": {"sections": [
              {"id": "a", "title": "A", "href": "https://h.example/a"},
              {"id": "b", "title": "B"},
              {"id": "c", "title": "C", "href": "https://h.example/{unclosed"},
              {"id": "d", "title": "D", "href": "https://h.example/d{?page}"}
            ]}}
            """#
        let data = Data(body.utf8)
        #expect(throws: CatalogDecodingError.self) { try HALPage.decode(data) }
        let page = try HALPage.decode(data, policy: .skip)
        #expect(page.sections.map(\.id) == ["a", "d"])
        #expect(page.skippedSections.map(\.index) == [1, 2])
        #expect(page.skippedSections.map(\.id) == ["b", "c"])
        #expect(page.skippedSections[0].reason == "missing 'href' at _links.sections.1")
        #expect(page.skippedSections[1].reason.hasPrefix("section c has a malformed href"))
        let resource = CatalogResource<HALPage>.page(at: URL(literal: "https://h.example/root"))
        #expect(try resource.decode(data).sections.count == 2)
    }

    @Test(
        "a spreadsheet with thousands of extra columns is a typed error before any row is read, whatever the policy",
        arguments: [257, 5_000])
    func wideHeader(columns: Int) {
        let extras = (0..<(columns - 4)).map { "x\($0)" }.joined(separator: ",")
        let header = "title,instructor,level,videoUrl," + extras
        let row = "Salsa,Ana,beginner,https://v.example/1.mp4," + String(repeating: "1,", count: columns - 5) + "1"
        let data = Data((header + "\n" + row + "\n").utf8)
        for policy in [BadItemPolicy.fail, .skip] {
            #expect(throws: CSVError(.tooManyColumns(limit: 256), row: 1)) {
                try ClassSpreadsheet.lessons(from: data, policy: policy)
            }
        }
    }

    @Test("the extra columns of all lessons together are bounded: past the budget, a typed error even when skipping")
    func extrasBudget() throws {
        let header = "title,instructor,level,videoUrl,notes\n"
        let note = String(repeating: "n", count: 1_000)
        let rows = (0..<100).map { "Lesson \($0),Ana,beginner,https://v.example/\($0).mp4,\(note)\n" }.joined()
        let data = Data((header + rows).utf8)
        // Each lesson's note costs 1,000 bytes, its name 5 and 32 of bookkeeping: 1,037.
        #expect(try ClassSpreadsheet.lessons(from: data, maximumExtraBytes: 103_700).lessons.count == 100)
        for policy in [BadItemPolicy.fail, .skip] {
            #expect(throws: CSVError(.extrasTooLarge(limit: 103_699), row: 101)) {
                try ClassSpreadsheet.lessons(from: data, policy: policy, maximumExtraBytes: 103_699)
            }
        }
    }

    @Test("HAL pages: sections sorted by sectionSort with ties in page order, links expanded by RFC 6570")
    func hal() throws {
        let root = try HALPage.decode(fixtures.data("viaplay-root.json"))
        #expect(root.sections.map(\.title) == ["Serier", "Sport", "Filmer", "Barn"])
        let series = try #require(root.sections.first)
        #expect(series.href.variableNames == ["dtg", "productsPerPage"])
        #expect(series.url()?.absoluteString == "https://content.viaplay.com/ios-se/serier")
        #expect(
            series.url(["productsPerPage": "20"])?.absoluteString
                == "https://content.viaplay.com/ios-se/serier?productsPerPage=20")
        let section = try HALPage.decode(fixtures.data("viaplay-section-serier.json"))
        #expect(section.pageType == "section")
        #expect(section.sections.count == 2)
    }

    @Test(
        "HAL: the sections are the links of one relation, by its name alone or behind any CURIE prefix",
        arguments: [
            ("sections", "sections", 1),
            ("acme:sections", "sections", 1),
            ("acme:sections", "acme:sections", 1),
            ("sections", "acme:sections", 0),
            ("other:rows", "sections", 0),
            ("acme:rows", "rows", 1),
            ("https://example.com/rels/sections", "sections", 0),
        ]
    )
    func halRelation(relation: String, asked: String, expectedCount: Int) throws {
        let json =
            #"{"_links":{"self":{"href":"https://a.example/"},"\#(relation)":[{"id":"s1","href":"https://a.example/s{?page}"}]}}"#
        let page = try HALPage.decode(
            Data(json.utf8), sectionRelation: asked)
        #expect(page.sections.count == expectedCount)
        #expect(page.selfLink == "https://a.example/")
    }

    @Test("HAL: a page's header and its embedded resources (draft-kelly-json-hal §4) decode with no custom decoder")
    func halEmbedded() throws {
        let root = try HALPage.decode(fixtures.data("viaplay-root.json"))
        #expect(root.title?.hasPrefix("Viaplay") == true)
        #expect(root.description?.hasPrefix("Hyr filmer") == true)
        #expect(root.embedded.keys.sorted() == ["viaplay:blocks"])
        #expect(root.embedded("blocks").isEmpty)
        let section = try HALPage.decode(fixtures.data("viaplay-section-serier.json"))
        #expect(section.description?.hasPrefix("Viaplay erbjuder") == true)
        #expect(section.embedded.isEmpty)

        // A section's list, shaped as the same API's section pages embed it: blocks of products.
        let json = #"""
            {"type":"page","pageType":"section","title":"Serier","description":"TV-serier online",
             "_links":{"self":{"href":"https://content.viaplay.com/ios-se/serier"}},
             "_embedded":{"viaplay:blocks":[
               {"type":"list","title":"Populära serier","totalProductCount":2,
                "_links":{"self":{"href":"https://content.viaplay.com/ios-se/serier/popular{?page}","templated":true}},
                "_embedded":{"viaplay:products":[
                  {"type":"series","publicPath":"vikings","free":false,"content":{"series":{"title":"Vikings"},"production":{"year":2013}},
                   "_links":{"viaplay:page":{"href":"https://content.viaplay.com/ios-se/serier/vikings","title":"Vikings"}}},
                  {"type":"series","publicPath":"fargo","free":true,"content":{"series":{"title":"Fargo"}},"rating":null}
                ]}},
               {"type":"hero","title":"Utvalt","_embedded":{"viaplay:product":{"type":"movie","publicPath":"heat"}}}
             ]}}
            """#
        let page = try HALPage.decode(Data(json.utf8))
        #expect(page.title == "Serier" && page.description == "TV-serier online")
        let blocks = page.embedded("blocks")
        #expect(blocks.map { $0.string("title") } == ["Populära serier", "Utvalt"])
        #expect(blocks[0].number("totalProductCount") == 2)
        let popular = blocks[0].links("self")
        #expect(
            popular == [HALLink(href: "https://content.viaplay.com/ios-se/serier/popular{?page}", isTemplated: true)])
        let products = blocks[0].embedded("products")
        #expect(products.map { $0.fields["content"]?["series"]?["title"]?.string } == ["Vikings", "Fargo"])
        #expect(products.map { $0.fields["free"] } == [.bool(false), .bool(true)])
        #expect(products[0].fields["content"]?["production"]?["year"] == .number(2013))
        #expect(products[1].fields["rating"] == .null)
        #expect(products[0].links("page").first?.title == "Vikings")
        // A relation holding one object rather than an array is a list of one.
        #expect(blocks[1].embedded("product").map { $0.string("publicPath") } == ["heat"])
    }

    @Test("HAL: a page naming the relation alone and behind a prefix takes the plain name")
    func halRelationPreference() throws {
        let json =
            #"{"_links":{"b:sections":[{"id":"b","href":"/b"}],"sections":[{"id":"plain","href":"/p"}],"a:sections":[{"id":"a","href":"/a"}]}}"#
        #expect(try HALPage.decode(Data(json.utf8)).sections.map(\.id) == ["plain"])
        let prefixed = #"{"_links":{"b:sections":[{"id":"b","href":"/b"}],"a:sections":[{"id":"a","href":"/a"}]}}"#
        #expect(try HALPage.decode(Data(prefixed.utf8)).sections.map(\.id) == ["a"])
    }

    /// RFC 6570 §1.2's examples for levels 1 to 3.
    @Test(
        "URI templates expand as RFC 6570 says",
        arguments: [
            ("{var}", "value"), ("{hello}", "Hello%20World%21"), ("{+var}", "value"), ("{+hello}", "Hello%20World!"),
            ("{+path}/here", "/foo/bar/here"), ("here?ref={+path}", "here?ref=/foo/bar"), ("X{#var}", "X#value"),
            ("X{#hello}", "X#Hello%20World!"), ("map?{x,y}", "map?1024,768"),
            ("{x,hello,y}", "1024,Hello%20World%21,768"),
            ("{+x,hello,y}", "1024,Hello%20World!,768"), ("{+path,x}/here", "/foo/bar,1024/here"),
            ("{#x,hello,y}", "#1024,Hello%20World!,768"), ("{#path,x}/here", "#/foo/bar,1024/here"),
            ("X{.var}", "X.value"),
            ("X{.x,y}", "X.1024.768"), ("{/var}", "/value"), ("{/var,x}/here", "/value/1024/here"),
            ("{;x,y}", ";x=1024;y=768"),
            ("{;x,y,empty}", ";x=1024;y=768;empty"), ("{?x,y}", "?x=1024&y=768"),
            ("{?x,y,empty}", "?x=1024&y=768&empty="),
            ("?fixed=yes{&x}", "?fixed=yes&x=1024"), ("{&x,y,empty}", "&x=1024&y=768&empty="), ("{var:3}", "val"),
            ("{?undef}", ""), ("a{undef}b", "ab"),
        ]
    )
    func uriTemplates(template: String, expected: String) throws {
        let values = [
            "var": "value", "hello": "Hello World!", "path": "/foo/bar", "empty": "", "x": "1024", "y": "768",
        ]
        #expect(try URITemplate(template).expand(values) == expected)
    }

    @Test("malformed templates are typed errors", arguments: ["{unclosed", "{a b}", "{!x}", "{x:0}"])
    func malformedTemplates(template: String) {
        #expect(throws: URITemplate.TemplateError.self) { try URITemplate(template) }
    }

    /// Hostile bodies, built when a test runs (a 32 MiB argument would fill the test log).
    enum HostileBody: String, CaseIterable, CustomTestStringConvertible {
        case deepArrays, deepObjects, oversize, manyObjects, manyValues

        var body: String {
            switch self {
            case .deepArrays: String(repeating: "[", count: 100_000)
            case .deepObjects:
                "{\"videos\": [" + String(repeating: "{\"a\":", count: 70) + "1" + String(repeating: "}", count: 70)
                    + "]}"
            case .oversize: String(repeating: " ", count: (32 << 20) + 1)
            case .manyObjects: "{\"videos\": [" + Array(repeating: "{}", count: 100_001).joined(separator: ",") + "]}"
            case .manyValues: "{\"videos\": [" + Array(repeating: "1", count: 1_000_001).joined(separator: ",") + "]}"
            }
        }

        var reason: String {
            switch self {
            case .deepArrays, .deepObjects: "nest deeper"
            case .oversize: "more than"
            case .manyObjects: "more than 100000 objects"
            case .manyValues: "more than 1000000 values"
            }
        }

        var testDescription: String { rawValue }
    }

    @Test(
        "hostile JSON bodies: too deep, too large, too many objects or values is a typed error before decoding",
        arguments: HostileBody.allCases)
    func hostileJSON(_ hostile: HostileBody) {
        let data = Data(hostile.body.utf8)
        let errors: [CatalogDecodingError?] = [
            Result { () throws(CatalogDecodingError) in _ = try VideosAPI.lessons(from: data) }.failure,
            Result { () throws(CatalogDecodingError) in _ = try HALPage.decode(data) }.failure,
        ]
        for error in errors {
            #expect(error?.reason.contains(hostile.reason) == true, "\(String(describing: error))")
        }
    }

    @Test("the most objects and values the limits allow still decode")
    func atTheLimits() throws {
        let videos = (0..<(CatalogJSONLimits.maximumObjectCount - 1)).map { "{\"id\":\($0),\"name\":\"n\"}" }
        let body = "{\"videos\":[" + videos.joined(separator: ",") + "]}"
        #expect(
            try VideosAPI.lessons(from: Data(body.utf8)).lessons.count == CatalogJSONLimits.maximumObjectCount - 1)
    }

    @Test("a spreadsheet with more rows than the limit is refused, whatever the bad-row policy")
    func tooManyRows() throws {
        let header = "title,instructor,level,song,videoUrl,thumbnailSlug\n"
        let rows = (0..<4).map { "T\($0),I,beginner,S,https://v.example/\($0).mp4,t.jpg\n" }.joined()
        let data = Data((header + rows).utf8)
        #expect(try ClassSpreadsheet.lessons(from: data, maximumRowCount: 4).lessons.count == 4)
        for policy in [BadItemPolicy.fail, .skip] {
            #expect(throws: CSVError(.tooManyRecords(limit: 3), row: 5)) {
                try ClassSpreadsheet.lessons(from: data, policy: policy, maximumRowCount: 3)
            }
        }
        #expect(throws: CSVError(.tooManyRecords(limit: 2), row: 4)) {
            try CSVReader(maximumRecordCount: 2).records(Data("a\n\nb\nc\n".utf8))
        }
        #expect(try CSVReader(maximumRecordCount: 2).records(Data("a\n\n\nb\n".utf8)) == [["a"], ["b"]])
    }

    @Test("brackets inside strings, escaped quotes included, do not count as nesting")
    func bracketsInStrings() throws {
        let deepText = String(repeating: "[{", count: 100) + "\\\"" + String(repeating: "[", count: 100)
        let body = "{\"videos\": [{\"id\": 1, \"name\": \"\(deepText)\"}]}"
        let lessons = try VideosAPI.lessons(from: Data(body.utf8)).lessons
        #expect(lessons.first?.title == deepText.replacingOccurrences(of: "\\\"", with: "\""))
    }
}

extension Result {
    /// The error, if this is a failure.
    var failure: Failure? {
        if case .failure(let error) = self { error } else { nil }
    }
}
