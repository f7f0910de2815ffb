import Foundation
import HLS

/// Property: an attribute list (on a variant tag, where the parser reads it by the RFC grammar)
/// that parses is written back to text that parses to the same attributes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let list = String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    if list.contains(where: \.isNewline) { return 0 }
    let text = "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,\(list)\nv.m3u8\n"
    guard let parsed = try? HLSParser().parse(text) else { return 0 }
    guard case .multivariant(let master) = parsed.playlist, let variant = master.variants.first else {
        fatalError("a variant line did not give a variant")
    }
    let written = HLSWriter.write(parsed.playlist)
    guard case .multivariant(let again)? = try? HLSParser().parse(written).playlist,
        again.variants.first?.attributes == variant.attributes
    else { fatalError("attributes do not round-trip:\n\(written)") }
    for attribute in variant.attributes {
        _ = variant.attributes.decimalInteger(attribute.name)
        _ = variant.attributes.signedDecimalFloat(attribute.name)
        _ = variant.attributes.resolution(attribute.name)
        _ = variant.attributes.hexadecimalSequence(attribute.name)
    }
    return 0
}
