import Foundation
import MediaContainers

/// Input: a two-byte big-endian length, that many bytes of initialisation section, then one
/// media segment.
///
/// Properties: any bytes give samples or a typed error, never a trap; the segment read in one
/// piece gives the same samples (bytes, times, sync flags) as read in pieces of 1, 7 and 100
/// bytes; and every sample's data lies within the segment's size.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count >= 2 else { return 0 }
    let initLength = min(Int(bytes[0]) << 8 | Int(bytes[1]), count - 2)
    let initialization = Data(bytes: bytes + 2, count: initLength)
    let segment = Data(bytes: bytes + 2 + initLength, count: count - 2 - initLength)
    let whole = read(initialization, segment, pieceSize: max(segment.count, 1))
    for size in [1, 7, 100] {
        let pieces = read(initialization, segment, pieceSize: size)
        guard pieces == whole else { fatalError("pieces of \(size) bytes read differently:\n\(whole)\n\(pieces)") }
    }
    if case .samples(let samples) = whole {
        let total = samples.reduce(0) { $0 + $1.size }
        guard total <= segment.count else {
            fatalError("\(total) bytes of samples from a \(segment.count)-byte segment")
        }
    }
    return 0
}

/// What a sample is, for comparing two reads.
struct SampleFacts: Equatable {
    var size: Int
    var data: Data
    var decodeTime: Int64
    var presentationTime: Int64
    var duration: Int64?
    var isSync: Bool
}

enum Outcome: Equatable {
    case samples([SampleFacts])
    case failure(ContainerError.Kind)
}

func read(_ initialization: Data, _ segment: Data, pieceSize: Int) -> Outcome {
    do {
        var reader = try FragmentedMP4Reader(initialization: initialization)
        var samples: [MediaSample] = []
        var start = segment.startIndex
        while start < segment.endIndex {
            let end = min(start + pieceSize, segment.endIndex)
            samples += try reader.read(segment[start..<end])
            start = end
        }
        samples += try reader.finish()
        return .samples(
            samples.map {
                SampleFacts(
                    size: $0.data.count, data: $0.data, decodeTime: $0.decodeTime,
                    presentationTime: $0.presentationTime, duration: $0.duration, isSync: $0.isSync)
            })
    } catch {
        return .failure(error.kind)
    }
}
