import Foundation
import MediaContainers

/// Properties: any bytes demux to packets or a typed error, never a trap; and demuxing them in
/// two pieces, split anywhere, gives the same packets (or the same error) as in one piece.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: bytes, count: count)
    let whole = demux([data])
    let split = count > 0 ? Int(bytes[0]) * count / 256 : 0
    let pieces = demux([data.prefix(split), data.dropFirst(split)])
    guard whole == pieces else { fatalError("split at \(split) changes the result:\n\(whole)\n\(pieces)") }
    return 0
}

enum Outcome: Equatable {
    case packets([ElementaryStreamPacket])
    case failure(ContainerError.Kind)
}

func demux(_ parts: [Data]) -> Outcome {
    var demuxer = TransportStreamDemuxer()
    var packets: [ElementaryStreamPacket] = []
    do {
        for part in parts { packets += try demuxer.append(part) }
        packets += try demuxer.finish()
        return .packets(packets)
    } catch {
        return .failure(error.kind)
    }
}
