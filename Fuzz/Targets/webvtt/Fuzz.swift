import Foundation
import MediaContainers

/// Properties: any bytes read as WebVTT give a document or a typed `malformedWebVTT` error, never
/// a trap; a document written back reads as the same document; and its cues on the media's clock
/// keep their lengths (RFC 8216 §3.5's map only moves them).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    let document: WebVTTDocument
    do {
        document = try WebVTTDocument(parsing: text)
    } catch {
        guard case .malformedWebVTT = error.kind else { fatalError("an error of another kind: \(error)") }
        return 0
    }
    guard let again = try? WebVTTDocument(parsing: document.text), again == document else {
        fatalError("written back, the document reads differently")
    }
    for (cue, placed) in zip(document.cues, SubtitleCue.cues(of: document, discontinuity: 0)) {
        guard placed.end - placed.start == (cue.end - cue.start) * 90 else { fatalError("a cue changed length") }
    }
    return 0
}
