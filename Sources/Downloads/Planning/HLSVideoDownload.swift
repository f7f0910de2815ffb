public import Foundation
public import HLS
import MediaContainers

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How a video download chooses among a multivariant playlist's variants.
///
/// Only variants whose `CODECS` the download can write into its file are considered (H.264 and
/// HEVC video; AAC, MP3, AC-3 and E-AC-3 audio; a variant without `CODECS` counts as writable);
/// the policy chooses among those. When none is writable, the download fails with
/// ``DownloadError/Kind/unsupportedCodec(_:)`` before fetching a segment. H.264 and HEVC are not
/// ranked against each other: among variants of one resolution, the higher `BANDWIDTH` wins,
/// whatever its video codec.
public enum VariantPolicy: Sendable, Hashable {
    /// The variant of the highest peak bandwidth at or under `bitsPerSecond`; the leanest one
    /// when none is that lean.
    case highestBandwidth(atMost: UInt64)
    /// The variant of the largest resolution that fits in `width` × `height` (either
    /// orientation), the highest bandwidth among equals; the smallest one when none fits.
    /// Variants without a resolution count as fitting, with no pixels.
    case largestResolution(fittingWidth: Int, height: Int)

    /// 1080p at most: sharp on any phone or tablet, and a sensible size to keep offline.
    public static let `default` = VariantPolicy.largestResolution(fittingWidth: 1_920, height: 1_080)

    /// The variant this policy chooses among the writable ones, or `nil` when there is none.
    ///
    /// - Complexity: O(*n*) in the number of variants.
    public func choose(from variants: [HLSVariant]) -> HLSVariant? {
        let writable = variants.filter { $0.codecs.allSatisfy(CodecSupport.isWritable) }
        let video = writable.filter { !$0.isAudioOnly }
        let candidates = video.isEmpty ? writable : video
        switch self {
        case .highestBandwidth(let limit):
            let fitting = candidates.filter { $0.bandwidth <= limit }
            return fitting.max { $0.bandwidth < $1.bandwidth } ?? candidates.min { $0.bandwidth < $1.bandwidth }
        case .largestResolution(let width, let height):
            func pixels(_ variant: HLSVariant) -> Int { variant.resolution.map { $0.width * $0.height } ?? 0 }
            func fits(_ variant: HLSVariant) -> Bool {
                guard let size = variant.resolution else { return true }
                let long = max(size.width, size.height)
                let short = min(size.width, size.height)
                return long <= max(width, height) && short <= min(width, height)
            }
            let fitting = candidates.filter(fits)
            let ranked = { (lhs: HLSVariant, rhs: HLSVariant) -> Bool in
                (pixels(lhs), lhs.bandwidth) < (pixels(rhs), rhs.bandwidth)
            }
            return fitting.max(by: ranked) ?? candidates.min(by: ranked)
        }
    }
}

/// The codecs, as `CODECS` names them (RFC 6381), that a lesson download writes into its file.
enum CodecSupport {
    /// The first `CODECS` entry of `variants` the writer cannot hold, for the error that names it.
    static func firstUnwritable(in variants: [HLSVariant]) -> String? {
        variants.lazy.flatMap(\.codecs).first { !isWritable($0) }
    }

    /// Whether a `CODECS` entry names a codec the remuxer writes: `avc1`/`avc3` (H.264),
    /// `hvc1`/`hev1` (HEVC), `mp4a.40` and `mp4a.40.*` (MPEG-4 AAC), `mp4a.66`, `mp4a.67` and
    /// `mp4a.68` (MPEG-2 AAC), `mp4a.69`/`mp4a.6B`/`mp4a.40.34` (MP3), `ac-3`,
    /// `ec-3` and `ec+3` (E-AC-3 carrying Atmos as joint object coding: an E-AC-3 stream, written
    /// in an `ec-3` sample entry, whose extension a decoder without Atmos ignores); subtitle and
    /// caption codecs (`wvtt`, `stpp`, `c608`) are not media of the file and count as writable.
    static func isWritable(_ codec: String) -> Bool {
        let lower = codec.lowercased().trimmingCharacters(in: .whitespaces)
        for prefix in [
            "avc1", "avc3", "hvc1", "hev1", "mp4a.40.", "ac-3", "ec-3", "ec+3", "wvtt", "stpp", "c608", "tx3g",
        ]
        where lower.hasPrefix(prefix) {
            return true
        }
        return ["mp4a.40", "mp4a.66", "mp4a.67", "mp4a.68", "mp4a.69", "mp4a.6b", "mp4a.6b.0"].contains(lower)
    }
}

/// What an HLS video download will fetch.
public struct HLSVideoPlan: Hashable, Sendable {
    /// The variant chosen (`nil` when the URL was a media playlist).
    public var variant: HLSVariant?
    /// The video media playlist's URL (after redirects).
    public var videoPlaylistURL: URL
    /// The video's parts in file order.
    public var videoParts: [DownloadPart]
    /// The keys in effect for each video part.
    public var videoKeys: [[HLSKey]]
    /// The separate audio rendition chosen for the variant, when its audio is not muxed.
    public var audio: HLSAudioPlan?
    /// The subtitle renditions of the variant: language (or name) and media playlist URL.
    public var subtitles: [Subtitle]
    /// Whether the video is fragmented MP4 (an `EXT-X-MAP`).
    public var hasInitializationSection: Bool

    /// A subtitle rendition to save beside the video.
    public struct Subtitle: Hashable, Sendable {
        /// The rendition's language, or its name when it has none.
        public var language: String
        /// Its WebVTT media playlist.
        public var playlistURL: URL
    }
}

/// What becomes of a video lesson's WebVTT subtitle renditions (the `EXT-X-MEDIA` tags of
/// `TYPE=SUBTITLES` in its variant's group).
///
/// Every rendition of the group is kept. Embedded, each becomes a subtitle track of the file
/// (3GPP timed text, `tx3g`, ISO/IEC 14496-17): its `LANGUAGE` in `mdhd` and `elng`, its `NAME` as
/// the track's name, `FORCED=YES` marked forced, cues placed on the file's timeline by each
/// segment's `X-TIMESTAMP-MAP` and repeated cues kept once, so AVPlayer lists them in its
/// legible media-selection menu offline. A sidecar file is WebVTT on the same timeline, for
/// players that read subtitles beside a file. A rendition that cannot be fetched never fails the
/// lesson: ``DownloadResult/omissions`` says which and why.
public struct SubtitleHandling: OptionSet, Sendable, Hashable {
    /// The option bits.
    public let rawValue: Int

    /// Creates options from their bits.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// Each rendition becomes a subtitle track inside the file.
    public static let embedded = SubtitleHandling(rawValue: 1)
    /// Each rendition is also saved beside the file as `<name>.<language>.vtt`
    /// (`<name>.<language>.forced.vtt` for a forced one), its times on the file's timeline.
    public static let sidecarFiles = SubtitleHandling(rawValue: 2)
}

/// Which of a video lesson's separate audio renditions (the `EXT-X-MEDIA` tags of `TYPE=AUDIO`
/// in its variant's group) a download keeps.
///
/// Several renditions become tracks of one alternate group (ISO/IEC 14496-12 §8.3.2), each with
/// its `LANGUAGE` in `mdhd` and `elng` and its `NAME` as the track's name; the learner's (else the
/// `DEFAULT=YES` one) is enabled and the others are not, so a player plays one and lists the
/// others in its media-selection menu, offline. A rendition that is the variant's own media (no
/// `URI`, or one that resolves or redirects to the variant's playlist) is that media: it is
/// fetched and written once.
public enum AudioRenditionSelection: Sendable, Hashable {
    /// The one that suits the learner best, by RFC 8216's rules (§4.3.4.1): the first of the
    /// preferred languages among the renditions that may be chosen automatically
    /// (`AUTOSELECT=YES`), else the `DEFAULT=YES` one
    /// (`HLSMultivariantPlaylist.preferredRendition(among:preferredLanguages:primaryLanguage:)`).
    case best
    /// Every rendition of the group.
    case all
    /// The renditions in these languages (BCP 47 tags, matched by their primary language:
    /// `en` keeps `en-US` and `en-GB`); when none matches, the best one.
    case languages([String])
}

extension MediaDownloader {
    /// Works out what ``downloadHLSVideo(from:to:policy:preferredLanguages:audioRenditions:decryptor:subtitles:)``
    /// fetches: the variant the policy chooses, its media playlist's parts, its separate audio
    /// rendition (the one that suits `preferredLanguages` best among the variant's group, as
    /// ``AudioRenditionSelection/best`` chooses it; `nil` when that is the variant's own media),
    /// and its subtitle renditions. For an audio-only lesson whose variant is a rendition of its
    /// group, `videoParts` are the parts of the learner's audio (the file's first track).
    ///
    /// - Throws: ``DownloadError`` for a playlist that cannot be fetched, parsed or downloaded.
    public func planHLSVideo(
        from url: URL, policy: VariantPolicy = .default, preferredLanguages: [String] = [],
        decryptor: (any SegmentDecryptor)? = nil
    ) async throws -> HLSVideoPlan {
        let planned = try await planVideoLesson(
            from: url, first: nil, policy: policy, preferredLanguages: preferredLanguages, audio: .best,
            subtitles: true)
        try Self.checkDecryption(planned.plan, decryptor: decryptor, url: url)
        let video = planned.plan.parts.filter { $0.rendition == 0 }
        let audio = planned.plan.parts.filter { $0.rendition == planned.audioRendition && $0.rendition != 0 }
        return HLSVideoPlan(
            variant: planned.plan.variant, videoPlaylistURL: planned.videoURL, videoParts: video.map(\.downloadPart),
            videoKeys: video.map(\.keys),
            audio: planned.audioURL.map { audioURL in
                HLSAudioPlan(
                    selection: planned.audioSelection, mediaPlaylistURL: audioURL, parts: audio.map(\.downloadPart),
                    keys: audio.map(\.keys), hasInitializationSection: audio.contains { $0.role == .initialization })
            },
            subtitles: planned.plan.subtitles.map {
                HLSVideoPlan.Subtitle(language: $0.label, playlistURL: $0.playlistURL)
            },
            hasInitializationSection: video.contains { $0.role == .initialization })
    }

    /// Downloads an HLS video lesson into one MP4 file that `AVPlayer`, ExoPlayer and ffmpeg open
    /// and seek in.
    ///
    /// The variant is chosen by `policy`. Its segments and those of its separate audio rendition
    /// (when the audio is not muxed) are fetched in one pass, interleaved by time, with the
    /// engine's transfers and retries; each segment is remuxed when its turn comes, straight into
    /// the file's media data, and the file appears at `destination` only when complete. Whatever
    /// the segments are (transport streams, packed audio, fragmented MP4), the file is an MP4 with
    /// sample tables. A pause, a crash or a failure keeps what was done; the next download of the
    /// same lesson resumes at the segment it stopped in. `subtitles` says what becomes of the
    /// WebVTT renditions (``SubtitleHandling``: tracks inside the file by default); one that
    /// cannot be fetched is reported in ``DownloadResult/omissions``, never a failure of the
    /// lesson. `audioRenditions` keeps one audio rendition (the best, by default) or several, as
    /// alternatives in one file.
    ///
    /// `AES-128` segments and initialisation sections are decrypted as they arrive, with each
    /// key fetched once before anything is written; other encryption needs a `decryptor`.
    public func downloadHLSVideo(
        from url: URL, to destination: URL, policy: VariantPolicy = .default, preferredLanguages: [String] = [],
        audioRenditions: AudioRenditionSelection = .best, decryptor: (any SegmentDecryptor)? = nil,
        subtitles: SubtitleHandling = .embedded
    ) -> DownloadJob {
        DownloadJob(destination: destination) { job in
            let planned = try await planVideoLesson(
                from: url, first: nil, policy: policy, preferredLanguages: preferredLanguages, audio: audioRenditions,
                subtitles: !subtitles.isEmpty)
            try Self.checkDecryption(planned.plan, decryptor: decryptor, url: url)
            return try await lessonRun(planned.plan, to: destination, decryptor: decryptor, subtitles: subtitles)
                .run(job: job)
        }
    }

    /// The run of a planned lesson, its subtitles fetched through this downloader.
    func lessonRun(
        _ plan: LessonPlan, to destination: URL, decryptor: (any SegmentDecryptor)?, subtitles: SubtitleHandling
    ) -> LessonRun<C> {
        let downloader = self
        return LessonRun(
            engine: engine.readingStagedBodies(for: destination), plan: plan, destination: destination,
            decryptor: decryptor, audioGaps: audioGaps,
            subtitles: subtitles,
            subtitleCues: { try await downloader.subtitleCues(of: $0, decryptor: decryptor) })
    }

    /// A planned video lesson and where its playlists were.
    struct PlannedVideo {
        var plan: LessonPlan
        var videoURL: URL
        var audioURL: URL?
        var audioSelection: AudioSelection?
        /// The rendition index of the best audio when it is a separate rendition.
        var audioRendition: Int?
    }

    /// Plans the video lesson at `url`: its playlist (already fetched as `first`, or fetched now),
    /// the variant, its media playlist, its separate audio rendition and its subtitles.
    func planVideoLesson(
        from url: URL, first: (Data, URL)?, policy: VariantPolicy, preferredLanguages: [String],
        audio: AudioRenditionSelection, subtitles: Bool
    ) async throws -> PlannedVideo {
        let fetched: (Data, URL)
        if let first { fetched = first } else { fetched = try await fetchPlaylist(url) }
        let (data, finalURL) = fetched
        switch try parse(data, url: finalURL) {
        case .media(let media):
            let entries = try LessonPlan.entries(of: media, at: finalURL, rendition: 0) { uri, base in
                try resolve(uri, against: base, playlist: finalURL)
            }
            let plan = LessonPlan(
                renditions: [entries], settings: [SegmentRemuxer.Rendition()], brand: .movie, bandwidth: nil)
            return PlannedVideo(plan: plan, videoURL: finalURL)
        case .multivariant(let master):
            guard let variant = policy.choose(from: master.variants) else {
                if let codec = CodecSupport.firstUnwritable(in: master.variants) {
                    throw DownloadError(.unsupportedCodec(codec), url: url)
                }
                throw DownloadError(.unusablePlaylist(reason: "it has no variants"), url: url)
            }
            let videoURL = try resolve(variant.uri, against: finalURL, playlist: url)
            let (videoData, videoFinal) = try await fetchPlaylist(videoURL)
            guard case .media(let videoMedia) = try parse(videoData, url: videoFinal) else {
                throw DownloadError(
                    .unusablePlaylist(reason: "the variant's URI is not a media playlist"), url: videoFinal)
            }
            var entries = [
                try LessonPlan.entries(of: videoMedia, at: videoFinal, rendition: 0) { uri, base in
                    try resolve(uri, against: base, playlist: videoFinal)
                }
            ]
            var settings = [SegmentRemuxer.Rendition()]
            var audioURL: URL?
            var audioSelection: AudioSelection?
            var audioIndex: Int?
            if let group = variant.audioGroup {
                let renditions = master.renditions.filter { $0.type == .audio && $0.groupID == group }
                let groupOnly = HLSMultivariantPlaylist(
                    renditions: renditions.filter { $0.uri != nil }, variants: [variant])
                if let best = HLSMultivariantPlaylist.preferredRendition(
                    among: renditions, preferredLanguages: preferredLanguages, primaryLanguage: Languages.isoCode)
                {
                    let variantEntries = entries[0]
                    let variantMedia = MediaIdentity(variantEntries.map(\.part))
                    // Where the variant's media playlist lives, and whether a rendition names it
                    // (no URI, RFC 8216 §4.3.4.1, or a URI that resolves there).
                    let variantLocations: Set<MediaLocation> = [MediaLocation(videoURL), MediaLocation(videoFinal)]
                    func namesVariant(_ rendition: HLSRendition) -> Bool {
                        guard let uri = rendition.uri else { return true }
                        guard let url = try? resolve(uri, against: finalURL, playlist: url) else { return false }
                        return variantLocations.contains(MediaLocation(url))
                    }
                    let kept = Self.audioRenditions(renditions, best: best, selection: audio)
                    // An audio-only variant whose media its group describes is one of the group's
                    // audios: the renditions kept make the lesson, the learner's first, and the
                    // variant's media is written only as the rendition it is. A video variant
                    // keeps its pictures first; its muxed audio, when its group describes it, is
                    // a rendition like the others.
                    let audioOnly = variant.isAudioOnly && renditions.contains(where: namesVariant)
                    if audioOnly {
                        entries = []
                        settings = []
                    }
                    var planned: [MediaIdentity: Int] = audioOnly ? [:] : [variantMedia: 0]
                    var fetched: [MediaLocation: Int] = [:]
                    var hasDefaultAudio = false
                    for rendition in kept {
                        // The media of this rendition: the variant's own (already parsed), or its playlist.
                        var media: [(part: LessonPlan.Part, start: Double)]
                        var renditionURL: URL?
                        if namesVariant(rendition) {
                            media = variantEntries
                        } else {
                            guard let uri = rendition.uri else { continue }
                            let url = try resolve(uri, against: finalURL, playlist: url)
                            if fetched[MediaLocation(url)] != nil { continue }
                            let (audioData, audioFinal) = try await fetchPlaylist(url)
                            if fetched[MediaLocation(audioFinal)] != nil { continue }
                            guard case .media(let audioMedia) = try parse(audioData, url: audioFinal) else {
                                throw DownloadError(
                                    .unusablePlaylist(reason: "the audio rendition's URI is not a media playlist"),
                                    url: audioFinal)
                            }
                            media = try LessonPlan.entries(of: audioMedia, at: audioFinal, rendition: 0) {
                                uri, base in try resolve(uri, against: base, playlist: audioFinal)
                            }
                            renditionURL = audioFinal
                            fetched[MediaLocation(url)] = 0
                            fetched[MediaLocation(audioFinal)] = 0
                        }
                        // The same segments (a redirect to the variant, a playlist spelt with a
                        // query, two renditions of one playlist): the media already planned.
                        let identity = MediaIdentity(media.map(\.part))
                        if let index = planned[identity] {
                            if index == 0, !audioOnly {
                                // The variant's muxed audio: labelled with the rendition's language;
                                // enabled when it is the learner's (kept first).
                                settings[0].language = settings[0].language ?? rendition.language
                                hasDefaultAudio = true
                            }
                            continue
                        }
                        let index = entries.count
                        planned[identity] = index
                        entries.append(
                            media.map { entry in
                                var part = entry.part
                                part.rendition = index
                                return (part, entry.start)
                            })
                        // The first audio kept is the default one: the only audio track enabled.
                        settings.append(
                            SegmentRemuxer.Rendition(
                                language: rendition.language, name: rendition.name.isEmpty ? nil : rendition.name,
                                isDefault: !hasDefaultAudio, kinds: [.audio]))
                        if !hasDefaultAudio, !audioOnly {
                            // A separate rendition is the learner's audio: the variant's muxed
                            // audio, when its group describes it, is another language, so it is
                            // not enabled, and with one rendition asked for, not kept.
                            settings[0].isDefault = false
                            if audio == .best, renditions.contains(where: namesVariant) { settings[0].kinds = [.video] }
                        }
                        hasDefaultAudio = true
                        if rendition == best {
                            audioURL = renditionURL
                            audioIndex = index
                            audioSelection =
                                rendition.uri == nil
                                ? nil
                                : groupOnly.highestQualityAudio(
                                    preferredLanguages: preferredLanguages)
                        }
                    }
                    if entries.isEmpty {
                        // Nothing the group names could be kept: the variant's media as it is.
                        entries = [variantEntries]
                        settings = [SegmentRemuxer.Rendition()]
                    }
                }
            }
            var subtitlePlans: [LessonPlan.Subtitle] = []
            if subtitles, let group = variant.subtitlesGroup {
                let offered = master.renditions.filter { $0.type == .subtitles && $0.groupID == group }
                // The one enabled: the learner's language among those that may be chosen
                // automatically, else the group's default (RFC 8216 §4.3.4.1); forced
                // subtitles keep their own mark.
                let unforced = offered.filter { !($0.attributes.boolean("FORCED") ?? false) }
                let enabled = HLSMultivariantPlaylist.preferredRendition(
                    among: unforced.filter { $0.isDefault || Self.speaks($0, preferredLanguages) },
                    preferredLanguages: preferredLanguages, primaryLanguage: Languages.isoCode)
                for rendition in offered {
                    guard let uri = rendition.uri else { continue }
                    let isForced = rendition.attributes.boolean("FORCED") ?? false
                    subtitlePlans.append(
                        LessonPlan.Subtitle(
                            language: rendition.language, name: rendition.name,
                            isDefault: isForced ? rendition.isDefault : rendition == enabled,
                            isForced: rendition.attributes.boolean("FORCED") ?? false,
                            playlistURL: try resolve(uri, against: finalURL, playlist: url)))
                }
            }
            let audioOnly = !master.variants.isEmpty && master.variants.allSatisfy(\.isAudioOnly)
            let plan = LessonPlan(
                renditions: entries, settings: settings, brand: audioOnly ? .audio : .movie,
                bandwidth: variant.averageBandwidth ?? (variant.bandwidth > 0 ? variant.bandwidth : nil),
                subtitles: subtitlePlans, variant: variant)
            return PlannedVideo(
                plan: plan, videoURL: videoFinal, audioURL: audioURL, audioSelection: audioSelection,
                audioRendition: audioIndex)
        }
    }

    /// The audio renditions a download keeps, the one to enable first: `best` alone, or those
    /// `selection` names (one per URI), `best` first when it is among them (it is the learner's
    /// language, or the group's default), else the group's `DEFAULT=YES` one.
    ///
    /// - Complexity: O(*n* × *m*) for *n* renditions and *m* languages.
    static func audioRenditions(
        _ renditions: [HLSRendition], best: HLSRendition, selection: AudioRenditionSelection
    ) -> [HLSRendition] {
        var kept: [HLSRendition]
        switch selection {
        case .best:
            return [best]
        case .all:
            kept = renditions
        case .languages(let tags):
            let wanted = tags.compactMap { Languages.isoCode($0) }
            kept = renditions.filter { rendition in
                guard let code = Languages.isoCode(rendition.language) else { return false }
                return wanted.contains(code)
            }
            if kept.isEmpty { return [best] }
        }
        // One per URI as written (the plan compares where each resolves too); a rendition without
        // URI is the variant's own media, kept once.
        var seen = Set<String>()
        kept = kept.filter { seen.insert($0.uri ?? "").inserted }
        let first = kept.firstIndex(of: best) ?? kept.firstIndex(where: \.isDefault) ?? 0
        if first > 0 { kept.insert(kept.remove(at: first), at: 0) }
        return kept
    }

    /// Whether `rendition` may be chosen for one of `languages`: it is marked `AUTOSELECT=YES`
    /// and its `LANGUAGE` has the primary language of one of them.
    static func speaks(_ rendition: HLSRendition, _ languages: [String]) -> Bool {
        guard rendition.isAutoselect, let code = Languages.isoCode(rendition.language) else { return false }
        return languages.contains { Languages.isoCode($0) == code }
    }

    /// The cues of a subtitle rendition on its media's clock: its media playlist and every
    /// segment fetched through the engine (its retries, allowed schemes and byte-range checks),
    /// encrypted segments decrypted as media segments are (`AES-128` built in, others by
    /// `decryptor`), each segment's cues placed by its own `X-TIMESTAMP-MAP` (RFC 8216 §3.5) and
    /// tagged with its discontinuity sequence number.
    ///
    /// - Throws: ``DownloadError``: a playlist or segment that cannot be fetched or read, a
    ///   segment that is not WebVTT, or encryption nothing here can decrypt.
    func subtitleCues(
        of subtitle: LessonPlan.Subtitle, decryptor: (any SegmentDecryptor)?
    ) async throws -> [SubtitleCue] {
        let (data, finalURL) = try await fetchPlaylist(subtitle.playlistURL)
        guard case .media(let media) = try parse(data, url: finalURL) else {
            throw DownloadError(
                .unusablePlaylist(reason: "the subtitle rendition's URI is not a media playlist"), url: finalURL)
        }
        let entries = try LessonPlan.entries(of: media, at: finalURL, rendition: 0) { uri, base in
            try resolve(uri, against: base, playlist: finalURL)
        }
        let rendition = SegmentRemuxer.Rendition(language: subtitle.language, name: subtitle.name)
        let plan = LessonPlan(renditions: [entries], settings: [rendition], brand: .movie, bandwidth: nil)
        let decryption = LessonDecryption(
            keys: try await LessonKeys.fetch(for: plan, engine: engine), decryptor: decryptor, renditions: [rendition])
        var cues: [SubtitleCue] = []
        for (part, _) in entries {
            guard case .segment(let index) = part.role else { continue }
            let fetched = try await engine.fetchWithRetry(part.downloadPart, index: index).data
            let bytes = try await decryption.decrypt(fetched, part: part, index: index)
            do throws(ContainerError) {
                let document = try WebVTTDocument(parsing: String(decoding: bytes, as: UTF8.self))
                cues += SubtitleCue.cues(of: document, discontinuity: part.discontinuity)
            } catch {
                throw DownloadError(.container(error), part: index, url: part.url)
            }
        }
        return cues
    }

    /// A language or name as a file name part: letters, digits and `-`, at most 16 of them.
    static func safeLanguage(_ language: String) -> String {
        String(
            language.unicodeScalars.prefix(16).map { scalar -> Character in
                scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "-"
                    ? Character(scalar) : "_"
            })
    }
}
