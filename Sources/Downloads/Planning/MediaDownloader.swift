public import Foundation
public import HLS
import HTTPSupport
public import MediaContainers

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What an HLS audio download will fetch.
public struct HLSAudioPlan: Hashable, Sendable {
    /// The audio chosen, and why.
    public var selection: AudioSelection?
    /// The media playlist's URL (after redirects).
    public var mediaPlaylistURL: URL
    /// The parts in file order: each initialisation section where it changes, then the segments.
    public var parts: [DownloadPart]
    /// The keys in effect for each part (empty for clear parts).
    public var keys: [[HLSKey]]
    /// Whether the segments are fragmented MP4 (an `EXT-X-MAP`).
    public var hasInitializationSection: Bool
}

/// Downloads media for offline use: an HLS lesson (video, or its best audio) into one MP4 file,
/// or a single large file.
public struct MediaDownloader<C: Clock>: Sendable where C.Duration == Duration {
    /// The engine that moves the bytes.
    public let engine: DownloadEngine<C>
    /// What becomes of a gap in a lesson's audio where its timestamps jump forward (after a
    /// discontinuity, or where the source lacks frames): kept in the timestamps, the default, or
    /// filled with silent frames (AAC LC, MPEG audio, AC-3 and E-AC-3). See
    /// `SegmentRemuxer.GapPolicy`.
    ///
    /// A paused download resumes with the policy it started with; one that started with
    /// another policy starts again.
    public let audioGaps: SegmentRemuxer.GapPolicy

    /// Creates a downloader over `engine` whose lessons treat audio gaps as `audioGaps` says.
    public init(engine: DownloadEngine<C>, audioGaps: SegmentRemuxer.GapPolicy = .keepTimestamps) {
        self.engine = engine
        self.audioGaps = audioGaps
    }

    // MARK: HLS audio

    /// Downloads the highest-quality audio track of the HLS stream at `masterURL` into one MPEG-4
    /// audio file (name it `.m4a`) that `AVAudioPlayer` and `AVPlayer` open and seek in.
    ///
    /// The master playlist is fetched and parsed, the best audio rendition chosen among the groups
    /// whose declared codecs the file can hold (AAC, MP3, AC-3, E-AC-3; see
    /// `HLSMultivariantPlaylist.highestQualityAudio(preferredLanguages:supporting:)`; when every
    /// group declares another codec, the download fails with `unsupportedCodec` before any
    /// segment is fetched), its media playlist
    /// fetched, and its segments (transport streams, packed audio or fragmented MP4) downloaded
    /// and remuxed in one pass: each segment's frames go straight into the file, which appears
    /// at `destination` only when complete. A pause keeps what was done; downloading again
    /// resumes at the segment it stopped in.
    ///
    /// `AES-128` segments are decrypted with keys fetched once each (see
    /// <doc:DownloadingALesson>); other encryption needs a `decryptor`. Live playlists
    /// are refused.
    public func downloadHLSAudio(
        from masterURL: URL, to destination: URL, preferredLanguages: [String] = [],
        decryptor: (any SegmentDecryptor)? = nil
    ) -> DownloadJob {
        DownloadJob(destination: destination) { job in
            let planned = try await planAudioLesson(from: masterURL, preferredLanguages: preferredLanguages)
            try Self.checkDecryption(planned.plan, decryptor: decryptor, url: masterURL)
            return try await LessonRun(
                engine: engine, plan: planned.plan, destination: destination, decryptor: decryptor,
                audioGaps: audioGaps
            )
            .run(job: job)
        }
    }

    /// Works out what ``downloadHLSAudio(from:to:preferredLanguages:decryptor:)`` fetches.
    ///
    /// - Throws: ``DownloadError`` for a playlist that cannot be fetched, parsed or downloaded.
    public func planHLSAudio(
        from masterURL: URL, preferredLanguages: [String] = [], decryptor: (any SegmentDecryptor)? = nil
    ) async throws -> HLSAudioPlan {
        let planned = try await planAudioLesson(from: masterURL, preferredLanguages: preferredLanguages)
        try Self.checkDecryption(planned.plan, decryptor: decryptor, url: masterURL)
        return HLSAudioPlan(
            selection: planned.selection, mediaPlaylistURL: planned.mediaURL,
            parts: planned.plan.parts.map(\.downloadPart), keys: planned.plan.parts.map(\.keys),
            hasInitializationSection: planned.plan.parts.contains { $0.role == .initialization })
    }

    /// The audio lesson at `masterURL`: its best audio rendition (or, without separate audio, the
    /// sound of its highest-bandwidth variant whose codecs the file can hold), kept as sound alone.
    func planAudioLesson(from masterURL: URL, preferredLanguages: [String]) async throws -> (
        plan: LessonPlan, selection: AudioSelection?, mediaURL: URL
    ) {
        let (masterData, masterFinalURL) = try await fetchPlaylist(masterURL)
        var selection: AudioSelection?
        var rendition = SegmentRemuxer.Rendition(kinds: [.audio])
        let mediaURL: URL
        let media: HLSMediaPlaylist
        switch try parse(masterData, url: masterFinalURL) {
        case .media(let direct):
            media = direct
            mediaURL = masterFinalURL
        case .multivariant(let master):
            let engine = engine
            // Only groups whose declared codecs the writer supports are ranked.
            let chosen = try await master.highestQualityAudio(
                playlistURL: masterFinalURL, preferredLanguages: preferredLanguages,
                supporting: CodecSupport.isWritable,
                measuringWith: { url in try await MediaDownloader.get(url, with: engine).0 })
            guard let chosen else {
                if let codec = CodecSupport.firstUnwritable(in: master.variants) {
                    throw DownloadError(.unsupportedCodec(codec), url: masterURL)
                }
                throw DownloadError(.unusablePlaylist(reason: "it has no audio and no variants"), url: masterURL)
            }
            selection = chosen
            if case .rendition(let chosenRendition) = chosen.choice {
                rendition.language = chosenRendition.language
                rendition.name = chosenRendition.name.isEmpty ? nil : chosenRendition.name
            }
            let uri = try resolve(chosen.uri, against: masterFinalURL, playlist: masterURL)
            let (mediaData, finalURL) = try await fetchPlaylist(uri)
            guard case .media(let parsed) = try parse(mediaData, url: finalURL) else {
                throw DownloadError(
                    .unusablePlaylist(reason: "the audio rendition's URI is not a media playlist"), url: finalURL)
            }
            media = parsed
            mediaURL = finalURL
        }
        let entries = try LessonPlan.entries(of: media, at: mediaURL, rendition: 0) { uri, base in
            try resolve(uri, against: base, playlist: mediaURL)
        }
        let plan = LessonPlan(renditions: [entries], settings: [rendition], brand: .audio, bandwidth: nil)
        return (plan, selection, mediaURL)
    }

    /// Refuses parts that MediaCore cannot decrypt itself when no decryptor is given.
    static func checkDecryption(_ plan: LessonPlan, decryptor: (any SegmentDecryptor)?, url: URL) throws(DownloadError)
    {
        guard decryptor == nil,
            let decryption = plan.parts.lazy.compactMap(\.decryption).first(where: { !$0.isBuiltIn })
        else { return }
        throw DownloadError(.encrypted(method: decryption.key.method), url: url)
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
        DownloadJob(destination: destination) { job in
            // Probe with the first byte: a 206 reveals the size; a 200 means ranges are ignored.
            var probe = URLRequest(url: url)
            probe.setValue("bytes=0-0", forHTTPHeaderField: "Range")
            let answer = try await engine.sendWithRetry(probe, part: 0)
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
            try StorageSpace.check(
                total, in: destination.deletingLastPathComponent(), for: destination, fileSystem: engine.fileSystem)
            // Planned lazily: each range is made when the engine reaches it.
            let plan = DownloadPlan(rangesOf: url, total: total, rangeSize: chunkSize)
            return try await engine.run(plan, to: destination, transform: nil, job: job)
        case 200:
            let files = StagingFiles(
                destination: destination, plan: try DownloadPlan([DownloadPart(url: url)]),
                fileSystem: engine.fileSystem)
            try files.createFolder()
            try StorageSpace.check(
                UInt64(data.count), in: destination.deletingLastPathComponent(), for: destination,
                fileSystem: engine.fileSystem)
            do {
                try engine.fileSystem.willPerform(.write, on: destination)
                try data.write(to: destination, options: .atomic)
            } catch {
                throw DownloadError.file("write", error, path: destination.path)
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
    /// The answer to a first request decides, by its bytes and then its content type: an HLS
    /// playlist is downloaded with
    /// ``downloadHLSVideo(from:to:policy:preferredLanguages:audioRenditions:decryptor:subtitles:)`` into an MP4
    /// (an audio-only stream into an M4A); a media file is downloaded as it is with
    /// ``downloadFile(from:to:chunkSize:maximumByteCount:)``, under the extension its format
    /// takes (`mp4`, `m4a`, `mp3`…); anything else (a captive portal's HTML page, JSON, an error
    /// page served with `200 OK`) is ``DownloadError/Kind/notMedia(contentType:found:)`` and
    /// nothing is saved. The first answer's status is read before its body: a `4xx` fails with
    /// ``DownloadError/Kind/httpStatus(_:)`` (401 and 403 are access denied, 404 and 410 not
    /// found), and a `5xx` is retried as any part is. The result's ``DownloadResult/file`` is the file written: `destination`
    /// with the media's extension.
    ///
    /// Everything runs in this one job, so ``DownloadJob/pause()`` keeps what was done, and
    /// downloading again resumes it.
    ///
    /// - Parameters:
    ///   - url: The lesson's media URL (a file, a multivariant or a media playlist).
    ///   - destination: The local file to write; its extension becomes the media's.
    ///   - policy: How an HLS variant is chosen.
    ///   - preferredLanguages: The learner's languages, most preferred first (the device's, by
    ///     default): the audio rendition in the first of them that may be chosen automatically
    ///     (`AUTOSELECT=YES`, RFC 8216 §4.3.4.1) is kept and enabled first, else the `DEFAULT=YES`
    ///     one; among subtitles, the one in the learner's language is the one enabled.
    ///   - audioRenditions: Which of an HLS lesson's audio renditions are kept (the best one by
    ///     default; several become alternatives in one file).
    ///   - decryptor: Decrypts what MediaCore cannot (`SAMPLE-AES`, other key formats); `AES-128`
    ///     needs none.
    ///   - subtitles: What becomes of an HLS lesson's WebVTT subtitles: tracks inside the file
    ///     (the default), files beside it, both, or neither (`[]`).
    public func downloadLesson(
        from url: URL, to destination: URL, policy: VariantPolicy = .default,
        preferredLanguages: [String] = Locale.preferredLanguages,
        audioRenditions: AudioRenditionSelection = .best, decryptor: (any SegmentDecryptor)? = nil,
        subtitles: SubtitleHandling = .embedded
    ) -> DownloadJob {
        DownloadJob(destination: destination) { job in
            var probe = URLRequest(url: url)
            probe.setValue("bytes=0-1023", forHTTPHeaderField: "Range")
            let answer = try await engine.sendWithRetry(probe, part: 0)
            try Self.checkStatus(of: answer.1, url: url)
            switch try LessonContent.classify(answer.0, response: answer.1, url: url) {
            case .media(let fileExtension):
                let file = destination.deletingPathExtension().appendingPathExtension(fileExtension)
                return try await fileRun(from: url, to: file, chunkSize: 4 << 20, probe: answer, job: job)
            case .playlist:
                let whole = Self.wholeBody(answer)
                let planned = try await planVideoLesson(
                    from: url, first: whole, policy: policy, preferredLanguages: preferredLanguages,
                    audio: audioRenditions,
                    subtitles: !subtitles.isEmpty)
                try Self.checkDecryption(planned.plan, decryptor: decryptor, url: url)
                let file = destination.deletingPathExtension().appendingPathExtension(
                    planned.plan.brand == .audio ? "m4a" : "mp4")
                return try await lessonRun(planned.plan, to: file, decryptor: decryptor, subtitles: subtitles)
                    .run(job: job)
            }
        }
    }

    /// Refuses a first answer whose status says the lesson is not there to read, before its
    /// body is sniffed: a 401, 403, 404 or 410 (an expired signed URL, say) is that status, so
    /// its category is access denied or not found, never "not media". A `416` to the first bytes
    /// is an empty resource, which is not media.
    ///
    /// - Throws: ``DownloadError`` of kind ``DownloadError/Kind/httpStatus(_:)`` or
    ///   ``DownloadError/Kind/notMedia(contentType:found:)``.
    static func checkStatus(of response: URLResponse, url: URL) throws(DownloadError) {
        guard let status = (response as? HTTPURLResponse)?.statusCode, !(200...299).contains(status) else { return }
        if status == 416 {
            throw DownloadError(.notMedia(contentType: nil, found: "an empty resource"), part: 0, url: url)
        }
        throw DownloadError(.httpStatus(status), part: 0, url: url)
    }

    /// The body of a probe when it is the whole resource (a `200`, or a `206` whose range is all
    /// of it), for a playlist answered to the first request.
    static func wholeBody(_ answer: (Data, URLResponse)) -> (Data, URL)? {
        guard let http = answer.1 as? HTTPURLResponse, let url = http.url ?? answer.1.url else { return nil }
        if http.statusCode == 200 { return (answer.0, url) }
        if http.statusCode == 206, let header = http.value(forHTTPHeaderField: "Content-Range"),
            let range = ContentRange(header), range.first == 0, let total = range.total, range.last + 1 == total
        {
            return (answer.0, url)
        }
        return nil
    }

    // MARK: Helpers

    /// The playlist's bytes and the URL its URIs resolve against: the final one after redirects.
    ///
    /// An answer that is not a playlist is refused before it is parsed: a page (HTML, JSON, text:
    /// a captive portal's) is ``DownloadError/Kind/notMedia(contentType:found:)``.
    ///
    /// A remote playlist that lands on another scheme (`file:`, `data:`…) is refused: resolving
    /// against a local base would let the playlist name local files.
    func fetchPlaylist(_ url: URL) async throws -> (Data, URL) {
        let (data, response) = try await Self.get(url, with: engine)
        // A page where a playlist should be (a captive portal's, an error page served with 200)
        // is not media, not a malformed playlist; a media file is no playlist either.
        if case .media = try LessonContent.classify(data, response: response, url: url) {
            throw DownloadError(.unusablePlaylist(reason: "it is a media file, not a playlist"), url: url)
        }
        guard let final = response.url else { return (data, url) }
        let requested = url.scheme?.lowercased()
        let landed = final.scheme?.lowercased()
        if requested != landed, landed != "http", landed != "https" {
            // A redirect to another scheme asks for what is never fetched.
            throw DownloadError(.unsupportedURL(scheme: landed ?? ""), url: final)
        }
        return (data, final)
    }

    /// A GET under the engine's idle timeout and retry policy that must answer 200.
    static func get(_ url: URL, with engine: DownloadEngine<C>) async throws -> (Data, URLResponse) {
        let (data, response) = try await engine.sendWithRetry(URLRequest(url: url), part: nil)
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
