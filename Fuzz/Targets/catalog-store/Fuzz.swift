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
    // An untouched file reads back exactly. A damaged one reads as nothing, or as the same entry
    // (damage the JSON reader cannot see, such as whitespace); it may read back altered only if
    // the damage also rewrote the checksum to match: a forgery, which a CRC does not claim to stop.
    if content == original, entry?.data != payload { fatalError("an intact file did not read back") }
    if let entry, entry.data != payload || entry.storedAt != Date(timeIntervalSince1970: 1_700_000_000),
        checksum(of: content) == checksum(of: original)
    {
        fatalError("a damaged file was served altered under its original checksum")
    }
    if entry == nil, await reopened.problems.isEmpty { fatalError("a damaged file was not reported") }
    let now = Date(timeIntervalSince1970: 1_700_000_100)
    guard (try? await reopened.store(payload, for: "classes", at: now)) != nil,
        await reopened.entry(for: "classes")?.data == payload
    else { fatalError("storing over a corrupted file failed") }
}

/// The `crc32` field of an entry file, if it has one.
func checksum(of file: Data) -> UInt32? {
    guard let object = try? JSONSerialization.jsonObject(with: file) as? [String: Any] else { return nil }
    return (object["crc32"] as? NSNumber)?.uint32Value
}
