import Foundation
import MediaContainers

/// The journal of a lesson's one-pass remux: a header naming the download, then one record per
/// checkpoint (a segment boundary), each appended and flushed after the media data it vouches for
/// was flushed.
///
/// A record holds what a resume needs: the steps done, the media data's length and the digest of
/// the bytes written since the record before, the source bytes received and the progress shown,
/// the remuxer's state (tracks, timeline, formats, stream choices), and the sample records of
/// the samples since the record before, which ``MP4Writer`` reads back to write the index. Each
/// record is framed by its length and a digest, so a record cut by a crash, or damaged, ends what
/// the journal vouches for; the partial file is then cut back to the last good record's length.
///
/// Memory holds only where each record's sample records are, never the records themselves.
struct RemuxJournal {
    /// One checkpoint, as read back.
    struct Checkpoint {
        var stepsDone: Int
        var dataLength: UInt64
        var dataDigest: UInt64
        var bytesReceived: UInt64
        var fractionFloor: Double
        var state: SegmentRemuxer.State
    }

    let url: URL
    private let descriptor: Int32
    private let fileSystem: any DownloadFileSystem
    /// The length of the journal's good part (where the next record goes).
    private(set) var length: UInt64
    /// Where each record's encoded sample records are in the file.
    private(set) var recordRegions: [(offset: UInt64, length: Int)]
    /// The last good checkpoint, if any.
    private(set) var last: Checkpoint?
    /// The fraction a pause noted after the last checkpoint (or before the first), if any.
    private(set) var notedFloor: Double?

    private static let magic: UInt32 = 0x4D43_5243  // "MCRC"
    /// The magic of a note of the fraction shown after the last checkpoint.
    private static let floorMagic: UInt32 = 0x4D43_5246  // "MCRF"
    /// The magic of the record that says the file was finished and is about to be renamed.
    private static let doneMagic: UInt32 = 0x4D43_5244  // "MCRD"

    /// Opens the journal of a download identified by `header`, creating it, or resuming the one
    /// there when its header matches; records are trusted only while their media data in
    /// `partial` has its recorded digest.
    ///
    /// - Throws: ``DownloadError`` of kind ``DownloadError/Kind/file(operation:reason:code:)``.
    static func open(
        url: URL, header: String, partial: RemuxOutput?, fileSystem: any DownloadFileSystem
    ) throws(DownloadError) -> RemuxJournal {
        let headerBytes = Array((header + "\n").utf8)
        if let existing = try? Data(contentsOf: url), existing.starts(with: headerBytes), let partial {
            var journal = try Self.attach(url: url, fileSystem: fileSystem)
            journal.load(existing, headerLength: headerBytes.count, partial: partial)
            // What follows the last good record (a torn one) is cut off.
            if journal.length < UInt64(existing.count) {
                do {
                    try fileSystem.willPerform(.write, on: url)
                } catch {
                    journal.close()
                    throw DownloadError.file("cut", error, path: url.path)
                }
                guard ftruncate(journal.descriptor, off_t(journal.length)) == 0 else {
                    let code = errno
                    journal.close()
                    throw DownloadError.file("cut", errno: code, path: url.path)
                }
            }
            return journal
        }
        fileSystem.remove(url)
        do {
            try fileSystem.willPerform(.create, on: url)
        } catch {
            throw DownloadError.file("create", error, path: url.path)
        }
        do {
            try Data(headerBytes).write(to: url)
        } catch {
            throw DownloadError.file("create", error, path: url.path)
        }
        var journal = try Self.attach(url: url, fileSystem: fileSystem)
        journal.length = UInt64(headerBytes.count)
        return journal
    }

    private static func attach(url: URL, fileSystem: any DownloadFileSystem) throws(DownloadError) -> RemuxJournal {
        let descriptor = openForUpdate(url.path)
        guard descriptor >= 0 else {
            throw DownloadError.file("open", errno: errno, path: url.path)
        }
        return RemuxJournal(
            url: url, descriptor: descriptor, fileSystem: fileSystem, length: 0, recordRegions: [], last: nil)
    }

    /// Reads the records of `bytes` after the header, keeping those whose framing, digest and
    /// media data check out, in order, up to the first that does not.
    private mutating func load(_ bytes: Data, headerLength: Int, partial: RemuxOutput) {
        length = UInt64(headerLength)
        var position = headerLength
        var dataEnd = MP4Writer.headerLength
        var previousEnd: UInt64 = 0
        let fileLength = partial.length
        while let record = Self.record(in: bytes, at: position) {
            guard let checkpoint = record.checkpoint else { break }
            let end = MP4Writer.headerLength + checkpoint.dataLength
            // The media data this record vouches for: from the previous record's end (the file's
            // start for the first), as the output digested it while writing.
            guard end >= dataEnd, end <= fileLength,
                Self.digest(of: partial, from: previousEnd, to: end) == checkpoint.dataDigest
            else { break }
            previousEnd = end
            dataEnd = end
            recordRegions.append(record.records)
            last = checkpoint
            position = record.end
            length = UInt64(position)
        }
        // A pause after the last checkpoint may have left a note of the fraction shown.
        if let floor = Self.floorNote(in: bytes, at: position) {
            notedFloor = max(last?.fractionFloor ?? 0, floor)
        }
    }

    /// The digest of `output`'s bytes from `start` to `end`, read a mebibyte at a time.
    private static func digest(of output: RemuxOutput, from start: UInt64, to end: UInt64) -> UInt64? {
        var digest = ChunkDigest()
        var at = start
        while at < end {
            let count = Int(min(end - at, 1 << 20))
            guard var piece = try? output.read(at: at, count: count), piece.count == count else { return nil }
            // The mdat's size is written only when the file is finished: a kill between that
            // write and the rename must not void the first checkpoint, so the field is read as
            // the zero it was when digested.
            let field = (MP4Writer.headerLength - 8)..<MP4Writer.headerLength
            if at < field.upperBound {
                for offset in max(at, field.lowerBound)..<min(at + UInt64(count), field.upperBound) {
                    piece[piece.startIndex + Int(offset - at)] = 0
                }
            }
            piece.withUnsafeBytes { digest.add($0) }
            at += UInt64(count)
        }
        return digest.value
    }

    /// A record framed at `position`: its checkpoint (`nil` when it does not decode) and where its
    /// sample records are; `nil` when no whole, intact record is there.
    private static func record(in bytes: Data, at position: Int) -> (
        checkpoint: Checkpoint?, records: (offset: UInt64, length: Int), end: Int
    )? {
        bytes.withUnsafeBytes { raw -> (Checkpoint?, (UInt64, Int), Int)? in
            guard let frame = JournalFrame.decode(raw, at: position), frame.magic == Self.magic else { return nil }
            var fields = ByteCursor(raw, from: frame.payload.lowerBound, to: frame.payload.upperBound)
            guard let steps = fields.uint32(), let dataLength = fields.uint64(), let dataDigest = fields.uint64(),
                let received = fields.uint64(), let floorBits = fields.uint64(), let stateLength = fields.uint32(),
                Int(stateLength) <= fields.remaining
            else { return nil }
            let stateBytes = Data(fields.peek(Int(stateLength)))
            _ = fields.skip(Int(stateLength))
            guard let recordsLength = fields.uint32(), Int(recordsLength) == fields.remaining else { return nil }
            let state = try? JSONDecoder().decode(SegmentRemuxer.State.self, from: stateBytes)
            let checkpoint = state.map {
                Checkpoint(
                    stepsDone: Int(steps), dataLength: dataLength, dataDigest: dataDigest, bytesReceived: received,
                    fractionFloor: Double(bitPattern: floorBits), state: $0)
            }
            return (checkpoint, (UInt64(fields.position), Int(recordsLength)), frame.end)
        }
    }

    /// Appends a checkpoint and flushes the journal. Call it only after the media data it vouches
    /// for is flushed.
    ///
    /// - Throws: ``DownloadError`` of kind ``DownloadError/Kind/file(operation:reason:code:)``.
    mutating func append(
        _ checkpoint: SegmentRemuxer.Checkpoint, stepsDone: Int, dataDigest: UInt64, bytesReceived: UInt64,
        fractionFloor: Double
    ) throws(DownloadError) {
        let state: Data
        do {
            state = try JSONEncoder().encode(checkpoint.state)
        } catch {
            throw DownloadError.file("record progress in", error, path: url.path)
        }
        var payload: [UInt8] = []
        payload.reserveCapacity(40 + state.count + checkpoint.encodedRecords.count)
        JournalFrame.appendBigEndian(UInt64(stepsDone), width: 4, to: &payload)
        JournalFrame.appendBigEndian(checkpoint.dataLength, width: 8, to: &payload)
        JournalFrame.appendBigEndian(dataDigest, width: 8, to: &payload)
        JournalFrame.appendBigEndian(bytesReceived, width: 8, to: &payload)
        JournalFrame.appendBigEndian(fractionFloor.bitPattern, width: 8, to: &payload)
        JournalFrame.appendBigEndian(UInt64(state.count), width: 4, to: &payload)
        payload.append(contentsOf: state)
        JournalFrame.appendBigEndian(UInt64(checkpoint.encodedRecords.count), width: 4, to: &payload)
        let recordsStart = payload.count
        payload.append(contentsOf: checkpoint.encodedRecords)
        let frame = JournalFrame.encode(payload, magic: Self.magic)
        try writeAndFlush(frame, operation: "record progress in")
        recordRegions.append(
            (length + UInt64(JournalFrame.headerLength + recordsStart), checkpoint.encodedRecords.count))
        length += UInt64(frame.count)
    }

    /// Writes a note of the fraction last shown after the last checkpoint, where the next
    /// checkpoint will go: a resume starts its progress there. The next checkpoint overwrites it
    /// (a checkpoint record is longer); a torn note fails its digest and is ignored. Best effort:
    /// not flushed, and a failure is ignored, since it only spares the learner a ring that steps
    /// back.
    mutating func noteFloor(_ floor: Double) {
        // Written even when it equals the note read at open: that note was cut off with the
        // journal's tail, and a second pause must not lose it.
        guard floor.isFinite, floor > (last?.fractionFloor ?? 0) else { return }
        var payload: [UInt8] = []
        JournalFrame.appendBigEndian(floor.bitPattern, width: 8, to: &payload)
        let frame = JournalFrame.encode(payload, magic: Self.floorMagic)
        guard (try? fileSystem.willPerform(.write, on: url)) != nil else { return }
        _ = frame.withUnsafeBytes { raw in pwrite(descriptor, raw.baseAddress, raw.count, off_t(length)) }
        notedFloor = floor
    }

    /// What a finished download leaves in its journal: the file's size and the streams it
    /// left out.
    struct Completion: Codable, Hashable {
        var byteCount: UInt64
        var ignoredStreams: [String]
        /// Audio frames left out where the source overlapped itself.
        var framesTrimmed: Int
        /// Video samples left out before the first decodable picture.
        var undecodableSamples: Int
    }

    /// Records that the file is finished and flushed, just before it is renamed into place: a
    /// run killed after the rename and before the journal is removed finds the download done
    /// instead of starting it again. A resume from the partial file (the rename did not happen)
    /// reads only checkpoints and cuts this record off.
    ///
    /// - Throws: ``DownloadError`` of kind ``DownloadError/Kind/file(operation:reason:code:)``.
    mutating func markDone(_ completion: Completion) throws(DownloadError) {
        let payload: [UInt8]
        do {
            payload = Array(try JSONEncoder().encode(completion))
        } catch {
            throw DownloadError.file("record the end in", error, path: url.path)
        }
        try writeAndFlush(JournalFrame.encode(payload, magic: Self.doneMagic), operation: "record the end in")
    }

    /// Writes `frame` where the next record goes and flushes the journal.
    ///
    /// - Throws: ``DownloadError`` of kind ``DownloadError/Kind/file(operation:reason:code:)``, naming
    ///   `operation` for a failed write.
    private func writeAndFlush(_ frame: [UInt8], operation: String) throws(DownloadError) {
        do {
            try fileSystem.willPerform(.write, on: url)
        } catch {
            throw DownloadError.file(operation, error, path: url.path)
        }
        let wrote = frame.withUnsafeBytes { raw in pwrite(descriptor, raw.baseAddress, raw.count, off_t(length)) }
        guard wrote == frame.count else {
            throw DownloadError.file(operation, errno: errno, path: url.path)
        }
        do {
            try fileSystem.willPerform(.flush, on: url)
        } catch {
            throw DownloadError.file("flush", error, path: url.path)
        }
        guard fsync(descriptor) == 0 else {
            throw DownloadError.file("flush", errno: errno, path: url.path)
        }
    }

    /// The completion recorded in the journal at `url` for the download `header` names, if its
    /// records, checked one by one, end with one.
    ///
    /// - Complexity: O(*n*) in the journal's size.
    static func completion(at url: URL, header: String) -> Completion? {
        let headerBytes = Array((header + "\n").utf8)
        guard let bytes = try? Data(contentsOf: url), bytes.starts(with: headerBytes) else { return nil }
        var position = headerBytes.count
        var found: Completion?
        while let (magic, payload, end) = frameAt(bytes, position) {
            found = magic == doneMagic ? try? JSONDecoder().decode(Completion.self, from: payload) : nil
            position = end
        }
        return found
    }

    /// The intact frame at `position` (any magic), or `nil`.
    private static func frameAt(_ bytes: Data, _ position: Int) -> (magic: UInt32, payload: Data, end: Int)? {
        bytes.withUnsafeBytes { raw -> (UInt32, Data, Int)? in
            guard let frame = JournalFrame.decode(raw, at: position) else { return nil }
            return (frame.magic, Data(raw[frame.payload]), frame.end)
        }
    }

    /// The fraction of a floor note at `position`, or `nil` when no intact note is there.
    private static func floorNote(in bytes: Data, at position: Int) -> Double? {
        bytes.withUnsafeBytes { raw -> Double? in
            guard let frame = JournalFrame.decode(raw, at: position), frame.magic == Self.floorMagic,
                frame.payload.count == 8
            else { return nil }
            var fields = ByteCursor(raw, from: frame.payload.lowerBound, to: frame.payload.upperBound)
            guard let bits = fields.uint64() else { return nil }
            let floor = Double(bitPattern: bits)
            return floor.isFinite && floor >= 0 && floor < 1 ? floor : nil
        }
    }

    /// Hands every stored sample record, in order, to `visit`: a replay for
    /// ``MP4Writer/finish(replaying:)``.
    ///
    /// - Throws: ``ContainerError`` when a region cannot be read or decoded, or what `visit`
    ///   throws.
    func replay(_ visit: (SampleRecord) throws(ContainerError) -> Void) throws(ContainerError) {
        var coder = SampleRecordCoder()
        for region in recordRegions {
            var bytes = [UInt8](repeating: 0, count: region.length)
            let got = bytes.withUnsafeMutableBytes { raw in
                pread(descriptor, raw.baseAddress, raw.count, off_t(region.offset))
            }
            guard got == region.length else {
                throw ContainerError(.invalidCheckpoint(reason: "the journal's records cannot be read"))
            }
            try withBytes(of: bytes) { (raw) throws(ContainerError) in try coder.decode(raw, visit) }
        }
    }

    /// Closes the file.
    func close() {
        closeDescriptor(descriptor)
    }
}

/// Opens `path` for reading and writing.
private func openForUpdate(_ path: String) -> Int32 {
    open(path, O_RDWR | O_CLOEXEC)
}

/// Closes a file descriptor.
private func closeDescriptor(_ descriptor: Int32) {
    close(descriptor)
}
