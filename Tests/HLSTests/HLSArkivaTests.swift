import Foundation
import HLS
import TestSupport
import Testing

@Suite("HLS arkiva (the audio brief's stream)")
struct HLSArkivaTests {
    let loader = FixtureLoader(bundle: .module)
    let masterURL = URL(literal: "https://media.example/arkiva/hls_index.m3u8")

    func master() throws -> HLSMultivariantPlaylist {
        let result = try HLSParser().parse(try loader.data("hls/arkiva/hls_index.m3u8"))
        guard case .multivariant(let master) = result.playlist else {
            throw HLSParseError(.missingHeader, line: 0, text: "")
        }
        return master
    }

    func media(_ name: String) throws -> HLSMediaPlaylist {
        let result = try HLSParser().parse(try loader.data("hls/arkiva/\(name)"))
        guard case .media(let media) = result.playlist else { throw HLSParseError(.missingHeader, line: 0, text: "") }
        return media
    }

    @Test("the master: two audio groups both named Default, eight variants, six I-frame variants")
    func masterPlaylist() throws {
        let master = try master()
        #expect(master.audioRenditions.map(\.groupID) == ["audio-0", "audio-1"])
        #expect(master.audioRenditions.allSatisfy { $0.name == "Default" })
        #expect(master.variants.count == 8)
        #expect(master.iFrameVariants.count == 6)
        #expect(master.variants.last?.isAudioOnly == true)
        #expect(master.variants[0].codecs == ["avc1.42001e", "mp4a.40.2"])
        #expect(master.variants[0].resolution?.width == 640)
    }

    @Test("the article ChoosingAnAudioRendition's code runs as it shows")
    func articleExample() throws {
        let data = try loader.data("hls/arkiva/hls_index.m3u8")
        var shown: (group: String?, uri: String?, rule: AudioSelection.Rule, why: String)?
        func run() throws {
            // example: begin audio-rendition
            guard case .multivariant(let master) = try HLSParser().parse(data).playlist,
                let selection = master.highestQualityAudio()
            else { return }
            let group = selection.groupID  // "audio-1"
            let uri = selection.uri  // "hls_a256K_v4.m3u8"
            let rule = selection.decidedBy  // .pairedBandwidth
            let why = selection.explanation  // "'audio-1' adds 76000 bit/s to the same video, against 0 for 'audio-0'…"
            // example: end audio-rendition
            shown = (group, uri, rule, why)
        }
        try run()
        let result = try #require(shown)
        #expect(result.group == "audio-1" && result.uri == "hls_a256K_v4.m3u8" && result.rule == .pairedBandwidth)
        #expect(result.why.hasPrefix("'audio-1' adds 76000 bit/s to the same video, against 0 for 'audio-0'"))
    }

    @Test("the highest-quality audio is group audio-1, decided by bit rate, not by name")
    func highestQualityAudio() throws {
        let selection = try #require(try master().highestQualityAudio())
        #expect(selection.groupID == "audio-1")
        #expect(selection.uri == "hls_a256K_v4.m3u8")
        #expect(selection.decidedBy == .pairedBandwidth)
        #expect(selection.ranking == ["audio-1", "audio-0"])
        #expect(selection.explanation.contains("76000"))
    }

    @Test(
        "the media playlists: 23 contiguous byte ranges from 0",
        arguments: [("hls_a192K_v4.m3u8", UInt64(6_116_016)), ("hls_a256K_v4.m3u8", 8_209_772)]
    )
    func mediaPlaylists(name: String, totalBytes: UInt64) throws {
        let playlist = try media(name)
        #expect(playlist.segments.count == 23)
        var next: UInt64 = 0
        for segment in playlist.segments {
            let range = try #require(segment.byteRange)
            #expect(range.offset == next)
            next = range.end
        }
        #expect(next == totalBytes)
        #expect(playlist.trailingTags.isEmpty)
        #expect(playlist.segments[0].precedingTags == ["EXT-X-ALLOW-CACHE:YES"])
        if name == "hls_a256K_v4.m3u8" { #expect(playlist.segments[0].byteRange?.length == 363_780) }
    }

    @Test("measured from byte ranges, the 256K rendition is about 289 kbit/s against 215")
    func measuredBitrates() throws {
        let low = try #require(try media("hls_a192K_v4.m3u8").averageBitrateFromByteRanges)
        let high = try #require(try media("hls_a256K_v4.m3u8").averageBitrateFromByteRanges)
        #expect((210_000...220_000).contains(low))
        #expect((284_000...294_000).contains(high))
    }

    @Test("with no evidence in the master, the choice is measured from the media playlists")
    func measurementWhenNoEvidence() async throws {
        // The arkiva renditions without any variant to compare them by.
        let bare = HLSMultivariantPlaylist(renditions: try master().renditions)
        #expect(bare.highestQualityAudio()?.decidedBy == .documentOrder)
        let loader = self.loader
        let selection = try await bare.highestQualityAudio(playlistURL: masterURL) { url in
            try loader.data("hls/arkiva/\(url.lastPathComponent)")
        }
        #expect(selection?.groupID == "audio-1")
        #expect(selection?.decidedBy == .measuredBitrate)
    }

    /// Each hand-broken file decided by RFC 8216 (see the article "Choosing an audio rendition").
    @Test(
        "the broken arkiva files, each decided by the RFC",
        arguments: [
            ("empty.m3u8", "missingHeader"),
            ("invalid.m3u8", "missingHeader"),
            ("hls_a192K_v4_invalid_target_duration.m3u8", "invalidTagValue"),
            ("hls_a192K_v4_invalid_track_data_version.m3u8", "invalidTagValue"),
            ("hls_a192K_v4_missing_target_duration.m3u8", "missingTargetDuration"),
            ("hls_a192K_v4_no_track_data_headers.m3u8", "missingTargetDuration"),
            ("invalid_track_missing_group_id.m3u8", "missingAttribute"),
            ("invalid_track_missing_type.m3u8", "missingAttribute"),
            ("invalid_track_unknown_type.m3u8", "invalidAttribute"),
            ("hls_index_invalid_media_sequence.m3u8", "accepted"),
            ("hls_index_invalid_track.m3u8", "accepted"),
            ("hls_index_missing_allow_cache.m3u8", "accepted"),
            ("hls_index_missing_target_duration.m3u8", "accepted"),
            ("hls_index_no_track_data_headers.m3u8", "accepted"),
        ]
    )
    func broken(file: String, expected: String) throws {
        let data = try loader.data("hls/arkiva-broken/\(file)")
        do {
            _ = try HLSParser().parse(data)
            #expect(expected == "accepted")
        } catch {
            let kind = String(describing: error.kind).prefix { $0 != "(" }
            #expect(String(kind) == expected, "\(error)")
        }
    }

    @Test(
        "codec tiers rank as the article lists them, and E-AC-3 with Atmos (ec+3) is audio of E-AC-3's tier",
        arguments: [
            ("mp4a.40.29", 1), ("mp4a.40.5", 2), ("mp4a.40.2", 3), ("opus", 4), ("ac-3", 6), ("ec-3", 7),
            ("ec+3", 7), ("EC+3", 7), ("ac-4.02.01.01", 8), ("fLaC", 9), ("alac", 9), ("avc1.64001f", -1),
        ] as [(String, Int)])
    func codecTier(codec: String, tier: Int) {
        #expect(HLSCodec.audioTier(codec) == tier)
        #expect(HLSCodec.isAudio(codec) == (tier >= 0))
    }

    /// A master with an Opus group that ranks first (more BANDWIDTH), an AAC group, and a group
    /// that declares no codecs, in that order.
    static let codecChoice = """
        #EXTM3U
        #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="opus",NAME="Opus",URI="opus.m3u8"
        #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac",NAME="AAC",URI="aac.m3u8"
        #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="plain",NAME="Plain",URI="plain.m3u8"
        #EXT-X-STREAM-INF:BANDWIDTH=900000,CODECS="avc1.64001f,opus",AUDIO="opus"
        v.m3u8
        #EXT-X-STREAM-INF:BANDWIDTH=500000,CODECS="avc1.64001f,mp4a.40.2",AUDIO="aac"
        v.m3u8
        #EXT-X-STREAM-INF:BANDWIDTH=100000,AUDIO="plain"
        v.m3u8
        """

    @Test(
        "RFC 8216 §4.4.6.2: groups whose variants declare an audio codec the app refuses are left out before ranking; one declaring none stays",
        arguments: [
            (["avc1.64001f", "opus", "mp4a.40.2"], "opus"), (["avc1.64001f", "mp4a.40.2"], "aac"),
            (["avc1.64001f"], "plain"),
        ] as [([String], String)])
    func supportedCodecs(supported: [String], expected: String) throws {
        guard case .multivariant(let master) = try HLSParser().parse(Data(Self.codecChoice.utf8)).playlist else {
            Issue.record("not a multivariant playlist")
            return
        }
        let selection = master.highestQualityAudio(supporting: { supported.contains($0) })
        #expect(selection?.groupID == expected)
        #expect(selection?.ranking.contains("opus") == supported.contains("opus"))
    }

    @Test("muxed audio: the best variant whose codecs are all supported, or none")
    func supportedMuxedVariants() throws {
        let text = """
            #EXTM3U
            #EXT-X-STREAM-INF:BANDWIDTH=900000,CODECS="avc1.64001f,opus"
            high.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=500000,CODECS="avc1.64001f,mp4a.40.2"
            low.m3u8
            """
        guard case .multivariant(let master) = try HLSParser().parse(Data(text.utf8)).playlist else {
            Issue.record("not a multivariant playlist")
            return
        }
        #expect(master.highestQualityAudio()?.uri == "high.m3u8")
        #expect(master.highestQualityAudio(supporting: { $0 != "opus" })?.uri == "low.m3u8")
        #expect(master.highestQualityAudio(supporting: { _ in false }) == nil)
    }
}
