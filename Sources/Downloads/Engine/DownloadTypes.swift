public import Foundation
public import HLS
public import HTTPSupport
public import MediaContainers

/// How far a download has come.
public struct DownloadProgress: Hashable, Sendable {
    /// Bytes written to the file so far (resumed bytes included).
    public var bytesWritten: UInt64
    /// Parts written so far.
    public var partsCompleted: Int
    /// Parts in all.
    public var partCount: Int
    /// The total size, when every part's size is known in advance.
    public var bytesExpected: UInt64?
    /// Bytes received so far: those written plus those of parts still arriving or waiting to be
    /// written. Reported as bytes arrive, at most every 100 ms on the engine's clock, so it
    /// moves steadily within a part; it can step back when a part's transfer fails and is
    /// retried.
    public var bytesReceived: UInt64

    /// Creates a progress report; `bytesReceived` is `bytesWritten` when not given.
    public init(
        bytesWritten: UInt64, partsCompleted: Int, partCount: Int, bytesExpected: UInt64?, bytesReceived: UInt64? = nil
    ) {
        self.bytesWritten = bytesWritten
        self.partsCompleted = partsCompleted
        self.partCount = partCount
        self.bytesExpected = bytesExpected
        self.bytesReceived = max(bytesReceived ?? bytesWritten, bytesWritten)
    }

    /// The share done, 0…1: by bytes received when the size is known, by parts otherwise.
    public var fraction: Double {
        if let expected = bytesExpected, expected > 0 { return min(1, Double(bytesReceived) / Double(expected)) }
        return partCount > 0 ? Double(partsCompleted) / Double(partCount) : 0
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
    public var peakBufferedBytes: UInt64
}

/// Why a download failed, and where: the part (by index and URL), the playlist, or the file.
public struct DownloadError: Error, Hashable, Sendable, CustomStringConvertible {
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
        /// A file operation failed; `operation` names it ("write", "flush", …) and `reason` is
        /// the file system's message.
        case file(operation: String, reason: String)
        /// A playlist could not be parsed.
        case playlist(HLSParseError)
        /// A playlist's URI could not be resolved against the playlist's URL.
        case uri(HLSURIError)
        /// A playlist parsed but cannot be downloaded as asked; the reason says why (no audio,
        /// several initialisation sections, a redirect to another scheme…).
        case unusablePlaylist(reason: String)
        /// The downloaded segments could not be remuxed into a playable file.
        case container(ContainerError)
        /// The stream's segments are encrypted with this method and no decryptor was supplied.
        case encrypted(method: String)
        /// The playlist is live (no `#EXT-X-ENDLIST`): it has no end to download.
        case liveStream
        /// The download was cancelled; its partial file is removed.
        case cancelled
        /// The download was paused; its partial file is kept for a later resume.
        case paused
        /// Another process (an app extension, another copy of the app) is downloading to the
        /// same destination and holds its lock; nothing was changed. Try again when it ends.
        case destinationInUse
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

    /// A sentence naming the part, playlist or file and what went wrong.
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
            case .transport(let error): "\(error)"
            case .file(let operation, let reason): "could not \(operation): \(reason)"
            case .playlist(let error): "the playlist cannot be parsed: \(error)"
            case .uri(let error): "a URI cannot be resolved: \(error)"
            case .unusablePlaylist(let reason): "the playlist cannot be downloaded: \(reason)"
            case .container(let error): "the segments cannot be remuxed: \(error)"
            case .encrypted(let method): "the segments are encrypted (\(method)) and no decryptor was supplied"
            case .liveStream: "a live playlist has no end to download"
            case .cancelled: "the download was cancelled"
            case .paused: "the download was paused"
            case .destinationInUse: "another process is downloading to the same file"
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

/// Decrypts segment bytes for a download of an encrypted stream (AES-128 with a key the app
/// fetches and keeps; MediaCore has no cryptography of its own).
public protocol SegmentDecryptor: Sendable {
    /// The clear bytes of part `index`, encrypted under `keys`.
    func decrypt(_ data: Data, keys: [HLSKey], partIndex: Int) async throws -> Data
}
