import Foundation

/// Writes one part's bytes into the staging file at the part's offset as they arrive, with
/// positional writes, so that concurrent parts never share a file position.
struct PartSink: Sendable {
    let files: StagingFiles
    let handle: FileHandle
    let offset: UInt64
    let gauge: BufferGauge
    /// The part's first bytes already in the staging file (a stopped transfer's), if any: the
    /// transfer asks for the rest only.
    var prefix: PartPrefix? = nil
    /// Where the transfer reports how far it got, for the journal when it stops.
    var progress: PartProgress? = nil

    /// Writes `bytes` at `position` within the part.
    ///
    /// - Throws: ``DownloadError`` of kind ``DownloadError/Kind/file(operation:reason:code:)``.
    func write(_ bytes: Data.SubSequence, at position: UInt64) throws {
        gauge.hold(bytes.count)
        defer { gauge.release(bytes.count) }
        try files.write(bytes, at: offset + position, descriptor: handle.fileDescriptor)
    }
}
