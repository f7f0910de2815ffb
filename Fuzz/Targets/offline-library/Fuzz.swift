import Downloads
import Foundation
import OfflineLessons

/// Properties: any state file loads or is a typed error (never a trap); a loaded library never
/// names a file outside its folder; and what it saves loads again to the same states.
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

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-offline-library-\(getpid())")

func library() -> OfflineLibrary {
    OfflineLibrary(directory: folder) { _, _ in fatalError("the fuzz target never downloads") }
}

func check(_ data: Data) async {
    try? FileManager.default.removeItem(at: folder)
    guard (try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)) != nil,
        (try? data.write(to: folder.appendingPathComponent("offline-library.json"))) != nil
    else { fatalError("could not set up the folder") }
    let first = library()
    guard (try? await first.load()) != nil else { return }
    let states = await first.states
    for id in states.keys {
        if let file = await first.localFile(of: id),
            file.standardizedFileURL.deletingLastPathComponent().path != folder.standardizedFileURL.path
        {
            fatalError("\(id) names a file outside the folder: \(file.path)")
        }
    }
    _ = await first.totalBytes
    let second = library()
    guard (try? await second.load()) != nil else { fatalError("a saved state file does not load") }
    guard await second.states == states else { fatalError("states changed across a save and load") }
}
