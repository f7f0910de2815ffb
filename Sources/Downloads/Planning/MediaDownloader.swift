public import Foundation
public import HLS
import HTTPSupport
import MediaContainers

#if canImport(FoundationNetworking)
    package import FoundationNetworking
#endif

/// What an HLS audio download will fetch.
public struct HLSAudioPlan: Hashable, Sendable {
    /// The audio chosen, and why.
    public var selection: AudioSelection?
    /// The media playlist's URL (after redirects).
    public var mediaPlaylistURL: URL
    /// The parts in file order: the initialisation section first, then every segment.
    public var parts: [DownloadPart]
    /// The keys in effect for each part (empty for clear parts).
    public var keys: [[HLSKey]]
    /// Whether the first part is an initialisation section (`EXT-X-MAP`): the segments are
    /// fragmented MP4, which joined after their one initialisation section already form a
    /// playable fragmented MP4 file.
    public var hasInitializationSection: Bool
}

/// Downloads media for offline use: an HLS stream's best audio track, or a single large file.
public struct MediaDownloader<C: Clock>: Sendable where C.Duration == Duration {
    /// The engine that moves the bytes.
    public let engine: DownloadEngine<C>

    /// Creates a downloader over `engine`.
    public init(engine: DownloadEngine<C>) {
        self.engine = engine
    }

    // MARK: HLS audio

    /// Downloads the highest-quality audio track of the HLS stream at `masterURL` into one file
    /// that audio players open: an MPEG-4 audio file (name it `.m4a`).
    ///
    /// The master playlist is fetched and parsed, the best audio rendition chosen (see
    /// `HLSMultivariantPlaylist.highestQualityAudio(preferredLanguages:)`), its media playlist
    /// fetched, and its segments downloaded, in order. Segments in MPEG-2 transport streams or
    /// packed audio (ADTS with ID3 timestamps) are then remuxed, by `MediaContainers`'
    /// `AudioRemuxer`, into an `.m4a` with sample tables, which `AVAudioPlayer` and `AVPlayer`
    /// open and seek in (neither plays a local `.ts` or `.m3u8`). Fragmented MP4 segments are
    /// written after their one initialisation section and already form a fragmented MP4 file.
    /// The segments are staged in a hidden file beside `destination` and the result is renamed
    /// into place only when complete: a download is either a playable file or absent.
    ///
    /// Encrypted segments need a `decryptor`; live playlists are refused.
    public func downloadHLSAudio(
        from masterURL: URL, to destination: URL, preferredLanguages: [String] = [],
        decryptor: (any SegmentDecryptor)? = nil
    ) -> DownloadJob {
        DownloadJob { job in
            let plan = try await planHLSAudio(
                from: masterURL, preferredLanguages: preferredLanguages, decryptor: decryptor)
            let transform = Self.decrypting(decryptor, keys: plan.keys)
            guard !plan.hasInitializationSection else {
                return try await engine.run(plan.parts, to: destination, transform: transform, job: job)
            }
            let folder = destination.deletingLastPathComponent()
            let segments = folder.appendingPathComponent(".\(destination.lastPathComponent).segments")
            let downloaded = try await engine.run(plan.parts, to: segments, transform: transform, job: job)
            // The joined segments are only an intermediate: gone whether the remux succeeds or not.
            defer { try? FileManager.default.removeItem(at: segments) }
            let byteCount = try Self.remuxAudio(segments, to: destination)
            return DownloadResult(
                file: destination, byteCount: byteCount, partsFetched: downloaded.partsFetched,
                peakBufferedBytes: downloaded.peakBufferedBytes)
        }
    }

    /// Remuxes the joined segments in `segments` into an `.m4a` at `destination`, reading a
    /// mebibyte at a time, through a hidden temporary file renamed into place.
    ///
    /// - Returns: The size of the file written.
    /// - Throws: ``DownloadError`` of kind ``DownloadError/Kind/container(_:)`` or
    ///   ``DownloadError/Kind/file(operation:reason:)``; nothing is left at `destination`.
    static func remuxAudio(_ segments: URL, to destination: URL) throws(DownloadError) -> UInt64 {
        try remuxing(into: destination, source: segments) { temporary in
            let input = try FileHandle(forReadingFrom: segments)
            defer { try? input.close() }
            var remuxer = try AudioRemuxer(destination: temporary)
            try remuxer.startSegment(0)
            while let chunk = try input.read(upToCount: 1 << 20), !chunk.isEmpty {
                try remuxer.append(chunk)
            }
            try remuxer.finish()
        }
    }

    /// Runs `remux` into a hidden temporary file beside `destination`, then renames it into
    /// place: the destination is the complete file or absent, never half a file.
    ///
    /// - Returns: The size of the file.
    /// - Throws: ``DownloadError`` of kind ``DownloadError/Kind/container(_:)`` (naming `source`)
    ///   or ``DownloadError/Kind/file(operation:reason:)``; the temporary file is removed.
    static func remuxing(into destination: URL, source: URL, _ remux: (URL) throws -> Void) throws(DownloadError)
        -> UInt64
    {
        let temporary = destination.deletingLastPathComponent()
            .appendingPathComponent(".\(destination.lastPathComponent).remux")
        do {
            try remux(temporary)
        } catch let error as ContainerError {
            try? FileManager.default.removeItem(at: temporary)
            throw DownloadError(.container(error), path: source.path)
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw DownloadError(.file(operation: "remux", reason: error.localizedDescription), path: source.path)
        }
        // rename(2) replaces the destination atomically.
        guard rename(temporary.path, destination.path) == 0 else {
            try? FileManager.default.removeItem(at: temporary)
            throw DownloadError(
                .file(operation: "move into place", reason: "rename failed (\(errno))"), path: destination.path)
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? NSNumber)?
            .uint64Value
        return size ?? 0
    }

    /// Works out what ``downloadHLSAudio(from:to:preferredLanguages:decryptor:)`` fetches.
    ///
    /// - Throws: ``DownloadError`` for a playlist that cannot be fetched, parsed or downloaded.
    public func planHLSAudio(
        from masterURL: URL, preferredLanguages: [String] = [], decryptor: (any SegmentDecryptor)? = nil
    )
        async throws -> HLSAudioPlan
    {
        let (masterData, masterFinalURL) = try await fetchPlaylist(masterURL)
        var selection: AudioSelection?
        var mediaURL = masterFinalURL
        var media: HLSMediaPlaylist
        switch try parse(masterData, url: masterFinalURL) {
        case .media(let direct):
            media = direct
        case .multivariant(let master):
            let engine = engine
            let chosen = try await master.highestQualityAudio(
                playlistURL: masterFinalURL, preferredLanguages: preferredLanguages,
                measuringWith: { url in try await MediaDownloader.get(url, with: engine).0 })
            guard let chosen else {
                throw DownloadError(.unusablePlaylist(reason: "it has no audio and no variants"), url: masterURL)
            }
            selection = chosen
            let uri = try resolve(chosen.uri, against: masterFinalURL, playlist: masterURL)
            let (mediaData, finalURL) = try await fetchPlaylist(uri)
            mediaURL = finalURL
            guard case .media(let parsed) = try parse(mediaData, url: finalURL) else {
                throw DownloadError(
                    .unusablePlaylist(reason: "the audio rendition's URI is not a media playlist"), url: finalURL)
            }
            media = parsed
        }
        let planned = try mediaParts(of: media, at: mediaURL, decryptor: decryptor)
        return HLSAudioPlan(
            selection: selection, mediaPlaylistURL: mediaURL, parts: planned.parts, keys: planned.keys,
            hasInitializationSection: planned.hasInitializationSection)
    }

    /// The parts of a media playlist in file order (its one initialisation section first, then
    /// every segment that is not a gap) and the keys in effect for each.
    ///
    /// - Throws: ``DownloadError`` for a live playlist, encrypted segments without a decryptor,
    ///   several initialisation sections, or a URI that cannot be resolved.
    func mediaParts(of media: HLSMediaPlaylist, at mediaURL: URL, decryptor: (any SegmentDecryptor)?) throws
        -> (parts: [DownloadPart], keys: [[HLSKey]], hasInitializationSection: Bool)
    {
        guard media.hasEndList else { throw DownloadError(.liveStream, url: mediaURL) }
        if decryptor == nil,
            let key = media.segments.lazy.flatMap({ $0.keys + ($0.map?.keys ?? []) }).first(where: \.encrypts)
        {
            throw DownloadError(.encrypted(method: key.method), url: mediaURL)
        }
        // The initialisation section is written once, however often EXT-X-MAP repeats it; it is
        // decrypted with the keys in effect where its first EXT-X-MAP stands.
        var maps: [HLSMap] = []
        for map in media.segments.lazy.compactMap(\.map)
        where !maps.contains(where: { $0.uri == map.uri && $0.byteRange == map.byteRange }) {
            maps.append(map)
        }
        guard maps.count <= 1 else {
            throw DownloadError(
                .unusablePlaylist(reason: "\(maps.count) initialisation sections cannot share one file"), url: mediaURL)
        }
        var parts: [DownloadPart] = []
        var keys: [[HLSKey]] = []
        if let map = maps.first {
            parts.append(
                DownloadPart(
                    url: try resolve(map.uri, against: mediaURL, playlist: mediaURL),
                    byteRange: map.byteRange.map(ByteRange.init))
            )
            keys.append(map.keys)
        }
        for segment in media.segments where !segment.isGap {
            parts.append(
                DownloadPart(
                    url: try resolve(segment.uri, against: mediaURL, playlist: mediaURL),
                    byteRange: segment.byteRange.map(ByteRange.init)))
            keys.append(segment.keys)
        }
        return (parts, keys, !maps.isEmpty)
    }

    /// The transform that decrypts the encrypted parts among `keys` with `decryptor`.
    static func decrypting(_ decryptor: (any SegmentDecryptor)?, keys: [[HLSKey]]) -> DownloadEngine<C>.Transform? {
        guard let decryptor else { return nil }
        let transform: DownloadEngine<C>.Transform = { data, index in
            guard index < keys.count, keys[index].contains(where: \.encrypts) else { return data }
            return try await decryptor.decrypt(data, keys: keys[index], partIndex: index)
        }
        return transform
    }

    // MARK: Single files

    /// Downloads one large file by byte ranges, so that concurrent transfers help and an
    /// interrupted download resumes; a server that ignores ranges gets one plain transfer.
    ///
    /// - Parameters:
    ///   - url: The remote file.
    ///   - destination: The local file to write; its partial state lives beside it.
    ///   - chunkSize: The size of each range (4 MiB by default); larger when the file would
    ///     otherwise take more than ``maximumPartCount`` ranges.
    ///   - maximumByteCount: The largest file accepted (64 GiB by default): a larger size from
    ///     the server's `Content-Range` is a ``DownloadError/Kind/tooLarge(bytes:limit:)`` before
    ///     anything is planned or written.
    public func downloadFile(
        from url: URL, to destination: URL, chunkSize: UInt64 = 4 << 20, maximumByteCount: UInt64 = 64 << 30
    ) -> DownloadJob {
        DownloadJob { job in
            // Probe with the first byte: a 206 reveals the size; a 200 means ranges are ignored.
            var probe = URLRequest(url: url)
            probe.setValue("bytes=0-0", forHTTPHeaderField: "Range")
            // A server that ignores ranges sends the whole file in answer to the probe: it is read
            // up to the engine's part cap, under the idle timeout.
            let answer = try await engine.send(probe, part: 0)
            return try await fileRun(
                from: url, to: destination, chunkSize: chunkSize, maximumByteCount: maximumByteCount, probe: answer,
                job: job)
        }
    }

    /// The most ranges one file is split into; a smaller chunk size is enlarged to fit.
    public static var maximumPartCount: Int { Int(DownloadPlan.maximumRangeCount) }

    /// Downloads the file at `url` given the answer to a range probe: by ranges after a `206`,
    /// from the probe's own body after a `200` (a server that ignores ranges sent it whole).
    func fileRun(
        from url: URL, to destination: URL, chunkSize: UInt64, maximumByteCount: UInt64 = 64 << 30,
        probe: (Data, URLResponse), job: DownloadJob
    ) async throws -> DownloadResult {
        let (data, response) = probe
        let http = response as? HTTPURLResponse
        switch http?.statusCode ?? 200 {
        case 206:
            guard let header = http?.value(forHTTPHeaderField: "Content-Range"),
                let total = ContentRange(header)?.total
            else {
                throw DownloadError(
                    .wrongRange(expected: "a range with the total size", received: "no total size"), part: 0,
                    url: url)
            }
            // The server's total is bounded before anything is planned from it.
            guard total <= maximumByteCount else {
                throw DownloadError(.tooLarge(bytes: total, limit: maximumByteCount), part: 0, url: url)
            }
            // Planned lazily: each range is made when the engine reaches it.
            let plan = DownloadPlan(rangesOf: url, total: total, rangeSize: chunkSize)
            return try await engine.run(plan, to: destination, transform: nil, job: job)
        case 200:
            let files = StagingFiles(destination: destination, plan: try DownloadPlan([DownloadPart(url: url)]))
            try files.createFolder()
            do {
                try data.write(to: destination, options: .atomic)
            } catch {
                throw DownloadError(
                    .file(operation: "write", reason: error.localizedDescription), path: destination.path)
            }
            let total = UInt64(data.count)
            job.report(DownloadProgress(bytesWritten: total, partsCompleted: 1, partCount: 1, bytesExpected: total))
            return DownloadResult(file: destination, byteCount: total, partsFetched: 1, peakBufferedBytes: total)
        case let status:
            throw DownloadError(.httpStatus(status), part: 0, url: url)
        }
    }

    // MARK: Any lesson

    /// Downloads a lesson's media, whatever its URL serves, into one local file a player opens.
    ///
    /// The answer to a first request decides: an HLS playlist (by its content type, then by its
    /// first line `#EXTM3U`, then, as a last resort, by a `.m3u8` extension) is downloaded with
    /// ``downloadHLSVideo(from:to:policy:preferredLanguages:decryptor:subtitles:)`` into an MP4
    /// (audio-only streams too); anything else is downloaded as a file with
    /// ``downloadFile(from:to:chunkSize:maximumByteCount:)``. The result's ``DownloadResult/file`` is the file
    /// written: `destination` with the extension `mp4` for HLS, `destination` itself otherwise.
    ///
    /// - Parameters:
    ///   - url: The lesson's media URL (a file, a multivariant or a media playlist).
    ///   - destination: The local file to write; for HLS its extension becomes `mp4`.
    ///   - policy: How an HLS variant is chosen.
    ///   - subtitles: Whether an HLS lesson's WebVTT subtitles are saved beside it.
    public func downloadLesson(
        from url: URL, to destination: URL, policy: VariantPolicy = .default, subtitles: Bool = false
    ) -> DownloadJob {
        DownloadJob { job in
            var probe = URLRequest(url: url)
            probe.setValue("bytes=0-1023", forHTTPHeaderField: "Range")
            let answer = try await engine.send(probe, part: 0)
            guard Self.isPlaylist(answer.0, response: answer.1, url: url) else {
                return try await fileRun(from: url, to: destination, chunkSize: 4 << 20, probe: answer, job: job)
            }
            let file = destination.deletingPathExtension().appendingPathExtension("mp4")
            let video = downloadHLSVideo(from: url, to: file, policy: policy, subtitles: subtitles)
            let forwarding = Task {
                for await progress in video.progress { job.report(progress) }
            }
            let result: Result<DownloadResult, DownloadError> = await withTaskCancellationHandler {
                do throws(DownloadError) {
                    return .success(try await video.result())
                } catch {
                    return .failure(error)
                }
            } onCancel: {
                if job.isPauseRequested { video.pause() } else { video.cancel() }
            }
            // The inner job's progress ends with it: forward every report, the last included.
            await forwarding.value
            return try result.get()
        }
    }

    /// Whether a response is an HLS playlist: by its content type (RFC 8216 §4 names
    /// `application/vnd.apple.mpegurl` and `audio/mpegurl`), then by its first line, then by the
    /// URL's extension.
    package static func isPlaylist(_ body: Data, response: URLResponse, url: URL) -> Bool {
        let type =
            (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Type")?
            .split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        if ["application/vnd.apple.mpegurl", "application/x-mpegurl", "audio/mpegurl", "audio/x-mpegurl"]
            .contains(type)
        {
            return true
        }
        var text = String(decoding: body.prefix(64), as: UTF8.self)
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        if text.trimmingCharacters(in: .whitespacesAndNewlines).hasPrefix("#EXTM3U") { return true }
        if type.hasPrefix("video/") || type.hasPrefix("audio/") || type.hasPrefix("image/") { return false }
        return ["m3u8", "m3u"].contains(url.pathExtension.lowercased()) && body.isEmpty
    }

    // MARK: Helpers

    /// The playlist's bytes and the URL its URIs resolve against: the final one after redirects.
    ///
    /// A remote playlist that lands on another scheme (`file:`, `data:`…) is refused: resolving
    /// against a local base would let the playlist name local files.
    func fetchPlaylist(_ url: URL) async throws -> (Data, URL) {
        let (data, response) = try await Self.get(url, with: engine)
        guard let final = response.url else { return (data, url) }
        let requested = url.scheme?.lowercased()
        let landed = final.scheme?.lowercased()
        if requested != landed, landed != "http", landed != "https" {
            throw DownloadError(
                .unusablePlaylist(reason: "it redirected to \(final.absoluteString), whose scheme is not followed"),
                url: url)
        }
        return (data, final)
    }

    /// A GET under the engine's part timeout that must answer 200.
    static func get(_ url: URL, with engine: DownloadEngine<C>) async throws -> (Data, URLResponse) {
        let (data, response) = try await engine.send(URLRequest(url: url), part: nil)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 200
        guard status == 200 else { throw DownloadError(.httpStatus(status), url: url) }
        return (data, response)
    }

    func parse(_ data: Data, url: URL) throws -> HLSPlaylist {
        do {
            return try HLSParser(options: .init(playlistURL: url)).parse(data).playlist
        } catch {
            throw DownloadError(.playlist(error), url: url)
        }
    }

    func resolve(_ uri: String, against base: URL, playlist: URL) throws -> URL {
        do {
            return try HLSURIResolver.resolve(uri, against: base)
        } catch {
            throw DownloadError(.uri(error), url: playlist)
        }
    }
}
