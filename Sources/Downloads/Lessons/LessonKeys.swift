import Foundation
import HLS
import HTTPSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The AES-128 keys of a lesson, fetched before anything is written and held in memory only.
struct LessonKeys: Sendable {
    /// Each key URI's expanded key.
    var ciphers: [URL: AES128] = [:]

    /// Fetches every key URI the plan's built-in decryption needs, once each, through the
    /// engine (its retries and its allowed schemes), `engine.concurrency` at a time.
    ///
    /// - Throws: ``DownloadError`` of kind ``DownloadError/Kind/keyRefused(status:)`` for a 4xx
    ///   answer, ``DownloadError/Kind/invalidKey(byteCount:)`` for an answer that is not 16
    ///   bytes, or the engine's error for the transfer.
    static func fetch<C: Clock>(for plan: LessonPlan, engine: DownloadEngine<C>) async throws -> LessonKeys
    where C.Duration == Duration {
        let urls = keyURLs(of: plan)
        guard !urls.isEmpty else { return LessonKeys() }
        return try await withThrowingTaskGroup(of: (URL, AES128).self) { group in
            var keys = LessonKeys()
            var next = 0
            func start() {
                guard next < urls.count else { return }
                let url = urls[next]
                next += 1
                group.addTask { (url, try await fetchKey(url, engine: engine)) }
            }
            for _ in 0..<engine.concurrency { start() }
            while let (url, cipher) = try await group.next() {
                keys.ciphers[url] = cipher
                start()
            }
            return keys
        }
    }

    /// The key URIs the plan's built-in decryption needs, each once, in the plan's order.
    ///
    /// - Complexity: O(*p*) for *p* parts.
    static func keyURLs(of plan: LessonPlan) -> [URL] {
        var urls: [URL] = []
        var seen = Set<URL>()
        for part in plan.parts {
            guard let decryption = part.decryption, decryption.isBuiltIn, let url = decryption.keyURL,
                seen.insert(url).inserted
            else { continue }
            urls.append(url)
        }
        return urls
    }

    private static func fetchKey<C: Clock>(_ url: URL, engine: DownloadEngine<C>) async throws -> AES128
    where C.Duration == Duration {
        let body: Data
        do {
            let (data, response) = try await engine.sendWithRetry(URLRequest(url: url), part: nil)
            // A refusal comes back as an answer, not an error: its status says so, whatever its body.
            if let status = (response as? HTTPURLResponse)?.statusCode, (400..<500).contains(status) {
                throw DownloadError(.keyRefused(status: status), url: url)
            }
            body = data
        } catch let error as DownloadError {
            if case .httpStatus(let status) = error.kind, (400..<500).contains(status) {
                throw DownloadError(.keyRefused(status: status), url: url)
            }
            throw error
        }
        guard let cipher = AES128(key: body) else {
            throw DownloadError(.invalidKey(byteCount: body.count), url: url)
        }
        return cipher
    }
}
