public import Foundation

/// One piece of a download: a URL and, optionally, the byte range to take from it.
public struct DownloadPart: Hashable, Sendable, Codable {
    /// Where the bytes are.
    public var url: URL
    /// The bytes to take; `nil` for the whole resource.
    public var byteRange: HLSByteRange?

    /// Creates a part.
    public init(url: URL, byteRange: HLSByteRange? = nil) {
        self.url = url
        self.byteRange = byteRange
    }
}

extension HLSByteRange: Codable {
    private enum CodingKeys: String, CodingKey {
        case length, offset
    }

    /// Encodes the range as `{"length": …, "offset": …}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(length, forKey: .length)
        try container.encode(offset, forKey: .offset)
    }

    /// Decodes a range written by ``encode(to:)``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            length: try container.decode(UInt64.self, forKey: .length),
            offset: try container.decode(UInt64.self, forKey: .offset))
    }
}

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

    /// Creates a progress report.
    public init(bytesWritten: UInt64, partsCompleted: Int, partCount: Int, bytesExpected: UInt64?) {
        self.bytesWritten = bytesWritten
        self.partsCompleted = partsCompleted
        self.partCount = partCount
        self.bytesExpected = bytesExpected
    }

    /// The share done, 0…1: by bytes when the size is known, by parts otherwise.
    public var fraction: Double {
        if let expected = bytesExpected, expected > 0 { return min(1, Double(bytesWritten) / Double(expected)) }
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

/// Why a download failed. Errors about a part name it by index and URL.
public enum DownloadError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The server answered a part with an HTTP status that will not change on retry (or kept
    /// answering a transient one until the retries ran out).
    case httpStatus(part: Int, url: URL, status: Int)
    /// A part's body was shorter or longer than its byte range.
    case wrongLength(part: Int, url: URL, expected: UInt64, received: UInt64)
    /// The server sent bytes for another range than the one asked for.
    case wrongRange(part: Int, url: URL, reason: String)
    /// The network failed for a part until the retries ran out.
    case transport(part: Int, url: URL, code: Int?, message: String)
    /// A file operation failed.
    case file(operation: String, path: String, reason: String)
    /// A playlist or its URIs could not be used.
    case playlist(url: URL, reason: String)
    /// The stream's segments are encrypted and no decryptor was supplied.
    case encrypted(method: String)
    /// The playlist is live (no `#EXT-X-ENDLIST`): it has no end to download.
    case liveStream(url: URL)
    /// The download was cancelled; its partial file is removed.
    case cancelled
    /// The download was paused; its partial file is kept for a later resume.
    case paused

    /// A sentence naming the part or file and what went wrong.
    public var description: String {
        switch self {
        case .httpStatus(let part, let url, let status): "Part \(part) (\(url.absoluteString)): HTTP \(status)"
        case .wrongLength(let part, let url, let expected, let received):
            "Part \(part) (\(url.absoluteString)): expected \(expected) bytes, received \(received)"
        case .wrongRange(let part, let url, let reason): "Part \(part) (\(url.absoluteString)): \(reason)"
        case .transport(let part, let url, let code, let message):
            "Part \(part) (\(url.absoluteString)): network failure\(code.map { " \($0)" } ?? ""): \(message)"
        case .file(let operation, let path, let reason): "Could not \(operation) \(path): \(reason)"
        case .playlist(let url, let reason): "The playlist \(url.absoluteString) cannot be downloaded: \(reason)"
        case .encrypted(let method): "The segments are encrypted (\(method)) and no decryptor was supplied"
        case .liveStream(let url): "\(url.absoluteString) is a live playlist without an end"
        case .cancelled: "The download was cancelled"
        case .paused: "The download was paused"
        }
    }

    /// Whether trying the same part again may succeed.
    var isTransient: Bool {
        switch self {
        case .httpStatus(_, _, let status): status >= 500 || status == 408 || status == 429
        case .transport: true
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
