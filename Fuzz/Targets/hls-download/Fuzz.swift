import Downloads
import Foundation
import HTTPSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Properties of HLS download planning end to end, over an in-memory server whose playlists
/// and segment bytes come from the input: whatever it serves, downloading the lesson never
/// crashes, never asks for anything but `http` and `https` URLs, never allocates past the
/// fuzzer's limit, and either fails with a typed ``DownloadError`` leaving nothing at the
/// destination, or writes a non-empty file there.
///
/// Input: sections separated by a line `====`: the master playlist (served for `master.m3u8`),
/// the media playlist (served for every other `.m3u8`), and the bytes of every other resource
/// (segments, keys, initialisation sections). Byte ranges are honoured on the segment bytes.
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

/// Serves the input's playlists and bytes; any request for another scheme is a finding.
struct PlaylistServer: HTTPTransport {
    let master: Data
    let media: Data
    let resource: Data

    func send(_ request: URLRequest) async throws -> (Data, URLResponse) {
        guard let url = request.url else { throw URLError(.badURL) }
        guard ["http", "https"].contains(url.scheme?.lowercased() ?? "") else {
            fatalError("requested a non-HTTP URL: \(url)")
        }
        var status = 200
        var headers = ["Content-Type": "application/octet-stream"]
        var body: Data
        if url.lastPathComponent == "master.m3u8" {
            body = master
            headers["Content-Type"] = "application/vnd.apple.mpegurl"
        } else if url.pathExtension == "m3u8" {
            body = media
            headers["Content-Type"] = "application/vnd.apple.mpegurl"
        } else {
            body = resource
            if let range = request.value(forHTTPHeaderField: "Range"), range.hasPrefix("bytes="),
                let dash = range.firstIndex(of: "-"),
                let first = Int(range[range.index(range.startIndex, offsetBy: 6)..<dash]),
                let last = Int(range[range.index(after: dash)...])
            {
                if first <= last, last < resource.count {
                    status = 206
                    body = resource.subdata(in: first..<(last + 1))
                    headers["Content-Range"] = "bytes \(first)-\(last)/\(resource.count)"
                } else {
                    status = 416
                    body = Data()
                    headers["Content-Range"] = "bytes */\(resource.count)"
                }
            }
        }
        guard
            let response = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)
        else { throw URLError(.badServerResponse) }
        return (body, response)
    }
}

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-hls-download-\(getpid())")

func sections(_ data: Data) -> [Data] {
    var parts: [Data] = []
    var rest = data[...]
    let separator = Data("\n====\n".utf8)
    while parts.count < 2, let found = rest.range(of: separator) {
        parts.append(Data(rest[rest.startIndex..<found.lowerBound]))
        rest = rest[found.upperBound...]
    }
    parts.append(Data(rest))
    while parts.count < 3 { parts.append(Data()) }
    return parts
}

func check(_ data: Data) async {
    let parts = sections(data)
    let server = PlaylistServer(master: parts[0], media: parts[1], resource: parts[2])
    try? FileManager.default.removeItem(at: folder)
    let engine = DownloadEngine(
        concurrency: 2, retry: .none, idleTimeout: .seconds(5), clock: ContinuousClock(), transport: server)
    let downloader = MediaDownloader(engine: engine)
    guard let master = URL(string: "https://cdn.example/lesson/master.m3u8") else { return }
    for (index, audioOnly) in [false, true].enumerated() {
        let place = folder.appendingPathComponent("run\(index)")
        let destination = place.appendingPathComponent(audioOnly ? "audio.m4a" : "lesson")
        let job =
            audioOnly
            ? downloader.downloadHLSAudio(from: master, to: destination)
            : downloader.downloadLesson(from: master, to: destination)
        do {
            let result = try await job.result()
            guard let size = try? FileManager.default.attributesOfItem(atPath: result.file.path)[.size] as? Int,
                size > 0
            else { fatalError("download \(index) succeeded without a file at \(result.file.path)") }
        } catch {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: place.path)) ?? []
            where !name.hasPrefix(".") {
                fatalError("a failed download left \(name): \(error)")
            }
        }
    }
}
