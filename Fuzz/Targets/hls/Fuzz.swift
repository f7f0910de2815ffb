import Foundation
import Player

/// Property: a playlist that parses writes back to text that parses to the same playlist.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: bytes, count: count)
    let options = HLSParser.Options(allowsByteOrderMark: true, playlistURL: URL(string: "https://f.example/p.m3u8?a=1"))
    guard let parsed = try? HLSParser(options: options).parse(data) else { return 0 }
    let written = HLSWriter.write(parsed.playlist)
    guard let reparsed = try? HLSParser(options: options).parse(written) else {
        fatalError("written playlist does not parse:\n\(written)")
    }
    guard reparsed.playlist == parsed.playlist else { fatalError("round trip differs:\n\(written)") }
    if case .multivariant(let master) = parsed.playlist { _ = master.highestQualityAudio() }
    return 0
}
