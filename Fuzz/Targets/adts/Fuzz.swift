import Foundation
import MediaContainers

/// Properties: any bytes read as ADTS frames or a typed error, never a trap; frames read from
/// the bytes in one piece equal those read in pieces of 1, 7 and 64 bytes; and each frame's
/// AudioSpecificConfig states its format.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: bytes, count: count)
    let whole = read(data, pieceSize: max(count, 1))
    for size in [1, 7, 64] {
        guard read(data, pieceSize: size) == whole else { fatalError("pieces of \(size) bytes read differently") }
    }
    if case .frames(let frames) = whole {
        for frame in frames {
            let config = [UInt8](frame.format.audioSpecificConfig)
            guard config.count == 2, config[0] >> 3 == frame.format.objectType else {
                fatalError("the AudioSpecificConfig does not state the object type")
            }
        }
    }
    return 0
}

enum Outcome: Equatable {
    case frames([ADTSFrame])
    case failure(ContainerError.Kind)
}

func read(_ data: Data, pieceSize: Int) -> Outcome {
    var reader = ADTSReader()
    var frames: [ADTSFrame] = []
    var start = data.startIndex
    do {
        while start < data.endIndex {
            let end = min(start + pieceSize, data.endIndex)
            frames += try reader.append(data[start..<end])
            start = end
        }
        return .frames(frames)
    } catch {
        return .failure(error.kind)
    }
}
