public import Foundation

/// A persistent cache of catalogs and pages, bounded in size, safe against crashes.
///
/// Each entry is its own file, named by a hash of its key (a URL is never used as a path), in a
/// versioned envelope with a CRC-32 of its key, date and bytes. Writes are atomic: a crash
/// mid-write leaves the previous version. When the entries exceed ``maximumBytes``, the least
/// recently used are evicted. An entry that cannot be read (truncated, damaged so that its
/// checksum no longer matches, or written by a newer version) is reported in ``problems`` and
/// treated as missing; it never crashes the app and is never served altered.
public actor CatalogStore {
    /// A stored value with when it was stored.
    public struct Entry: Sendable, Hashable {
        /// The stored bytes.
        public var data: Data
        /// When they were stored.
        public var storedAt: Date
    }

    /// An entry that could not be read.
    public struct Problem: Sendable, Hashable, CustomStringConvertible {
        /// The entry's file name.
        public var file: String
        /// What was wrong.
        public var reason: String

        /// A sentence naming the file.
        public var description: String { "\(file): \(reason)" }
    }

    /// Why the store could not write an entry (the only way a write fails: the file system
    /// refused it).
    public struct WriteError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The key being written.
        public var key: String
        /// What the file system said.
        public var reason: String

        /// A sentence naming the key.
        public var description: String { "Could not store '\(key)': \(reason)" }
    }

    private struct Envelope: Codable {
        var format: String
        var version: Int
        var key: String
        var storedAt: Double
        var data: Data
        /// CRC-32 of the key, the date and the bytes (from version 2; version 1 had none).
        var crc32: UInt32?

        /// The checksum this envelope's fields should carry.
        var expectedChecksum: UInt32 {
            var crc = CRC32()
            crc.update(key.utf8)
            crc.update(CollectionOfOne(0))
            withUnsafeBytes(of: storedAt.bitPattern.littleEndian) { crc.update($0) }
            crc.update(data)
            return crc.value
        }
    }

    private struct Header: Decodable {
        var format: String?
        var version: Int?
    }

    static let formatName = "mediacore.catalog-entry"
    static let currentVersion = 2

    /// The folder holding the entries.
    public nonisolated let directory: URL
    /// The most bytes the entries may take together.
    public let maximumBytes: Int
    /// Entries that could not be read since the store opened.
    public private(set) var problems: [Problem] = []
    /// File name → (size, last use), oldest use first when evicting.
    private var index: [String: (size: Int, lastUse: UInt64)] = [:]
    private var useCounter: UInt64 = 0
    private var indexed = false

    /// Creates a store in `directory` holding at most `maximumBytes` (64 MiB by default).
    public init(directory: URL, maximumBytes: Int = 64 << 20) {
        self.directory = directory
        self.maximumBytes = max(0, maximumBytes)
    }

    /// The entry for `key`, or `nil` when there is none or it cannot be read (see ``problems``).
    public func entry(for key: String) -> Entry? {
        buildIndexIfNeeded()
        let name = Self.fileName(for: key)
        guard let data = try? Data(contentsOf: directory.appendingPathComponent(name)) else { return nil }
        let decoder = JSONDecoder()
        guard let header = try? decoder.decode(Header.self, from: data), header.format == Self.formatName else {
            report(name, "not a catalog entry (damaged or truncated)")
            return nil
        }
        guard let version = header.version, version <= Self.currentVersion else {
            report(name, "version \(header.version.map(String.init) ?? "?") is newer than this app reads")
            return nil
        }
        guard let envelope = try? decoder.decode(Envelope.self, from: data), envelope.key == key else {
            report(name, "damaged entry")
            return nil
        }
        // Version 1 entries carry no checksum; from version 2 one is required.
        if envelope.crc32 != nil || version >= 2 {
            guard envelope.crc32 == envelope.expectedChecksum else {
                report(name, "damaged entry (checksum mismatch)")
                return nil
            }
        }
        touch(name, size: data.count)
        return Entry(data: envelope.data, storedAt: Date(timeIntervalSince1970: envelope.storedAt))
    }

    /// Stores `data` for `key`, replacing any previous entry atomically, then evicts the least
    /// recently used entries beyond the size bound.
    ///
    /// - Throws: ``WriteError`` when the file cannot be written; the previous entry is intact.
    public func store(_ data: Data, for key: String, at date: Date) throws(WriteError) {
        buildIndexIfNeeded()
        let name = Self.fileName(for: key)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            var envelope = Envelope(
                format: Self.formatName, version: Self.currentVersion, key: key,
                storedAt: date.timeIntervalSince1970, data: data)
            envelope.crc32 = envelope.expectedChecksum
            let bytes = try encoder.encode(envelope)
            try bytes.write(to: directory.appendingPathComponent(name), options: .atomic)
            touch(name, size: bytes.count)
        } catch {
            throw WriteError(key: key, reason: error.localizedDescription)
        }
        evict(keeping: name)
    }

    /// Removes the entry for `key`.
    public func remove(_ key: String) {
        let name = Self.fileName(for: key)
        try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        index[name] = nil
    }

    /// The bytes the entries take.
    public var totalBytes: Int {
        buildIndexIfNeeded()
        return index.values.reduce(0) { $0 + $1.size }
    }

    // MARK: Private

    private func report(_ file: String, _ reason: String) {
        problems.append(Problem(file: file, reason: reason))
    }

    private func touch(_ name: String, size: Int) {
        useCounter += 1
        index[name] = (size, useCounter)
    }

    private func evict(keeping kept: String) {
        var total = index.values.reduce(0) { $0 + $1.size }
        guard total > maximumBytes else { return }
        for (name, info) in index.sorted(by: { $0.value.lastUse < $1.value.lastUse }) where name != kept {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
            index[name] = nil
            total -= info.size
            if total <= maximumBytes { break }
        }
    }

    /// Reads the folder once: existing entries start in their files' modification order.
    private func buildIndexIfNeeded() {
        guard !indexed else { return }
        indexed = true
        let keys: [URLResourceKey] = [.fileSizeKey, .contentModificationDateKey]
        let files =
            (try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: keys)) ?? []
        let entries = files.filter { $0.pathExtension == "entry" }.map { url -> (String, Int, Date) in
            let values = try? url.resourceValues(forKeys: Set(keys))
            return (url.lastPathComponent, values?.fileSize ?? 0, values?.contentModificationDate ?? .distantPast)
        }
        for (name, size, _) in entries.sorted(by: { $0.2 < $1.2 }) { touch(name, size: size) }
    }

    /// A file name for a key: a 64-bit FNV-1a hash, never the key itself.
    static func fileName(for key: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return String(hash, radix: 16) + ".entry"
    }
}
