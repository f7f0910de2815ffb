import Downloads
import Foundation
import HTTPSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Properties of a resume from a tampered journal and a damaged staging file: whatever lines
/// follow the journal's header and whatever bytes overwrite the staging file, resuming the
/// download never crashes, never sizes a buffer from a forged length (the 512 MB allocation
/// limit makes that a finding), and ends with exactly the resource's bytes, or a typed error
/// and no file.
///
/// Each input first runs a real download of a 64-byte resource in four 16-byte parts that
/// fails after two parts, leaving its staging file and journal; the input then replaces the
/// journal's lines and patches the staging file, and the download is resumed.
///
/// Input: byte 0 picks the parts (even: four ranges of one URL, written at their offsets; odd:
/// four URLs without ranges, written in order), byte 1 is where the patch starts in the staging
/// file, then the journal's lines up to the first NUL byte, then the patch's bytes.
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

/// The resource: 64 bytes that no two offsets share.
let resource = Data((0..<64).map { UInt8(($0 * 37 + 11) & 0xFF) })

/// Serves the resource (its ranges, or its quarters as separate files), failing every part from
/// `failingFrom` on with a 404.
struct ResourceTransport: HTTPTransport {
    let failingFrom: Int

    func send(_ request: URLRequest) async throws -> (Data, URLResponse) {
        guard let url = request.url else { throw URLError(.badURL) }
        let name = url.lastPathComponent
        var status = 200
        var body = resource
        var headers: [String: String] = [:]
        if name.hasPrefix("q"), let quarter = Int(name.dropFirst()), (0..<4).contains(quarter) {
            body = resource.subdata(in: (quarter * 16)..<(quarter * 16 + 16))
            if quarter >= failingFrom { status = 404 }
        } else if let range = request.value(forHTTPHeaderField: "Range"), range.hasPrefix("bytes="),
            let dash = range.firstIndex(of: "-"),
            let first = Int(range[range.index(range.startIndex, offsetBy: 6)..<dash]),
            let last = Int(range[range.index(after: dash)...]), first <= last, last < resource.count
        {
            status = first / 16 >= failingFrom ? 404 : 206
            body = resource.subdata(in: first..<(last + 1))
            headers["Content-Range"] = "bytes \(first)-\(last)/\(resource.count)"
        }
        if status == 404 { body = Data() }
        guard
            let response = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)
        else { throw URLError(.badServerResponse) }
        return (body, response)
    }
}

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-journal-\(getpid())")

func parts(inOrder: Bool) -> [DownloadPart] {
    (0..<4).compactMap { index in
        if inOrder {
            return URL(string: "https://cdn.example/lesson/q\(index)").map { DownloadPart(url: $0) }
        }
        return URL(string: "https://cdn.example/lesson.bin").map {
            DownloadPart(url: $0, byteRange: ByteRange(length: 16, offset: UInt64(index) * 16))
        }
    }
}

func check(_ data: Data) async {
    guard data.count >= 2 else { return }
    let bytes = [UInt8](data)
    let inOrder = bytes[0] & 1 == 1
    let patchOffset = UInt64(bytes[1])
    let rest = bytes[2...]
    let split = rest.firstIndex(of: 0) ?? rest.endIndex
    let lines = Data(rest[rest.startIndex..<split])
    let patch = split < rest.endIndex ? Data(rest[(split + 1)...]) : Data()

    try? FileManager.default.removeItem(at: folder)
    let destination = folder.appendingPathComponent("lesson.bin")
    let parts = parts(inOrder: inOrder)
    let failing = DownloadEngine(
        concurrency: 1, retry: .none, clock: ContinuousClock(), transport: ResourceTransport(failingFrom: 2))
    guard (try? await failing.download(parts, to: destination)) == nil else { fatalError("the 404 was accepted") }

    // The journal and the staging file the failed run kept, tampered with.
    let journal = folder.appendingPathComponent(".lesson.bin.journal")
    let staging = folder.appendingPathComponent(".lesson.bin.partial")
    guard let text = try? String(contentsOf: journal, encoding: .utf8),
        let header = text.split(separator: "\n").first
    else { fatalError("the failed run kept no journal") }
    var tampered = Data((header + "\n").utf8)
    tampered.append(lines)
    guard (try? tampered.write(to: journal)) != nil, let handle = try? FileHandle(forUpdating: staging) else {
        fatalError("the kept files cannot be rewritten")
    }
    if !patch.isEmpty {
        try? handle.seek(toOffset: patchOffset)
        try? handle.write(contentsOf: patch)
    }
    try? handle.close()

    let engine = DownloadEngine(
        concurrency: 1, retry: .none, clock: ContinuousClock(), transport: ResourceTransport(failingFrom: 4))
    do {
        _ = try await engine.download(parts, to: destination)
    } catch {
        if FileManager.default.fileExists(atPath: destination.path) {
            fatalError("a failed resume left a file: \(error)")
        }
        return
    }
    guard let written = try? Data(contentsOf: destination) else { fatalError("no file after a success") }
    guard written == resource else {
        fatalError("the resumed file is not the resource: \(written.count) bytes, in order: \(inOrder)")
    }
}
