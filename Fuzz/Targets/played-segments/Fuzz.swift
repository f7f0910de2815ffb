import Foundation
import Progress

/// Property: formatting is stable: parse(format(s)) formats to the same string.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    guard let set = try? PlayedSegments.parse(text) else { return 0 }
    let formatted = PlayedSegments.format(set)
    guard let again = try? PlayedSegments.parse(formatted) else {
        fatalError("formatted segments do not parse: \(formatted)")
    }
    guard PlayedSegments.format(again) == formatted else { fatalError("format is not stable: \(formatted)") }
    return 0
}
