import Foundation
import HLS

/// Properties of the URI resolver, for any reference in a remote playlist: it resolves to an
/// `http` or `https` URL or is a typed error (a remote playlist never reaches a local file or
/// another scheme), and a resolved URL resolves to itself (resolution is idempotent).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let reference = String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    guard let base = URL(string: "https://cdn.example/a/b/playlist.m3u8?token=1") else { return 0 }
    guard let url = try? HLSURIResolver.resolve(reference, against: base) else { return 0 }
    guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
        fatalError("a remote playlist reached \(url.absoluteString)")
    }
    guard let again = try? HLSURIResolver.resolve(url.absoluteString, against: base) else {
        fatalError("a resolved URL does not resolve: \(url.absoluteString)")
    }
    guard again == url else { fatalError("resolving twice differs: \(url.absoluteString) then \(again.absoluteString)") }
    return 0
}
