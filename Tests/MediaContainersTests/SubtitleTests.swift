import Foundation
import MediaContainers
import TestSupport
import Testing

/// WebVTT documents as HLS subtitle segments carry them, and the 3GPP timed-text tracks the
/// remuxer makes of their cues.
@Suite("WebVTT and timed text")
struct SubtitleTests {
    /// One parsing case: a document and the cues (start and end in milliseconds, text,
    /// identifier) and map it holds.
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var text: String
        var cues: [WebVTTCue]
        var map: WebVTTDocument.TimestampMap?
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "RFC 8216 §3.5: the header's X-TIMESTAMP-MAP",
            text: "WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:900000,LOCAL:00:00:00.000\n\n00:00.100 --> 00:00.700\nWelcome\n",
            cues: [WebVTTCue(start: 100, end: 700, text: "Welcome")],
            map: .init(mpegTimestamp: 900_000, localTime: 0)),
        Case(
            name: "X-TIMESTAMP-MAP with LOCAL first",
            text: "WEBVTT\nX-TIMESTAMP-MAP=LOCAL:00:00:01.500,MPEGTS:183000\n\n00:02.000 --> 00:03.000\nA\n",
            cues: [WebVTTCue(start: 2_000, end: 3_000, text: "A")],
            map: .init(mpegTimestamp: 183_000, localTime: 1_500)),
        Case(
            name: "W3C WebVTT §4.1: a byte order mark, CRLF, an identifier, settings and two payload lines",
            text:
                "\u{FEFF}WEBVTT - lesson 1\r\n\r\nintro\r\n00:00:01.000 --> 00:00:02.500 line:85% align:center\r\nOne\r\nTwo\r\n",
            cues: [
                WebVTTCue(
                    identifier: "intro", start: 1_000, end: 2_500, settings: "line:85% align:center", text: "One\nTwo")
            ]),
        Case(
            name: "W3C WebVTT §6.1: CR line ends",
            text: "WEBVTT\r\r00:01.000 --> 00:02.000\rCR\r\r00:03.000 --> 00:04.000\rend",
            cues: [WebVTTCue(start: 1_000, end: 2_000, text: "CR"), WebVTTCue(start: 3_000, end: 4_000, text: "end")]),
        Case(
            name: "W3C WebVTT §4.1: NOTE, STYLE and REGION blocks and stray text are skipped",
            text:
                "WEBVTT\n\nSTYLE\n::cue { color: red }\n\nREGION\nid:left\n\nNOTE a comment\nwith -> arrows\n\nstray line\n\n00:01.000 --> 00:02.000\nkept\n",
            cues: [WebVTTCue(start: 1_000, end: 2_000, text: "kept")]),
        Case(
            name: "W3C WebVTT §6.1: a cue with malformed timings is skipped, the next one kept",
            text:
                "WEBVTT\n\n00:00.1 --> 00:01.000\nbad\n\n00:61.000 --> 01:02.000\nbad too\n\n00:01.000 --> 00:02.000\ngood\n",
            cues: [WebVTTCue(start: 1_000, end: 2_000, text: "good")]),
        Case(
            name: "W3C WebVTT §6.1: a timing line ends the payload before it, without a blank line",
            text: "WEBVTT\n\n00:01.000 --> 00:02.000\nfirst\n00:02.000 --> 00:03.000\nsecond\n",
            cues: [
                WebVTTCue(start: 1_000, end: 2_000, text: "first"), WebVTTCue(start: 2_000, end: 3_000, text: "second"),
            ]),
        Case(
            name: "W3C WebVTT §4.2.1: hours of one digit or several",
            text: "WEBVTT\n\n1:00:00.000 --> 100:00:00.001\nlong\n",
            cues: [WebVTTCue(start: 3_600_000, end: 360_000_001, text: "long")]),
        Case(
            name: "a cue straight after the header line",
            text: "WEBVTT\n00:01.000 --> 00:02.000\nno blank line\n",
            cues: [WebVTTCue(start: 1_000, end: 2_000, text: "no blank line")]),
    ]

    @Test("W3C WebVTT parsing", arguments: cases)
    func parsing(_ example: Case) throws {
        let document = try WebVTTDocument(parsing: example.text)
        #expect(document.cues == example.cues)
        #expect(document.timestampMap == example.map)
    }

    @Test(
        "W3C WebVTT §4.1 and RFC 8216 §3.5: what cannot be read without misplacing every cue is a typed error naming its line",
        arguments: [
            ("", 1), ("WEBVTTX\n", 1), ("<html>", 1), ("WEBVTT\nX-TIMESTAMP-MAP=LOCAL:00:00:00.000\n", 2),
            ("WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:8589934592,LOCAL:00:00:00.000\n", 2),
            ("WEBVTT\n\nX-TIMESTAMP-MAP=MPEGTS:1,LOCAL:00:00.000\n", 0),
            ("WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:1,LOCAL:0:0.0\n", 2),
        ])
    func errors(text: String, line: Int) throws {
        if line == 0 {
            // After the header, an X-TIMESTAMP-MAP line is stray text: skipped.
            #expect(try WebVTTDocument(parsing: text).timestampMap == nil)
            return
        }
        #expect {
            _ = try WebVTTDocument(parsing: text)
        } throws: { error in
            guard let error = error as? ContainerError, case .malformedWebVTT(let found, _) = error.kind else {
                return false
            }
            return found == line
        }
    }

    @Test("timestamps and documents written then read back are the same (seeded)")
    func roundTrip() throws {
        var random = SplitMix64(seed: 0x5EED_0A77)
        for _ in 0..<200 {
            let milliseconds = Int64.random(in: 0..<400_000_000, using: &random)
            #expect(WebVTTDocument.milliseconds(Substring(WebVTTDocument.timestamp(milliseconds))) == milliseconds)
        }
        for _ in 0..<50 {
            let cues = (0..<Int.random(in: 0..<6, using: &random)).map { index in
                let start = Int64.random(in: 0..<10_000_000, using: &random)
                return WebVTTCue(
                    identifier: Bool.random(using: &random) ? "cue \(index)" : nil, start: start,
                    end: start + Int64.random(in: 1..<10_000, using: &random),
                    settings: Bool.random(using: &random) ? "align:start" : "",
                    text: (0..<Int.random(in: 1..<3, using: &random)).map { "line \($0) <i>of</i> \(index)" }
                        .joined(separator: "\n"))
            }
            let map =
                Bool.random(using: &random)
                ? WebVTTDocument.TimestampMap(
                    mpegTimestamp: Int64.random(in: 0..<(1 << 33), using: &random),
                    localTime: Int64.random(in: 0..<100_000, using: &random)) : nil
            let document = WebVTTDocument(timestampMap: map, cues: cues)
            #expect(try WebVTTDocument(parsing: document.text) == document)
        }
    }

    @Test("RFC 8216 §3.5: cue time t is MPEGTS + (t − LOCAL) × 90 on the media's clock; without a map, 0 is 0")
    func mediaClock() throws {
        let mapped = try WebVTTDocument(
            parsing: "WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:900000,LOCAL:00:00:10.000\n\n00:10.100 --> 00:10.700\nA\n")
        #expect(
            SubtitleCue.cues(of: mapped, discontinuity: 3) == [
                SubtitleCue(start: 909_000, end: 963_000, discontinuity: 3, text: "A")
            ])
        let unmapped = try WebVTTDocument(parsing: "WEBVTT\n\n00:01.000 --> 00:02.000\nB\n")
        #expect(
            SubtitleCue.cues(of: unmapped, discontinuity: 0) == [SubtitleCue(start: 90_000, end: 180_000, text: "B")])
    }

    // MARK: Timed text tracks

    /// `av-h264-aac.ts`: audio from PTS 131110, video from 133200 for 2 s. The output's time 0 is
    /// the audio's first frame.
    static let origin: Int64 = 131_110

    /// Remuxes `av-h264-aac.ts` (and again as discontinuity 1 when `twice`), then adds `cues`.
    func remux(
        _ cues: [SubtitleCue], twice: Bool = false, isForced: Bool = false
    ) throws -> (file: MP4Inspector, placed: [SubtitleCue]) {
        let folder = temporaryFolder("subtitles")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let url = folder.appendingPathComponent("lesson.mp4")
        var remuxer = try SegmentRemuxer(output: try MP4FileOutput(url: url), brand: .movie)
        let data = try Facts.data("av-h264-aac.ts")
        try remuxer.append([SegmentRemuxer.Segment(data: data, discontinuity: 0, index: 0)])
        if twice { try remuxer.append([SegmentRemuxer.Segment(data: data, discontinuity: 1, index: 1)]) }
        let placed = try remuxer.appendSubtitles(
            cues, rendition: SegmentRemuxer.Rendition(language: "pt-BR", name: "Português"), isForced: isForced)
        _ = try remuxer.finish()
        return (try MP4Inspector(url: url), placed)
    }

    /// The text and time span of each sample of a subtitle track, in its timescale.
    func samples(_ track: MP4Inspector.Track, in file: MP4Inspector) -> [(start: Int64, end: Int64, bytes: [UInt8])] {
        track.samples.map { sample in
            (sample.decodeTime, sample.decodeTime + sample.duration, file.data(of: sample))
        }
    }

    func text(of bytes: [UInt8]) -> String {
        let length = bytes.count >= 2 ? Int(bytes[0]) << 8 | Int(bytes[1]) : 0
        return String(decoding: bytes.dropFirst(2).prefix(length), as: UTF8.self)
    }

    @Test(
        "ISO/IEC 14496-17 §5: the samples tile the track from 0 to the media's end, each instant showing exactly the cues that cover it (seeded)"
    )
    func tiling() throws {
        var random = SplitMix64(seed: 0x71_1E5)
        for round in 0..<12 {
            var cues: [SubtitleCue] = []
            for index in 0..<Int.random(in: 1..<8, using: &random) {
                let start = Self.origin + Int64.random(in: -20_000..<200_000, using: &random)
                cues.append(
                    SubtitleCue(
                        start: start, end: start + Int64.random(in: 1..<60_000, using: &random), text: "c\(index)"))
                // A cue repeated in the next segment, as RFC 8216 §3.5 makes a cue that spans two.
                if Bool.random(using: &random), let last = cues.last { cues.append(last) }
            }
            let (file, placed) = try remux(cues)
            let track = try #require(file.tracks("sbtl").first, "round \(round)")
            let spans = samples(track, in: file)
            // Where the picture and sound end (the track's end), in the track's 90 kHz.
            let media = (file.tracks("vide") + file.tracks("soun")).map(\.end).max() ?? 0
            let mediaEnd = Int64((media * 90_000).rounded())
            #expect(spans.first?.start == 0)
            #expect(abs((spans.last?.end ?? 0) - mediaEnd) <= 2, "round \(round)")
            #expect(zip(spans, spans.dropFirst()).allSatisfy { $0.end == $1.start })
            #expect(Set(placed).count == placed.count, "repeated cues are kept once")
            for probe in stride(from: Int64(0), to: mediaEnd, by: 997) {
                let showing = placed.filter { $0.start <= probe && probe < $0.end }.map(\.text)
                let sample = spans.first { $0.start <= probe && probe < $0.end }
                #expect(
                    sample.map { text(of: $0.bytes) } == showing.joined(separator: "\n"),
                    "round \(round) at \(probe)")
            }
            // Nothing is lost: every cue with time left on the media is there.
            for cue in cues where cue.end - Self.origin > 0 && cue.start - Self.origin < mediaEnd {
                #expect(placed.contains { $0.text == cue.text }, "round \(round): \(cue.text) was dropped")
            }
            // Placement: the source clock less the origin, cut to the media.
            for cue in placed {
                #expect(
                    cues.contains {
                        $0.text == cue.text && max(0, $0.start - Self.origin) == cue.start
                            && (min($0.end - Self.origin, mediaEnd) - cue.end).magnitude <= 2
                    })
            }
        }
    }

    @Test(
        "3GPP TS 26.245 §5.17: markup becomes plain text with styl records for <b>, <i> and <u>; character references are decoded"
    )
    func styles() throws {
        let cue = SubtitleCue(
            start: Self.origin, end: Self.origin + 90_000,
            text: "<v Ana><i>Olá</i> &amp; <b>adeus</b></v>\n<c.yellow>&lt;3</c> <u>x</u>&#233;")
        let (file, _) = try remux([cue])
        let track = try #require(file.tracks("sbtl").first)
        let bytes = try #require(samples(track, in: file).first?.bytes)
        #expect(text(of: bytes) == "Olá & adeus\n<3 xé")
        let textLength = 2 + (Int(bytes[0]) << 8 | Int(bytes[1]))
        let styl = Array(bytes[textLength...])
        try #require(styl.count == 8 + 2 + 3 * 12)
        #expect(String(decoding: styl[4..<8], as: UTF8.self) == "styl")
        #expect(styl[8] == 0 && styl[9] == 3)
        // startChar, endChar (in characters), face flags: italic "Olá", bold "adeus", underlined "x".
        let records = (0..<3).map { index in
            let record = styl[(10 + index * 12)..<(22 + index * 12)].map { $0 }
            return (Int(record[0]) << 8 | Int(record[1]), Int(record[2]) << 8 | Int(record[3]), record[6])
        }
        #expect(records.map(\.0) == [0, 6, 15])
        #expect(records.map(\.1) == [3, 11, 16])
        #expect(records.map(\.2) == [2, 1, 4])
    }

    @Test("each cue's markup ends with it: an unclosed <i> or a stray < does not reach the cue showing with it")
    func markupPerCue() throws {
        let cues = [
            SubtitleCue(start: Self.origin, end: Self.origin + 90_000, text: "<i>unclosed"),
            SubtitleCue(start: Self.origin + 9_000, end: Self.origin + 90_000, text: "plain < and more"),
            SubtitleCue(start: Self.origin + 9_000, end: Self.origin + 90_000, text: "&#0;zero"),
        ]
        let (file, _) = try remux(cues)
        let track = try #require(file.tracks("sbtl").first)
        let spans = samples(track, in: file)
        let both = try #require(spans.first { $0.start == 9_000 })
        #expect(text(of: both.bytes) == "unclosed\nplain \n\u{FFFD}zero")
        // One styl record: the first line's 8 characters in italics, nothing of the others.
        let textLength = 2 + (Int(both.bytes[0]) << 8 | Int(both.bytes[1]))
        let styl = Array(both.bytes[textLength...])
        #expect(styl.count == 8 + 2 + 12)
        #expect(styl.count >= 22 && styl[10...13].elementsEqual([0, 0, 0, 8]))
    }

    @Test(
        "RFC 8216 §6.2.2: a cue moves with the media of its discontinuity number; its 33-bit timestamp is taken in the wrap nearest that media"
    )
    func timeline() throws {
        let wrap: Int64 = 1 << 33
        let cues = [
            SubtitleCue(start: 133_200, end: 142_200, discontinuity: 0, text: "first part"),
            SubtitleCue(start: 133_200, end: 142_200, discontinuity: 1, text: "second part"),
            SubtitleCue(start: 133_200 + 9_000 + wrap, end: 133_200 + 18_000 + wrap, discontinuity: 0, text: "wrapped"),
            SubtitleCue(start: 137_700, end: 142_200, discontinuity: 7, text: "unknown number"),
        ]
        let (file, placed) = try remux(cues, twice: true)
        let video = try #require(file.tracks("vide").first)
        let part = try #require(video.presentationTimes().sorted().dropFirst(50).first)
        let starts = Dictionary(uniqueKeysWithValues: placed.map { ($0.text, Double($0.start) / 90_000) })
        let videoStart = try #require(video.presentationTimes().min())
        #expect(abs((starts["first part"] ?? -1) - videoStart) < 1e-4)
        // The second part's video starts where the first part's presentation ended.
        #expect(abs((starts["second part"] ?? -1) - part) < 1e-4)
        #expect(abs((starts["wrapped"] ?? -1) - videoStart - 0.1) < 1e-4)
        // A number the media does not have continues the nearest placed one before it (1).
        #expect(abs((starts["unknown number"] ?? -1) - part - 0.05) < 1e-4)
    }

    @Test(
        "a forced track: all samples forced in its sample entry, a forced-subtitle kind, disabled; its language in mdhd and elng"
    )
    func forced() throws {
        let cue = SubtitleCue(start: Self.origin, end: Self.origin + 9_000, text: "[Sign]")
        let (file, _) = try remux([cue], isForced: true)
        let track = try #require(file.tracks("sbtl").first)
        #expect(track.formats == ["tx3g"])
        #expect(track.language == "por")
        #expect(track.extendedLanguage == "pt-BR")
        #expect(track.name == "Português")
        #expect(track.flags & 1 == 0)
        let entry = try #require(track.entries.first)
        #expect(entry[16..<20].elementsEqual([0x80, 0, 0, 0]))
        #expect(Data(file.bytes).range(of: Data("forced-subtitle".utf8)) != nil)
    }

    @Test("no cue left on the media's timeline adds no track")
    func nothingLeft() throws {
        let (file, placed) = try remux([SubtitleCue(start: 0, end: 90_000, text: "before the media")])
        #expect(placed.isEmpty)
        #expect(file.tracks("sbtl").isEmpty)
    }
}
