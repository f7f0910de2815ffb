/// A WebVTT document (W3C WebVTT: Web Video Text Tracks Format), as an HLS subtitle segment
/// carries it (RFC 8216 §3.5): its `X-TIMESTAMP-MAP` and its cues.
///
/// Parsing follows the W3C parser's leniency where it is lenient: a block that is not a cue
/// (`NOTE`, `STYLE`, `REGION`, a line of text without timings) is skipped, and so is a cue whose
/// timing line is malformed. What cannot be skipped without misplacing every cue is an error: a
/// document that does not start with `WEBVTT`, or a malformed `X-TIMESTAMP-MAP`.
///
/// <!-- example: webvtt-document -->
/// ```swift
/// let document = try WebVTTDocument(parsing: segmentText)
/// let cues = SubtitleCue.cues(of: document, discontinuity: 0)
/// ```
public struct WebVTTDocument: Sendable, Hashable {
    /// RFC 8216 §3.5's mapping from WebVTT cue times to the media's MPEG-2 timestamps: the cue
    /// time ``localTime`` is the media time ``mpegTimestamp``.
    public struct TimestampMap: Sendable, Hashable {
        /// The MPEG-2 timestamp (90 kHz ticks, 33 bits) that ``localTime`` maps to.
        public var mpegTimestamp: Int64
        /// A WebVTT cue time, in milliseconds.
        public var localTime: Int64

        /// Creates a map.
        public init(mpegTimestamp: Int64, localTime: Int64) {
            self.mpegTimestamp = mpegTimestamp
            self.localTime = localTime
        }
    }

    /// The header's `X-TIMESTAMP-MAP`, if it has one. Without one, RFC 8216 §3.5 says a cue time of
    /// 0 maps to an MPEG-2 timestamp of 0.
    public var timestampMap: TimestampMap?
    /// The cues, in document order.
    public var cues: [WebVTTCue]

    /// Creates a document.
    public init(timestampMap: TimestampMap? = nil, cues: [WebVTTCue]) {
        self.timestampMap = timestampMap
        self.cues = cues
    }

    /// Parses a WebVTT document (any of CRLF, LF and CR line ends, with or without a byte order
    /// mark).
    ///
    /// - Throws: ``ContainerError/Kind/malformedWebVTT(line:reason:)`` when the first line is not
    ///   `WEBVTT` or the `X-TIMESTAMP-MAP` cannot be read.
    /// - Complexity: O(*n*) in the document's length.
    public init(parsing text: String) throws(ContainerError) {
        let lines = Self.lines(of: text)
        guard var first = lines.first else {
            throw ContainerError(.malformedWebVTT(line: 1, reason: "the document is empty"))
        }
        if first.hasPrefix("\u{FEFF}") { first.removeFirst() }
        guard first.hasPrefix("WEBVTT"),
            first.count == 6 || first.dropFirst(6).first.map({ $0 == " " || $0 == "\t" }) == true
        else {
            throw ContainerError(.malformedWebVTT(line: 1, reason: "it does not start with WEBVTT"))
        }
        var index = 1
        var map: TimestampMap?
        // The header: lines up to the first blank one.
        while index < lines.count, !lines[index].isEmpty {
            let line = lines[index]
            if line.contains("-->") { break }  // No blank line before the first cue.
            if line.hasPrefix("X-TIMESTAMP-MAP=") {
                map = try Self.timestampMap(String(line.dropFirst("X-TIMESTAMP-MAP=".count)), line: index + 1)
            }
            index += 1
        }
        var cues: [WebVTTCue] = []
        while index < lines.count {
            // Skip blank lines between blocks.
            while index < lines.count, lines[index].isEmpty { index += 1 }
            guard index < lines.count else { break }
            // A block: an optional identifier, then the timing line, then the payload.
            var identifier: String?
            var timing = lines[index]
            if !timing.contains("-->") {
                let next = index + 1
                guard next < lines.count, lines[next].contains("-->"), !Self.isNamedBlock(timing) else {
                    // A NOTE, STYLE or REGION block, or stray text: skipped whole.
                    while index < lines.count, !lines[index].isEmpty { index += 1 }
                    continue
                }
                identifier = timing
                index = next
                timing = lines[index]
            }
            index += 1
            var payload: [String] = []
            // The payload ends at a blank line, or at a line that is itself a timing line.
            while index < lines.count, !lines[index].isEmpty, !lines[index].contains("-->") {
                payload.append(lines[index])
                index += 1
            }
            if let (start, end, settings) = Self.timings(timing) {
                cues.append(
                    WebVTTCue(
                        identifier: identifier, start: start, end: end, settings: settings,
                        text: payload.joined(separator: "\n")))
            }
        }
        self.init(timestampMap: map, cues: cues)
    }

    /// The document as WebVTT text: the header (with the map, if any), then each cue.
    ///
    /// - Complexity: O(*n*) in the cues' text.
    public var text: String {
        var text = "WEBVTT\n"
        if let timestampMap {
            text += "X-TIMESTAMP-MAP=MPEGTS:\(timestampMap.mpegTimestamp),LOCAL:"
            text += Self.timestamp(timestampMap.localTime) + "\n"
        }
        for cue in cues {
            text += "\n"
            if let identifier = cue.identifier { text += identifier + "\n" }
            text += Self.timestamp(cue.start) + " --> " + Self.timestamp(cue.end)
            if !cue.settings.isEmpty { text += " " + cue.settings }
            text += "\n"
            if !cue.text.isEmpty { text += cue.text + "\n" }
        }
        return text
    }

    /// `hh:mm:ss.ttt` for a time in milliseconds (negative times are written as 0).
    public static func timestamp(_ milliseconds: Int64) -> String {
        let value = max(0, milliseconds)
        let hours = value / 3_600_000
        let minutes = value / 60_000 % 60
        let seconds = value / 1_000 % 60
        let thousandths = value % 1_000
        func pad(_ number: Int64, _ width: Int) -> String {
            let digits = String(number)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(hours, 2)):\(pad(minutes, 2)):\(pad(seconds, 2)).\(pad(thousandths, 3))"
    }

    /// Reads a WebVTT timestamp (`mm:ss.ttt` or `h:mm:ss.ttt`, any number of hour digits) as milliseconds.
    ///
    /// - Returns: `nil` when it is malformed (minutes or seconds over 59, other than three
    ///   decimals).
    public static func milliseconds(_ timestamp: Substring) -> Int64? {
        let parts = timestamp.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3, let last = parts.last else { return nil }
        let secondParts = last.split(separator: ".", omittingEmptySubsequences: false)
        guard secondParts.count == 2, secondParts[0].count == 2, secondParts[1].count == 3,
            let seconds = digits(secondParts[0]), let thousandths = digits(secondParts[1]), seconds < 60
        else { return nil }
        let minuteText = parts[parts.count - 2]
        guard minuteText.count == 2, let minutes = digits(minuteText), minutes < 60 else { return nil }
        var hours: Int64 = 0
        if parts.count == 3 {
            // Any number of digits (the W3C parser reads one as hours too), few enough to fit.
            guard parts[0].count <= 9, let value = digits(parts[0]) else { return nil }
            hours = value
        }
        return ((hours * 60 + minutes) * 60 + seconds) * 1_000 + thousandths
    }

    // MARK: Private

    private static func digits(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int64(text)
    }

    /// The lines, split at CRLF, LF or CR.
    private static func lines(of text: String) -> [String] {
        var lines: [String] = []
        var current = ""
        var afterCR = false
        for scalar in text.unicodeScalars {
            if scalar == "\n" {
                if !afterCR { lines.append(current) }
                current = ""
                afterCR = false
            } else if scalar == "\r" {
                lines.append(current)
                current = ""
                afterCR = true
            } else {
                current.unicodeScalars.append(scalar)
                afterCR = false
            }
        }
        lines.append(current)
        return lines
    }

    /// Whether a block starts with `NOTE`, `STYLE` or `REGION` (then a space, a tab or the line's end).
    private static func isNamedBlock(_ line: String) -> Bool {
        for name in ["NOTE", "STYLE", "REGION"] where line.hasPrefix(name) {
            let rest = line.dropFirst(name.count)
            if rest.isEmpty || rest.first == " " || rest.first == "\t" { return true }
        }
        return false
    }

    /// `start --> end settings`, or `nil` when malformed.
    private static func timings(_ line: String) -> (Int64, Int64, String)? {
        let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard fields.count >= 3, fields[1] == "-->", let start = milliseconds(fields[0]),
            let end = milliseconds(fields[2])
        else { return nil }
        return (start, end, fields.dropFirst(3).joined(separator: " "))
    }

    /// `MPEGTS:900000,LOCAL:00:00:00.000`, in either order.
    private static func timestampMap(_ value: String, line: Int) throws(ContainerError) -> TimestampMap {
        var mpeg: Int64?
        var local: Int64?
        for pair in value.split(separator: ",") {
            let trimmed = pair.drop { $0 == " " }
            if trimmed.hasPrefix("MPEGTS:") {
                mpeg = digits(trimmed.dropFirst("MPEGTS:".count))
            } else if trimmed.hasPrefix("LOCAL:") {
                local = milliseconds(trimmed.dropFirst("LOCAL:".count))
            }
        }
        guard let mpeg, mpeg < (1 << 33) else {
            throw ContainerError(.malformedWebVTT(line: line, reason: "X-TIMESTAMP-MAP has no 33-bit MPEGTS value"))
        }
        guard let local else {
            throw ContainerError(.malformedWebVTT(line: line, reason: "X-TIMESTAMP-MAP has no LOCAL timestamp"))
        }
        return TimestampMap(mpegTimestamp: mpeg, localTime: local)
    }
}

/// One WebVTT cue: when it shows, its settings and its text (with its markup).
public struct WebVTTCue: Sendable, Hashable {
    /// Its identifier, if it has one.
    public var identifier: String?
    /// When it appears, in milliseconds of cue time.
    public var start: Int64
    /// When it disappears, in milliseconds of cue time.
    public var end: Int64
    /// Its cue settings (`line:85% align:center`), as written.
    public var settings: String
    /// Its payload: lines joined by `\n`, with WebVTT markup (`<i>`, `<b>`, `&amp;`…).
    public var text: String

    /// Creates a cue.
    public init(identifier: String? = nil, start: Int64, end: Int64, settings: String = "", text: String) {
        self.identifier = identifier
        self.start = start
        self.end = end
        self.settings = settings
        self.text = text
    }
}
