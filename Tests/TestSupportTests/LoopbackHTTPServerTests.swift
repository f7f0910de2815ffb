import Foundation
import HTTPSupport
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The loopback server, checked through a real `URLSession` on 127.0.0.1.
@Suite("Loopback HTTP server")
struct LoopbackHTTPServerTests {
    let server: LoopbackHTTPServer
    let transport = URLSessionTransport(session: URLSession(configuration: .ephemeral))
    let file = resourceBytes(10_000, seed: 5)

    init() throws {
        server = try LoopbackHTTPServer()
    }

    func get(_ path: String, headers: [String: String] = [:]) async throws -> (Data, HTTPURLResponse) {
        var request = URLRequest(url: server.url(path))
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await transport.send(request)
        return (data, try #require(response as? HTTPURLResponse))
    }

    @Test("RFC 9110 §14: a file answers ranges with 206 and Content-Range, and 416 past its end")
    func ranges() async throws {
        defer { server.stop() }
        server.route("/file.bin", .file(file, etag: "\"v1\""))
        let (whole, plain) = try await get("/file.bin")
        #expect(plain.statusCode == 200)
        #expect(whole == file)
        let (part, partial) = try await get("/file.bin", headers: ["Range": "bytes=100-199"])
        #expect(partial.statusCode == 206)
        #expect(partial.value(forHTTPHeaderField: "Content-Range") == "bytes 100-199/10000")
        #expect(part == file.subdata(in: 100..<200))
        let (_, outside) = try await get("/file.bin", headers: ["Range": "bytes=20000-20001"])
        #expect(outside.statusCode == 416)
    }

    @Test("RFC 9110 §13.1.5: If-Range with the current ETag gives the range; with another, the whole file")
    func ifRange() async throws {
        defer { server.stop() }
        server.route("/file.bin", .file(file, etag: "\"v2\""))
        let (_, same) = try await get("/file.bin", headers: ["Range": "bytes=0-9", "If-Range": "\"v2\""])
        #expect(same.statusCode == 206)
        let (body, changed) = try await get("/file.bin", headers: ["Range": "bytes=0-9", "If-Range": "\"v1\""])
        #expect(changed.statusCode == 200)
        #expect(body == file)
    }

    @Test("scripted faults: a 503 then success; a short body; a reset; a redirect is followed")
    func faults() async throws {
        defer { server.stop() }
        server.route("/file.bin", .file(file))
        server.script("/file.bin", [.status(503), .closeAfter(bytes: 100), .reset, nil])
        let (_, unavailable) = try await get("/file.bin")
        #expect(unavailable.statusCode == 503)
        await #expect(throws: (any Error).self) { _ = try await get("/file.bin") }
        await #expect(throws: (any Error).self) { _ = try await get("/file.bin") }
        let (whole, ok) = try await get("/file.bin")
        #expect(ok.statusCode == 200)
        #expect(whole == file)
        server.route("/moved", .redirect(to: server.url("/file.bin").absoluteString))
        let (moved, final) = try await get("/moved")
        #expect(moved == file)
        #expect(final.url?.path == "/file.bin")
    }

    @Test("it records every request and how many were in flight")
    func log() async throws {
        defer { server.stop() }
        server.route("/slow", .response(status: 200, body: resourceBytes(2_000, seed: 1)))
        // The first answer waits for the next request: two are certainly in flight together.
        server.script("/slow", [.holdUntilNextRequest])
        async let a = get("/slow")
        async let b = get("/slow")
        async let c = get("/slow")
        _ = try await (a, b, c)
        #expect(server.requests.count == 3)
        #expect(server.maximumInFlight >= 2)
        #expect(server.requests.allSatisfy { $0.method == "GET" && $0.path == "/slow" })
    }
}
