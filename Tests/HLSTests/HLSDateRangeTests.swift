import Foundation
import HLS
import TestSupport
import Testing

@Suite("EXT-X-DATERANGE (RFC 8216bis §4.4.5.1), content steering and I-frame playlists")
struct HLSDateRangeTests {
    let loader = FixtureLoader(bundle: .module)

    func parse(_ name: String) throws -> HLSParseResult {
        try HLSParser().parse(try loader.data("hls/low-latency/\(name)"))
    }

    @Test("RFC 8216 §8.10: two tags of one ID make one range; the later adds DURATION and SCTE35-IN")
    func scte35Example() throws {
        let result = try parse("hlsparser_daterange_scte35.m3u8")
        #expect(result.warnings.isEmpty, "\(result.warnings)")
        guard case .media(let media) = result.playlist else {
            throw HLSParseError(.mixedPlaylistKinds, line: 0, text: "")
        }
        #expect(media.dateRanges.count == 2)
        let range = try #require(media.combinedDateRanges.first)
        #expect(media.combinedDateRanges.count == 1)
        #expect(range.id == "splice-6FFFFFF0")
        #expect(range.startDate == Date(timeIntervalSince1970: 1_394_018_100))
        #expect(range.plannedDuration == 59.993 && range.duration == 59.993)
        #expect(range.scte35Out?.prefix(3) == [0xFC, 0x00, 0x2F])
        #expect(range.scte35In?.count == 44)
        let end = try #require(range.end)
        #expect(abs(end.timeIntervalSince1970 - (1_394_018_100 + 59.993)) < 1e-6)
        #expect(try parseMedia(HLSWriter.write(.media(media))) == media)
    }

    @Test(
        "RFC 8216bis §4.4.5.1: a date range that breaks a rule is ignored with a warning naming it",
        arguments: [
            ("START-DATE=\"2024-01-01T00:00:00Z\"", "", "it has no quoted ID"),
            ("ID=\"a\",DURATION=5", "a", "no START-DATE in it or an earlier tag with this ID"),
            ("ID=\"a\",START-DATE=\"yesterday\"", "a", "START-DATE is not an ISO 8601 date"),
            (
                "ID=\"a\",START-DATE=\"2024-01-01T00:00:10Z\",END-DATE=\"2024-01-01T00:00:00Z\"", "a",
                "END-DATE is before START-DATE"
            ),
            (
                "ID=\"a\",START-DATE=\"2024-01-01T00:00:00Z\",END-DATE=\"2024-01-01T00:00:30Z\",DURATION=20", "a",
                "END-DATE is not START-DATE plus DURATION"
            ),
            ("ID=\"a\",START-DATE=\"2024-01-01T00:00:00Z\",END-ON-NEXT=YES", "a", "END-ON-NEXT=YES without a CLASS"),
            (
                "ID=\"a\",CLASS=\"c\",START-DATE=\"2024-01-01T00:00:00Z\",END-ON-NEXT=YES,DURATION=3", "a",
                "END-ON-NEXT=YES with a DURATION or END-DATE"
            ),
            (
                "ID=\"a\",START-DATE=\"2024-01-01T00:00:00Z\",SCTE35-OUT=0xZZ", "a",
                "SCTE35-OUT is not a hexadecimal sequence"
            ),
        ])
    func brokenRange(attributes: String, id: String, reason: String) throws {
        let text = """
            #EXTM3U
            #EXT-X-TARGETDURATION:10
            #EXT-X-PROGRAM-DATE-TIME:2024-01-01T00:00:00Z
            #EXT-X-DATERANGE:\(attributes)
            #EXTINF:10,
            a.ts
            """
        let result = try HLSParser().parse(text)
        #expect(result.warnings == [HLSWarning(.dateRangeIgnored(id: id, reason: reason), line: 4)])
        #expect(try parseMedia(text).dateRanges.isEmpty)
    }

    @Test("RFC 8216bis §4.4.5.1: tags of one ID must agree on every attribute both carry")
    func sameIDMustAgree() throws {
        let text = """
            #EXTM3U
            #EXT-X-TARGETDURATION:10
            #EXT-X-PROGRAM-DATE-TIME:2024-01-01T00:00:00Z
            #EXT-X-DATERANGE:ID="ad",CLASS="com.example.ad",START-DATE="2024-01-01T00:00:00Z"
            #EXT-X-DATERANGE:ID="ad",CLASS="com.example.ad",END-DATE="2024-01-01T00:00:30Z"
            #EXT-X-DATERANGE:ID="ad",CLASS="com.example.other",DURATION=30
            #EXT-X-DATERANGE:ID="ad",DURATION=20
            #EXTINF:10,
            a.ts
            """
        let result = try HLSParser().parse(text)
        #expect(
            result.warnings == [
                HLSWarning(
                    .dateRangeIgnored(id: "ad", reason: "CLASS differs from an earlier tag with this ID"), line: 6),
                // Joined with the earlier tags, a 20 s duration contradicts the 30 s between the dates.
                HLSWarning(.dateRangeIgnored(id: "ad", reason: "END-DATE is not START-DATE plus DURATION"), line: 7),
            ])
        let media = try parseMedia(text)
        #expect(media.dateRanges.count == 2)
        let combined = try #require(media.combinedDateRanges.first)
        #expect(combined.rangeClass == "com.example.ad")
        #expect(combined.end == Date(timeIntervalSince1970: 1_704_067_230))
    }

    @Test("RFC 8216bis §4.4.5.1: date ranges without any EXT-X-PROGRAM-DATE-TIME are a warning")
    func withoutProgramDateTime() throws {
        let text = "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-DATERANGE:ID=\"a\",START-DATE=\"2024-01-01T00:00:00Z\"\n"
        #expect(try HLSParser().parse(text).warnings == [HLSWarning(.dateRangesWithoutProgramDateTime, line: 0)])
    }

    @Test("RFC 8216bis §4.4.5.1: client attributes, CUE, END-ON-NEXT and CLASS are read")
    func attributes() throws {
        let text = """
            #EXTM3U
            #EXT-X-TARGETDURATION:10
            #EXT-X-PROGRAM-DATE-TIME:2016-06-13T11:15:15Z
            #EXT-X-DATERANGE:ID="ad3",START-DATE="2016-06-13T11:15:00Z",DURATION=20,X-AD-URL="http://ads.example.com/beacon3",X-AD-ID="1234"
            #EXT-X-DATERANGE:ID="chapter",CLASS="com.example.chapter",START-DATE="2016-06-13T11:15:00+02:00",END-ON-NEXT=YES,CUE="PRE,ONCE"
            #EXTINF:10,
            ad3.1.ts
            """
        let ranges = try parseMedia(text).combinedDateRanges
        #expect(ranges.map(\.id) == ["ad3", "chapter"])
        #expect(ranges[0].clientAttributes.map(\.name) == ["X-AD-URL", "X-AD-ID"])
        #expect(ranges[0].end == Date(timeIntervalSince1970: 1_465_816_520))
        #expect(ranges[1].endsOnNext && ranges[1].rangeClass == "com.example.chapter")
        #expect(ranges[1].cue == ["PRE", "ONCE"])
        #expect(ranges[1].startDate == Date(timeIntervalSince1970: 1_465_816_500 - 7_200))
        #expect(ranges[1].end == nil)
    }

    @Test("a delta update that skipped date ranges lists the recently removed ones; ID-only ranges are ignored")
    func deltaSkippingDateRanges() throws {
        let result = try parse("py_delta_skip_dateranges.m3u8")
        guard case .media(let media) = result.playlist else {
            throw HLSParseError(.mixedPlaylistKinds, line: 0, text: "")
        }
        #expect(media.skip == HLSSkip(skippedSegmentCount: 16, recentlyRemovedDateRanges: ["1"]))
        #expect(media.serverControl?.canSkipDateRanges == true && media.serverControl?.skipBoundary == 36)
        #expect(media.firstListedMediaSequenceNumber == 17)
        #expect(media.dateRanges.isEmpty)
        let ignored = result.warnings.filter {
            if case .dateRangeIgnored = $0.kind { return true }
            return false
        }
        #expect(ignored.map(\.line) == [20, 21])
    }

    @Test("RFC 8216bis §4.4.6.6: content steering and PATHWAY-IDs are read and written back")
    func contentSteering() throws {
        let result = try parse("py_content_steering.m3u8")
        guard case .multivariant(let master) = result.playlist else {
            throw HLSParseError(.mixedPlaylistKinds, line: 0, text: "")
        }
        #expect(master.contentSteering?.serverURI == "/steering?video=00012")
        #expect(master.contentSteering?.pathwayID == "CDN-A")
        #expect(
            master.variants.map { $0.attributes.quotedString("PATHWAY-ID") } == ["CDN-A", "CDN-A", "CDN-B", "CDN-B"])
        #expect(master.iFrameVariants.count == 2)
        #expect(try parseMultivariant(HLSWriter.write(result.playlist)) == master)
    }

    @Test("RFC 8216 §4.3.3.6: an I-frames-only playlist is byte ranges of its segments")
    func iFramesOnly() throws {
        let result = try parse("py_iframe.m3u8")
        #expect(result.warnings.isEmpty, "\(result.warnings)")
        guard case .media(let media) = result.playlist else {
            throw HLSParseError(.mixedPlaylistKinds, line: 0, text: "")
        }
        #expect(media.isIFramesOnly && media.hasEndList && media.playlistType == .vod)
        #expect(
            media.segments.compactMap(\.byteRange) == [
                HLSByteRange(length: 9400, offset: 376), HLSByteRange(length: 7144, offset: 47000),
                HLSByteRange(length: 10340, offset: 1880),
            ])
        #expect(try parseMedia(HLSWriter.write(.media(media))) == media)
    }

    @Test(
        "ISO 8601 date-times as playlists write them",
        arguments: [
            ("2010-02-19T14:54:23.031+08:00", 1_266_562_463.031),
            ("2010-02-19T14:54:23Z", 1_266_591_263.0),
            ("2024-09-24T15:31:57.350+00:00", 1_727_191_917.35),
            ("2000-02-29T00:00:00-0130", 951_787_800.0),
            ("1969-12-31T23:59:59Z", -1.0),
        ])
    func dates(text: String, seconds: Double) throws {
        let attributes = HLSAttributeList([
            .init(name: "ID", value: "x", isQuoted: true), .init(name: "START-DATE", value: text, isQuoted: true),
        ])
        let date = try #require(HLSDateRange(attributes: attributes).startDate)
        #expect(abs(date.timeIntervalSince1970 - seconds) < 1e-6)
    }

    @Test(
        "malformed date-times are not dates",
        arguments: ["2024-13-01T00:00:00Z", "2024-01-01 00:00", "2024-01-01T00:00:00", "2024-01-01T00:00:00.Z", "x"])
    func notDates(text: String) {
        let attributes = HLSAttributeList([.init(name: "START-DATE", value: text, isQuoted: true)])
        #expect(HLSDateRange(attributes: attributes).startDate == nil)
    }

    @Test(
        "every low-latency corpus file parses and writes back to the same playlist",
        arguments: [
            "draft_9_11_low_latency.m3u8", "py_ll_part.m3u8", "py_ll_delta_update.m3u8",
            "py_ll_omitted_attributes.m3u8",
            "py_iframe.m3u8", "py_delta_skip_dateranges.m3u8", "py_content_steering.m3u8",
            "hlsparser_daterange_scte35.m3u8",
        ])
    func corpusRoundTrip(file: String) throws {
        let playlist = try parse(file).playlist
        #expect(try HLSParser().parse(HLSWriter.write(playlist)).playlist == playlist)
    }
}
