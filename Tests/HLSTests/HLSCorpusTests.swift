import Foundation
import HLS
import TestSupport
import Testing

/// One file's facts from `Fixtures/hls/corpus-facts.json`, computed by an independent RFC 8216
/// scanner (shared/fixtures/hls); its `m3u8` field (another library's view) is ignored.
struct CorpusFacts: Decodable, Sendable {
    struct Variant: Decodable, Sendable, Equatable {
        var bandwidth: UInt64?
        var averageBandwidth: UInt64?
        var codecs: String?
        var audio: String?
        var uri: String
        var absoluteUri: String
    }

    struct Rendition: Decodable, Sendable, Equatable {
        var group: String
        var name: String
        var language: String?
        var `default`: Bool
        var autoselect: Bool
        var channels: String?
        var uri: String?
        var absoluteUri: String?
    }

    struct BestAudio: Decodable, Sendable {
        var group: String?
        var uri: String?
        var ranking: [String]?
        var variant: String?
    }

    var isMaster: Bool
    var segmentCount: Int
    var totalDuration: Double
    var endlist: Bool
    var targetDuration: Int?
    var mediaSequence: UInt64?
    var discontinuities: Int
    var encryptedSegments: Int
    var mapUris: [String]
    var audioRenditions: [Rendition]
    var variants: [Variant]
    var byteranges: [[UInt64]]
    var firstSegmentAbsoluteUri: String?
    var lastSegmentAbsoluteUri: String?
    var rfcErrors: [String]
    var rfcWarnings: [String]
    var bestAudio: BestAudio?

    enum CodingKeys: String, CodingKey {
        case isMaster, segmentCount, totalDuration, endlist, targetDuration, mediaSequence, discontinuities
        case encryptedSegments, mapUris, audioRenditions, variants, firstSegmentAbsoluteUri, lastSegmentAbsoluteUri
        case rfcErrors, rfcWarnings, bestAudio
        case byteranges
    }
}

struct CorpusCase: Sendable, CustomTestStringConvertible {
    var file: String
    var facts: CorpusFacts
    var testDescription: String { file }

    static let base = URL(literal: "https://cdn.example.com/a/b/playlist.m3u8?token=abc")

    static func all() throws -> [CorpusCase] {
        let loader = FixtureLoader(bundle: .module)
        let data = try loader.data("hls/corpus-facts.json")
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else { return [] }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try object.keys.filter { $0 != "_meta" }.sorted().map { file in
            var fields = object[file] as? [String: Any] ?? [:]
            // A key that snake-case conversion cannot spell as a Swift name.
            fields["byteranges"] = fields.removeValue(forKey: "byteranges_resolved_[length,offset]")
            let entry = try JSONSerialization.data(withJSONObject: fields)
            return CorpusCase(file: file, facts: try decoder.decode(CorpusFacts.self, from: entry))
        }
    }
}

/// Where MediaCore deliberately disagrees with the reference scanner, and why.
let corpusOverrides: [String: (HLSParseError.Kind, String)] = [
    "eyevinn_media_key.m3u8": (
        .malformedAttributeList(reason: "a quote inside the unquoted value of IV"),
        "RFC 8216 §4.2: an unquoted value never contains a double quote, and a hexadecimal-sequence starts with 0x; `IV=0011…eeff\"` is neither, so the attribute list is invalid"
    ),
    "py_iptv_early_extinf.m3u8": (
        .missingTargetDuration,
        "RFC 8216 §4.3.3.1: EXT-X-TARGETDURATION is REQUIRED, and §4 says clients MUST fail to parse playlists that violate a MUST; the reference scanner does not check it"
    ),
]

@Suite("HLS corpus")
struct HLSCorpusTests {
    let loader = FixtureLoader(bundle: .module)

    func parse(_ file: String) throws -> HLSParseResult {
        let data = try loader.data("hls/corpus/\(file)")
        return try HLSParser(options: .init(allowsByteOrderMark: true, playlistURL: CorpusCase.base)).parse(data)
    }

    func absolute(_ uri: String) throws -> String {
        let url = try HLSURIResolver.resolve(uri, against: CorpusCase.base)
        return url.absoluteString.removingPercentEncoding ?? url.absoluteString
    }

    @Test("every corpus file matches the independent scanner's facts", arguments: try CorpusCase.all())
    func facts(corpus: CorpusCase) throws {
        let facts = corpus.facts
        if let (kind, _) = corpusOverrides[corpus.file] {
            #expect(throws: HLSParseError.self) { try parse(corpus.file) }
            do {
                _ = try parse(corpus.file)
            } catch let error as HLSParseError {
                #expect(error.kind == kind)
            }
            return
        }
        guard facts.rfcErrors.isEmpty else {
            // Every reference error is one a client must reject: the parser stops with a typed error.
            do {
                let parsed = try parse(corpus.file)
                Issue.record("parsed despite \(facts.rfcErrors): \(parsed.playlist)")
            } catch let error as HLSParseError {
                #expect(error.line >= 0)
                #expect(!error.description.isEmpty)
            }
            return
        }
        let result = try parse(corpus.file)
        // Warnings: the reference's, by kind and count (unknown-attribute, version and map-IV
        // notes are MediaCore's own: the reference checks neither RFC 8216 §7 nor §4.3.2.5).
        let ours = result.warnings.filter {
            switch $0.kind {
            case .unknownAttribute, .versionTooLow, .mapKeyWithoutIV: false
            default: true
            }
        }
        #expect(ours.count == expectedWarningCount(facts.rfcWarnings), "\(ours)")

        switch result.playlist {
        case .multivariant(let master):
            #expect(facts.isMaster)
            let variants = try master.variants.map { variant in
                CorpusFacts.Variant(
                    bandwidth: variant.bandwidth, averageBandwidth: variant.averageBandwidth,
                    codecs: variant.attributes.quotedString("CODECS"), audio: variant.audioGroup, uri: variant.uri,
                    absoluteUri: try absolute(variant.uri))
            }
            #expect(variants == facts.variants)
            let renditions = try master.audioRenditions.map { rendition in
                CorpusFacts.Rendition(
                    group: rendition.groupID, name: rendition.name, language: rendition.language,
                    default: rendition.isDefault,
                    autoselect: rendition.isAutoselect, channels: rendition.channels, uri: rendition.uri,
                    absoluteUri: try rendition.uri.map(absolute))
            }
            #expect(renditions == facts.audioRenditions)
            let selection = try #require(master.highestQualityAudio())
            if let group = facts.bestAudio?.group {
                #expect(selection.groupID == group)
                #expect(selection.uri == facts.bestAudio?.uri)
                #expect(selection.ranking == facts.bestAudio?.ranking)
            } else {
                #expect(selection.decidedBy == .muxed)
                #expect(selection.uri == facts.bestAudio?.variant)
            }
        case .media(let media):
            #expect(!facts.isMaster)
            #expect(media.segments.count == facts.segmentCount)
            #expect(abs(media.totalDuration - facts.totalDuration) < 1e-9)
            #expect(media.hasEndList == facts.endlist)
            #expect(media.targetDuration == facts.targetDuration)
            #expect(media.mediaSequence == facts.mediaSequence ?? 0)
            #expect(media.segments.filter(\.isDiscontinuity).count == facts.discontinuities)
            #expect(media.segments.filter(\.isEncrypted).count == facts.encryptedSegments)
            var maps: [String] = []
            for segment in media.segments {
                if let uri = segment.map?.uri, !maps.contains(uri) { maps.append(uri) }
            }
            #expect(maps == facts.mapUris)
            #expect(media.segments.compactMap(\.byteRange).map { [$0.length, $0.offset] } == facts.byteranges)
            #expect(try media.segments.first.map { try absolute($0.uri) } == facts.firstSegmentAbsoluteUri)
            #expect(try media.segments.last.map { try absolute($0.uri) } == facts.lastSegmentAbsoluteUri)
        }
    }

    func expectedWarningCount(_ warnings: [String]) -> Int {
        warnings.reduce(0) { total, warning in
            // "10 EXTINF round() > TARGETDURATION" stands for ten warnings.
            if let count = Int(warning.prefix { $0.isNumber }), warning.contains("TARGETDURATION") {
                return total + count
            }
            return total + 1
        }
    }

    @Test("writing then parsing gives the same playlist, for every file that parses", arguments: try CorpusCase.all())
    func roundTrip(corpus: CorpusCase) throws {
        guard let parsed = try? parse(corpus.file) else { return }
        let written = HLSWriter.write(parsed.playlist)
        let reparsed = try HLSParser(options: .init(playlistURL: CorpusCase.base)).parse(written)
        #expect(reparsed.playlist == parsed.playlist, "\(written)")
        #expect(HLSWriter.write(reparsed.playlist) == written)
    }

    @Test("CRLF line endings parse exactly like LF, with no stray carriage returns")
    func crlf() throws {
        for file in [
            "eyevinn_media_byterange.m3u8", "apple_wwdc21_10143_atmos_master.m3u8", "hlsjs_spaces_in_uri.m3u8",
        ] {
            let text = try loader.string("hls/corpus/\(file)")
            let crlf = text.replacingOccurrences(of: "\n", with: "\r\n")
            let options = HLSParser.Options(playlistURL: CorpusCase.base)
            let a = try HLSParser(options: options).parse(text)
            let b = try HLSParser(options: options).parse(crlf)
            #expect(a == b, "\(file)")
            #expect(!HLSWriter.write(b.playlist).contains("\r"))
        }
    }

    @Test("a byte order mark fails by default and is a warning when allowed")
    func byteOrderMark() throws {
        let data = try loader.data("hls/corpus/derived_bom_byterange.m3u8")
        #expect(throws: HLSParseError(.byteOrderMark, line: 1, text: "")) { try HLSParser().parse(data) }
        let allowed = try HLSParser(options: .init(allowsByteOrderMark: true)).parse(data)
        #expect(allowed.warnings.contains(HLSWarning(.byteOrderMark, line: 1)))
    }
}
