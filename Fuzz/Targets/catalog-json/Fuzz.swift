import Catalog
import Foundation

/// Properties: whatever decodes as lessons re-encodes and decodes to the same lessons; a body the
/// failing policy reads, the skipping policy reads the same with nothing skipped, and a body it
/// refuses for a bad entry, the skipping policy reads with at least one skipped; HAL pages and
/// their links never trap, whatever the policy.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: bytes, count: count)
    let strict = try? VideosAPI.lessons(from: data)
    let lenient = try? VideosAPI.lessons(from: data, policy: .skip)
    if let strict {
        guard let lenient, lenient == strict, strict.skipped.isEmpty else { fatalError("the policies disagree") }
    } else if let lenient, lenient.skipped.isEmpty {
        fatalError("refused by the failing policy, yet nothing was skipped")
    }
    if let lessons = lenient?.lessons {
        guard let encoded = try? JSONEncoder().encode(lessons),
            let decoded = try? JSONDecoder().decode([Lesson].self, from: encoded), decoded == lessons
        else { fatalError("lessons do not round-trip") }
    }
    for policy in [BadItemPolicy.fail, .skip] {
        if let page = try? HALPage.decode(data, policy: policy) {
            for section in page.sections { _ = section.url(["dtg": "true", "productsPerPage": "20"]) }
        }
    }
    return 0
}
