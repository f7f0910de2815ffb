import Downloads
import Foundation
import HTTPSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Properties of the engine's response handling, for any answer to a range request (the status,
/// the `Content-Range` header, the body and how it is split into chunks all come from the
/// input): the download either fails with a typed error and leaves no file at the destination,
/// or writes exactly the bytes the answer holds for the range (a `206`'s body, or the range's
/// slice of a `200`'s body), never a corrupt file.
///
/// Input: `chunkSize status\nContent-Range\nbody`, e.g. `4 206\nbytes 8-23/64\n0123456789abcdef`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: bytes, count: count)
    let done = DispatchSemaphore(value: 0)
    Task {
        defer { done.signal() }
        await check(data)
    }
    done.wait()
    return 0
}

/// Answers every request with the scripted status, header and body, the body in chunks.
struct ScriptedTransport: HTTPTransport {
    let status: Int
    let contentRange: String
    let body: Data
    let chunkSize: Int

    func response(for request: URLRequest) throws -> URLResponse {
        guard let url = request.url,
            let response = HTTPURLResponse(
                url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: ["Content-Range": contentRange])
        else { throw URLError(.badServerResponse) }
        return response
    }

    func send(_ request: URLRequest) async throws -> (Data, URLResponse) {
        (body, try response(for: request))
    }

    func stream(_ request: URLRequest) async throws -> (URLResponse, HTTPBodyChunks) {
        let (chunks, continuation) = HTTPBodyChunks.makeStream()
        var offset = body.startIndex
        while offset < body.endIndex {
            let end = min(offset + chunkSize, body.endIndex)
            continuation.yield(body[offset..<end])
            offset = end
        }
        continuation.finish()
        return (try response(for: request), chunks)
    }
}

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-range-response-\(getpid())")
let range = ByteRange(length: 16, offset: 8)

func check(_ data: Data) async {
    let lines = data.split(separator: UInt8(ascii: "\n"), maxSplits: 2, omittingEmptySubsequences: false)
    guard lines.count == 3 else { return }
    let head = String(decoding: lines[0], as: UTF8.self).split(separator: " ")
    guard head.count == 2, let chunkSize = Int(head[0]), (1...4096).contains(chunkSize), let status = Int(head[1]),
        (100...599).contains(status)
    else { return }
    let transport = ScriptedTransport(
        status: status, contentRange: String(decoding: lines[1], as: UTF8.self), body: Data(lines[2]),
        chunkSize: chunkSize)
    try? FileManager.default.removeItem(at: folder)
    let destination = folder.appendingPathComponent("part.bin")
    let engine = DownloadEngine(concurrency: 1, retry: .none, clock: ContinuousClock(), transport: transport)
    guard let url = URL(string: "https://cdn.example/lesson.bin") else { return }
    do {
        _ = try await engine.download([DownloadPart(url: url, byteRange: range)], to: destination)
    } catch {
        if FileManager.default.fileExists(atPath: destination.path) {
            fatalError("a failed download left a file: \(error)")
        }
        return
    }
    guard let written = try? Data(contentsOf: destination) else { fatalError("no file after a success") }
    let body = transport.body
    let expected: Data
    switch status {
    case 206: expected = body
    case 200 where body.count >= 24: expected = body.subdata(in: (body.startIndex + 8)..<(body.startIndex + 24))
    default: fatalError("status \(status) was accepted")
    }
    guard written == expected, written.count == 16 else {
        fatalError("wrote \(written.count) bytes that are not the range's: status \(status)")
    }
}
