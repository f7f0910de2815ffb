public import Foundation
public import HLS
public import HTTPSupport
public import MediaContainers

/// How far a download has come.
///
/// Everything is counted in the source's bytes, which is what a transfer moves: for a lesson
/// remuxed from HLS segments that is the segments' bytes, not the MP4's (a few per cent smaller).
public struct DownloadProgress: Hashable, Sendable {
    /// Source bytes received so far: those of parts already done, and those of parts still
    /// arriving, reported as they arrive (at most every 100 ms on the engine's clock). Parts done
    /// before a pause or a crash count too, so it does not drop when a download resumes; it can
    /// step back when a part's transfer fails and is retried.
    public var bytesReceived: UInt64
    /// The source's size: exact when every part's size is known in advance (a file fetched by
    /// ranges, segments with byte ranges), otherwise an estimate (the playlist's bandwidth
    /// times the lesson's duration, refined from the segments done); `nil` when nothing says.
    public var bytesExpected: UInt64?
    /// Whether ``bytesExpected`` is an estimate.
    public var isEstimate: Bool
    /// Bytes written to the destination so far (for a lesson, the MP4 being built).
    public var bytesWritten: UInt64
    /// Parts done so far (segments, or ranges of a file).
    public var partsCompleted: Int
    /// Parts in all.
    public var partCount: Int
    /// The share done, 0…1. It moves within a part as bytes arrive, reaches 1 only when the
    /// download is complete, and never goes back, across a resume included.
    public var fraction: Double

    /// Creates a progress report. `bytesReceived` is `bytesWritten` when not given, and the
    /// fraction is the received share of the expected bytes, or of the parts when no size is
    /// known.
    public init(
        bytesWritten: UInt64, partsCompleted: Int, partCount: Int, bytesExpected: UInt64?, bytesReceived: UInt64? = nil,
        isEstimate: Bool = false, fraction: Double? = nil
    ) {
        self.bytesWritten = bytesWritten
        self.partsCompleted = partsCompleted
        self.partCount = partCount
        self.bytesExpected = bytesExpected
        self.bytesReceived = bytesReceived ?? bytesWritten
        self.isEstimate = isEstimate
        if let fraction {
            self.fraction = min(max(fraction.isFinite ? fraction : 0, 0), 1)
        } else if let expected = bytesExpected, expected > 0 {
            self.fraction = min(1, Double(self.bytesReceived) / Double(expected))
        } else {
            self.fraction = partCount > 0 ? Double(partsCompleted) / Double(partCount) : 0
        }
    }
}

/// What a finished download produced.
public struct DownloadResult: Hashable, Sendable {
    /// The complete file.
    public var file: URL
    /// Its size.
    public var byteCount: UInt64
    /// Parts fetched in this run (fewer than all when resumed).
    public var partsFetched: Int
    /// The most bytes held in memory at once (received but not yet written).
    package var peakBufferedBytes: UInt64
    /// What the file leaves out of the source, and why: a subtitle rendition that could not be
    /// fetched, a stream that is not picture or sound, audio frames where the source's sound
    /// overlapped itself, pictures no player could decode. Empty for most downloads.
    public var omissions: [Omission]

    /// Something a download left out of its file.
    public enum Omission: Hashable, Sendable, CustomStringConvertible {
        /// A subtitle rendition (its language or name) that could not be saved, and why. The
        /// lesson itself is complete; downloading it again tries the subtitles again.
        case subtitles(language: String, reason: String)
        /// A stream or track that is not picture or sound (timed metadata, splice information),
        /// as the source names it.
        case stream(String)
        /// Audio frames left out where the source's sound overlapped what came before by half a
        /// frame or more (its timestamps went back), so that no sound plays twice.
        case overlappingAudio(frames: Int)
        /// Video samples left out because they came before the first picture a decoder can
        /// start from (a source that begins mid-GOP).
        case undecodableVideo(samples: Int)

        /// A sentence saying what was left out.
        public var description: String {
            switch self {
            case .subtitles(let language, let reason): "the \(language) subtitles were not saved: \(reason)"
            case .stream(let name): "\(name) was left out: it is not picture or sound"
            case .overlappingAudio(let frames):
                "\(frames) audio frame\(frames == 1 ? "" : "s") left out where the source's sound overlapped itself"
            case .undecodableVideo(let samples):
                "\(samples) video sample\(samples == 1 ? "" : "s") left out before the first picture a player can start from"
            }
        }

        /// What a remux's report says it left out.
        static func remuxed(ignoredStreams: [String], framesTrimmed: Int, undecodableSamples: Int) -> [Self] {
            ignoredStreams.map { .stream($0) } + (framesTrimmed > 0 ? [.overlappingAudio(frames: framesTrimmed)] : [])
                + (undecodableSamples > 0 ? [.undecodableVideo(samples: undecodableSamples)] : [])
        }
    }

    /// Creates a result.
    package init(
        file: URL, byteCount: UInt64, partsFetched: Int, peakBufferedBytes: UInt64, omissions: [Omission] = []
    ) {
        self.file = file
        self.byteCount = byteCount
        self.partsFetched = partsFetched
        self.peakBufferedBytes = peakBufferedBytes
        self.omissions = omissions
    }
}

/// A failed download as a screen shows it: the ``DownloadError/Category`` a view switches on to
/// choose its words and action, a sentence for logs, and the typed error itself when this launch
/// saw the failure.
///
/// <!-- example: download-failure -->
/// ```swift
/// let words =
///     switch failure.category {
///     case .offline: "You're offline. Retry when you're back online."
///     case .storageFull: "Free up space to download this lesson."
///     default: "This lesson couldn't be downloaded."
///     }
/// ```
///
/// An offline library (`OfflineLessons`' `OfflineLibrary`) keeps the category and the sentence
/// across launches; the typed error (with its URL, status or path) only while the app runs.
public struct DownloadFailure: Hashable, Sendable, Codable, CustomStringConvertible {
    /// What kind of failure it is.
    public var category: DownloadError.Category
    /// A sentence naming the place once and what went wrong, in English, for logs and support.
    public var message: String
    /// The typed error, when the failure happened in this launch.
    public var error: DownloadError?

    /// The failure of `error`.
    public init(_ error: DownloadError) {
        category = error.category
        message = error.description
        self.error = error
    }

    /// A failure known by its category and sentence (one restored from a saved state).
    public init(category: DownloadError.Category, message: String) {
        self.category = category
        self.message = message
        error = nil
    }

    private enum CodingKeys: String, CodingKey {
        case category, message
    }

    /// Reads the category (``DownloadError/Category/other`` when it is one this version does
    /// not know) and the sentence.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        message = try container.decode(String.self, forKey: .message)
        category = (try? container.decodeIfPresent(DownloadError.Category.self, forKey: .category)) ?? .other
        error = nil
    }

    /// Writes the category and the sentence (the typed error is not kept).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(category, forKey: .category)
        try container.encode(message, forKey: .message)
    }

    /// The sentence.
    public var description: String { message }
}

/// Why a download failed, and where: the part (by index and URL), the playlist, or the file.
///
/// Its `localizedDescription` is its ``description``, so a layer that keeps only an error's
/// words keeps these.
public struct DownloadError: LocalizedError, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Hashable, Sendable {
        /// The server answered with an HTTP status that will not change on retry (or kept
        /// answering a transient one until the retries ran out).
        case httpStatus(Int)
        /// A body was shorter or longer than its byte range.
        case wrongLength(expected: UInt64, received: UInt64)
        /// The server sent other bytes than those asked for: `expected` and `received` are the
        /// range asked for and what the answer said it holds.
        case wrongRange(expected: String, received: String)
        /// A part's byte range, or the parts' total size, does not fit in 2⁶⁴ bytes.
        case rangeTooLarge
        /// The server announced or sent `bytes` bytes (a file's size, or a part's body so far),
        /// more than the `limit` the download accepts; the transfer stopped there and nothing
        /// of it was written.
        case tooLarge(bytes: UInt64, limit: UInt64)
        /// The remote resource changed (another `ETag` or `Last-Modified`) during a download that
        /// had already started over once because it had changed.
        case remoteChanged(was: String, now: String)
        /// The request failed before a response arrived, until the retries ran out (a timeout
        /// included), with the transport's own error.
        case transport(HTTPTransportError)
        /// A file operation failed; `operation` names it ("write", "flush", …), `reason` is the
        /// file system's message, and `code` the `errno` it failed with, when the system gave one
        /// (`ENOSPC` for a full disk, `EROFS` or `EACCES` for a folder the app cannot write;
        /// compare with those constants, or make a `POSIXErrorCode` of it): the
        /// ``DownloadError/category`` is decided by the code, never by the message.
        case file(operation: String, reason: String, code: Int32? = nil)
        /// A playlist could not be parsed.
        case playlist(HLSParseError)
        /// A playlist's URI could not be resolved against the playlist's URL.
        case uri(HLSURIError)
        /// A playlist parsed but cannot be downloaded as asked; the reason says why (no audio,
        /// several initialisation sections, a redirect to another scheme…).
        case unusablePlaylist(reason: String)
        /// The downloaded segments could not be remuxed into a playable file.
        case container(ContainerError)
        /// The stream's segments are encrypted with this method, which MediaCore does not
        /// decrypt itself (only `AES-128` with the `identity` key format), and no
        /// ``SegmentDecryptor`` was supplied; nothing was downloaded.
        case encrypted(method: String)
        /// The key server refused an `AES-128` key with this HTTP status (401, 403, 404…); the
        /// error's URL is the key's. Nothing was written.
        case keyRefused(status: Int)
        /// An `AES-128` key answer was `byteCount` bytes long, not 16; nothing was written.
        case invalidKey(byteCount: Int)
        /// A part did not decrypt to media: `reason` says what was found (bad padding, bytes that
        /// are neither a transport stream, ISO base media nor packed audio). The error names the
        /// part; nothing of it was written.
        case decryptionFailed(reason: String)
        /// The playlist is live (no `#EXT-X-ENDLIST`): it has no end to download.
        case liveStream
        /// The download was cancelled; its partial file is removed.
        case cancelled
        /// The download was paused; its partial file is kept for a later resume.
        case paused
        /// Another process (an app extension, another copy of the app) is downloading to the
        /// same destination and holds its lock; nothing was changed. Try again when it ends.
        case destinationInUse
        /// The answer is neither a playlist nor media (a captive portal's HTML page, JSON, an
        /// error page served with `200 OK`): `found` says what it looks like; nothing was saved.
        case notMedia(contentType: String?, found: String)
        /// The destination's volume has `available` bytes free, fewer than the `needed` the
        /// download's estimated size takes; nothing was written.
        case insufficientStorage(needed: UInt64, available: UInt64)
        /// The stream declares a codec (in its playlist's `CODECS`) that cannot be written into
        /// the file, so part of the lesson would be lost; nothing was downloaded.
        case unsupportedCodec(String)
        /// The URL is not one the engine fetches: its `scheme` (empty for a relative link that
        /// nothing resolved) is not `http` or `https`, or another the app allowed
        /// (``DownloadEngine/allowedSchemes``); nothing was sent.
        case unsupportedURL(scheme: String)
    }

    /// What went wrong.
    public var kind: Kind
    /// The index of the part that failed, when one part did.
    public var part: Int?
    /// The URL of the part or playlist concerned.
    public var url: URL?
    /// The local file concerned, for file failures.
    public var path: String?
    /// The wait the server asked for with `Retry-After` (RFC 9110 §10.2.3), when it did.
    public var retryAfter: Duration?

    /// Creates an error.
    public init(_ kind: Kind, part: Int? = nil, url: URL? = nil, path: String? = nil) {
        self.kind = kind
        self.part = part
        self.url = url
        self.path = path
    }

    /// What a screen tells the learner, and what it offers: one of a few categories a view
    /// switches on to choose its words and its action.
    public enum Category: String, Hashable, Sendable, Codable, CaseIterable {
        /// No working connection (not connected, the connection lost, a host not reached, a
        /// timeout): "You're offline", retry when back online.
        case offline
        /// The server failed or answered wrongly (a 5xx, a body of the wrong length, a changed
        /// file, a malformed playlist, a certificate that cannot be trusted): "The server has a
        /// problem", retry later.
        case server
        /// The lesson is not there any more (404, 410): "This lesson is no longer available".
        case notFound
        /// The server refused access (401, 403, a refused key, authentication or a client
        /// certificate required): "You don't have access", sign in again.
        case accessDenied
        /// The device has no room for it (before it starts, or a disk that filled while
        /// writing): "Free up space".
        case storageFull
        /// The folder the download writes to cannot be written: no permission (on iOS, most often
        /// a file protected while the device is locked, a passing state) or a read-only volume.
        case notWritable
        /// The answer is not media (a captive portal's page, segments that do not decrypt or
        /// remux): "This lesson can't be downloaded" (or sign in to the Wi-Fi).
        case notMedia
        /// The lesson is of a kind the library does not download (a live stream, a codec or an
        /// encryption it cannot write, a URL that is not http or https): "This lesson can't be
        /// saved for offline use".
        case unsupported
        /// The download was cancelled: nothing to show as an error.
        case cancelled
        /// The download was paused: it resumes when started again.
        case paused
        /// Anything else: a local file operation that failed, another process downloading to
        /// the same file.
        case other

        /// What a screen offers after a failure of this category.
        public enum Recovery: Hashable, Sendable {
            /// Try again now, or when the device is back online (``DownloadError/Category/offline``).
            case retryWhenOnline
            /// Try again later: the server's side failed.
            case retryLater
            /// Free up space on the device, then try again.
            case freeUpSpace
            /// Sign in again (or to the Wi-Fi, for a page that is not media), then try again.
            case signIn
            /// Nothing the learner can do: the lesson is gone, or cannot be saved offline.
            case none
            /// Nothing to show: the learner stopped it (a cancel, a pause resumes when started again).
            case nothingToShow
        }

        /// A short sentence a screen can show for a failure of this category, in English; an
        /// app that localizes writes its own, switching on the category.
        public var summary: String {
            switch self {
            case .offline: "You're offline. The download goes on when you're back online and try again."
            case .server: "The lesson's server has a problem. Try again later."
            case .notFound: "This lesson is no longer available."
            case .accessDenied: "You don't have access to this lesson. Sign in again, then try again."
            case .storageFull: "There isn't enough space on this device. Free up space, then try again."
            case .notWritable:
                "The app can't save its downloads right now (the device may be locked). Try again later."
            case .notMedia:
                "What arrived isn't this lesson: a Wi-Fi sign-in page, or damaged files. Sign in to the Wi-Fi if it asks, then try again."
            case .unsupported: "This lesson can't be saved for offline viewing."
            case .cancelled: "The download was cancelled."
            case .paused: "The download is paused."
            case .other: "The lesson couldn't be downloaded. Try again."
            }
        }

        /// What a screen offers after a failure of this category.
        public var recovery: Recovery {
            switch self {
            case .offline: .retryWhenOnline
            case .server, .other, .notWritable: .retryLater
            case .storageFull: .freeUpSpace
            case .accessDenied, .notMedia: .signIn
            case .notFound, .unsupported: .none
            case .cancelled, .paused: .nothingToShow
            }
        }
    }

    /// The error's ``Category``.
    ///
    /// Decided by the error's typed cause only (an HTTP status, a `URLError` code, an `errno`,
    /// what the bytes are), never by a message's words.
    public var category: Category {
        switch kind {
        case .httpStatus(let status):
            switch FailingStatus(status) {
            case .notFound: .notFound
            case .accessDenied: .accessDenied
            case .server: .server
            }
        case .transport(let error):
            if error.isConnectivity {
                .offline
            } else if case .cancelled = error.kind {
                .cancelled
            } else if error.isAuthenticationFailure {
                .accessDenied
            } else {
                // Untrusted certificates, TLS failures, bad answers: the server's side.
                .server
            }
        case .uri(let error):
            switch error.kind {
            // A playlist naming a `file:` or `data:` URI asks for what is never fetched.
            case .disallowedScheme, .localFileFromRemotePlaylist: .unsupported
            case .malformed: .server
            }
        case .wrongLength, .wrongRange, .remoteChanged, .playlist, .unusablePlaylist, .tooLarge, .rangeTooLarge:
            .server
        case .keyRefused: .accessDenied
        case .container(let error):
            switch error.kind {
            // A stream the file cannot hold, declared by a segment's program map or an
            // initialisation section's sample entry: not bad media.
            case .unsupportedCodec, .unsupportedFormat, .encrypted: .unsupported
            // A clock that restarts with no discontinuity declared: the server's playlist is wrong.
            case .timestampsStepBack: .server
            // The file being written: by its `errno`, as any file failure.
            case .writeFailed(_, let code): code.map(Self.category(of:)) ?? .other
            default: .notMedia
            }
        case .invalidKey, .decryptionFailed, .notMedia: .notMedia
        case .encrypted, .liveStream, .unsupportedCodec, .unsupportedURL: .unsupported
        case .insufficientStorage: .storageFull
        case .file(_, _, let code): code.map(Self.category(of:)) ?? .other
        case .cancelled: .cancelled
        case .paused: .paused
        case .destinationInUse: .other
        }
    }

    /// The category of a file operation that failed with `code`: a full disk or quota is
    /// ``Category/storageFull``, a read-only volume or a refused permission
    /// ``Category/notWritable``, anything else ``Category/other``.
    package static func category(of code: Int32) -> Category {
        switch code {
        case ENOSPC, EDQUOT: .storageFull
        case EROFS, EACCES, EPERM: .notWritable
        default: .other
        }
    }

    /// The sentence of ``description``, for `localizedDescription`.
    public var errorDescription: String? { description }

    /// A sentence naming the part, playlist or file once and what went wrong.
    public var description: String {
        var place: [String] = []
        if let part { place.append("part \(part)") }
        if let url { place.append(url.absoluteString) }
        if let path { place.append(path) }
        let prefix = place.isEmpty ? "" : place.joined(separator: ", ") + ": "
        let what =
            switch kind {
            case .httpStatus(let status): "HTTP \(status)"
            case .wrongLength(let expected, let received): "expected \(expected) bytes, received \(received)"
            case .wrongRange(let expected, let received): "asked for \(expected), got \(received)"
            case .rangeTooLarge: "the byte range ends past 2⁶⁴ bytes"
            case .tooLarge(let bytes, let limit):
                "the server announced or sent \(bytes) bytes, more than the \(limit) accepted"
            case .remoteChanged(let was, let now): "the remote file changed (\(was), then \(now)) while downloading"
            case .transport(let error): url == nil || error.url == url ? error.reason : "\(error)"
            case .file(let operation, let reason, _): "could not \(operation): \(reason)"
            case .playlist(let error): "the playlist cannot be parsed: \(error)"
            case .uri(let error): "a URI cannot be resolved: \(error)"
            case .unusablePlaylist(let reason): "the playlist cannot be downloaded: \(reason)"
            case .container(let error): "the segments cannot be remuxed: \(error)"
            case .encrypted(let method):
                "the segments are encrypted with \(method), which needs a SegmentDecryptor, and none was supplied"
            case .keyRefused(let status): "the key server refused the key (HTTP \(status))"
            case .invalidKey(let count): "the key is \(count) bytes long, not the 16 of an AES-128 key"
            case .decryptionFailed(let reason): "the part did not decrypt to media: \(reason)"
            case .liveStream: "a live playlist has no end to download"
            case .cancelled: "the download was cancelled"
            case .paused: "the download was paused"
            case .destinationInUse: "another process is downloading to the same file"
            case .notMedia(let type, let found):
                "the answer is not media but \(found)" + (type.map { " (Content-Type \($0))" } ?? "")
            case .insufficientStorage(let needed, let available):
                "\(needed) bytes are needed and only \(available) are free on the device"
            case .unsupportedCodec(let codec): "the stream's codec \(codec) cannot be saved for offline use"
            case .unsupportedURL(let scheme):
                scheme.isEmpty
                    ? "a relative URL, resolved against nothing, cannot be downloaded"
                    : "\(scheme): URLs are not downloaded (only http and https)"
            }
        return prefix + what
    }

    /// Whether trying the same part again may succeed.
    var isTransient: Bool {
        switch kind {
        case .httpStatus(let status): status >= 500 || status == 408 || status == 429
        case .transport(let error): error.isTransient
        default: false
        }
    }
}
