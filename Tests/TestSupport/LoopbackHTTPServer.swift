public import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A small HTTP/1.1 server on `127.0.0.1` for tests: real sockets, so a test sees what
/// `URLSession` really sends and does with ranges, redirects, short bodies, resets and transfers that stop mid-body.
///
/// Test-only, never a product. It listens on an ephemeral port, serves routes from a table
/// (static bodies, files with `Range`, `If-Range`, `ETag` and `Last-Modified`, redirects),
/// applies scripted faults per request, and records every request with the number of requests
/// in flight when it arrived. ``stop()`` closes everything; at most ``maximumConnections``
/// connections are served at once, and each read waits at most ``readTimeout``.
public final class LoopbackHTTPServer: @unchecked Sendable {
    /// What a path serves.
    public enum Route: Sendable {
        /// A file: `Range` gives `206` with `Content-Range` (`416` when unsatisfiable), `If-Range`
        /// is honoured against the `ETag` (or `Last-Modified`), a plain request gives `200`.
        case file(Data, etag: String? = nil, lastModified: String? = nil, contentType: String? = nil)
        /// A fixed answer.
        case response(status: Int, headers: [String: String] = [:], body: Data = Data())
        /// A redirect (`302`) to `location`.
        case redirect(to: String)
        /// An answer computed from the request (status, headers, body), for stateful protocols.
        case handler(@Sendable (Request) async -> (status: Int, headers: [String: String], body: Data))
    }

    /// A failure to inject into one answer.
    public enum Fault: Sendable, Hashable {
        /// Send the headers and the first `bytes` of the body, then close the connection.
        case closeAfter(bytes: Int)
        /// Close the connection with a reset (`SO_LINGER` 0) without answering.
        case reset
        /// Send the headers and the first `bytes` of the body, then hold the connection open
        /// without sending more, as ``stall`` does: a transfer that stops mid-body.
        case stallAfter(bytes: Int)
        /// Answer normally once another request has arrived (or the server stops): this one and
        /// the next are then certainly in flight together.
        case holdUntilNextRequest
        /// Declare this `Content-Length` whatever the body's size.
        case wrongContentLength(Int)
        /// Answer a range request with `200` and the whole file.
        case ignoreRange
        /// Answer with this status and no body.
        case status(Int)
        /// Accept the request and never answer, until the client closes the connection (counted
        /// in ``stalledRequestsClosedByClient``) or the server stops.
        case stall
    }

    /// One request as the server received it.
    public struct Request: Sendable {
        /// `GET`, `POST`…
        public var method: String
        /// The path and query.
        public var path: String
        /// The headers, names lowercased.
        public var headers: [String: String]
        /// The body.
        public var body: Data
        /// When it arrived.
        public var time: ContinuousClock.Instant
        /// Its position among every request the server received, from 0.
        public var number: Int
        /// How many requests were being answered when it arrived, itself included.
        public var inFlight: Int
    }

    /// The most connections served at once; more wait in the listen queue.
    public let maximumConnections = 16
    /// The longest a connection may be silent while a request is read.
    public let readTimeout: Duration = .seconds(10)

    /// The lock of the server's state; its condition is signalled when a request arrives and
    /// when the server stops.
    private let lock = NSCondition()
    private var routes: [String: Route] = [:]
    private var faults: [String: [Fault?]] = [:]
    private var counts: [String: Int] = [:]
    private var log: [Request] = []
    private var inFlight = 0
    private var peak = 0
    private var connections = 0
    private var stopped = false
    private var closedByClient = 0
    private var sockets: Set<Int32> = []
    private let listener: Int32
    /// The port the server listens on.
    public let port: UInt16

    /// Starts a server on `127.0.0.1` and an ephemeral port.
    ///
    /// - Throws: `POSIXError` when the socket cannot be bound.
    public init() throws {
        #if canImport(Glibc)
            let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let listener = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard listener >= 0 else { throw POSIXError(.EMFILE) }
        // A child process a test spawns does not keep the server's sockets open.
        _ = fcntl(listener, F_SETFD, FD_CLOEXEC)
        var reuse: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(listener, 64) == 0 else {
            close(listener)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        self.listener = listener
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    deinit { stop() }

    /// `http://127.0.0.1:<port>`.
    public var baseURL: URL {
        URL(string: "http://127.0.0.1:\(port)") ?? URL(fileURLWithPath: "/")
    }

    /// The URL of `path` on this server.
    public func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)\(path)") ?? baseURL
    }

    /// Serves `route` at `path`.
    public func route(_ path: String, _ route: Route) {
        locked { routes[path] = route }
    }

    /// Scripts the faults of the next answers at `path`, one per request (`nil`: answer normally);
    /// requests after the script's end are answered normally.
    public func script(_ path: String, _ faults: [Fault?]) {
        locked {
            self.faults[path] = faults
            counts[path] = 0
        }
    }

    /// Every request received so far.
    public var requests: [Request] { locked { log } }

    /// The most requests answered at once so far.
    public var maximumInFlight: Int { locked { peak } }

    /// How many stalled requests the client gave up on by closing the connection: what a
    /// cancelled `URLSession` task does on the wire.
    public var stalledRequestsClosedByClient: Int { locked { closedByClient } }

    /// Suspends until `count` requests have arrived (at `path`, when given) or the server has
    /// stopped.
    ///
    /// The wait blocks a thread of its own on the server's condition, signalled at every
    /// request: no polling, and no limit of time. It returns `false` only when the whole test
    /// process stood still first (``ProcessStandstill``): a request that never comes fails the
    /// test instead of hanging the run.
    @discardableResult
    public func waitForRequests(count: Int = 1, path: String? = nil) async -> Bool {
        await waitUntil { [self] in log.lazy.filter { path == nil || $0.path == path }.count >= count }
    }

    /// Suspends until `count` stalled requests have been given up by the client closing the
    /// connection, or the server has stopped; see ``waitForRequests(count:path:)``.
    @discardableResult
    public func waitForStalledRequestsClosedByClient(count: Int = 1) async -> Bool {
        await waitUntil { [self] in closedByClient >= count }
    }

    /// Suspends until `condition` holds under the lock or the server has stopped (`true`), or
    /// the process stood still first (`false`), waiting on a thread of its own (the cooperative
    /// pool's threads are never blocked).
    private func waitUntil(_ condition: @escaping () -> Bool) async -> Bool {
        let box = UncheckedSendableCondition(condition)
        let stoodStill = LockedState(false)
        let watch = ProcessStandstill.shared.watch { [self] in
            stoodStill.withLock { $0 = true }
            locked { lock.broadcast() }
        }
        defer { ProcessStandstill.shared.end(watch) }
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            Thread.detachNewThread { [self] in
                let held = locked { () -> Bool in
                    while !box.condition(), !stopped, !stoodStill.withLock({ $0 }) { lock.wait() }
                    return box.condition() || stopped
                }
                continuation.resume(returning: held)
            }
        }
    }

    /// Stops listening and closes every connection.
    public func stop() {
        // Under the lock, so that no connection thread closes a socket (and frees its number for
        // someone else) between reading the set and shutting the socket down.
        locked {
            guard !stopped else { return }
            stopped = true
            lock.broadcast()
            // Only shut the sockets down: the threads that use them close them. Closing the
            // listener here would free its number while the accept loop may still call accept(2)
            // on it, and another server's new socket could get that number.
            shutdown(listener, Int32(SHUT_RDWR))
            for socket in sockets { shutdown(socket, Int32(SHUT_RDWR)) }
        }
    }

    // MARK: Connections

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    private func acceptLoop() {
        defer { close(listener) }
        while !locked({ stopped }) {
            let client = accept(listener, nil, nil)
            guard client >= 0 else {
                if locked({ stopped }) { return }
                continue
            }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            let admitted: Bool = locked {
                guard connections < maximumConnections, !stopped else { return false }
                connections += 1
                sockets.insert(client)
                return true
            }
            guard admitted else {
                close(client)
                continue
            }
            var timeout = timeval(tv_sec: Int(readTimeout.components.seconds), tv_usec: 0)
            setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            // Headers and body go out in separate writes: without TCP_NODELAY, Nagle's algorithm
            // holds the body until the client's delayed acknowledgement, 40 ms per answer.
            var noDelay: Int32 = 1
            setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
            #if canImport(Darwin)
                var noSignal: Int32 = 1
                setsockopt(client, SOL_SOCKET, SO_NOSIGPIPE, &noSignal, socklen_t(MemoryLayout<Int32>.size))
            #endif
            let thread = Thread { [self] in
                serve(client)
                locked {
                    connections -= 1
                    sockets.remove(client)
                }
                close(client)
            }
            thread.start()
        }
    }

    /// Answers requests on one connection until it closes (HTTP/1.1 keeps it open).
    private func serve(_ client: Int32) {
        var buffer = [UInt8]()
        while !locked({ stopped }) {
            guard let (request, rest) = readRequest(client, buffer: buffer) else { return }
            buffer = rest
            let keepOpen = answer(request, on: client)
            if !keepOpen { return }
        }
    }

    private func readRequest(_ client: Int32, buffer: [UInt8]) -> (Request, [UInt8])? {
        var data = buffer
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let separator: [UInt8] = [13, 10, 13, 10]
        while true {
            if let end = Self.find(separator, in: data) {
                let head = String(decoding: data[..<end], as: UTF8.self)
                var lines = head.components(separatedBy: "\r\n")
                let requestLine = lines.removeFirst().split(separator: " ")
                guard requestLine.count >= 2 else { return nil }
                var headers: [String: String] = [:]
                for line in lines {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...]
                        .trimmingCharacters(in: .whitespaces)
                }
                let length = Int(headers["content-length"] ?? "0") ?? 0
                var rest = Array(data[(end + 4)...])
                while rest.count < length {
                    let count = recv(client, &chunk, chunk.count, 0)
                    guard count > 0 else { return nil }
                    rest += chunk[0..<count]
                }
                let request = locked { () -> Request in
                    inFlight += 1
                    peak = max(peak, inFlight)
                    let request = Request(
                        method: String(requestLine[0]), path: String(requestLine[1]), headers: headers,
                        body: Data(rest.prefix(length)), time: ContinuousClock.now, number: log.count,
                        inFlight: inFlight)
                    log.append(request)
                    lock.broadcast()
                    return request
                }
                return (request, Array(rest.dropFirst(length)))
            }
            let count = recv(client, &chunk, chunk.count, 0)
            guard count > 0 else { return nil }
            data += chunk[0..<count]
        }
    }

    /// Answers one request; returns whether the connection stays open.
    private func answer(_ request: Request, on client: Int32) -> Bool {
        defer { locked { inFlight -= 1 } }
        let path = String(request.path.split(separator: "?", maxSplits: 1).first ?? "")
        let (route, fault): (Route?, Fault?) = locked {
            let index = counts[path, default: 0]
            counts[path] = index + 1
            let script = faults[path] ?? []
            return (routes[path], index < script.count ? script[index] : nil)
        }
        switch fault {
        case .reset?:
            var abort = linger(l_onoff: 1, l_linger: 0)
            setsockopt(client, SOL_SOCKET, SO_LINGER, &abort, socklen_t(MemoryLayout<linger>.size))
            return false
        case .stall?:
            waitForClientToClose(client)
            return false
        case .holdUntilNextRequest?:
            // Waits on the condition, which every arrival and `stop()` signal: no polling.
            lock.lock()
            while log.count <= request.number + 1, !stopped { lock.wait() }
            lock.unlock()
        case .status(let status)?:
            return send(client, status: status, headers: [:], body: Data(), fault: nil)
        default:
            break
        }
        guard let route else {
            return send(client, status: 404, headers: [:], body: Data("no route".utf8), fault: nil)
        }
        switch route {
        case .response(let status, let headers, let body):
            return send(client, status: status, headers: headers, body: body, fault: fault)
        case .redirect(let location):
            return send(client, status: 302, headers: ["Location": location], body: Data(), fault: fault)
        case .handler(let handle):
            // The connection's own thread waits for the handler: one request at a time per connection.
            let answer = AnswerBox()
            let done = DispatchSemaphore(value: 0)
            Task {
                answer.value = await handle(request)
                done.signal()
            }
            done.wait()
            guard let (status, headers, body) = answer.value else { return false }
            return send(client, status: status, headers: headers, body: body, fault: fault)
        case .file(let data, let etag, let lastModified, let contentType):
            var headers: [String: String] = ["Accept-Ranges": "bytes"]
            if let etag { headers["ETag"] = etag }
            if let lastModified { headers["Last-Modified"] = lastModified }
            if let contentType { headers["Content-Type"] = contentType }
            var whole = request.headers["range"] == nil || fault == .ignoreRange
            // RFC 9110 §13.1.5: a range only of the version the client names; another one whole.
            if let condition = request.headers["if-range"], condition != etag, condition != lastModified {
                whole = true
            }
            guard !whole, let header = request.headers["range"] else {
                return send(client, status: 200, headers: headers, body: data, fault: fault)
            }
            guard let range = Self.range(header, size: data.count) else {
                headers["Content-Range"] = "bytes */\(data.count)"
                return send(client, status: 416, headers: headers, body: Data(), fault: fault)
            }
            headers["Content-Range"] = "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(data.count)"
            return send(client, status: 206, headers: headers, body: data.subdata(in: range), fault: fault)
        }
    }

    /// A single `bytes=a-b`, `bytes=a-` or `bytes=-n` range within `size`; `nil` when
    /// unsatisfiable or not a single range.
    static func range(_ header: String, size: Int) -> Range<Int>? {
        guard header.hasPrefix("bytes="), !header.contains(",") else { return nil }
        let spec = header.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
        guard spec.count == 2 else { return nil }
        if spec[0].isEmpty, let suffix = Int(spec[1]), suffix > 0 { return max(size - suffix, 0)..<size }
        guard let first = Int(spec[0]), first < size else { return nil }
        let last = spec[1].isEmpty ? size - 1 : min(Int(spec[1]) ?? -1, size - 1)
        return last >= first ? first..<(last + 1) : nil
    }

    /// Blocks until the client closes its end (a read of 0 bytes) or `stop()` shuts the socket
    /// down; no polling, so no time passes in the test but the client's own.
    private func waitForClientToClose(_ client: Int32) {
        var byte: UInt8 = 0
        while !locked({ stopped }) {
            let count = recv(client, &byte, 1, 0)
            if count == 0 {
                // `stop()` sets `stopped` before shutting sockets down: that is not the client.
                locked {
                    if !stopped { closedByClient += 1 }
                    lock.broadcast()
                }
                return
            }
            // A reset is the client closing too (a cancelled transfer may end with one).
            if count < 0 && errno == ECONNRESET {
                locked {
                    if !stopped { closedByClient += 1 }
                    lock.broadcast()
                }
                return
            }
            // Bytes the client sent are dropped; only the socket's read timeout goes round.
            if count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR { return }
        }
    }

    private func send(_ client: Int32, status: Int, headers: [String: String], body: Data, fault: Fault?) -> Bool {
        var head = "HTTP/1.1 \(status) \(status < 400 ? "OK" : "Error")\r\n"
        var length = body.count
        if case .wrongContentLength(let declared)? = fault { length = declared }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(length)\r\n\r\n"
        guard write(client, Array(head.utf8)) else { return false }
        switch fault {
        case .closeAfter(let bytes)?:
            _ = write(client, Array(body.prefix(bytes)))
            return false
        case .stallAfter(let bytes)?:
            guard write(client, Array(body.prefix(bytes))) else { return false }
            waitForClientToClose(client)
            return false
        case .wrongContentLength?:
            _ = write(client, Array(body))
            return false
        default:
            return write(client, Array(body))
        }
    }

    private func write(_ client: Int32, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            #if canImport(Glibc)
                let count = bytes[sent...].withUnsafeBytes {
                    Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
            #else
                let count = bytes[sent...].withUnsafeBytes { Darwin.send(client, $0.baseAddress, $0.count, 0) }
            #endif
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    private static func find(_ pattern: [UInt8], in data: [UInt8]) -> Int? {
        guard data.count >= pattern.count else { return nil }
        for index in 0...(data.count - pattern.count) where data[index] == pattern[0] {
            if Array(data[index..<(index + pattern.count)]) == pattern { return index }
        }
        return nil
    }
}

/// Carries a handler's answer from its task to the connection's thread, which waits on a
/// semaphore before reading it.
private final class AnswerBox: @unchecked Sendable {
    var value: (status: Int, headers: [String: String], body: Data)?
}

/// A condition read only under the server's lock, carried to the thread that waits on it.
private struct UncheckedSendableCondition: @unchecked Sendable {
    // `@unchecked`: it is called only under `LoopbackHTTPServer.lock`, like the state it reads.
    let condition: () -> Bool
    init(_ condition: @escaping () -> Bool) { self.condition = condition }
}
