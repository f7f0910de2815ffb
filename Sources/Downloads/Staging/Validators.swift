import Foundation
import Locking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What identifies each remote resource's version in a download (RFC 9110 §8.8): its strong
/// `ETag`, else its `Last-Modified` date, as first seen, kept beside the staging file so that a
/// resumed download asks for the same version (`If-Range`, §13.1.5) and notices when the
/// server's copy changed.
final class Validators: Sendable {
    private let values: Locked<[String: String]>
    private let file: URL
    private let fileSystem: any DownloadFileSystem

    /// A remote resource changed between two requests of the same download.
    struct Changed: Error {
        var url: URL
        var was: String
        var now: String
    }

    /// Loads the validators saved at `file` (none when it is missing or unreadable).
    init(file: URL, fileSystem: any DownloadFileSystem) {
        self.file = file
        self.fileSystem = fileSystem
        let saved = (try? Data(contentsOf: file)).flatMap { try? JSONDecoder().decode([String: String].self, from: $0) }
        values = Locked(saved ?? [:])
    }

    /// The validator first seen for `url`.
    func validator(for url: URL) -> String? {
        values.withLock { $0[url.absoluteString] }
    }

    /// The validator a response carries: a strong `ETag` (a weak one cannot be used with
    /// `If-Range`), else `Last-Modified`.
    static func validator(of response: URLResponse) -> String? {
        guard let http = response as? HTTPURLResponse else { return nil }
        if let tag = http.value(forHTTPHeaderField: "ETag"), !tag.hasPrefix("W/") { return tag }
        return http.value(forHTTPHeaderField: "Last-Modified")
    }

    /// Records `response`'s validator for `url`, or checks it against the one recorded.
    ///
    /// - Throws: ``Changed`` when the response carries another validator than the recorded one.
    func check(_ response: URLResponse, for url: URL) throws(Changed) {
        guard let now = Self.validator(of: response) else { return }
        let (was, snapshot) = values.withLock { values in
            let was = values[url.absoluteString]
            if was == nil { values[url.absoluteString] = now }
            return (was, values)
        }
        if let was, was != now { throw Changed(url: url, was: was, now: now) }
        if was == nil, let data = try? JSONEncoder().encode(snapshot) {
            // Best effort: without the file a resume only loses the check, never data.
            if fileSystem.allows(.write, on: file) { try? data.write(to: file, options: .atomic) }
        }
    }

    /// Forgets every validator and removes the file.
    func reset() {
        values.withLock { $0 = [:] }
        fileSystem.remove(file)
    }
}
