import Foundation
import HLS
import TestSupport
import Testing

func parseMedia(_ text: String, options: HLSParser.Options = .init()) throws -> HLSMediaPlaylist {
    guard case .media(let media) = try HLSParser(options: options).parse(text).playlist else {
        throw HLSParseError(.mixedPlaylistKinds, line: 0, text: "not a media playlist")
    }
    return media
}

@Suite("HLS parser")
struct HLSParserTests {
    @Test("attribute lists: quoted commas, enumerated strings, hex, signed floats, resolution, spaces after commas")
    func attributeLists() throws {
        let text = """
            #EXTM3U
            #EXT-X-START:TIME-OFFSET=-10.5,PRECISE=YES
            #EXT-X-STREAM-INF:BANDWIDTH=1000, CODECS="avc1.4d401f, mp4a.40.2",RESOLUTION=1280x720,FRAME-RATE=29.970,CLOSED-CAPTIONS=NONE
            v.m3u8
            """
        guard case .multivariant(let master) = try HLSParser().parse(text).playlist else {
            Issue.record("not multivariant")
            return
        }
        let variant = try #require(master.variants.first)
        #expect(variant.codecs == ["avc1.4d401f", "mp4a.40.2"])
        #expect(variant.resolution?.width == 1280 && variant.resolution?.height == 720)
        #expect(variant.frameRate == 29.97)
        #expect(variant.attributes.enumeratedString("CLOSED-CAPTIONS") == "NONE")
        #expect(variant.closedCaptionsGroup == nil)
        #expect(master.start?.signedDecimalFloat("TIME-OFFSET") == -10.5)
        #expect(master.start?.boolean("PRECISE") == true)
        let key = try parseMedia(
            """
            #EXTM3U
            #EXT-X-TARGETDURATION:10
            #EXT-X-KEY:METHOD=AES-128,URI="k",IV=0x0102030405060708090A0B0C0D0E0F10
            #EXTINF:10,
            a.ts
            """
        ).segments[0].keys[0]
        #expect(key.initializationVector == Array(1...16))
        #expect(key.method == "AES-128")
    }

    @Test(
        "malformed attribute lists are typed errors with the line",
        arguments: [
            "#EXT-X-STREAM-INF:BANDWIDTH=1,CODECS=\"open", "#EXT-X-STREAM-INF:bandwidth=1",
            "#EXT-X-STREAM-INF:BANDWIDTH=1,",
            "#EXT-X-STREAM-INF:BANDWIDTH", "#EXT-X-STREAM-INF:BANDWIDTH=1 AUDIO=\"a\"",
            "#EXT-X-STREAM-INF:BANDWIDTH=12x",
            "#EXT-X-STREAM-INF:AVERAGE-BANDWIDTH=5",
        ]
    )
    func malformedAttributes(tag: String) {
        do {
            _ = try HLSParser().parse("#EXTM3U\n\(tag)\nv.m3u8\n")
            Issue.record("accepted \(tag)")
        } catch {
            #expect(error.line == 2)
            #expect(error.text == tag)
        }
    }

    @Test(
        "durations are read exactly as the standard library rounds them, up to 19 digits and beyond", arguments: 0..<4)
    func durationsRoundCorrectly(seed: UInt64) throws {
        var generator = SplitMix64(seed: seed)
        var texts = [
            "10.007799999999996", "10.054245000000002", "0.1", "9007199254740993", "4503599627370495.5",
            "4503599627370496.5", "0.30000000000000004", "1.0000000000000002", "12345678901234567.89",
            "0.0000000000000000001", "99999999999999999999", "000000000000000000000010.5", ".5", "7.",
        ]
        for _ in 0..<2_000 {
            let digitCount = Int.random(in: 1...21, using: &generator)
            var digits = (0..<digitCount).map { _ in String(Int.random(in: 0...9, using: &generator)) }.joined()
            let point = Int.random(in: 0...digitCount, using: &generator)
            digits.insert(".", at: digits.index(digits.startIndex, offsetBy: point))
            texts.append(digits)
        }
        // Exact halfway points between two doubles, with at most 19 digits, test ties-to-even:
        // in [2⁵¹, 2⁵²) doubles are 0.5 apart, so n.25 and n.75 are ties; in [2⁵⁰, 2⁵¹), n.125….
        for _ in 0..<200 {
            let wide = UInt64.random(in: (1 << 51)..<(1 << 52), using: &generator)
            let narrow = UInt64.random(in: (1 << 50)..<(1 << 51), using: &generator)
            texts += ["\(wide).25", "\(wide).75", "\(narrow).125", "\(narrow).375", "\(narrow).625", "\(narrow).875"]
        }
        let playlist =
            "#EXTM3U\n#EXT-X-TARGETDURATION:1\n" + texts.map { "#EXTINF:\($0),\nx.ts\n" }.joined() + "#EXT-X-ENDLIST\n"
        let limits = HLSParserLimits(maximumWarningCount: 0)
        guard case .media(let media) = try HLSParser(options: .init(limits: limits)).parse(playlist).playlist else {
            Issue.record("not a media playlist")
            return
        }
        #expect(media.segments.count == texts.count)
        for (text, segment) in zip(texts, media.segments) {
            let expected = try #require(Double(text))
            #expect(segment.duration.bitPattern == expected.bitPattern, "\(text)")
        }
    }

    @Test("a dangling EXTINF is not a segment; an EXTINF without a comma is a warning")
    func danglingDuration() throws {
        let result = try HLSParser().parse("#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10\na.ts\n#EXTINF:5,\n")
        guard case .media(let media) = result.playlist else { return }
        #expect(media.segments.count == 1)
        #expect(result.warnings.map(\.kind) == [.durationWithoutComma, .danglingDuration])
    }

    @Test(
        "a hexadecimal-sequence is 0x or 0X and hex digits, an odd count read with a leading zero (RFC 8216 §4.2)",
        arguments: [
            ("0x1", [0x01]), ("0xABC", [0x0A, 0xBC]), ("0X0f", [0x0F]), ("0x00ff", [0x00, 0xFF]),
            ("0x", nil), ("0xZZ", nil), ("1x00", nil), ("0x0g", nil), ("00ff", nil),
        ] as [(String, [UInt8]?)]
    )
    func hexadecimalSequence(text: String, bytes: [UInt8]?) {
        let list = HLSAttributeList([.init(name: "IV", value: text, isQuoted: false)])
        #expect(list.hexadecimalSequence("IV") == bytes)
        // The parser's check of an EXT-X-KEY's IV agrees (RFC 8216 §4.3.2.4).
        let playlist =
            "#EXTM3U\n#EXT-X-VERSION:2\n#EXT-X-TARGETDURATION:10\n"
            + "#EXT-X-KEY:METHOD=AES-128,URI=\"k\",IV=\(text)\n#EXTINF:1,\na.ts\n"
        let parsed = Result { () throws(HLSParseError) in try HLSParser().parse(playlist) }
        #expect(((try? parsed.get()) != nil) == (bytes != nil))
    }

    /// URIs are read back from the playlist's bytes, decoded as ASCII when all of the text is.
    @Test(
        "URIs read back as written, in ASCII and in UTF-8 playlists (RFC 8216 §4.1)",
        arguments: [
            ["a.ts", "https://cdn.example/live/chunk-1.m4s?token=abc"],
            ["é.ts", "https://cdn.example/vidéo/😀.ts", "plain.ts"],
            ["plain.ts", "x.ts"],
        ])
    func uris(_ uris: [String]) throws {
        var text = "#EXTM3U\n#EXT-X-TARGETDURATION:10\n"
        for uri in uris { text += "#EXTINF:1,\n\(uri)\n" }
        #expect(try parseMedia(text).segments.map(\.uri) == uris)
        // A non-ASCII title elsewhere makes the text UTF-8 even when every URI is ASCII.
        #expect(try parseMedia(text + "#EXTINF:1,é\nlast.ts\n").segments.map(\.uri) == uris + ["last.ts"])
    }

    /// Sub-ranges with and without offsets, and what each segment's range must be: an omitted
    /// offset follows the previous segment's range, which must be of the same resource.
    static let impliedRanges: [(lines: [String], ranges: [HLSByteRange?])] = [
        (
            ["#EXT-X-BYTERANGE:100@0", "a.ts", "#EXT-X-BYTERANGE:50", "a.ts", "#EXT-X-BYTERANGE:25", "a.ts"],
            [
                HLSByteRange(length: 100, offset: 0), HLSByteRange(length: 50, offset: 100),
                HLSByteRange(length: 25, offset: 150),
            ]
        ),
        (
            ["#EXT-X-BYTERANGE:10@5", "a.ts", "#EXT-X-BYTERANGE:10@0", "b.ts", "#EXT-X-BYTERANGE:7", "b.ts"],
            [
                HLSByteRange(length: 10, offset: 5), HLSByteRange(length: 10, offset: 0),
                HLSByteRange(length: 7, offset: 10),
            ]
        ),
        (
            ["#EXT-X-BYTERANGE:10@0", "a.ts", "b.ts", "#EXT-X-BYTERANGE:3@90", "a.ts", "#EXT-X-BYTERANGE:4", "a.ts"],
            [
                HLSByteRange(length: 10, offset: 0), nil, HLSByteRange(length: 3, offset: 90),
                HLSByteRange(length: 4, offset: 93),
            ]
        ),
    ]

    @Test(
        "RFC 8216 §4.3.2.2: an omitted offset follows the previous sub-range of the same resource, on both paths",
        arguments: impliedRanges.indices)
    func impliedOffsets(_ index: Int) throws {
        let (lines, ranges) = Self.impliedRanges[index]
        var text = "#EXTM3U\n#EXT-X-VERSION:4\n#EXT-X-TARGETDURATION:10\n"
        for line in lines { text += line.hasPrefix("#") ? line + "\n" : "#EXTINF:1,\n" + line + "\n" }
        var general = HLSParser()
        general.usesPlainSegmentPath = false
        for parser in [HLSParser(), general] {
            guard case .media(let media) = try parser.parse(text).playlist else {
                Issue.record("not media")
                return
            }
            #expect(media.segments.map(\.byteRange) == ranges, "lean path: \(parser.usesPlainSegmentPath)")
        }
        // An omitted offset after another resource's range is refused on both paths.
        let refused = text + "#EXT-X-BYTERANGE:5@0\n#EXTINF:1,\nother.ts\n#EXT-X-BYTERANGE:5\n#EXTINF:1,\nlast.ts\n"
        for parser in [HLSParser(), general] {
            #expect(throws: HLSParseError.self) { try parser.parse(refused) }
        }
    }

    /// Titles are kept in three ways (stored when short or repeating the previous one, read
    /// from the bytes when long), and every sequence of them must read back as written.
    static let titleSequences: [[String?]] = [
        ["live", "live", "live"],
        ["a", "b", "a", nil, "a"],
        ["a long title, over fifteen bytes", "a long title, over fifteen bytes", "x"],
        ["exactly fifteen", "sixteen bytes ok", "sixteen bytes ok", "exactly fifteen"],
        [nil, "", "é", "éé", "🎬 chapter 1", "🎬 chapter 1"],
        ["A, B", "A, B", "A, C"],
    ]

    @Test("EXTINF titles read back as written, however they are kept (RFC 8216 §4.3.2.1)", arguments: titleSequences)
    func titles(_ titles: [String?]) throws {
        var text = "#EXTM3U\n#EXT-X-TARGETDURATION:10\n"
        for (index, title) in titles.enumerated() {
            text += "#EXTINF:1,\(title ?? "")\n"
            if index == 1 { text += "#EXT-X-PROGRAM-DATE-TIME:2026-11-24T00:00:00Z\n#EXT-X-CUE-OUT:10\n" }
            text += "s\(index).ts\n"
        }
        let media = try parseMedia(text)
        #expect(media.segments.map { $0.title ?? "" } == titles.map { $0 ?? "" })
    }

    @Test("EXTINF durations: leading dot, titles with commas, nonsense rejected")
    func durations() throws {
        let media = try parseMedia(
            "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:.5,A, B\na.ts\n#EXTINF:10.007799999999996,\nb.ts\n")
        #expect(media.segments.map(\.duration) == [0.5, 10.007799999999996])
        #expect(media.segments[0].title == "A, B")
        // Found by fuzzing: a CR before trailing blanks is not part of the URI.
        let debris = try parseMedia("#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:1,\na.ts\r \t\r")
        #expect(debris.segments.map(\.uri) == ["a.ts"])
        // Found by fuzzing: a duration beyond Int.max trapped in the TARGETDURATION check.
        let huge = try HLSParser().parse(
            "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:1\(String(repeating: "0", count: 30)),\na.ts\n")
        #expect(huge.warnings.map(\.line) == [3])
        // A duration too long to be a finite Double is not a duration.
        for bad in ["-1,", "1e3,", "abc,", ",", String(repeating: "9", count: 400) + ","] {
            #expect(throws: HLSParseError.self, "\(bad)") {
                try parseMedia("#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:\(bad)\na.ts\n")
            }
        }
    }

    @Test("byte ranges: offsets follow the previous range of the same resource; anything else fails")
    func byteRanges() throws {
        let media = try parseMedia(
            """
            #EXTM3U
            #EXT-X-TARGETDURATION:10
            #EXTINF:10,
            #EXT-X-BYTERANGE:100@50
            a.ts
            #EXT-X-BYTERANGE:200
            #EXTINF:10,
            a.ts
            """)
        #expect(
            media.segments.map(\.byteRange) == [
                HLSByteRange(length: 100, offset: 50), HLSByteRange(length: 200, offset: 150),
            ])
        for bad in [
            "#EXTINF:10,\n#EXT-X-BYTERANGE:100\na.ts\n",
            "#EXTINF:10,\n#EXT-X-BYTERANGE:100@0\na.ts\n#EXTINF:10,\n#EXT-X-BYTERANGE:100\nb.ts\n",
            "#EXTINF:10,\n#EXT-X-BYTERANGE:100@x\na.ts\n",
            "#EXTINF:10,\n#EXT-X-BYTERANGE:10@18446744073709551615\na.ts\n",
        ] {
            #expect(throws: HLSParseError.self) { try parseMedia("#EXTM3U\n#EXT-X-TARGETDURATION:10\n" + bad) }
        }
    }

    @Test("keys persist until replaced; METHOD=NONE ends encryption; keys of other formats coexist")
    func keys() throws {
        let media = try parseMedia(
            """
            #EXTM3U
            #EXT-X-TARGETDURATION:10
            #EXT-X-KEY:METHOD=AES-128,URI="a"
            #EXTINF:10,
            1.ts
            #EXTINF:10,
            2.ts
            #EXT-X-KEY:METHOD=SAMPLE-AES,URI="skd://x",KEYFORMAT="com.apple.streamingkeydelivery"
            #EXTINF:10,
            3.ts
            #EXT-X-KEY:METHOD=NONE
            #EXTINF:10,
            4.ts
            """)
        #expect(media.segments.map(\.isEncrypted) == [true, true, true, false])
        #expect(media.segments[2].keys.map(\.keyFormat) == ["identity", "com.apple.streamingkeydelivery"])
        #expect(throws: HLSParseError.self) {
            try parseMedia("#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-KEY:METHOD=NONE,URI=\"a\"\n#EXTINF:10,\na.ts\n")
        }
        #expect(throws: HLSParseError.self) {
            try parseMedia("#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-KEY:METHOD=AES-128\n#EXTINF:10,\na.ts\n")
        }
    }

    @Test("variables: VALUE, IMPORT from a parent, QUERYPARAM from the URL; undefined references fail")
    func variables() throws {
        let text = """
            #EXTM3U
            #EXT-X-TARGETDURATION:10
            #EXT-X-DEFINE:NAME="host",VALUE="cdn.example"
            #EXT-X-DEFINE:IMPORT="token"
            #EXT-X-DEFINE:QUERYPARAM="session"
            #EXTINF:10,
            https://{$host}/a.ts?t={$token}&s={$session}
            """
        let options = HLSParser.Options(
            importedVariables: ["token": "T1"], playlistURL: URL(literal: "https://x.example/p.m3u8?session=S9"))
        let media = try parseMedia(text, options: options)
        #expect(media.segments[0].uri == "https://cdn.example/a.ts?t=T1&s=S9")
        #expect(
            throws: HLSParseError(
                .missingQueryParameter(name: "session"), line: 5, text: "#EXT-X-DEFINE:QUERYPARAM=\"session\"")
        ) {
            try parseMedia(text, options: .init(importedVariables: ["token": "T1"]))
        }
        #expect(throws: HLSParseError.self) {
            try parseMedia("#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\n{$nope}.ts\n")
        }
        #expect(throws: HLSParseError.self) {
            try parseMedia(
                "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-DEFINE:NAME=\"a\",VALUE=\"1\"\n#EXT-X-DEFINE:NAME=\"a\",VALUE=\"2\"\n"
            )
        }
    }

    @Test(
        "structural errors carry their kind and line",
        arguments: [
            ("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\n#EXT-X-STREAM-INF:BANDWIDTH=2\nv.m3u8\n", "variantWithoutURI", 2),
            ("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\n", "variantWithoutURI", 2),
            ("#EXTM3U\n#EXT-X-TARGETDURATION:10\na.ts\n", "uriWithoutDuration", 3),
            ("#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-STREAM-INF:BANDWIDTH=1\nv.m3u8\n", "mixedPlaylistKinds", 3),
            ("EXTM3U\n", "missingHeader", 1),
            ("", "missingHeader", 1),
            ("#EXTM3U\n#EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS,GROUP-ID=\"c\",NAME=\"n\",URI=\"x\"\n", "invalidAttribute", 2),
            ("#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-PLAYLIST-TYPE:LIVE\n", "invalidTagValue", 3),
        ]
    )
    func structuralErrors(text: String, kind: String, line: Int) {
        do {
            _ = try HLSParser().parse(text)
            Issue.record("accepted")
        } catch {
            #expect(String(describing: error.kind).hasPrefix(kind), "\(error)")
            #expect(error.line == line)
        }
    }

    @Test(
        "limits: lines, segments, attributes, variant-level and kept tags beyond the bounds are typed errors",
        arguments: [
            (
                "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\n" + String(repeating: "a", count: 200) + ".ts\n",
                "line length"
            ),
            ("#EXTM3U\n#EXT-X-TARGETDURATION:10\n" + String(repeating: "#EXTINF:1,\na.ts\n", count: 3), "segments"),
            ("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,A=1,B=2,C=3\nv.m3u8\n", "attributes"),
            ("#EXTM3U\n" + String(repeating: "#EXT-X-SESSION-DATA:DATA-ID=\"a\"\n", count: 3), "session data"),
            (
                "#EXTM3U\n" + String(repeating: "#EXT-X-SESSION-KEY:METHOD=AES-128,URI=\"k\"\n", count: 3),
                "session keys"
            ),
            (
                "#EXTM3U\n" + String(repeating: "#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=1,URI=\"i.m3u8\"\n", count: 3),
                "I-frame variants"
            ),
            ("#EXTM3U\n#EXT-X-TARGETDURATION:10\n" + String(repeating: "#EXT-X-CUE:1\n", count: 4), "kept tags"),
            (
                "#EXTM3U\n#EXT-X-TARGETDURATION:10\n"
                    + (0..<4).map { "#EXT-X-DEFINE:NAME=\"v\($0)\",VALUE=\"x\"\n" }.joined(),
                "kept tags"
            ),
        ]
    )
    func limits(text: String, limit: String) {
        let limits = HLSParserLimits(
            maximumLineLength: 100, maximumSegmentCount: 2, maximumAttributeCount: 3, maximumVariantCount: 2,
            maximumKeptTagCount: 3)
        let parser = HLSParser(options: .init(limits: limits))
        #expect(throws: HLSParseError.self) { try parser.parse(text) }
        do {
            _ = try parser.parse(text)
        } catch {
            guard case .limitExceeded(let name, _) = error.kind else {
                Issue.record("\(error)")
                return
            }
            #expect(name == limit)
        }
    }

    @Test("beyond the warning limit, one warning counts the rest")
    func warningLimit() throws {
        let text =
            "#EXTM3U\n#EXT-X-TARGETDURATION:1\n" + String(repeating: "#EXTINF:5,\na.ts\n", count: 5)
            + "#EXT-X-ENDLIST\n"
        let result = try HLSParser(options: .init(limits: HLSParserLimits(maximumWarningCount: 2))).parse(text)
        #expect(result.warnings.count == 3)
        #expect(result.warnings.last == HLSWarning(.moreWarnings(count: 3), line: 0))
        #expect(try HLSParser().parse(text).warnings.count == 5)
    }

    @Test(
        "a byte that breaks UTF-8 is found wherever it sits; valid UTF-8 anywhere is read",
        arguments: [0, 1, 7, 31, 32, 33, 63, 64, 100])
    func utf8Anywhere(offset: Int) throws {
        let title = String(repeating: "a", count: offset)
        let head = "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:1,"
        let valid = head + title + "é\nx.ts\n"
        guard case .media(let media) = try HLSParser().parse(Data(valid.utf8)).playlist else {
            Issue.record("not media")
            return
        }
        #expect(media.segments.first?.title == title + "é")
        var broken = Data((head + title).utf8)
        broken.append(contentsOf: [0xC3, 0x28] + Array("\nx.ts\n".utf8))
        #expect(throws: HLSParseError(.notUTF8, line: 0, text: "")) { try HLSParser().parse(broken) }
    }

    @Test("a parsed segment list equals, hashes and mutates like the array it stands for")
    func segmentListSemantics() throws {
        var data = Data(
            """
            #EXTM3U
            #EXT-X-TARGETDURATION:10
            #EXT-X-DEFINE:NAME="host",VALUE="cdn.example"
            #EXT-X-MAP:URI="init.mp4"
            #EXTINF:9.5,first
            #EXT-X-BYTERANGE:100@0
            https://{$host}/a.mp4
            #EXT-X-KEY:METHOD=AES-128,URI="k1"
            #EXT-X-BYTERANGE:50
            #EXTINF:4,
            https://{$host}/a.mp4
            #EXT-X-GAP
            #EXT-X-CUE:1
            #EXTINF:3,
            b.mp4
            #EXT-X-ENDLIST

            """.utf8)
        let parsed = try HLSParser().parse(data)
        data.replaceSubrange(0..<7, with: Data("garbage".utf8))  // the list keeps its own bytes
        guard case .media(let media) = parsed.playlist else {
            Issue.record("not media")
            return
        }
        let segments = media.segments
        let map = HLSMap(uri: "init.mp4")
        let key = try #require(segments[1].keys.first)
        let expected: [HLSSegment] = [
            HLSSegment(
                uri: "https://cdn.example/a.mp4", duration: 9.5, title: "first",
                byteRange: HLSByteRange(length: 100, offset: 0), map: map),
            HLSSegment(
                uri: "https://cdn.example/a.mp4", duration: 4, byteRange: HLSByteRange(length: 50, offset: 100),
                keys: [key], map: map),
            HLSSegment(uri: "b.mp4", duration: 3, keys: [key], map: map, isGap: true, precedingTags: ["EXT-X-CUE:1"]),
        ]
        #expect(key.uri == "k1")
        #expect(Array(segments) == expected)
        #expect(segments == HLSSegmentList(expected))
        #expect(segments.hashValue == HLSSegmentList(expected).hashValue)
        #expect(segments.totalDuration == 16.5)
        #expect(segments.description == expected.description)
        // Mutation turns the list into an array; the parsed original is untouched.
        var edited = segments
        edited[2].uri = "c.mp4"
        edited.append(HLSSegment(uri: "d.mp4", duration: 1))
        edited.remove(at: 0)
        #expect(edited.map(\.uri) == ["https://cdn.example/a.mp4", "c.mp4", "d.mp4"])
        #expect(segments.map(\.uri) == ["https://cdn.example/a.mp4", "https://cdn.example/a.mp4", "b.mp4"])
        #expect(edited != segments)
        var playlist = media
        playlist.segments = [HLSSegment(uri: "x.ts", duration: 2)]
        #expect(playlist.totalDuration == 2)
    }

    /// Ill-formed UTF-8 (Unicode 15, §3.9, table 3-7), each followed by a valid tail. A four-byte
    /// sequence cut after three bytes is repaired to one U+FFFD of the same length, so a check
    /// by length alone would miss it.
    static let malformedUTF8: [[UInt8]] = [
        [0xFF, 0xFE], [0xC3, 0x28], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF0, 0x90, 0x80], [0xF4, 0x90, 0x80, 0x80],
        [0xE2, 0x82],
    ]

    @Test("text that is not UTF-8 is refused (RFC 8216 §4.1: playlists are UTF-8)", arguments: malformedUTF8)
    func notUTF8(sequence: [UInt8]) {
        var data = Data("#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:1,é".utf8)
        data.append(contentsOf: sequence + Array("x\na.ts\n".utf8))
        #expect(throws: HLSParseError(.notUTF8, line: 0, text: "")) { try HLSParser().parse(data) }
    }

    @Test(
        "text that is not UTF-8 is reported as such, even after a line that fails (RFC 8216 §4.1)",
        arguments: malformedUTF8)
    func notUTF8AfterAnError(sequence: [UInt8]) {
        var data = Data("#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:abc,\na.ts\n#EXTINF:1,".utf8)
        data.append(contentsOf: sequence + Array("\nb.ts\n".utf8))
        #expect(throws: HLSParseError(.notUTF8, line: 0, text: "")) { try HLSParser().parse(data) }
    }

    /// Found by fuzzing: after METHOD=NONE, a key set that drops a KEYFORMAT the previous set had
    /// must not inherit that format's key when written and read back.
    @Test("a key set that drops a KEYFORMAT survives writing")
    func keySetDroppingAFormat() throws {
        let text = """
            #EXTM3U
            #EXT-X-TARGETDURATION:6
            #EXT-X-KEY:METHOD=SAMPLE-AES,URI="skd://a",KEYFORMAT="com.apple.streamingkeydelivery"
            #EXT-X-KEY:METHOD=SAMPLE-AES,URI="data:,k",KEYFORMAT="urn:uuid:edef8ba9-79d6-4ace-a3c8-27dcd51d21ed"
            #EXTINF:5,
            1.mp4
            #EXT-X-KEY:METHOD=NONE
            #EXT-X-KEY:METHOD=SAMPLE-AES,URI="data:,k",KEYFORMAT="urn:uuid:edef8ba9-79d6-4ace-a3c8-27dcd51d21ed"
            #EXTINF:5,
            2.mp4

            """
        let playlist = try HLSParser().parse(text).playlist
        guard case .media(let media) = playlist else {
            Issue.record("not a media playlist")
            return
        }
        #expect(media.segments.map(\.keys.count) == [2, 1])
        #expect(try HLSParser().parse(HLSWriter.write(playlist)).playlist == playlist)
    }

    /// Random media and multivariant playlists (1,000 seeds), written then parsed: equal. They
    /// carry every typed tag: parts (ranged and not), maps under rotating keys, date ranges,
    /// server control, skips, hints, reports, a segment in progress and content steering.
    @Test("parse(write(p)) == p for random valid playlists")
    func writeParseProperty() throws {
        for seed in UInt64(0)..<1_000 {
            var generator = SplitMix64(seed: seed)
            let playlist = Self.randomPlaylist(using: &generator)
            let written = HLSWriter.write(playlist)
            let parsed = try HLSParser().parse(written).playlist
            #expect(parsed == playlist, "seed \(seed):\n\(written)")
        }
    }

    /// The lean path for common segments and the general path give the same result: random
    /// playlists (2,000 seeds), written, then edited line by line (lines dropped, repeated,
    /// swapped, and tags that change what follows inserted: titles, long durations, ranges,
    /// keys, maps, discontinuities, dates, gaps, unknown tags, variables), parsed both ways:
    /// equal playlists and warnings, or equal errors.
    @Test("the plain-segment path and the general path agree on every playlist (RFC 8216 §4.3.2)")
    func plainSegmentPathAgrees() {
        let insertions = [
            "#EXTINF:5,", "#EXTINF:5,live", "#EXTINF:5,a title longer than fifteen bytes", "#EXTINF:99.5,",
            "#EXTINF:5", "#EXT-X-BYTERANGE:100@0", "#EXT-X-BYTERANGE:50", "#EXT-X-KEY:METHOD=AES-128,URI=\"k\"",
            "#EXT-X-KEY:METHOD=NONE", "#EXT-X-MAP:URI=\"init.mp4\"", "#EXT-X-DISCONTINUITY",
            "#EXT-X-PROGRAM-DATE-TIME:2026-11-24T00:00:00Z", "#EXT-X-GAP", "#EXT-X-CUE-OUT:5", "plain.ts",
            "  spaced.ts \t", "#EXT-X-TARGETDURATION:4", "#EXT-X-DEFINE:NAME=\"v\",VALUE=\"x\"", "{$v}.ts",
            "#EXT-X-STREAM-INF:BANDWIDTH=1", "#EXT-X-ENDLIST", "",
        ]
        for seed in UInt64(0)..<1_000 {
            var generator = SplitMix64(seed: seed)
            var lines = HLSWriter.write(Self.randomPlaylist(using: &generator)).split(
                separator: "\n", omittingEmptySubsequences: false
            ).map(String.init)
            for _ in 0..<Int.random(in: 0...4, using: &generator) where lines.count > 2 {
                let at = Int.random(in: 1..<lines.count, using: &generator)
                switch Int.random(in: 0..<4, using: &generator) {
                case 0: lines.remove(at: at)
                case 1: lines.insert(lines[at], at: at)
                case 2: lines.swapAt(at, Int.random(in: 1..<lines.count, using: &generator))
                default: lines.insert(insertions[Int.random(in: 0..<insertions.count, using: &generator)], at: at)
                }
            }
            let text = lines.joined(separator: "\n")
            var general = HLSParser()
            general.usesPlainSegmentPath = false
            let lean = Result { () throws(HLSParseError) in try HLSParser().parse(text) }
            let reference = Result { () throws(HLSParseError) in try general.parse(text) }
            #expect(lean == reference, "seed \(seed):\n\(text)")
        }
    }

    static func randomPlaylist(using generator: inout SplitMix64) -> HLSPlaylist {
        func pick<T>(_ options: [T]) -> T { options[Int.random(in: 0..<options.count, using: &generator)] }
        if Bool.random(using: &generator) {
            var renditions: [HLSRendition] = []
            for index in 0..<Int.random(in: 0...3, using: &generator) {
                var attributes = HLSAttributeList([
                    .init(name: "TYPE", value: "AUDIO", isQuoted: false),
                    .init(name: "GROUP-ID", value: "g\(index % 2)", isQuoted: true),
                    .init(name: "NAME", value: pick(["English", "Français", "Default"]), isQuoted: true),
                ])
                if Bool.random(using: &generator) { attributes.set("URI", to: "a\(index).m3u8", quoted: true) }
                if Bool.random(using: &generator) {
                    attributes.set("CHANNELS", to: pick(["2", "6", "16/JOC"]), quoted: true)
                }
                attributes.set("DEFAULT", to: pick(["YES", "NO"]), quoted: false)
                renditions.append(HLSRendition(attributes: attributes))
            }
            let variants = (0..<Int.random(in: 1...4, using: &generator)).map { index in
                var attributes = HLSAttributeList([
                    .init(
                        name: "BANDWIDTH", value: String(Int.random(in: 1...9_000_000, using: &generator)),
                        isQuoted: false)
                ])
                if Bool.random(using: &generator) {
                    attributes.set("CODECS", to: "avc1.64001f,mp4a.40.2", quoted: true)
                }
                if Bool.random(using: &generator) { attributes.set("RESOLUTION", to: "1280x720", quoted: false) }
                if !renditions.isEmpty { attributes.set("AUDIO", to: "g\(index % 2)", quoted: true) }
                return HLSVariant(attributes: attributes, uri: "v\(index)/index.m3u8?x=\(index)")
            }
            return .multivariant(
                HLSMultivariantPlaylist(
                    version: pick([nil, 4, 7]), hasIndependentSegments: Bool.random(using: &generator),
                    renditions: renditions, variants: variants,
                    contentSteering: pick([
                        nil,
                        HLSContentSteering(
                            attributes: HLSAttributeList([
                                .init(name: "SERVER-URI", value: "/steer?v=1", isQuoted: true),
                                .init(name: "PATHWAY-ID", value: "CDN-A", isQuoted: true),
                            ])),
                    ]),
                    unknownTags: pick([[], ["EXT-X-APP-SPECIFIC:SERVER=\"s\""]])))
        }
        var segments: [HLSSegment] = []
        var keys: [HLSKey] = []
        var map: HLSMap?
        var offset: UInt64 = 0
        func parts(_ index: Int) -> [HLSPartialSegment] {
            var partOffset: UInt64 = 0
            return (0..<pick([0, 0, 1, 3])).map { part in
                let length = UInt64.random(in: 1...5_000, using: &generator)
                defer { partOffset += length }
                let ranged = Bool.random(using: &generator)
                return HLSPartialSegment(
                    uri: ranged ? "p\(index).mp4" : "p\(index).\(part).mp4",
                    duration: Double(Int.random(in: 1...1_000, using: &generator)) / 1_000,
                    byteRange: ranged ? HLSByteRange(length: length, offset: partOffset) : nil,
                    isIndependent: Bool.random(using: &generator), isGap: Int.random(in: 0..<8, using: &generator) == 0)
            }
        }
        for index in 0..<Int.random(in: 0...30, using: &generator) {
            if Int.random(in: 0..<6, using: &generator) == 0 {
                // Either METHOD=NONE or one key for each of up to three KEYFORMATs, in any order:
                // the key sets a parser can reach.
                if Int.random(in: 0..<4, using: &generator) == 0 {
                    keys = [
                        HLSKey(attributes: HLSAttributeList([.init(name: "METHOD", value: "NONE", isQuoted: false)]))
                    ]
                } else {
                    let formats = [
                        nil, "com.apple.streamingkeydelivery", "urn:uuid:edef8ba9-79d6-4ace-a3c8-27dcd51d21ed",
                    ]
                    let chosen = formats.shuffled(using: &generator).prefix(Int.random(in: 1...3, using: &generator))
                    keys = chosen.map { format in
                        var attributes = HLSAttributeList([
                            .init(name: "METHOD", value: format == nil ? "AES-128" : "SAMPLE-AES", isQuoted: false),
                            .init(name: "URI", value: "k\(index)", isQuoted: true),
                        ])
                        if let format { attributes.set("KEYFORMAT", to: format, quoted: true) }
                        return HLSKey(attributes: attributes)
                    }
                }
            }
            // A map records the keys in effect where it stands, as a parser does.
            if Int.random(in: 0..<8, using: &generator) == 0 {
                map = HLSMap(
                    uri: "init\(index).mp4", byteRange: pick([nil, HLSByteRange(length: 700, offset: 0)]), keys: keys)
            }
            let useRange = Bool.random(using: &generator)
            let length = UInt64.random(in: 1...100_000, using: &generator)
            let range = useRange ? HLSByteRange(length: length, offset: offset) : nil
            if useRange { offset += length }
            let duration = Double(Int.random(in: 1...10_000, using: &generator)) / 1_000
            segments.append(
                HLSSegment(
                    uri: useRange ? "media.ts" : "s\(index).ts", duration: duration, title: pick([nil, "t", "a, b"]),
                    byteRange: range, isDiscontinuity: Int.random(in: 0..<10, using: &generator) == 0,
                    programDateTime: pick([nil, "2024-01-01T00:00:\(10 + index % 40).000Z"]), keys: keys,
                    map: map, isGap: false, precedingTags: pick([[], ["EXT-X-BITRATE:800"]]), parts: parts(index)))
        }
        let dateRanges = (0..<pick([0, 0, 2])).map { index in
            HLSDateRange(
                attributes: HLSAttributeList([
                    .init(name: "ID", value: "ad\(index)", isQuoted: true),
                    .init(name: "START-DATE", value: "2024-01-01T00:0\(index):00.000Z", isQuoted: true),
                    .init(name: "DURATION", value: "30.5", isQuoted: false),
                    .init(name: "X-AD-URL", value: "https://ads.example/\(index)", isQuoted: true),
                ]))
        }
        let control = HLSServerControl(
            attributes: HLSAttributeList([
                .init(name: "CAN-BLOCK-RELOAD", value: "YES", isQuoted: false),
                .init(name: "PART-HOLD-BACK", value: "1.5", isQuoted: false),
                .init(name: "CAN-SKIP-UNTIL", value: "60", isQuoted: false),
            ]))
        let inProgress = HLSSegmentInProgress(
            parts: parts(99), programDateTime: pick([nil, "2024-01-01T01:00:00.000Z"]),
            isDiscontinuity: Bool.random(using: &generator), keys: keys, map: map)
        return .media(
            HLSMediaPlaylist(
                version: pick([nil, 4, 7]), targetDuration: 10,
                mediaSequence: UInt64.random(in: 0...1_000, using: &generator),
                playlistType: pick([nil, .vod, .event]), hasEndList: Bool.random(using: &generator),
                serverControl: pick([nil, control]), partTargetDuration: pick([nil, 1.0, 0.33334]),
                skip: pick([
                    nil, HLSSkip(skippedSegmentCount: 3),
                    HLSSkip(skippedSegmentCount: 5, recentlyRemovedDateRanges: ["a", "b"]),
                ]),
                dateRanges: dateRanges, segments: segments,
                segmentInProgress: inProgress.parts.isEmpty && inProgress.programDateTime == nil ? nil : inProgress,
                preloadHints: pick([
                    [], [HLSPreloadHint(type: .part, uri: "next.mp4", byteRangeStart: 100, byteRangeLength: 50)],
                    [HLSPreloadHint(type: .map, uri: "init2.mp4")],
                ]),
                renditionReports: pick([
                    [], [HLSRenditionReport(uri: "../1M/p.m3u8", lastMediaSequenceNumber: 273, lastPartIndex: 2)],
                    [HLSRenditionReport(uri: "r.m3u8")],
                ]),
                trailingTags: pick([[], ["EXT-X-FOO"]])))
    }
}

@Suite("HLS URI resolution")
struct HLSURIResolverTests {
    static let base = URL(literal: "http://a/b/c/d;p?q")

    /// RFC 3986 §5.4.1 and §5.4.2, with the base "http://a/b/c/d;p?q".
    @Test(
        "RFC 3986 §5.4 examples",
        arguments: [
            ("g", "http://a/b/c/g"), ("./g", "http://a/b/c/g"), ("g/", "http://a/b/c/g/"), ("/g", "http://a/g"),
            ("//g", "http://g"), ("?y", "http://a/b/c/d;p?y"), ("g?y", "http://a/b/c/g?y"),
            ("#s", "http://a/b/c/d;p?q#s"),
            ("g#s", "http://a/b/c/g#s"), ("g?y#s", "http://a/b/c/g?y#s"), (";x", "http://a/b/c/;x"),
            ("g;x", "http://a/b/c/g;x"),
            ("g;x?y#s", "http://a/b/c/g;x?y#s"), ("", "http://a/b/c/d;p?q"), (".", "http://a/b/c/"),
            ("./", "http://a/b/c/"),
            ("..", "http://a/b/"), ("../", "http://a/b/"), ("../g", "http://a/b/g"), ("../..", "http://a/"),
            ("../../", "http://a/"),
            ("../../g", "http://a/g"), ("../../../g", "http://a/g"), ("../../../../g", "http://a/g"),
            ("/./g", "http://a/g"),
            ("/../g", "http://a/g"), ("g.", "http://a/b/c/g."), (".g", "http://a/b/c/.g"), ("g..", "http://a/b/c/g.."),
            ("..g", "http://a/b/c/..g"), ("./../g", "http://a/b/g"), ("./g/.", "http://a/b/c/g/"),
            ("g/./h", "http://a/b/c/g/h"),
            ("g/../h", "http://a/b/c/h"), ("g;x=1/./y", "http://a/b/c/g;x=1/y"), ("g;x=1/../y", "http://a/b/c/y"),
            ("g?y/./x", "http://a/b/c/g?y/./x"), ("g?y/../x", "http://a/b/c/g?y/../x"),
            ("g#s/./x", "http://a/b/c/g#s/./x"),
            ("g#s/../x", "http://a/b/c/g#s/../x"),
        ]
    )
    func rfcExamples(reference: String, expected: String) throws {
        #expect(try HLSURIResolver.resolve(reference, against: Self.base).absoluteString == expected)
    }

    @Test(
        "a remote playlist can never reach a local file or another scheme",
        arguments: [
            ("file:///etc/passwd", "localFile"), ("data:text/plain,hi", "scheme"), ("ftp://x/y.ts", "scheme"),
            ("javascript:alert(1)", "scheme"), ("g:h", "scheme"),
        ]
    )
    func hostileSchemes(reference: String, kind: String) {
        do {
            let url = try HLSURIResolver.resolve(reference, against: URL(literal: "https://cdn.example/p.m3u8"))
            Issue.record("followed \(url)")
        } catch {
            #expect(error.reference == reference)
            switch error.kind {
            case .localFileFromRemotePlaylist: #expect(kind == "localFile")
            case .disallowedScheme: #expect(kind == "scheme")
            case .malformed: Issue.record("\(error)")
            }
        }
    }

    @Test("dot segments cannot climb above the host; local playlists may use local files; spaces are escaped")
    func containment() throws {
        let escaped = try HLSURIResolver.resolve(
            "../../../../etc/passwd", against: URL(literal: "https://cdn.example/a/p.m3u8"))
        #expect(escaped.absoluteString == "https://cdn.example/etc/passwd")
        let local = try HLSURIResolver.resolve("seg.ts", against: URL(fileURLWithPath: "/tmp/hls/p.m3u8"))
        #expect(local.path == "/tmp/hls/seg.ts")
        let spaced = try HLSURIResolver.resolve("a b.ts", against: URL(literal: "https://cdn.example/p.m3u8"))
        #expect(spaced.absoluteString == "https://cdn.example/a%20b.ts")
    }
}
