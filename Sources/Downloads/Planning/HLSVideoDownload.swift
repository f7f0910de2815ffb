public import Foundation
public import HLS
import MediaContainers

/// How a video download chooses among a multivariant playlist's variants.
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

    /// The variant this policy chooses, or `nil` when there is none.
    ///
    /// - Complexity: O(*n*) in the number of variants.
    public func choose(from variants: [HLSVariant]) -> HLSVariant? {
        let video = variants.filter { !$0.isAudioOnly }
        let candidates = video.isEmpty ? variants : video
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

extension MediaDownloader {
    /// Works out what ``downloadHLSVideo(from:to:policy:preferredLanguages:decryptor:subtitles:)``
    /// fetches: the variant the policy chooses, its media playlist's parts, its separate audio
    /// rendition (the best one, by `HLSMultivariantPlaylist.highestQualityAudio(preferredLanguages:)`
    /// among the variant's group), and its subtitle renditions.
    ///
    /// - Throws: ``DownloadError`` for a playlist that cannot be fetched, parsed or downloaded.
    public func planHLSVideo(
        from url: URL, policy: VariantPolicy = .default, preferredLanguages: [String] = [],
        decryptor: (any SegmentDecryptor)? = nil
    ) async throws -> HLSVideoPlan {
        let (data, finalURL) = try await fetchPlaylist(url)
        switch try parse(data, url: finalURL) {
        case .media(let media):
            let planned = try mediaParts(of: media, at: finalURL, decryptor: decryptor)
            return HLSVideoPlan(
                variant: nil, videoPlaylistURL: finalURL, videoParts: planned.parts, videoKeys: planned.keys,
                audio: nil, subtitles: [], hasInitializationSection: planned.hasInitializationSection)
        case .multivariant(let master):
            guard let variant = policy.choose(from: master.variants) else {
                throw DownloadError(.unusablePlaylist(reason: "it has no variants"), url: url)
            }
            let videoURL = try resolve(variant.uri, against: finalURL, playlist: url)
            let (videoData, videoFinal) = try await fetchPlaylist(videoURL)
            guard case .media(let videoMedia) = try parse(videoData, url: videoFinal) else {
                throw DownloadError(
                    .unusablePlaylist(reason: "the variant's URI is not a media playlist"), url: videoFinal)
            }
            let video = try mediaParts(of: videoMedia, at: videoFinal, decryptor: decryptor)
            var audio: HLSAudioPlan?
            if let group = variant.audioGroup {
                let renditions = master.renditions.filter { $0.type == .audio && $0.groupID == group && $0.uri != nil }
                let groupOnly = HLSMultivariantPlaylist(renditions: renditions)
                if let chosen = groupOnly.highestQualityAudio(preferredLanguages: preferredLanguages),
                    case .rendition = chosen.choice
                {
                    let audioURL = try resolve(chosen.uri, against: finalURL, playlist: url)
                    let (audioData, audioFinal) = try await fetchPlaylist(audioURL)
                    guard case .media(let audioMedia) = try parse(audioData, url: audioFinal) else {
                        throw DownloadError(
                            .unusablePlaylist(reason: "the audio rendition's URI is not a media playlist"),
                            url: audioFinal)
                    }
                    let parts = try mediaParts(of: audioMedia, at: audioFinal, decryptor: decryptor)
                    audio = HLSAudioPlan(
                        selection: chosen, mediaPlaylistURL: audioFinal, parts: parts.parts, keys: parts.keys,
                        hasInitializationSection: parts.hasInitializationSection)
                }
            }
            var subtitles: [HLSVideoPlan.Subtitle] = []
            if let group = variant.subtitlesGroup {
                for rendition in master.renditions where rendition.type == .subtitles && rendition.groupID == group {
                    guard let uri = rendition.uri else { continue }
                    subtitles.append(
                        HLSVideoPlan.Subtitle(
                            language: rendition.language ?? rendition.name,
                            playlistURL: try resolve(uri, against: finalURL, playlist: url)))
                }
            }
            return HLSVideoPlan(
                variant: variant, videoPlaylistURL: videoFinal, videoParts: video.parts, videoKeys: video.keys,
                audio: audio, subtitles: subtitles, hasInitializationSection: video.hasInitializationSection)
        }
    }

    /// Downloads an HLS video lesson into one MP4 file that `AVPlayer`, ExoPlayer and ffmpeg
    /// open and seek in.
    ///
    /// The variant is chosen by `policy`; its segments, and those of its separate audio
    /// rendition when the audio is not muxed, are downloaded with the engine (its concurrency,
    /// retries and resume) into hidden files beside `destination`, then remuxed by
    /// `MediaContainers`' `MediaRemuxer` into one file with a video and an audio track in sync,
    /// renamed into place only when complete. Fragmented MP4 video without separate audio is
    /// written as it is: it is already a fragmented MP4 file. With `subtitles`, each WebVTT
    /// rendition is saved beside the video as `<name>.<language>.vtt`.
    ///
    /// Progress counts the parts of the video and the audio together.
    public func downloadHLSVideo(
        from url: URL, to destination: URL, policy: VariantPolicy = .default, preferredLanguages: [String] = [],
        decryptor: (any SegmentDecryptor)? = nil, subtitles: Bool = false
    ) -> DownloadJob {
        DownloadJob { job in
            let plan = try await planHLSVideo(
                from: url, policy: policy, preferredLanguages: preferredLanguages, decryptor: decryptor)
            let folder = destination.deletingLastPathComponent()
            let total = plan.videoParts.count + (plan.audio?.parts.count ?? 0)
            if plan.hasInitializationSection, plan.audio == nil {
                let result = try await engine.run(
                    plan.videoParts, to: destination, transform: Self.decrypting(decryptor, keys: plan.videoKeys),
                    job: job)
                if subtitles { try await saveSubtitles(plan.subtitles, beside: destination) }
                return result
            }
            let videoFile = folder.appendingPathComponent(".\(destination.lastPathComponent).video")
            let audioFile = folder.appendingPathComponent(".\(destination.lastPathComponent).audio")
            let video = try await engine.run(
                plan.videoParts, to: videoFile, transform: Self.decrypting(decryptor, keys: plan.videoKeys), job: job,
                phase: .init(totalParts: total))
            var fetched = video.partsFetched
            var peak = video.peakBufferedBytes
            if let audio = plan.audio {
                let audioResult = try await engine.run(
                    audio.parts, to: audioFile, transform: Self.decrypting(decryptor, keys: audio.keys), job: job,
                    phase: .init(
                        partsBefore: plan.videoParts.count, bytesBefore: video.byteCount, totalParts: total))
                fetched += audioResult.partsFetched
                peak = max(peak, audioResult.peakBufferedBytes)
            }
            defer {
                try? FileManager.default.removeItem(at: videoFile)
                try? FileManager.default.removeItem(at: audioFile)
            }
            let byteCount = try Self.remuxVideo(
                videoFile, audio: plan.audio == nil ? nil : audioFile, to: destination)
            if subtitles { try await saveSubtitles(plan.subtitles, beside: destination) }
            return DownloadResult(
                file: destination, byteCount: byteCount, partsFetched: fetched, peakBufferedBytes: peak)
        }
    }

    /// Remuxes the joined video segments (and separate audio) into an MP4 at `destination`,
    /// through a hidden temporary file renamed into place.
    static func remuxVideo(_ video: URL, audio: URL?, to destination: URL) throws(DownloadError) -> UInt64 {
        try remuxing(into: destination, source: video) { temporary in
            var remuxer = try MediaRemuxer(destination: temporary, audio: audio == nil ? .muxed : .separate)
            for (input, file) in [(MediaRemuxer.Input.video, Optional(video)), (.audio, audio)] {
                guard let file else { continue }
                let handle = try FileHandle(forReadingFrom: file)
                defer { try? handle.close() }
                try remuxer.startSegment(0, of: input)
                while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                    try remuxer.append(chunk, to: input)
                }
            }
            try remuxer.finish()
        }
    }

    /// Saves each subtitle rendition as one WebVTT file beside `destination`: its segments'
    /// cues joined under the first segment's header.
    func saveSubtitles(_ subtitles: [HLSVideoPlan.Subtitle], beside destination: URL) async throws {
        let base = destination.deletingPathExtension()
        for subtitle in subtitles {
            let (data, finalURL) = try await fetchPlaylist(subtitle.playlistURL)
            guard case .media(let media) = try parse(data, url: finalURL) else { continue }
            var text = ""
            for (index, segment) in media.segments.enumerated() {
                let url = try resolve(segment.uri, against: finalURL, playlist: finalURL)
                let body = String(decoding: try await Self.get(url, with: engine).0, as: UTF8.self)
                text += index == 0 ? body : Self.cues(of: body)
                if !text.hasSuffix("\n") { text += "\n" }
            }
            let safe = String(
                subtitle.language.unicodeScalars.prefix(16).map { scalar -> Character in
                    scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "-"
                        ? Character(scalar) : "_"
                })
            let file = base.appendingPathExtension("\(safe).vtt")
            do {
                try Data(text.utf8).write(to: file, options: .atomic)
            } catch {
                throw DownloadError(.file(operation: "write", reason: error.localizedDescription), path: file.path)
            }
        }
    }

    /// A WebVTT segment without its header block (`WEBVTT` and the lines up to the first blank
    /// line, such as `X-TIMESTAMP-MAP`): its cues, to join after the first segment's.
    static func cues(of segment: String) -> String {
        let lines = segment.split(separator: "\n", omittingEmptySubsequences: false)
        guard let first = lines.first, first.hasPrefix("WEBVTT") || first.hasPrefix("\u{FEFF}WEBVTT") else {
            return segment
        }
        guard let blank = lines.firstIndex(where: { $0.trimmingCharacters(in: .whitespaces).isEmpty }) else {
            return ""
        }
        return "\n" + lines[blank...].joined(separator: "\n")
    }
}
