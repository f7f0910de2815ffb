import Foundation
import Progress

/// Properties: a decoded progress state re-encodes and decodes to itself, and merging two
/// states never covers less than either.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: bytes, count: count)
    guard let state = try? ProgressFormat.decode(data) else { return 0 }
    guard let again = try? ProgressFormat.decode(ProgressFormat.encode(state)), again == state else {
        fatalError("progress does not round-trip")
    }
    let merged = state.merged(with: state.closingGaps(shorterThan: 1))
    guard merged.watched.coveredLength + 1e-6 >= state.watched.coveredLength else { fatalError("merge lost coverage") }
    guard merged.merged(with: state) == merged else { fatalError("merge is not idempotent") }
    return 0
}
