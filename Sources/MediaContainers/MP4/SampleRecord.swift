import Foundation

/// One sample's entry in an MP4 track's sample tables, as `MP4Writer` notes it when the sample's
/// bytes go into `mdat`: which track, which sample description, its size, its decode time and
/// composition offset, whether it is a sync sample, and whether it starts a chunk.
///
/// The writer keeps no table: it keeps the records themselves, or, within the package, hands
/// them to its caller at each checkpoint (`MP4Writer.checkpoint()`), and reads them back to write
/// the `moov`. A sample's offset in the file is the sum of the sizes before it, in record order.
package struct SampleRecord: Hashable, Sendable {
    /// The track's index in the writer, from 0.
    package var track: Int
    /// The sample description's index in the track's `stsd`, from 1.
    package var description: Int
    /// The sample's size in bytes.
    package var size: UInt32
    /// When it is decoded, in the track's timescale.
    package var decodeTime: Int64
    /// Its composition time minus its decode time, in the track's timescale.
    package var compositionOffset: Int32
    /// Whether it is a sync sample.
    package var isSync: Bool
    /// Whether it starts a chunk (the first sample after another track's, after a description
    /// change, or after a checkpoint).
    package var startsChunk: Bool

    /// Creates a record.
    package init(
        track: Int, description: Int, size: UInt32, decodeTime: Int64, compositionOffset: Int32, isSync: Bool,
        startsChunk: Bool
    ) {
        self.track = track
        self.description = description
        self.size = size
        self.decodeTime = decodeTime
        self.compositionOffset = compositionOffset
        self.isSync = isSync
        self.startsChunk = startsChunk
    }
}

/// Encodes sample records compactly, and decodes them: variable-length integers, each decode time
/// as the difference from the same track's previous one, so a record takes about 6 bytes.
///
/// Encoder and decoder carry each track's previous decode time from batch to batch: records are
/// decoded in the order they were encoded, from the first.
package struct SampleRecordCoder: Hashable, Sendable, Codable {
    private var previous: [Int64] = []

    /// A coder at the start of a stream of records.
    package init() {}

    /// Appends the encoding of `records` to `bytes`.
    ///
    /// - Complexity: O(*n*) in the records.
    package mutating func encode(_ records: [SampleRecord], into bytes: inout [UInt8]) {
        for record in records {
            while previous.count <= record.track { previous.append(0) }
            let flags = UInt8(record.isSync ? 1 : 0) | (record.startsChunk ? 2 : 0)
            Self.append(UInt64(record.track), to: &bytes)
            bytes.append(flags)
            Self.append(UInt64(max(record.description, 0)), to: &bytes)
            Self.append(UInt64(record.size), to: &bytes)
            Self.append(Self.zigzag(record.decodeTime &- previous[record.track]), to: &bytes)
            Self.append(Self.zigzag(Int64(record.compositionOffset)), to: &bytes)
            previous[record.track] = record.decodeTime
        }
    }

    /// Decodes every record of `bytes`, in order, handing each to `visit`.
    ///
    /// - Throws: `ContainerError/Kind/invalidCheckpoint(reason:)` for bytes that do not decode
    ///   (cut short, or a value out of range), or what `visit` throws.
    /// - Complexity: O(*n*) in the bytes.
    package mutating func decode(
        _ bytes: UnsafeRawBufferPointer, _ visit: (SampleRecord) throws(ContainerError) -> Void
    ) throws(ContainerError) {
        var index = 0
        func next() throws(ContainerError) -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                guard index < bytes.count, shift < 64 else {
                    throw ContainerError(.invalidCheckpoint(reason: "a sample record is cut short"))
                }
                let byte = bytes[index]
                index += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
            }
        }
        while index < bytes.count {
            let track = try next()
            guard track < 4_096, index < bytes.count else {
                throw ContainerError(.invalidCheckpoint(reason: "a sample record names track \(track)"))
            }
            let flags = bytes[index]
            index += 1
            let description = try next()
            let size = try next()
            let delta = Self.unzigzag(try next())
            let composition = Self.unzigzag(try next())
            guard description >= 1, description < 65_536, size <= UInt64(UInt32.max),
                let offset = Int32(exactly: composition)
            else { throw ContainerError(.invalidCheckpoint(reason: "a sample record is out of range")) }
            while previous.count <= Int(track) { previous.append(0) }
            let time = previous[Int(track)] &+ delta
            previous[Int(track)] = time
            try visit(
                SampleRecord(
                    track: Int(track), description: Int(description), size: UInt32(size), decodeTime: time,
                    compositionOffset: offset, isSync: flags & 1 != 0, startsChunk: flags & 2 != 0))
        }
    }

    private static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(rest & 0x7F) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    private static func zigzag(_ value: Int64) -> UInt64 { UInt64(bitPattern: (value << 1) ^ (value >> 63)) }

    private static func unzigzag(_ value: UInt64) -> Int64 {
        Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
    }
}
