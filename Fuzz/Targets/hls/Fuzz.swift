import Foundation
import HLS

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
    switch parsed.playlist {
    case .multivariant(let master):
        _ = master.highestQualityAudio()
    case .media(let media):
        checkSegmentList(media.segments)
    }
    return 0
}

/// Property: a parsed (compact) segment list behaves as the array of its segments does.
func checkSegmentList(_ segments: HLSSegmentList) {
    let array = Array(segments)
    let materialized = HLSSegmentList(array)
    guard materialized == segments, materialized.hashValue == segments.hashValue else {
        fatalError("a parsed list differs from its own segments")
    }
    guard segments.totalDuration == array.reduce(0, { $0 + $1.duration }) || segments.totalDuration.isNaN else {
        fatalError("totalDuration differs")
    }
    var edited = segments
    edited.append(HLSSegment(uri: "appended.ts", duration: 1))
    guard edited.count == array.count + 1, Array(edited.dropLast()) == array, segments.count == array.count else {
        fatalError("appending changed the wrong list")
    }
}
