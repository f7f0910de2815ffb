import Foundation
import SliderFlow

/// Property: a body that decodes decodes the same when the server double-encodes it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: bytes, count: count)
    guard let body = try? SliderWireFormat.decode(data) else { return 0 }
    guard let text = String(data: data, encoding: .utf8),
        let wrapped = try? JSONEncoder().encode(text)
    else { return 0 }
    // A body that is itself a JSON string was already unwrapped once; wrapping it twice is not the protocol.
    // (JSON allows blanks before the value.)
    let blanks: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D]
    if data.first(where: { !blanks.contains($0) }) == UInt8(ascii: "\"") { return 0 }
    guard let again = try? SliderWireFormat.decode(wrapped), again == body else {
        fatalError("double-encoded form decodes differently")
    }
    return 0
}
