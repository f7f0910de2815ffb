import Catalog
import Foundation

/// Property: whatever decodes as lessons re-encodes and decodes to the same lessons; HAL pages
/// and their links never trap.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: bytes, count: count)
    if let lessons = try? VideosAPI.lessons(from: data) {
        guard let encoded = try? JSONEncoder().encode(lessons),
            let decoded = try? JSONDecoder().decode([Lesson].self, from: encoded), decoded == lessons
        else { fatalError("lessons do not round-trip") }
    }
    if let page = try? HALPage.decode(data) {
        for section in page.sections { _ = section.url(["dtg": "true", "productsPerPage": "20"]) }
    }
    return 0
}
