import Catalog
import Foundation

/// Properties: whatever bytes sit in a catalog store's file, reading it never traps; an intact
/// file reads back exactly; a file that reads as nothing is reported; and storing afresh over
/// any damage reads back exactly.
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

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-catalog-store-\(getpid())")

func check(_ data: Data) async {
    try? FileManager.default.removeItem(at: folder)
    let store = CatalogStore(directory: folder)
    let payload = Data("[{\"id\":\"1\"}]".utf8)
    guard (try? await store.store(payload, for: "classes", at: Date(timeIntervalSince1970: 1_700_000_000))) != nil,
        let files = try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil),
        let file = files.first(where: { !$0.lastPathComponent.hasPrefix(".") })
    else { fatalError("could not set up the store") }
    // An odd first byte patches the valid file (XOR at an offset, optionally cutting it there),
    // so the fuzzer starts from a real header; an even one replaces the file outright.
    var content = data
    let original = (try? Data(contentsOf: file)) ?? Data()
    if let mode = data.first, mode & 1 == 1, var valid = Optional(original), !valid.isEmpty {
        let offset = Int(data.dropFirst().first ?? 0) % valid.count
        for (index, byte) in data.dropFirst(2).enumerated() where offset + index < valid.count {
            valid[valid.startIndex + offset + index] ^= byte
        }
        content = mode & 2 == 2 ? valid.prefix(offset) : valid
    }
    guard (try? content.write(to: file)) != nil else { fatalError("could not corrupt the file") }
    let reopened = CatalogStore(directory: folder)
    let entry = await reopened.entry(for: "classes")
    // An untouched file reads back exactly; a damaged one reads as nothing or as some entry (the
    // format has no checksum, so a flipped bit inside the payload is not detected).
    if content == original, entry?.data != payload { fatalError("an intact file did not read back") }
    if entry == nil, await reopened.problems.isEmpty { fatalError("a damaged file was not reported") }
    let now = Date(timeIntervalSince1970: 1_700_000_100)
    guard (try? await reopened.store(payload, for: "classes", at: now)) != nil,
        await reopened.entry(for: "classes")?.data == payload
    else { fatalError("storing over a corrupted file failed") }
}
