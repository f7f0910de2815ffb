import Foundation
import MediaContainers

/// Properties: any bytes read as an ID3 tag, no tag, or a typed error, never a trap; a tag's
/// length covers at least its header; a timestamp fits in 33 bits; and the tag reads the same
/// whatever follows it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: bytes, count: count)
    guard let tag = try? ID3Tag.read(data) else { return 0 }
    guard tag.length >= 10 else { fatalError("a tag shorter than its header") }
    if let stamp = tag.transportStreamTimestamp, stamp < 0 || stamp >= 1 << 33 {
        fatalError("a timestamp beyond 33 bits: \(stamp)")
    }
    if tag.length <= count {
        let alone = try? ID3Tag.read(data.prefix(tag.length))
        guard alone == tag else { fatalError("the bytes after the tag change it") }
    }
    return 0
}
