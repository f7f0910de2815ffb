import Foundation

/// A subtitle cue on its media's clock: when it shows, in 90 kHz ticks of the source's timeline
/// (the clock of the MPEG-2 timestamps, or of a fragmented MP4's decode times, in 90 kHz), and
/// its text.
///
/// ``SegmentRemuxer/appendSubtitles(_:rendition:isForced:)`` places cues on the output's
/// timeline the way it places the media of the same discontinuity number, so a cue shows with the
/// picture it was written for.
public struct SubtitleCue: Sendable, Hashable {
    /// When it appears, in 90 kHz ticks.
    public var start: Int64
    /// When it disappears, in 90 kHz ticks.
    public var end: Int64
    /// The discontinuity sequence number of its segment (RFC 8216 §6.2.2), which names the
    /// timeline its times belong to.
    public var discontinuity: Int
    /// Its text, with WebVTT markup (`<i>`, `<b>`, `<u>`, `<v Name>`, `&amp;`…); lines are
    /// separated by `\n`.
    public var text: String

    /// The ticks of the 90 kHz clock in a second.
    public static let ticksPerSecond: Int64 = 90_000

    /// Creates a cue.
    public init(start: Int64, end: Int64, discontinuity: Int = 0, text: String) {
        self.start = start
        self.end = end
        self.discontinuity = discontinuity
        self.text = text
    }

    /// The cues of a WebVTT segment on its media's clock (RFC 8216 §3.5): cue time *t* becomes
    /// `MPEGTS + (t − LOCAL) × 90`, with `MPEGTS` and `LOCAL` from the segment's own
    /// `X-TIMESTAMP-MAP`, or 0 and 0 without one.
    ///
    /// - Complexity: O(*n*) in the cues.
    public static func cues(of document: WebVTTDocument, discontinuity: Int) -> [SubtitleCue] {
        let map = document.timestampMap ?? WebVTTDocument.TimestampMap(mpegTimestamp: 0, localTime: 0)
        return document.cues.map { cue in
            SubtitleCue(
                start: map.mpegTimestamp + (cue.start - map.localTime) * 90,
                end: map.mpegTimestamp + (cue.end - map.localTime) * 90, discontinuity: discontinuity, text: cue.text)
        }
    }
}

/// 3GPP timed text (3GPP TS 26.245, carried in MP4 by ISO/IEC 14496-17's rules): the `tx3g`
/// sample entry and the samples, built from WebVTT cue text.
enum TimedText {
    /// The units per second of a subtitle track: the 90 kHz of the cues' clock, so no time is
    /// rounded on its way into the file.
    static let timescale = 90_000

    /// Face style flags of a `StyleRecord` (TS 26.245 §5.16).
    struct Face: OptionSet, Hashable {
        let rawValue: UInt8
        static let bold = Face(rawValue: 1)
        static let italic = Face(rawValue: 2)
        static let underline = Face(rawValue: 4)
    }

    /// A run of styled characters: `start` up to (not including) `end`, in Unicode scalars.
    struct StyleRun: Hashable {
        var start: Int
        var end: Int
        var face: Face
    }

    /// The description of a subtitle track's samples.
    static func description(isForced: Bool) -> SampleDescription {
        SampleDescription(
            kind: .text, codec: .timedText, sampleEntry: sampleEntry(isForced: isForced), timescale: timescale)
    }

    /// A `TextSampleEntry` (TS 26.245 §5.16): white 16-point Arial (the defaults of the ASS
    /// styles ffmpeg converts timed text to, so its extraction adds no font tags) centred at the
    /// bottom of the track's box on no background; `isForced` sets QuickTime's "all samples are
    /// forced" display flag. A player's own caption style (iOS's accessibility settings) overrides
    /// these.
    static func sampleEntry(isForced: Bool) -> Data {
        var box = BoxWriter()
        box.begin("tx3g")
        box.appendZeros(6)
        box.append16(1)  // data reference index
        box.append32(isForced ? 0x8000_0000 : 0)  // display flags
        box.append([0x01, 0xFF])  // horizontal: centre; vertical: bottom
        box.append([0, 0, 0, 0])  // background colour: transparent
        box.appendZeros(8)  // default text box: the whole track
        box.append(styleRecord(StyleRun(start: 0, end: 0, face: [])))
        box.begin("ftab")
        box.append16(1)
        box.append16(1)  // font ID
        let name = Array("Arial".utf8)
        box.append([UInt8(name.count)] + name)
        box.end()
        box.end()
        return Data(box.bytes)
    }

    /// The most cues one subtitle track takes, and the most that show at once.
    static let maximumCues = 100_000
    static let maximumShowing = 16

    /// One sample of the cues `parts` (each cue's text and style runs, from ``plainText(of:)``),
    /// their lines joined in order: the text's UTF-8 length and bytes, then a `styl` box when some
    /// of it is bold, italic or underlined. No parts make the empty sample that fills a gap.
    ///
    /// - Complexity: O(*n*) in the parts' length.
    static func sample(_ parts: [(text: String, runs: [StyleRun])]) -> Data {
        var text = ""
        var runs: [StyleRun] = []
        var offset = 0
        for (position, part) in parts.enumerated() {
            if position > 0 {
                text += "\n"
                offset += 1
            }
            text += part.text
            runs += part.runs.map { StyleRun(start: $0.start + offset, end: $0.end + offset, face: $0.face) }
            offset += part.text.unicodeScalars.count
        }
        // The length is 16 bits: a longer text is cut at a character boundary.
        var byteCount = 0
        var scalars = 0
        for scalar in text.unicodeScalars {
            let width = UTF8.width(scalar)
            if byteCount + width > 0xFFFF { break }
            byteCount += width
            scalars += 1
        }
        var box = BoxWriter()
        box.append16(UInt16(byteCount))
        box.append(text.utf8.prefix(byteCount))
        let kept = runs.compactMap { run -> StyleRun? in
            let end = min(run.end, scalars, 0xFFFF)
            return run.start < end ? StyleRun(start: run.start, end: end, face: run.face) : nil
        }
        if !kept.isEmpty {
            box.begin("styl")
            box.append16(UInt16(min(kept.count, 0xFFFF)))
            for run in kept.prefix(0xFFFF) { box.append(styleRecord(run)) }
            box.end()
        }
        return Data(box.bytes)
    }

    /// A `StyleRecord`: the run's characters, font 1, its face, 16 points, opaque white.
    private static func styleRecord(_ run: StyleRun) -> [UInt8] {
        [
            UInt8(run.start >> 8), UInt8(run.start & 0xFF), UInt8(run.end >> 8), UInt8(run.end & 0xFF), 0, 1,
            run.face.rawValue, 16, 0xFF, 0xFF, 0xFF, 0xFF,
        ]
    }

    /// WebVTT cue text without its markup (W3C WebVTT §4.2.2's tags and character references)
    /// and the runs of it inside `<b>`, `<i>` and `<u>`. Other tags (`<c>`, `<v>`, `<lang>`,
    /// `<ruby>`, timestamps) keep their text and lose the tag.
    ///
    /// - Complexity: O(*n*) in the payload's length.
    static func plainText(of payload: String) -> (text: String, runs: [StyleRun]) {
        // A sample holds at most 65,535 bytes: more of a cue is never read.
        let payload = String(payload.unicodeScalars.prefix(0xFFFF))
        var text = String.UnicodeScalarView()
        var faces: [Face] = []
        var depth: [Face: Int] = [:]
        var current: Face {
            var face: Face = []
            for (style, count) in depth where count > 0 { face.insert(style) }
            return face
        }
        let scalars = Array(payload.unicodeScalars)
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "<" {
                var end = index + 1
                while end < scalars.count, scalars[end] != ">" { end += 1 }
                let tag = String(String.UnicodeScalarView(scalars[(index + 1)..<min(end, scalars.count)]))
                let closing = tag.hasPrefix("/")
                let name = (closing ? tag.dropFirst() : Substring(tag)).prefix { $0 != "." && $0 != " " && $0 != "\t" }
                let style: Face? =
                    switch name {
                    case "b": .bold
                    case "i": .italic
                    case "u": .underline
                    default: nil
                    }
                if let style { depth[style] = max(0, (depth[style] ?? 0) + (closing ? -1 : 1)) }
                index = end + 1
                continue
            }
            if scalar == "&", let (decoded, length) = characterReference(scalars, at: index) {
                text.append(decoded)
                faces.append(current)
                index += length
                continue
            }
            text.append(scalar)
            faces.append(current)
            index += 1
        }
        var runs: [StyleRun] = []
        var start = 0
        while start < faces.count {
            var end = start + 1
            while end < faces.count, faces[end] == faces[start] { end += 1 }
            if !faces[start].isEmpty { runs.append(StyleRun(start: start, end: end, face: faces[start])) }
            start = end
        }
        return (String(text), runs)
    }

    /// The character a reference at `index` (`&amp;`, `&#233;`, `&#xE9;`) stands for, and its
    /// length; `nil` for an `&` that starts none.
    private static func characterReference(_ scalars: [Unicode.Scalar], at index: Int) -> (Unicode.Scalar, Int)? {
        var end = index + 1
        while end < scalars.count, end - index <= 10, scalars[end] != ";" { end += 1 }
        guard end < scalars.count, scalars[end] == ";" else { return nil }
        let name = String(String.UnicodeScalarView(scalars[(index + 1)..<end]))
        let named: [String: Unicode.Scalar] = [
            "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": "\u{A0}", "lrm": "\u{200E}",
            "rlm": "\u{200F}",
        ]
        if let scalar = named[name] { return (scalar, end - index + 1) }
        guard name.hasPrefix("#") else { return nil }
        let number = name.dropFirst()
        let value: UInt32? =
            number.hasPrefix("x") || number.hasPrefix("X")
            ? UInt32(number.dropFirst(), radix: 16) : UInt32(number, radix: 10)
        guard let value else { return nil }
        // W3C WebVTT (as HTML): NUL and what is not a scalar become U+FFFD.
        let scalar = value == 0 ? nil : Unicode.Scalar(value)
        return (scalar ?? "\u{FFFD}", end - index + 1)
    }
}
