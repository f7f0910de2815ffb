package import Foundation
package import HTTPSupport
import Locking

#if canImport(FoundationNetworking)
    package import FoundationNetworking
#endif

/// Bodies that background transfers brought while no download was running to read them: each
/// one a file in a staging folder, with a description of what it holds beside it.
///
/// A background session finishes a task whenever the system lets it, the app suspended or not
/// running at all; the file it wrote is moved here at once (the system deletes it when its
/// delegate call returns). When the download runs again, ``StagedBodyTransport`` answers its
/// requests from these files instead of the network, so the parts go through the one journal
/// and the one remux, in order, exactly as bytes from the network would, and each file is
/// deleted as soon as every byte of it has been read.
///
/// Each body is two files, `<n>.body` and `<n>.json`: the description is written (atomically)
/// after the body is in place, so a body whose description is missing (a kill between the two)
/// is never read, and ``removeIncomplete()`` deletes it.
package final class StagedBodies: Sendable {
    /// The staged bodies of the download to `destination`: `.<name>.staged` beside it.
    package static func beside(_ destination: URL) -> StagedBodies {
        StagedBodies(
            folder: destination.deletingLastPathComponent().appendingPathComponent(
                ".\(destination.lastPathComponent).staged"))
    }

    /// What one staged body holds.
    package struct Entry: Codable, Hashable, Sendable {
        /// The resource the body is of.
        package var url: URL
        /// The resource's bytes the body holds; `nil` for the whole resource.
        package var range: ByteRange?
        /// The response's validators and type (`ETag`, `Last-Modified`, `Content-Type`), which a
        /// resumed download checks as it checks a response from the network.
        package var headers: [String: String]
        /// The number in the names of the body's two files.
        package var number: Int
        /// The body's size.
        package var length: UInt64
        /// The resource's whole length, when the response said it (a 206's `Content-Range`, or a
        /// 200's body): a range answered from the body names it, as the server's would.
        package var total: UInt64?
    }

    /// Why a body could not be staged.
    package enum StagingError: Error, Hashable, Sendable {
        /// The body is not the size its range says.
        case wrongLength(expected: UInt64, received: UInt64)
        /// A file operation failed.
        case file(reason: String)
    }

    /// The folder the bodies are kept in.
    package let folder: URL
    /// The bytes of each staged body the download's journal keeps (sorted, disjoint), by its
    /// number.
    private let served = Locked<[Int: [Range<UInt64>]]>([:])
    /// The staged bodies by resource, read from the folder once and kept as they change.
    private let index = Locked<[String: [Entry]]?>(nil)
    /// The last number given out (names are never reused within a process).
    private let lastNumber = Locked<Int>(0)

    /// The response headers kept with a body.
    package static let keptHeaders = ["ETag", "Last-Modified", "Content-Type"]

    /// A store in `folder` (created when the first body is staged).
    package init(folder: URL) {
        self.folder = folder
    }

    private func bodyFile(_ number: Int) -> URL { folder.appendingPathComponent("\(number).body") }
    private func descriptionFile(_ number: Int) -> URL { folder.appendingPathComponent("\(number).json") }

    /// Moves the file a finished transfer wrote into the store, as the body of `url`'s bytes in
    /// `range` (`nil`: the whole resource), keeping the response's validators and type from
    /// `headers` (their names' case ignored), and the resource's length from its
    /// `Content-Range`.
    ///
    /// - Throws: ``StagingError``: a body whose size is not its range's (nothing is kept), or
    ///   a file operation that failed.
    package func stage(_ file: URL, url: URL, range: ByteRange?, headers all: [String: String]) throws(StagingError) {
        let manager = FileManager.default
        let size = ((try? manager.attributesOfItem(atPath: file.path))?[.size] as? NSNumber)?.uint64Value ?? 0
        if let range, size != range.length {
            throw .wrongLength(expected: range.length, received: size)
        }
        var headers: [String: String] = [:]
        for name in Self.keptHeaders {
            let value = all.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
            if let value { headers[name] = value }
        }
        do {
            try manager.createDirectory(at: folder, withIntermediateDirectories: true)
            let number = nextNumber()
            try manager.moveItem(at: file, to: bodyFile(number))
            let contentRange = all.first { $0.key.caseInsensitiveCompare("Content-Range") == .orderedSame }?.value
            let total = range == nil ? size : contentRange.flatMap { ContentRange($0)?.total }
            let entry = Entry(url: url, range: range, headers: headers, number: number, length: size, total: total)
            try StateFileWriting.write(JSONEncoder().encode(entry), to: descriptionFile(number))
            index.withLock { index in
                if index != nil { index?[url.absoluteString, default: []].append(entry) }
            }
        } catch {
            throw .file(reason: error.localizedDescription)
        }
    }

    /// A number no file of the folder uses yet.
    private func nextNumber() -> Int {
        let used = Set(
            ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).compactMap { name in
                Int(name.split(separator: ".").first ?? "")
            })
        return lastNumber.withLock { last in
            repeat { last += 1 } while used.contains(last)
            return last
        }
    }

    /// Every body whose description and file are both in place.
    ///
    /// - Complexity: O(*n*) file reads for *n* staged bodies.
    package var entries: [Entry] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted().compactMap { name in
            guard let data = try? Data(contentsOf: folder.appendingPathComponent(name)),
                let entry = try? JSONDecoder().decode(Entry.self, from: data),
                FileManager.default.fileExists(atPath: bodyFile(entry.number).path)
            else { return nil }
            return entry
        }
    }

    /// The bytes every staged body takes.
    package var byteCount: UInt64 {
        entries.reduce(0) { $0 + $1.length }
    }

    /// The staged bodies of `url`, from the index (read from the folder on first use).
    private func entries(of url: URL) -> [Entry] {
        let key = url.absoluteString
        if let known = index.withLock({ $0 }) { return known[key] ?? [] }
        let read = Dictionary(grouping: entries, by: \.url.absoluteString)
        return index.withLock { index in
            if index == nil { index = read }
            return index?[key] ?? []
        }
    }

    /// Deletes bodies without a description (a kill between the move and the description) and
    /// descriptions without a body.
    package func removeIncomplete() {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        let complete = Set(entries.map(\.number))
        for name in names {
            guard let number = Int(name.split(separator: ".").first ?? ""), !complete.contains(number) else { continue }
            try? FileManager.default.removeItem(at: folder.appendingPathComponent(name))
        }
    }

    /// Deletes every staged body and the folder.
    package func removeAll() {
        try? FileManager.default.removeItem(at: folder)
        index.withLock { $0 = [:] }
    }

    /// The staged body that answers `request`, and the bytes of it that do: a request for a
    /// range (RFC 9110 §14.2, one `first-last` range) is answered by a body of the same resource
    /// that holds the whole range; a request without one by a body of the whole resource. A
    /// request with `If-Range` (§13.1.5) is answered only by a body of that version.
    ///
    /// - Complexity: O(*n*) for the *n* bodies staged for the resource (the folder is read once).
    package func match(_ request: URLRequest) -> (entry: Entry, first: UInt64, last: UInt64, wholeLength: UInt64?)? {
        guard let url = request.url else { return nil }
        let asked = request.value(forHTTPHeaderField: "Range").flatMap(Self.parseRange)
        if request.value(forHTTPHeaderField: "Range") != nil, asked == nil { return nil }
        let version = request.value(forHTTPHeaderField: "If-Range")
        // §13.1.5: a weak entity tag never matches If-Range.
        if let version, version.hasPrefix("W/") { return nil }
        for entry in entries(of: url) {
            if let version, entry.headers["ETag"] != version, entry.headers["Last-Modified"] != version { continue }
            let length = entry.length
            switch (asked, entry.range) {
            case (nil, nil):
                return length == 0 ? nil : (entry, 0, length - 1, length)
            case (let asked?, nil):
                if asked.last < length { return (entry, asked.first, asked.last, length) }
            case (let asked?, let held?):
                if held.length > 0, asked.first >= held.offset, asked.last < held.end {
                    return (entry, asked.first, asked.last, entry.total)
                }
            case (nil, _?):
                continue
            }
        }
        return nil
    }

    /// Reads `first...last` of the resource from `entry`'s body, as chunks read one at a time
    /// as the consumer asks for them (a body is never held in memory whole).
    ///
    /// Reading deletes nothing: a body goes once its bytes are in the download's journal
    /// (``partIsKept(_:)``), or with the whole store when the download is done.
    package func read(_ entry: Entry, first: UInt64, last: UInt64) -> HTTPBodyChunks {
        let file = bodyFile(entry.number)
        let start = first - (entry.range?.offset ?? 0)
        let end = start + (last - first + 1)
        let position = Locked<UInt64>(start)
        return HTTPBodyChunks(unfolding: {
            let offset = position.withLock { $0 }
            guard offset < end else { return nil }
            try Task.checkCancellation()
            let handle = try FileHandle(forReadingFrom: file)
            defer { try? handle.close() }
            try handle.seek(toOffset: offset)
            let piece = try handle.read(upToCount: Int(min(end - offset, Self.chunkLength))) ?? Data()
            guard !piece.isEmpty else {
                throw StagingError.wrongLength(expected: end - start, received: offset - start)
            }
            let next = offset + UInt64(piece.count)
            position.withLock { $0 = next }
            return piece
        })
    }

    /// Records that the download's journal now keeps `part` (its bytes are written and flushed,
    /// and vouched for): a body whose every byte such parts hold is deleted, never one whose
    /// bytes were read but are not yet kept, which a kill before the journal's record would
    /// otherwise make the next run fetch again.
    ///
    /// - Complexity: O(*b* log *b*) for the *b* bodies staged for the part's resource.
    package func partIsKept(_ part: DownloadPart) {
        for entry in entries(of: part.url) {
            let held = entry.range ?? ByteRange(length: entry.length, offset: 0)
            let wanted = part.byteRange ?? ByteRange(length: entry.total ?? entry.length, offset: 0)
            let lower = max(held.offset, wanted.offset)
            let upper = min(held.end, wanted.end)
            guard lower < upper else { continue }
            didKeep(entry, bytes: (lower - held.offset)..<(upper - held.offset))
        }
    }

    /// The most bytes read from a body at a time.
    package static let chunkLength: UInt64 = 256 << 10

    /// Records `bytes` of `entry`'s body as kept by the journal; once every byte of it is
    /// (whatever the order, a range kept twice counted once), its files are deleted.
    private func didKeep(_ entry: Entry, bytes: Range<UInt64>) {
        let done = served.withLock { served in
            var ranges = served[entry.number, default: []]
            ranges.append(bytes)
            ranges.sort { $0.lowerBound < $1.lowerBound }
            var merged: [Range<UInt64>] = []
            for range in ranges {
                if let previous = merged.last, range.lowerBound <= previous.upperBound {
                    merged[merged.count - 1] = previous.lowerBound..<max(previous.upperBound, range.upperBound)
                } else {
                    merged.append(range)
                }
            }
            served[entry.number] = merged
            return merged.count == 1 && merged[0].lowerBound == 0 && merged[0].upperBound >= entry.length
        }
        guard done else { return }
        index.withLock { index in index?[entry.url.absoluteString]?.removeAll { $0.number == entry.number } }
        try? FileManager.default.removeItem(at: descriptionFile(entry.number))
        try? FileManager.default.removeItem(at: bodyFile(entry.number))
    }

    /// `bytes=first-last` (one range with both ends), or `nil`.
    package static func parseRange(_ header: String) -> (first: UInt64, last: UInt64)? {
        guard header.hasPrefix("bytes=") else { return nil }
        let bounds = header.dropFirst("bytes=".count).split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, bounds.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCIIDigit) }),
            let first = UInt64(bounds[0]), let last = UInt64(bounds[1]), first <= last
        else { return nil }
        return (first, last)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

/// A transport that answers from ``StagedBodies`` what background transfers already brought,
/// and sends every other request through `base`.
///
/// A range request answered from a staged body gets a `206` whose `Content-Range` names the
/// bytes asked; a request for the whole resource gets a `200`. Either carries the validators
/// the body arrived with, so the engine checks a staged body as it checks the network's.
package struct StagedBodyTransport: HTTPTransport {
    /// The transport for what is not staged.
    package let base: any HTTPTransport
    /// The staged bodies.
    package let staged: StagedBodies

    /// Answers `request` from a staged body, whole, or sends it through `base`.
    package func send(_ request: URLRequest) async throws -> (Data, URLResponse) {
        guard let (response, chunks) = answer(request) else { return try await base.send(request) }
        var data = Data()
        for try await chunk in chunks { data.append(chunk) }
        return (data, response)
    }

    /// Answers `request` from a staged body, as it is read, or streams it through `base`.
    package func stream(_ request: URLRequest) async throws -> (URLResponse, HTTPBodyChunks) {
        guard let (response, chunks) = answer(request) else { return try await base.stream(request) }
        return (response, chunks)
    }

    private func answer(_ request: URLRequest) -> (URLResponse, HTTPBodyChunks)? {
        guard let url = request.url, let (entry, first, last, whole) = staged.match(request) else { return nil }
        var headers = entry.headers
        headers["Content-Length"] = "\(last - first + 1)"
        let status: Int
        if request.value(forHTTPHeaderField: "Range") == nil {
            status = 200
        } else {
            status = 206
            headers["Content-Range"] = "bytes \(first)-\(last)/\(whole.map(String.init) ?? "*")"
        }
        guard
            let response = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)
        else { return nil }
        return (response, staged.read(entry, first: first, last: last))
    }
}
