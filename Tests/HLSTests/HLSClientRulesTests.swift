import Foundation
import HLS
import TestSupport
import Testing

func parseMultivariant(_ text: String, options: HLSParser.Options = .init()) throws -> HLSMultivariantPlaylist {
    guard case .multivariant(let master) = try HLSParser(options: options).parse(text).playlist else {
        throw HLSParseError(.mixedPlaylistKinds, line: 0, text: "not a multivariant playlist")
    }
    return master
}

/// The error kind's case name, for parameterized expectations.
func kindName(_ error: HLSParseError) -> String {
    String(String(describing: error.kind).prefix { $0 != "(" })
}

@Suite("HLS client rules (RFC 8216 §4, §6.3.1, §7; RFC 8216bis)")
struct HLSClientRulesTests {
    /// One tag with a known enumerated attribute whose value is unknown, and what ignoring
    /// that tag leaves.
    struct UnknownValueCase: Sendable, CustomTestStringConvertible {
        var playlist: String
        var tag: String
        var attribute: String
        var value: String
        var line: Int
        var check: @Sendable (HLSPlaylist) -> Bool
        var testDescription: String { "\(tag) \(attribute)=\(value)" }
    }

    static let unknownValues: [UnknownValueCase] = [
        UnknownValueCase(
            playlist: """
                #EXTM3U
                #EXT-X-MEDIA:TYPE=FOO,GROUP-ID="a",NAME="x",URI="x.m3u8"
                #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="en",URI="en.m3u8"
                #EXT-X-STREAM-INF:BANDWIDTH=1,AUDIO="a"
                v.m3u8
                """, tag: "EXT-X-MEDIA", attribute: "TYPE", value: "FOO", line: 2,
            check: { playlist in
                guard case .multivariant(let master) = playlist else { return false }
                return master.renditions.map(\.name) == ["en"] && master.variants.count == 1
            }),
        UnknownValueCase(
            playlist: """
                #EXTM3U
                #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="x",DEFAULT=MAYBE,URI="x.m3u8"
                #EXT-X-STREAM-INF:BANDWIDTH=1
                v.m3u8
                """, tag: "EXT-X-MEDIA", attribute: "DEFAULT", value: "MAYBE", line: 2,
            check: { playlist in
                guard case .multivariant(let master) = playlist else { return false }
                return master.renditions.isEmpty && master.variants.count == 1
            }),
        UnknownValueCase(
            playlist: """
                #EXTM3U
                #EXT-X-STREAM-INF:BANDWIDTH=1,HDCP-LEVEL=TYPE-9
                hdcp.m3u8
                #EXT-X-STREAM-INF:BANDWIDTH=2,VIDEO-RANGE=SDR
                sdr.m3u8
                """, tag: "EXT-X-STREAM-INF", attribute: "HDCP-LEVEL", value: "TYPE-9", line: 2,
            check: { playlist in
                // The ignored variant's URI line goes with it.
                guard case .multivariant(let master) = playlist else { return false }
                return master.variants.map(\.uri) == ["sdr.m3u8"]
            }),
        UnknownValueCase(
            playlist: """
                #EXTM3U
                #EXT-X-TARGETDURATION:10
                #EXT-X-KEY:METHOD=ROT13,URI="k"
                #EXTINF:10,
                a.ts
                """, tag: "EXT-X-KEY", attribute: "METHOD", value: "ROT13", line: 3,
            check: { playlist in
                guard case .media(let media) = playlist else { return false }
                return media.segments.count == 1 && media.segments[0].keys.isEmpty
            }),
        UnknownValueCase(
            playlist: """
                #EXTM3U
                #EXT-X-TARGETDURATION:4
                #EXT-X-PART-INF:PART-TARGET=1
                #EXT-X-PART:DURATION=1,URI="p0.mp4",INDEPENDENT=MAYBE
                #EXT-X-PART:DURATION=1,URI="p1.mp4"
                #EXTINF:2,
                s.mp4
                """, tag: "EXT-X-PART", attribute: "INDEPENDENT", value: "MAYBE", line: 4,
            check: { playlist in
                guard case .media(let media) = playlist else { return false }
                return media.segments.first?.parts.map(\.uri) == ["p1.mp4"]
            }),
        UnknownValueCase(
            playlist: """
                #EXTM3U
                #EXT-X-TARGETDURATION:4
                #EXTINF:4,
                s.mp4
                #EXT-X-PRELOAD-HINT:TYPE=SEGMENT,URI="next.mp4"
                """, tag: "EXT-X-PRELOAD-HINT", attribute: "TYPE", value: "SEGMENT", line: 5,
            check: { playlist in
                guard case .media(let media) = playlist else { return false }
                return media.preloadHints.isEmpty
            }),
        UnknownValueCase(
            playlist: """
                #EXTM3U
                #EXT-X-START:TIME-OFFSET=10,PRECISE=SOMETIMES
                #EXT-X-STREAM-INF:BANDWIDTH=1
                v.m3u8
                """, tag: "EXT-X-START", attribute: "PRECISE", value: "SOMETIMES", line: 2,
            check: { playlist in
                guard case .multivariant(let master) = playlist else { return false }
                return master.start == nil
            }),
    ]

    @Test(
        "RFC 8216 §6.3.1: a known enumerated attribute with an unknown value makes the client ignore the tag, with a warning naming line and value",
        arguments: unknownValues)
    func unknownEnumeratedValue(example: UnknownValueCase) throws {
        let result = try HLSParser().parse(example.playlist)
        #expect(
            result.warnings.contains(
                HLSWarning(
                    .unrecognizedValue(tag: example.tag, attribute: example.attribute, value: example.value),
                    line: example.line)), "\(result.warnings)")
        #expect(example.check(result.playlist), "\(result.playlist)")
        #expect(try HLSParser().parse(HLSWriter.write(result.playlist)).playlist == result.playlist)
    }

    @Test(
        "RFC 8216 §6.3.1: an ignored tag does not decide the playlist's kind, nor take a segment's URI (fuzz finding)")
    func ignoredTagsLeaveNoTrace() throws {
        // The fuzzer's input: a multivariant playlist whose only tag is ignored used to parse as an
        // empty multivariant playlist that wrote back as a bare "#EXTM3U".
        let onlyIgnored = "#EXTM3U\n#EXT-X-MEDIA:TYPE=AUDIO\u{1},GROUP-ID=\"a\",NAME=\"x\"\n"
        #expect(throws: HLSParseError(.missingTargetDuration, line: 0, text: "no #EXT-X-TARGETDURATION")) {
            try HLSParser().parse(onlyIgnored)
        }
        let media = try parseMedia(
            "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,VIDEO-RANGE=XDR\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\na.ts\n")
        #expect(media.segments.map(\.uri) == ["a.ts"])
    }

    @Test("RFC 8216 §6.3.1: an unknown attribute name is ignored with a note, an unknown tag is kept verbatim")
    func unknownNamesAndTags() throws {
        let text = """
            #EXTM3U
            #EXT-X-TARGETDURATION:10
            #EXT-X-KEY:METHOD=AES-128,URI="k",FLAVOUR=MINT
            #EXT-X-APP-CUE:ID=7
            #EXTINF:10,
            a.ts
            """
        let result = try HLSParser().parse(text)
        #expect(
            result.warnings.contains(HLSWarning(.unknownAttribute(tag: "EXT-X-KEY", attribute: "FLAVOUR"), line: 3)))
        guard case .media(let media) = result.playlist else {
            throw HLSParseError(.mixedPlaylistKinds, line: 0, text: "")
        }
        #expect(media.segments[0].isEncrypted)
        #expect(media.segments[0].precedingTags == ["EXT-X-APP-CUE:ID=7"])
    }

    @Test("RFC 8216 §4.3.1.2: a playlist with more than one EXT-X-VERSION fails to parse, naming the second")
    func twoVersions() {
        let text = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:10\n#EXT-X-VERSION:3\n#EXTINF:10,\na.ts\n"
        #expect(throws: HLSParseError(.duplicateTag(tag: "EXT-X-VERSION"), line: 4, text: "#EXT-X-VERSION:3")) {
            try HLSParser().parse(text)
        }
    }

    @Test(
        "RFC 8216 §4.2: an attribute name repeated in one attribute list is refused, with the line",
        arguments: [
            ("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,BANDWIDTH=2\nv.m3u8\n", "EXT-X-STREAM-INF", "BANDWIDTH", 2),
            (
                "#EXTM3U\n#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"x\",NAME=\"y\"\n", "EXT-X-MEDIA", "NAME", 2
            ),
            (
                "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-KEY:METHOD=AES-128,URI=\"a\",URI=\"b\"\n", "EXT-X-KEY",
                "URI", 3
            ),
            (
                "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-PART:URI=\"p\",DURATION=1,DURATION=1\n", "EXT-X-PART",
                "DURATION", 3
            ),
        ])
    func repeatedAttribute(text: String, tag: String, attribute: String, line: Int) {
        do {
            let parsed = try HLSParser().parse(text)
            Issue.record("parsed: \(parsed)")
        } catch {
            #expect(error.kind == .duplicateAttribute(tag: tag, attribute: attribute))
            #expect(error.line == line)
        }
    }

    @Test(
        "RFC 8216 §7 and RFC 8216bis §8: a feature above the declared version, or above 1 when none is declared, is a version warning",
        arguments: [
            ("#EXT-X-TARGETDURATION:10\n#EXT-X-KEY:METHOD=AES-128,URI=\"k\",IV=0x1\n#EXTINF:10,\na.ts", 2),
            ("#EXT-X-TARGETDURATION:10\n#EXTINF:9.5,\na.ts", 3),
            ("#EXT-X-TARGETDURATION:10\n#EXTINF:10,\n#EXT-X-BYTERANGE:10@0\na.ts", 4),
            ("#EXT-X-TARGETDURATION:10\n#EXT-X-I-FRAMES-ONLY\n#EXTINF:10,\n#EXT-X-BYTERANGE:10@0\na.ts", 4),
            ("#EXT-X-TARGETDURATION:10\n#EXT-X-KEY:METHOD=SAMPLE-AES,URI=\"k\"\n#EXTINF:10,\na.ts", 5),
            (
                "#EXT-X-TARGETDURATION:10\n#EXT-X-KEY:METHOD=AES-128,URI=\"k\",KEYFORMAT=\"identity\"\n#EXTINF:10,\na.ts",
                5
            ),
            ("#EXT-X-TARGETDURATION:10\n#EXT-X-MAP:URI=\"i.mp4\"\n#EXTINF:10,\na.mp4", 6),
            ("#EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS,GROUP-ID=\"c\",NAME=\"n\",INSTREAM-ID=\"SERVICE1\"", 7),
            ("#EXT-X-DEFINE:NAME=\"p\",VALUE=\"a\"\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\n{$p}.ts", 8),
            ("#EXT-X-TARGETDURATION:10\n#EXT-X-SKIP:SKIPPED-SEGMENTS=2\n#EXTINF:10,\na.ts", 9),
            (
                "#EXT-X-TARGETDURATION:10\n#EXT-X-SKIP:SKIPPED-SEGMENTS=2,RECENTLY-REMOVED-DATERANGES=\"\"\n#EXTINF:10,\na.ts",
                10
            ),
            ("#EXT-X-DEFINE:QUERYPARAM=\"t\"\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\na.ts", 11),
            ("#EXT-X-STREAM-INF:BANDWIDTH=1,REQ-VIDEO-LAYOUT=\"CH-STEREO\"\nv.m3u8", 12),
        ])
    func versionWarnings(body: String, required: Int) throws {
        let options = HLSParser.Options(playlistURL: URL(string: "https://a.example/p.m3u8?t=1"))
        func highest(_ version: Int?) throws -> HLSWarning.Kind? {
            let header = version.map { "#EXTM3U\n#EXT-X-VERSION:\($0)\n" } ?? "#EXTM3U\n"
            let warnings = try HLSParser(options: options).parse(header + body + "\n").warnings
            return warnings.map(\.kind).filter {
                if case .versionTooLow = $0 { return true }
                return false
            }.max { left, right in
                guard case .versionTooLow(_, let a, _) = left, case .versionTooLow(_, let b, _) = right else {
                    return false
                }
                return a < b
            }
        }
        // Absent means version 1; too low warns; high enough is silent.
        guard case .versionTooLow(_, let absentRequired, let absentDeclared) = try #require(try highest(nil)) else {
            return
        }
        #expect(absentRequired == required && absentDeclared == 1)
        guard case .versionTooLow(_, let lowRequired, let lowDeclared) = try #require(try highest(required - 1)) else {
            return
        }
        #expect(lowRequired == required && lowDeclared == required - 1)
        #expect(try highest(required) == nil)
    }

    @Test("RFC 8216 §6.3.4: a version above the highest this parser knows is a warning; the playlist still parses")
    func unsupportedVersion() throws {
        let text = "#EXTM3U\n#EXT-X-VERSION:13\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\na.ts\n"
        let result = try HLSParser().parse(text)
        #expect(result.warnings == [HLSWarning(.versionNotSupported(declared: 13, highestSupported: 12), line: 2)])
        #expect(try parseMedia(text).segments.count == 1)
    }

    @Test("RFC 8216 §4.3.2.5: an initialisation section under an AES-128 key without an IV is a warning")
    func mapKeyWithoutIV() throws {
        let text = """
            #EXTM3U
            #EXT-X-VERSION:6
            #EXT-X-TARGETDURATION:10
            #EXT-X-KEY:METHOD=AES-128,URI="k"
            #EXT-X-MAP:URI="init.mp4"
            #EXTINF:10,
            a.mp4
            """
        #expect(try HLSParser().parse(text).warnings == [HLSWarning(.mapKeyWithoutIV(uri: "init.mp4"), line: 5)])
        let withIV = text.replacingOccurrences(of: "URI=\"k\"", with: "URI=\"k\",IV=0x0F")
        #expect(try HLSParser().parse(withIV).warnings.isEmpty)
    }

    @Test(
        "RFC 8216 §4.3.5.2: EXT-X-START needs a signed decimal TIME-OFFSET",
        arguments: [
            ("PRECISE=YES", "missingAttribute"), ("TIME-OFFSET=abc", "invalidAttribute"),
            ("TIME-OFFSET=-12.5,PRECISE=NO", "accepted"),
        ])
    func startOffset(attributes: String, expected: String) {
        let text = "#EXTM3U\n#EXT-X-START:\(attributes)\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\na.ts\n"
        do {
            let media = try parseMedia(text)
            #expect(expected == "accepted")
            #expect(media.start?.signedDecimalFloat("TIME-OFFSET") == -12.5)
        } catch let error as HLSParseError {
            #expect(kindName(error) == expected)
            #expect(error.line == 2)
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test("RFC 8216 §7: the version warning names the line where the feature first appears")
    func versionWarningLine() throws {
        let text = "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\na.ts\n#EXTINF:10,\n#EXT-X-BYTERANGE:5@0\nb.ts\n"
        let warnings = try HLSParser().parse(text).warnings
        #expect(warnings == [HLSWarning(.versionTooLow(feature: "EXT-X-BYTERANGE", required: 4, declared: 1), line: 6)])
    }

    @Test(
        "RFC 8216 §4.3.4.1: DEFAULT=YES with AUTOSELECT present and not YES is a warning of its own",
        arguments: [("NO", true), ("YES", false), (nil, false)] as [(String?, Bool)])
    func defaultWithoutAutoselect(autoselect: String?, warns: Bool) throws {
        let attribute = autoselect.map { ",AUTOSELECT=\($0)" } ?? ""
        let text = """
            #EXTM3U
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="English",DEFAULT=YES\(attribute),URI="en.m3u8"
            #EXT-X-STREAM-INF:BANDWIDTH=1,AUDIO="a"
            v.m3u8
            """
        let result = try HLSParser().parse(text)
        #expect(result.warnings.contains(HLSWarning(.defaultWithoutAutoselect(name: "English"), line: 2)) == warns)
        #expect(try parseMultivariant(text).renditions.count == 1)
    }

    @Test("RFC 8216bis §4.4.4.5: EXT-X-MAP records the key in effect where it stands; the writer keeps that order")
    func mapRecordsItsKey() throws {
        let text = """
            #EXTM3U
            #EXT-X-VERSION:6
            #EXT-X-TARGETDURATION:10
            #EXT-X-KEY:METHOD=AES-128,URI="init-key",IV=0x1
            #EXT-X-MAP:URI="init.mp4"
            #EXT-X-KEY:METHOD=AES-128,URI="media-key"
            #EXTINF:10,
            1.mp4
            #EXT-X-KEY:METHOD=NONE
            #EXTINF:10,
            2.mp4
            """
        let media = try parseMedia(text)
        #expect(media.segments[0].map?.keys.map(\.uri) == ["init-key"])
        #expect(media.segments[0].map?.isEncrypted == true)
        #expect(media.segments.map { $0.keys.compactMap(\.uri) } == [["media-key"], []])
        #expect(media.segments[1].map == media.segments[0].map)
        let written = HLSWriter.write(.media(media))
        let initKey = try #require(written.range(of: "init-key"))
        let map = try #require(written.range(of: "#EXT-X-MAP"))
        let mediaKey = try #require(written.range(of: "media-key"))
        #expect(initKey.lowerBound < map.lowerBound && map.lowerBound < mediaKey.lowerBound)
        #expect(try parseMedia(written) == media)
    }

    @Test("RFC 8216bis §4.4.4.9: a trailing EXT-X-PROGRAM-DATE-TIME (after the last segment, before parts) is kept")
    func trailingProgramDateTime() throws {
        let text = """
            #EXTM3U
            #EXT-X-TARGETDURATION:4
            #EXT-X-PART-INF:PART-TARGET=1
            #EXTINF:4,
            a.mp4
            #EXT-X-PROGRAM-DATE-TIME:2024-05-01T10:00:04.000Z
            #EXT-X-PART:DURATION=1,URI="b.0.mp4",INDEPENDENT=YES
            """
        let media = try parseMedia(text)
        let next = try #require(media.segmentInProgress)
        #expect(next.programDateTime == "2024-05-01T10:00:04.000Z")
        #expect(next.parts == [HLSPartialSegment(uri: "b.0.mp4", duration: 1, isIndependent: true)])
        #expect(try parseMedia(HLSWriter.write(.media(media))) == media)
        // Without parts too.
        let bare = try parseMedia(
            "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4,\na.ts\n#EXT-X-PROGRAM-DATE-TIME:2024-05-01T10:00:04Z\n")
        #expect(bare.segmentInProgress?.programDateTime == "2024-05-01T10:00:04Z")
    }

    @Test("tolerance, off by default: an EXT-X-STREAM-INF carrying a URI attribute instead of a URI line")
    func variantURIAttribute() throws {
        let text = """
            #EXTM3U
            #EXT-X-STREAM-INF:BANDWIDTH=1000,URI="low.m3u8"
            #EXT-X-STREAM-INF:BANDWIDTH=2000
            high.m3u8
            """
        do {
            let parsed = try HLSParser().parse(text)
            Issue.record("parsed without the option: \(parsed)")
        } catch {
            #expect(error.kind == .variantWithoutURI)
            #expect(error.line == 2)
        }
        let options = HLSParser.Options(allowsVariantURIAttribute: true)
        let result = try HLSParser(options: options).parse(text)
        #expect(result.warnings == [HLSWarning(.variantURIAttribute, line: 2)])
        let master = try parseMultivariant(text, options: options)
        #expect(master.variants.map(\.uri) == ["low.m3u8", "high.m3u8"])
        #expect(master.variants[0].attributes["URI"] == nil)
        #expect(try parseMultivariant(HLSWriter.write(.multivariant(master))) == master)
    }
}

@Suite("Low-Latency HLS (RFC 8216bis §4.4.3.7, §4.4.3.8, §4.4.4.9, §4.4.5.2–4, §6.2.5.1)")
struct HLSLowLatencyTests {
    let loader = FixtureLoader(bundle: .module)

    func fixture(_ name: String) throws -> HLSMediaPlaylist {
        guard case .media(let media) = try HLSParser().parse(try loader.data("hls/low-latency/\(name)")).playlist else {
            throw HLSParseError(.mixedPlaylistKinds, line: 0, text: name)
        }
        return media
    }

    @Test("RFC 8216bis §9.11: the low-latency example parses to typed server control, parts, hints and reports")
    func lowLatencyExample() throws {
        let media = try fixture("draft_9_11_low_latency.m3u8")
        let control = try #require(media.serverControl)
        #expect(control.canBlockReload && control.partHoldBack == 1.0 && control.skipBoundary == 12.0)
        #expect(control.holdBack == nil && !control.canSkipDateRanges)
        #expect(media.partTargetDuration == 0.33334)
        #expect(media.segments.count == 7)
        #expect(media.segments.map { $0.parts.count } == [0, 0, 0, 0, 0, 12, 12])
        #expect(media.segments[5].parts.indices.filter { media.segments[5].parts[$0].isIndependent } == [4, 8])
        #expect(media.segments[6].programDateTime == "2019-02-14T02:14:00.106Z")
        #expect(media.segments[6].parts.first?.uri == "filePart272.a.mp4")
        let next = try #require(media.segmentInProgress)
        #expect(next.parts.map(\.uri) == ["filePart273.0.mp4", "filePart273.1.mp4", "filePart273.2.mp4"])
        #expect(next.parts.first?.isIndependent == true)
        #expect(next.map?.uri == "init.mp4")
        #expect(media.preloadHints == [HLSPreloadHint(type: .part, uri: "filePart273.3.mp4")])
        #expect(
            media.renditionReports == [
                HLSRenditionReport(uri: "../1M/waitForMSN.php", lastMediaSequenceNumber: 273, lastPartIndex: 2),
                HLSRenditionReport(uri: "../4M/waitForMSN.php", lastMediaSequenceNumber: 273, lastPartIndex: 1),
            ])
        #expect(!media.hasEndList)
        #expect(try parseMedia(HLSWriter.write(.media(media))) == media)
    }

    @Test("RFC 8216bis §4.4.4.9: a part's BYTERANGE without an offset follows the previous part of the same segment")
    func partByteRanges() throws {
        let text = """
            #EXTM3U
            #EXT-X-TARGETDURATION:4
            #EXT-X-PART-INF:PART-TARGET=1.02
            #EXTINF:4.08,
            fs270.mp4
            #EXT-X-PART:DURATION=1.02,URI="fs271.mp4",BYTERANGE="20000@0"
            #EXT-X-PART:DURATION=1.02,URI="fs271.mp4",BYTERANGE="23000"
            #EXT-X-PART:DURATION=1.02,URI="fs271.mp4",BYTERANGE="18000"
            #EXT-X-PRELOAD-HINT:TYPE=PART,URI="fs271.mp4",BYTERANGE-START=61000,BYTERANGE-LENGTH=20000
            """
        let media = try parseMedia(text)
        let parts = try #require(media.segmentInProgress?.parts)
        #expect(
            parts.compactMap(\.byteRange) == [
                HLSByteRange(length: 20000, offset: 0), HLSByteRange(length: 23000, offset: 20000),
                HLSByteRange(length: 18000, offset: 43000),
            ])
        #expect(
            media.preloadHints == [
                HLSPreloadHint(type: .part, uri: "fs271.mp4", byteRangeStart: 61000, byteRangeLength: 20000)
            ])
        #expect(try parseMedia(HLSWriter.write(.media(media))) == media)
    }

    @Test(
        "RFC 8216bis §4.4.4.9: a part range that cannot be placed, or ends past 2⁶⁴, is a typed error naming the line",
        arguments: [
            "#EXT-X-PART:DURATION=1,URI=\"a.mp4\",BYTERANGE=\"100\"",
            "#EXT-X-PART:DURATION=1,URI=\"a.mp4\",BYTERANGE=\"100@0\"\n#EXT-X-PART:DURATION=1,URI=\"b.mp4\",BYTERANGE=\"100\"",
            "#EXT-X-PART:DURATION=1,URI=\"a.mp4\",BYTERANGE=\"18446744073709551615@0\"\n#EXT-X-PART:DURATION=1,URI=\"a.mp4\",BYTERANGE=\"1\"",
            "#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"a.mp4\",BYTERANGE-START=18446744073709551615,BYTERANGE-LENGTH=2",
        ])
    func impossiblePartRanges(lines: String) {
        let text = "#EXTM3U\n#EXT-X-TARGETDURATION:4\n" + lines + "\n"
        do {
            let parsed = try HLSParser().parse(text)
            Issue.record("parsed: \(parsed)")
        } catch {
            #expect(kindName(error) == "impossibleByteRange")
            #expect(error.line == 2 + lines.split(separator: "\n").count)
        }
    }

    @Test("RFC 8216bis §4.4.3.7 and §4.4.4.9: parts without EXT-X-PART-INF, or longer than PART-TARGET, are warnings")
    func partWarnings() throws {
        let without = "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-PART:DURATION=1,URI=\"p\"\n#EXTINF:4,\ns.mp4\n"
        #expect(try HLSParser().parse(without).warnings == [HLSWarning(.partsWithoutPartInformation, line: 0)])
        let long =
            "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-PART-INF:PART-TARGET=1\n#EXT-X-PART:DURATION=1.5,URI=\"p\"\n"
        #expect(
            try HLSParser().parse(long).warnings == [
                HLSWarning(.partLongerThanTarget(duration: 1.5, target: 1), line: 4)
            ])
    }

    @Test(
        "RFC 8216bis §4.4.5.2: a delta update represents its skipped prefix, and applying it restores the full playlist"
    )
    func deltaUpdate() throws {
        let full = try fixture("py_ll_part.m3u8")
        let delta = try fixture("py_ll_delta_update.m3u8")
        #expect(delta.skip == HLSSkip(skippedSegmentCount: 3))
        #expect(delta.mediaSequence == 266)
        #expect(delta.firstListedMediaSequenceNumber == 269)
        #expect(delta.segments.first?.uri == "fileSequence269.ts")
        let restored = try delta.applyingDeltaUpdate(to: full)
        #expect(restored.skip == nil)
        #expect(restored.segments.count == 3 + delta.segments.count)
        #expect(
            restored.segments.prefix(4).map(\.uri) == [
                "fileSequence266.mp4", "fileSequence267.mp4", "fileSequence268.mp4", "fileSequence269.ts",
            ])
        #expect(restored.firstListedMediaSequenceNumber == 266)
        #expect(try parseMedia(HLSWriter.write(.media(delta))) == delta)
        // A previous playlist that starts after the skipped segments cannot restore them.
        var later = full
        later.mediaSequence = 267
        #expect(
            throws: HLSDeltaUpdateError.skippedSegmentsUnavailable(
                firstSkipped: 266, skippedCount: 3, previousFirst: 267, previousCount: full.segments.count)
        ) { try delta.applyingDeltaUpdate(to: later) }
        #expect(throws: HLSDeltaUpdateError.notADeltaUpdate) { try full.applyingDeltaUpdate(to: full) }
    }

    @Test("RFC 8216bis §6.2.5.1: a delta update that skipped date ranges keeps the earlier ones it did not remove")
    func deltaUpdateDateRanges() throws {
        let previous = try parseMedia(
            """
            #EXTM3U
            #EXT-X-TARGETDURATION:4
            #EXT-X-PROGRAM-DATE-TIME:2024-01-01T00:00:00Z
            #EXT-X-DATERANGE:ID="kept",START-DATE="2024-01-01T00:00:00Z"
            #EXT-X-DATERANGE:ID="gone",START-DATE="2024-01-01T00:00:01Z"
            #EXTINF:4,
            0.mp4
            #EXTINF:4,
            1.mp4
            """)
        let delta = try parseMedia(
            """
            #EXTM3U
            #EXT-X-VERSION:10
            #EXT-X-TARGETDURATION:4
            #EXT-X-SKIP:SKIPPED-SEGMENTS=1,RECENTLY-REMOVED-DATERANGES="gone"
            #EXT-X-PROGRAM-DATE-TIME:2024-01-01T00:00:04Z
            #EXT-X-DATERANGE:ID="new",START-DATE="2024-01-01T00:00:05Z"
            #EXTINF:4,
            1.mp4
            """)
        let restored = try delta.applyingDeltaUpdate(to: previous)
        #expect(restored.dateRanges.map(\.id) == ["kept", "new"])
        #expect(restored.segments.map(\.uri) == ["0.mp4", "1.mp4"])
    }

    @Test(
        "RFC 8216bis §4.4.5.2: EXT-X-SKIP appears once, before every segment",
        arguments: [
            ("#EXT-X-SKIP:SKIPPED-SEGMENTS=1\n#EXT-X-SKIP:SKIPPED-SEGMENTS=1\n#EXTINF:4,\na.ts", "duplicateTag", 4),
            ("#EXTINF:4,\na.ts\n#EXT-X-SKIP:SKIPPED-SEGMENTS=1\n#EXTINF:4,\nb.ts", "misplacedTag", 5),
        ])
    func skipPlacement(body: String, kind: String, line: Int) {
        do {
            let parsed = try HLSParser().parse("#EXTM3U\n#EXT-X-TARGETDURATION:4\n" + body + "\n")
            Issue.record("parsed: \(parsed)")
        } catch {
            #expect(kindName(error) == kind)
            #expect(error.line == line)
        }
    }

    @Test("RFC 8216bis §4.4.5.4: a rendition report may leave out LAST-MSN and LAST-PART")
    func omittedReportAttributes() throws {
        let media = try fixture("py_ll_omitted_attributes.m3u8")
        #expect(media.renditionReports.count == 5)
        #expect(media.renditionReports.allSatisfy { $0.lastMediaSequenceNumber == nil && $0.lastPartIndex == nil })
        #expect(media.segments.count == 10)
        #expect(media.segments.map(\.parts.count).suffix(3) == [2, 2, 2])
        #expect(try parseMedia(HLSWriter.write(.media(media))) == media)
    }
}
