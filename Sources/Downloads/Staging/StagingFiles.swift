import Foundation

/// The hidden files of a download in progress: the staging file and the journal of parts
/// written, beside the destination.
///
/// The journal's first line identifies the download (a hash of its parts); each following line
/// is `index length digest` for a part whose bytes were flushed before the line was appended,
/// or `p index length digest` for the first `length` bytes of a part with a byte range that a
/// pause or a failure stopped (its transfer resumes from there). A crash can lose at most the
/// last line, whose part is then fetched again.
struct StagingFiles: Sendable {
    let destination: URL
    let staging: URL
    let journalURL: URL
    /// The validators of the remote resources (see ``Validators``).
    let validatorsURL: URL
    let fingerprint: String
    /// The parts: each one's length, when it has a byte range, is the only one a journal line
    /// may give it, and each one's offset is where it was written.
    let plan: DownloadPlan
    /// The file system the files are in (the device's, or a test's that fails operations).
    let fileSystem: any DownloadFileSystem
    var partCount: Int { plan.count }
    /// Whether the parts are written one after another (not every part has a byte range), so
    /// that the journal must list them in order.
    var inOrder: Bool { !plan.isPositioned }

    init(destination: URL, plan: DownloadPlan, fileSystem: any DownloadFileSystem) {
        self.destination = destination
        let folder = destination.deletingLastPathComponent()
        staging = folder.appendingPathComponent(".\(destination.lastPathComponent).partial")
        journalURL = folder.appendingPathComponent(".\(destination.lastPathComponent).journal")
        validatorsURL = folder.appendingPathComponent(".\(destination.lastPathComponent).validators")
        fingerprint = plan.fingerprint
        self.plan = plan
        self.fileSystem = fileSystem
    }

    /// The journal of a download of these parts: resumed when the staging file and a matching
    /// journal exist, fresh otherwise.
    ///
    /// Each line is `index length digest`, the digest a ``ChunkDigest`` of the part's bytes. On
    /// resume, every part the journal lists is read back from the staging file and checked
    /// against its length and digest before it is trusted; a part that fails (never written,
    /// torn, overwritten) is fetched again, and in order mode so is every part after it. The
    /// journal is then rewritten with only the parts that passed.
    ///
    /// - Complexity: O(*b*) for the *b* bytes the journal vouches for, read once.
    func openJournal() throws -> Journal {
        let header = "mediacore-download v3 \(fingerprint) \(partCount)"
        if FileManager.default.fileExists(atPath: staging.path),
            let text = try? String(contentsOf: journalURL, encoding: .utf8)
        {
            var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            if lines.first.map(String.init) == header {
                // The last line is complete only if the text ends with a line break.
                if !text.hasSuffix("\n") { lines.removeLast() }
                var listed: [(index: Int, length: UInt64, digest: UInt64)] = []
                var prefixes: [Int: (length: UInt64, digest: UInt64)] = [:]
                var seen: Set<Int> = []
                var bytes: UInt64 = 0
                for line in lines.dropFirst() where !line.isEmpty {
                    let fields = line.split(separator: " ")
                    if fields.first == "p" {
                        // A stopped part's first bytes: only for a part with a byte range, shorter
                        // than it, and only the last such line of a part counts.
                        guard fields.count == 4, let index = Int(fields[1]), let length = UInt64(fields[2]),
                            let digest = UInt64(fields[3], radix: 16), index >= 0, index < partCount
                        else { break }
                        // A prefix of no use (empty, or the whole part) is passed over, not trusted.
                        if let whole = plan.length(of: index), length > 0, length < whole {
                            prefixes[index] = (length, digest)
                        }
                        continue
                    }
                    // A line that is malformed, out of range, repeated, or whose length would
                    // overflow the total ends what the journal vouches for.
                    guard fields.count == 3, let index = Int(fields[0]), let length = UInt64(fields[1]),
                        let digest = UInt64(fields[2], radix: 16), index >= 0, index < partCount,
                        !seen.contains(index)
                    else { break }
                    let (sum, overflow) = bytes.addingReportingOverflow(length)
                    guard !overflow else { break }
                    // A part with a byte range has one possible length; any other is tampering.
                    if let expected = plan.length(of: index), expected != length { break }
                    // Written in order, the journal is a prefix 0, 1, 2…: after a gap its bytes
                    // would not be where the file's length says.
                    if inOrder, index != listed.count { break }
                    seen.insert(index)
                    listed.append((index, length, digest))
                    bytes = sum
                }
                let verified = verify(listed)
                let done = Set(verified.map(\.index))
                let partial = inOrder ? [:] : verifyPrefixes(prefixes.filter { !done.contains($0.key) })
                var rewritten = header + "\n"
                for part in verified { rewritten += Journal.line(part.index, length: part.length, digest: part.digest) }
                for (index, prefix) in partial.sorted(by: { $0.key < $1.key }) {
                    rewritten += Journal.prefixLine(index, length: prefix.length, digest: prefix.digest.value)
                }
                do {
                    try fileSystem.willPerform(.write, on: journalURL)
                    try Data(rewritten.utf8).write(to: journalURL, options: .atomic)
                } catch {
                    throw DownloadError.file("rewrite", error, path: journalURL.path)
                }
                let handle = try open(journalURL, append: true)
                return Journal(
                    handle: handle, url: journalURL, stagingURL: staging, fileSystem: fileSystem, completed: done,
                    bytesWritten: verified.reduce(0) { $0 + $1.length }, partial: partial)
            }
        }
        remove()
        try createFolder()
        do {
            try fileSystem.willPerform(.create, on: journalURL)
            try Data((header + "\n").utf8).write(to: journalURL)
        } catch {
            throw DownloadError.file("create", error, path: journalURL.path)
        }
        return Journal(
            handle: try open(journalURL, append: true), url: journalURL, stagingURL: staging,
            fileSystem: fileSystem, completed: [],
            bytesWritten: 0, partial: [:])
    }

    /// The listed parts whose bytes in the staging file have their recorded length and digest:
    /// in order mode the longest prefix that passes, otherwise every part that passes.
    ///
    /// A part is read in pieces of at most 1 MiB as it is hashed, and only when the file holds
    /// all of it: a forged length (in order mode any length is possible) never sizes a buffer.
    ///
    /// - Complexity: O(*b*) time for the *b* bytes that the file holds for the listed parts, and
    ///   O(1) memory beyond one piece.
    private func verify(_ listed: [(index: Int, length: UInt64, digest: UInt64)]) -> [(
        index: Int, length: UInt64, digest: UInt64
    )] {
        guard !listed.isEmpty, let handle = try? FileHandle(forReadingFrom: staging),
            let fileSize = try? handle.seekToEnd()
        else { return [] }
        defer { try? handle.close() }
        var passed: [(index: Int, length: UInt64, digest: UInt64)] = []
        var inOrderOffset: UInt64 = 0
        for part in listed {
            let offset = inOrder ? inOrderOffset : plan.offset(of: part.index)
            inOrderOffset &+= part.length  // the listed lengths' sum was checked for overflow
            let fits = offset <= fileSize && part.length <= fileSize - offset
            if fits, Self.digest(of: handle, from: offset, length: part.length)?.value == part.digest {
                passed.append(part)
            } else if inOrder {
                break
            }
        }
        return passed
    }

    /// The stopped parts' first bytes that the staging file holds with their recorded digest,
    /// each with its digest's state, to go on hashing the rest of the part from.
    ///
    /// - Complexity: O(*b*) time for the *b* bytes of the prefixes, and O(1) memory beyond one
    ///   piece.
    private func verifyPrefixes(_ prefixes: [Int: (length: UInt64, digest: UInt64)]) -> [Int: PartPrefix] {
        guard !prefixes.isEmpty, let handle = try? FileHandle(forReadingFrom: staging),
            let fileSize = try? handle.seekToEnd()
        else { return [:] }
        defer { try? handle.close() }
        var passed: [Int: PartPrefix] = [:]
        for (index, prefix) in prefixes {
            let offset = plan.offset(of: index)
            guard offset <= fileSize, prefix.length <= fileSize - offset,
                let digest = Self.digest(of: handle, from: offset, length: prefix.length),
                digest.value == prefix.digest
            else { continue }
            passed[index] = PartPrefix(length: prefix.length, digest: digest)
        }
        return passed
    }

    /// The ``ChunkDigest`` of `length` bytes of `handle` from `offset`, read in pieces of at most
    /// 1 MiB; `nil` when they cannot all be read.
    private static func digest(of handle: FileHandle, from offset: UInt64, length: UInt64) -> ChunkDigest? {
        var hash = ChunkDigest()
        var remaining = length
        do {
            try handle.seek(toOffset: offset)
            while remaining > 0 {
                let piece = Int(min(remaining, 1 << 20))
                guard let data = try handle.read(upToCount: piece), data.count == piece else { return nil }
                data.withUnsafeBytes { hash.add($0) }
                remaining -= UInt64(piece)
            }
        } catch {
            return nil
        }
        return hash
    }

    /// The staging file, created if needed. Bytes past what the journal vouches for (a crash may
    /// have left part of an unrecorded part at the end) are overwritten by the parts written
    /// next, and cut off when the file is finished.
    func openStaging(truncatingTo bytes: UInt64) throws -> FileHandle {
        if !FileManager.default.fileExists(atPath: staging.path) {
            do {
                try fileSystem.willPerform(.create, on: staging)
                try Data().write(to: staging)
            } catch {
                throw DownloadError.file("create", error, path: staging.path)
            }
        }
        let handle = try open(staging, append: false)
        return handle
    }

    func write(_ data: Data, at offset: UInt64, to handle: FileHandle) throws {
        do {
            try fileSystem.willPerform(.write, on: staging)
            try handle.seek(toOffset: offset)
            try handle.write(contentsOf: data)
        } catch {
            throw DownloadError.file("write", error, path: staging.path)
        }
    }

    /// Writes `bytes` at `offset` with `pwrite(2)`, which moves no shared file position, so
    /// parts streaming at once each write their own place.
    func write(_ bytes: Data.SubSequence, at offset: UInt64, descriptor: Int32) throws {
        do {
            try fileSystem.willPerform(.write, on: staging)
        } catch {
            throw DownloadError.file("write", error, path: staging.path)
        }
        var position = offset
        var rest = bytes
        while !rest.isEmpty {
            let wrote = rest.withUnsafeBytes { buffer in
                pwrite(descriptor, buffer.baseAddress, buffer.count, off_t(clamping: position))
            }
            if wrote < 0, errno == EINTR { continue }
            guard wrote > 0 else {
                throw DownloadError.file("write", errno: errno, path: staging.path)
            }
            rest = rest.dropFirst(wrote)
            position += UInt64(wrote)
        }
    }

    /// Cuts the staging file to `byteCount`, flushes it, and renames it over the destination.
    func finish(handle: FileHandle, byteCount: UInt64) throws {
        do {
            try fileSystem.willPerform(.write, on: staging)
            try handle.truncate(atOffset: byteCount)
            try fileSystem.willPerform(.flush, on: staging)
            try handle.synchronize()
        } catch {
            throw DownloadError.file("flush", error, path: staging.path)
        }
        // rename(2) replaces the destination atomically: readers see the old file or the new one.
        guard fileSystem.allows(.rename, on: destination), rename(staging.path, destination.path) == 0 else {
            throw DownloadError.file("move into place", errno: errno, path: destination.path)
        }
        fileSystem.remove(journalURL)
        fileSystem.remove(validatorsURL)
    }

    /// Removes the staging file and the journal.
    func remove() {
        fileSystem.remove(staging)
        fileSystem.remove(journalURL)
        fileSystem.remove(validatorsURL)
    }

    func createFolder() throws {
        do {
            try FileManager.default.createDirectory(
                at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch {
            throw DownloadError.file("create the folder for", error, path: destination.path)
        }
    }

    private func open(_ url: URL, append: Bool) throws -> FileHandle {
        do {
            let handle = try FileHandle(forUpdating: url)
            if append { try handle.seekToEnd() }
            return handle
        } catch {
            throw DownloadError.file("open", error, path: url.path)
        }
    }
}

/// The journal of parts written.
///
/// A line is written only after the part's bytes are flushed to stable storage, and is itself
/// flushed before the next part is trusted to it, so after a power loss the journal never
/// vouches for bytes that are not on disk (the order SQLite's rollback journal keeps).
struct Journal {
    let handle: FileHandle
    /// The journal's file.
    let url: URL
    /// The staging file whose parts it records.
    let stagingURL: URL
    /// The file system both are in.
    let fileSystem: any DownloadFileSystem
    var completed: Set<Int>
    var bytesWritten: UInt64
    /// The first bytes of stopped parts that the staging file holds, by part: their transfers
    /// resume after them.
    var partial: [Int: PartPrefix]

    /// The ``ChunkDigest`` of `data`: enough to tell a part's bytes from a torn, unwritten or
    /// overwritten region (it is not a defence against someone who can write the files).
    ///
    /// - Complexity: O(*n*) for *n* bytes.
    static func digest(_ data: Data) -> UInt64 {
        var hash = ChunkDigest()
        data.withUnsafeBytes { hash.add($0) }
        return hash.value
    }

    /// The journal line of a part.
    static func line(_ index: Int, length: UInt64, digest: UInt64) -> String {
        "\(index) \(length) \(String(digest, radix: 16))\n"
    }

    /// The journal line of a stopped part's first `length` bytes.
    static func prefixLine(_ index: Int, length: UInt64, digest: UInt64) -> String {
        "p \(index) \(length) \(String(digest, radix: 16))\n"
    }

    /// Records the first bytes of stopped parts, each `length` bytes whose digest is `digest`:
    /// flushes `staging`, then appends one line per part and flushes the journal, so that the
    /// next run resumes each transfer after them.
    mutating func recordPrefixes(_ prefixes: [Int: PartPrefix], flushing staging: FileHandle) throws {
        guard !prefixes.isEmpty else { return }
        do {
            try fileSystem.willPerform(.flush, on: stagingURL)
            try staging.synchronize()
        } catch {
            throw DownloadError.file("flush", error, path: stagingURL.path)
        }
        let lines = prefixes.sorted { $0.key < $1.key }.map {
            Self.prefixLine($0.key, length: $0.value.length, digest: $0.value.digest.value)
        }
        do {
            try fileSystem.willPerform(.write, on: url)
            try handle.write(contentsOf: Data(lines.joined().utf8))
            try fileSystem.willPerform(.flush, on: url)
            try handle.synchronize()
        } catch {
            throw DownloadError.file("record progress in", error, path: url.path)
        }
        partial.merge(prefixes) { _, new in new }
    }

    /// Records that part `index`, `data`, is written: flushes `staging`, then appends the line
    /// with the part's length and digest and flushes the journal.
    mutating func record(_ index: Int, data: Data, flushing staging: FileHandle) throws {
        try record(index, length: UInt64(data.count), digest: Self.digest(data), flushing: staging)
    }

    /// Records that part `index`, `length` bytes whose digest is `digest`, is written: flushes
    /// `staging`, then appends the part's line and flushes the journal.
    mutating func record(_ index: Int, length: UInt64, digest: UInt64, flushing staging: FileHandle) throws {
        do {
            try fileSystem.willPerform(.flush, on: stagingURL)
            try staging.synchronize()
        } catch {
            throw DownloadError.file("flush", error, path: stagingURL.path)
        }
        do {
            try fileSystem.willPerform(.write, on: url)
            try handle.write(contentsOf: Data(Self.line(index, length: length, digest: digest).utf8))
            try fileSystem.willPerform(.flush, on: url)
            try handle.synchronize()
        } catch {
            throw DownloadError.file("record progress in", error, path: url.path)
        }
        completed.insert(index)
        bytesWritten += length
    }
}

/// The first bytes of a part with a byte range that are in the staging file: how many, and the
/// ``ChunkDigest`` of them, to go on hashing the rest of the part from.
struct PartPrefix: Sendable {
    var length: UInt64
    var digest: ChunkDigest
}
