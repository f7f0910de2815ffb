public import Foundation

#if canImport(FoundationNetworking)
    public import FoundationNetworking
#endif

/// A `URLProtocol` that answers from a handler the test installs, so a real `URLSession` runs
/// the whole request: the service's request building, the session, and the decoding.
public final class StubURLProtocol: URLProtocol {
    /// How the stub answers a request.
    public enum Answer: Sendable {
        /// An HTTP response.
        case respond(status: Int, body: Data, headers: [String: String] = [:])
        /// A transfer failure.
        case fail(URLError.Code)
        /// Never answer; only a cancellation ends the request.
        case hang
    }

    private static let handlers = LockedBox<[String: @Sendable (URLRequest) -> Answer]>([:])
    private static let started = LockedBox<[String: Int]>([:])

    /// Answers every request to `host` with `handler` (use a distinct host per test).
    public static func install(host: String, _ handler: @escaping @Sendable (URLRequest) -> Answer) {
        handlers.update { $0[host] = handler }
    }

    /// How many requests to `host` have started loading.
    public static func startedRequests(host: String) -> Int {
        started.update { $0[host, default: 0] }
    }

    /// Takes every request.
    override public class func canInit(with request: URLRequest) -> Bool { true }
    /// Leaves requests as they are.
    override public class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    /// Answers from the host's handler.
    override public func startLoading() {
        let host = request.url?.host ?? ""
        Self.started.update { $0[host, default: 0] += 1 }
        guard let handler = Self.handlers.update({ $0[host] }) else {
            client?.urlProtocol(self, didFailWithError: URLError(.unsupportedURL))
            return
        }
        // URLSession hands URLProtocol the body as a stream on some platforms.
        var request = request
        if request.httpBody == nil, let stream = request.httpBodyStream {
            request.httpBody = Self.read(stream)
        }
        switch handler(request) {
        case .respond(let status, let body, let headers):
            let url = request.url ?? URL(fileURLWithPath: "/")
            if let response = HTTPURLResponse(
                url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)
            {
                client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
            }
            client?.urlProtocol(self, didLoad: body)
            client?.urlProtocolDidFinishLoading(self)
        case .fail(let code):
            client?.urlProtocol(self, didFailWithError: URLError(code))
        case .hang:
            break
        }
    }

    /// Nothing to stop: answers are immediate or never come.
    override public func stopLoading() {}

    private static func read(_ stream: InputStream) -> Data {
        stream.open()
        defer { stream.close() }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 1_024)
        while stream.hasBytesAvailable {
            let count = stream.read(&buffer, maxLength: buffer.count)
            guard count > 0 else { break }
            data.append(buffer, count: count)
        }
        return data
    }
}

/// A value behind a lock, for the stub's shared tables.
public final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    /// Creates a box holding `value`.
    public init(_ value: Value) { self.value = value }

    /// Runs `body` on the value under the lock.
    public func update<Result>(_ body: (inout Value) -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
