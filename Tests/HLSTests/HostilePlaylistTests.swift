import Foundation
import HLS
import TestSupport
import Testing

/// Playlists written to crash a client: every one is a typed error or a sane value, never a trap.
@Suite("HLS under hostile input")
struct HostilePlaylistTests {
    @Test(
        "EXT-X-DEFINE: a long value repeated in one line, or on many lines, stops at the expansion bounds",
        arguments: [
            (String(repeating: "{$v}", count: 1_000) + "\n", "expanded length", 5),
            (String(repeating: "{$v}\n#EXTINF:10,\n", count: 400) + "a.ts\n", "expansion", 5 + 2 * 279),
        ])
    func defineAmplification(body: String, limit: String, line: Int) {
        let value = String(repeating: "x", count: 60_000)
        let text =
            "#EXTM3U\n#EXT-X-DEFINE:NAME=\"v\",VALUE=\"\(value)\"\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\n" + body
        do {
            let parsed = try HLSParser().parse(text)
            Issue.record("parsed \(parsed.warnings)")
        } catch {
            guard case .limitExceeded(let name, _) = error.kind else {
                Issue.record("\(error)")
                return
            }
            #expect(name == limit)
            #expect(error.line == line)
        }
    }

    @Test(
        "RFC 8216 §4.3.2.2: a range whose implied offset puts its end past 2⁶⁴ is an error naming the line",
        arguments: [
            "#EXT-X-BYTERANGE:9000000000000000000@9000000000000000000\nseg.ts\n#EXTINF:1,\n#EXT-X-BYTERANGE:1000000000000000000\nseg.ts\n",
            "#EXT-X-BYTERANGE:9223372036854775807@9223372036854775807\nseg.ts\n#EXTINF:1,\n#EXT-X-BYTERANGE:2\nseg.ts\n",
        ])
    func impliedOffsetOverflow(ranges: String) throws {
        let text = "#EXTM3U\n#EXT-X-VERSION:4\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\n" + ranges + "#EXT-X-ENDLIST\n"
        do {
            _ = try HLSParser().parse(text)
            Issue.record("parsed")
        } catch {
            guard case .impossibleByteRange(let reason) = error.kind else {
                Issue.record("\(error)")
                return
            }
            #expect(reason.contains("2⁶⁴"))
            #expect(error.line == 9)
        }
    }

    @Test(
        "a measured bit rate of any size never traps: huge ranges over tiny durations",
        arguments: [
            "#EXTINF:0.000000000000000000001,\n#EXT-X-BYTERANGE:9223372036854775807@9223372036854775807\na.aac\n",
            "#EXTINF:0.000001,\n#EXT-X-BYTERANGE:9223372036854775807@0\na.aac\n",
            "#EXTINF:0,\n#EXT-X-BYTERANGE:1000@0\na.aac\n",
        ])
    func hostileBitrates(segment: String) async throws {
        let media = "#EXTM3U\n#EXT-X-VERSION:4\n#EXT-X-TARGETDURATION:1\n" + segment + "#EXT-X-ENDLIST\n"
        let master = """
            #EXTM3U
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="A",URI="a.m3u8"
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="b",NAME="B",URI="b.m3u8"

            """
        guard case .multivariant(let playlist) = try HLSParser().parse(master).playlist else {
            Issue.record("not a multivariant playlist")
            return
        }
        let base = URL(literal: "https://cdn.example/master.m3u8")
        let selection = try await playlist.highestQualityAudio(playlistURL: base) { url in
            url.lastPathComponent == "a.m3u8"
                ? Data(media.utf8)
                : Data(
                    "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\n#EXT-X-BYTERANGE:1000@0\nb.aac\n#EXT-X-ENDLIST\n"
                        .utf8)
        }
        let chosen = try #require(selection)
        #expect(!chosen.explanation.isEmpty)
        for evidence in chosen.evidence {
            #expect(evidence.measuredBitrate.map(\.isFinite) ?? true)
        }
    }
}
