import Foundation

/// Turns Annex B access units (ISO/IEC 14496-10 Annex B, as MPEG-2 transport streams carry H.264
/// and HEVC) into MP4 samples: NAL units with four-byte lengths instead of start codes (ISO/IEC
/// 14496-15 §4.3), without the access unit delimiters and parameter sets that the sample
/// description carries instead.
///
/// The parameter sets it meets are kept, one per identifier, the newest winning; when they change
/// (a new set, or new contents for an identifier) the next sample gets a new
/// ``SampleDescription``, so a stream whose encoder changes mid-lesson (a new picture size, new
/// settings) decodes every sample against its own parameter sets. Everything else (SEI with
/// captions, slices, end of sequence) stays in the sample.
struct AccessUnitConverter: Sendable {
    /// The codec of the stream.
    let codec: MediaCodec
    /// The parameter sets in force, carried from segment to segment.
    private(set) var parameterSets: ParameterSets
    /// The description of the parameter sets in force, once they describe a picture.
    private(set) var description: SampleDescription?
    private var changed = true
    /// The picture parameter set the last picture used, and the sequence parameter set that one
    /// refers to: the SPS whose picture size and profile the description gives. Worked out again
    /// only when a picture names another PPS or the sets change, not for every access unit.
    private var active: (picture: UInt32, sequence: UInt32?)?
    /// Where this stream's samples are written.
    private var arenas = ArenaSet()

    /// The largest parameter set accepted: its length must fit the 16-bit field of the
    /// configuration record.
    static let maximumParameterSetLength = 0xFFFF

    init(codec: MediaCodec, parameterSets: ParameterSets? = nil, arenas: ArenaSet = ArenaSet()) {
        self.codec = codec
        self.parameterSets = parameterSets ?? ParameterSets()
        self.arenas = arenas
    }

    /// Takes the converter's arenas, to hand to the next segment's converter.
    mutating func takeArenas() -> ArenaSet {
        defer { arenas = ArenaSet() }
        return arenas
    }

    /// What one access unit became.
    struct Converted {
        /// The length-prefixed NAL units; empty when the unit held no picture data.
        var sample: Data
        /// Whether decoding can start here: an IDR picture or a recovery point with no
        /// recovery frames (H.264), an IRAP picture (HEVC).
        var isSync: Bool
        /// Whether the unit holds a coded picture.
        var hasPicture: Bool
    }

    /// Converts the access unit in `bytes`.
    ///
    /// - Throws: ``ContainerError/Kind/tooLarge(what:bytes:limit:)`` for a parameter set over 64
    ///   KiB, ``ContainerError/Kind/malformedVideo(reason:)`` for parameter sets that cannot be
    ///   read once a picture needs them.
    /// - Complexity: O(*n*) in the unit's bytes.
    mutating func convert(_ bytes: UnsafeRawBufferPointer) throws(ContainerError) -> Converted {
        var isSync = false
        var hasPicture = false
        var recoveryPoint = false
        var picturePPS: UInt32?
        var failure: ContainerError?
        // Each three-byte start code becomes a four-byte length: at most a quarter more bytes.
        let bound = bytes.count + bytes.count / 4 + 16
        let arena = arenas.arena(for: bound, size: Self.arenaSize)
        let converter = self
        let sample = arena.write(maximum: bound) { output in
            var written = 0
            Self.forEachNALUnit(in: bytes) { range in
                guard failure == nil, !range.isEmpty else { return }
                let first = bytes[range.lowerBound]
                let unit = UnsafeRawBufferPointer(rebasing: bytes[range])
                switch converter.classify(first, unit: unit) {
                case .dropped:
                    return
                case .parameterSet:
                    return
                case .kept(let sync, let picture, let recovery):
                    if sync { isSync = true }
                    if picture, !hasPicture { picturePPS = converter.pictureParameterSetID(ofSlice: unit) }
                    if picture { hasPicture = true }
                    if recovery { recoveryPoint = true }
                }
                guard written + 4 + unit.count <= bound, let source = unit.baseAddress else { return }
                var length = UInt32(unit.count).bigEndian
                withUnsafeBytes(of: &length) { (output + written).copyMemory(from: $0.baseAddress!, byteCount: 4) }
                (output + written + 4).copyMemory(from: source, byteCount: unit.count)
                written += 4 + unit.count
            }
            return written
        }
        // The parameter sets go to the description, checked and kept in a second, cheap pass.
        Self.forEachNALUnit(in: bytes) { range in
            guard failure == nil, !range.isEmpty else { return }
            let unit = UnsafeRawBufferPointer(rebasing: bytes[range])
            guard let kind = Self.parameterSetKind(bytes[range.lowerBound], codec: codec) else { return }
            guard unit.count <= Self.maximumParameterSetLength else {
                failure = ContainerError(
                    .tooLarge(what: "a parameter set", bytes: unit.count, limit: Self.maximumParameterSetLength))
                return
            }
            do throws(ContainerError) {
                if try parameterSets.insert(Data(unit), kind: kind, codec: codec) { changed = true }
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        // The picture's PPS names the SPS in force: after an encoder change that numbers its
        // sets anew, the old sets stay listed, and the new picture size is the new SPS's.
        if let picturePPS, changed || active?.picture != picturePPS {
            let sequence = parameterSets.sequenceID(ofPicture: picturePPS, codec: codec)
            if sequence != active?.sequence { changed = true }
            active = (picturePPS, sequence)
        }
        if changed, hasPicture {
            changed = false
            if let format = try VideoFormat(parameterSets, codec: codec, active: active?.sequence) {
                description = format.sampleDescription
            }
        }
        // §D.2.8: a recovery point with recovery_frame_cnt 0 starts a decodable picture
        // sequence here (an open-GOP I picture), as an IDR would.
        return Converted(
            sample: hasPicture ? sample ?? Data() : Data(), isSync: isSync || (recoveryPoint && hasPicture),
            hasPicture: hasPicture)
    }

    /// The size of a new arena: room for a few seconds of typical access units.
    static let arenaSize = 1 << 20

    /// What a NAL unit is to the sample.
    enum Role {
        /// An access unit delimiter: left out.
        case dropped
        /// A parameter set: left out of the sample, kept in the description.
        case parameterSet
        /// Kept in the sample; whether it makes the sample a sync sample, carries a picture, or
        /// is a recovery point SEI.
        case kept(sync: Bool, picture: Bool, recovery: Bool)
    }

    /// The kind of parameter set a NAL unit whose first byte is `first` is, or `nil`.
    static func parameterSetKind(_ first: UInt8, codec: MediaCodec) -> ParameterSets.Kind? {
        switch codec {
        case .hevc:
            switch (first >> 1) & 0x3F {
            case 32: .video
            case 33: .sequence
            case 34: .picture
            default: nil
            }
        default:
            switch first & 0x1F {
            case 7: .sequence
            case 8: .picture
            default: nil
            }
        }
    }

    /// What the NAL unit `unit`, whose first byte is `first`, is to the sample.
    func classify(_ first: UInt8, unit: UnsafeRawBufferPointer) -> Role {
        if Self.parameterSetKind(first, codec: codec) != nil { return .parameterSet }
        switch codec {
        case .hevc:
            let type = (first >> 1) & 0x3F
            if type == 35 { return .dropped }  // access unit delimiter
            // IRAP pictures (BLA, IDR, CRA: types 16 to 21) are sync samples.
            return .kept(sync: (16...21).contains(type), picture: type < 32, recovery: false)
        default:
            let type = first & 0x1F
            if type == 9 { return .dropped }  // access unit delimiter
            return .kept(
                sync: type == 5, picture: (1...5).contains(type),
                recovery: type == 6 && Self.hasRecoveryPointWithoutDelay(unit))
        }
    }

    /// The picture parameter set a slice NAL unit refers to: `pic_parameter_set_id` after
    /// `first_mb_in_slice` and `slice_type` (H.264 §7.3.3), or `slice_pic_parameter_set_id`
    /// after the first-slice flag and, for IRAP pictures, `no_output_of_prior_pics_flag` (HEVC
    /// §7.3.6.1); `nil` when the header is cut short.
    ///
    /// Only the header's first 32 bytes are read (the fields sit in its first few), never the
    /// slice data: this runs for every picture.
    func pictureParameterSetID(ofSlice slice: UnsafeRawBufferPointer) -> UInt32? {
        guard let first = slice.first else { return nil }
        let unit = UnsafeRawBufferPointer(rebasing: slice.prefix(32))
        switch codec {
        case .hevc:
            var bits = BitReader(nalUnit: unit, from: 2)
            _ = bits.bits(1)  // first_slice_segment_in_pic_flag
            if (16...23).contains((first >> 1) & 0x3F) { _ = bits.bits(1) }
            return bits.unsigned()
        default:
            var bits = BitReader(nalUnit: unit, from: 1)
            guard bits.unsigned() != nil, bits.unsigned() != nil else { return nil }
            return bits.unsigned()
        }
    }

    /// Calls `body` with the range of each NAL unit in `bytes`, split at start codes (`00 00 01`
    /// and `00 00 00 01`); zeros before a start code (trailing_zero_8bits) are not part of the
    /// unit before it, and bytes before the first start code are skipped.
    ///
    /// - Complexity: O(*n*).
    static func forEachNALUnit(in bytes: UnsafeRawBufferPointer, _ body: (Range<Int>) -> Void) {
        guard let base = bytes.baseAddress else { return }
        let count = bytes.count
        var start: Int?
        var position = 0
        while let code = nextStartCode(base, count: count, from: position) {
            if let start {
                var end = code
                while end > start, bytes[end - 1] == 0 { end -= 1 }
                if end > start { body(start..<end) }
            }
            start = code + 3
            position = code + 3
        }
        if let start, start < count {
            var end = count
            while end > start, bytes[end - 1] == 0 { end -= 1 }
            if end > start { body(start..<end) }
        }
    }

    /// The offset of the next `00 00 01` at or after `from`, or `nil`.
    ///
    /// `memchr` finds each `01` (8 GB/s here, twice a scan of eight bytes at a time for a zero),
    /// and the two bytes before it are checked.
    @inline(__always)
    static func nextStartCode(_ base: UnsafeRawPointer, count: Int, from: Int) -> Int? {
        var position = from + 2
        while position < count {
            guard let found = memchr(base + position, 1, count - position) else { return nil }
            let index = base.distance(to: UnsafeRawPointer(found))
            if base.load(fromByteOffset: index - 1, as: UInt8.self) == 0,
                base.load(fromByteOffset: index - 2, as: UInt8.self) == 0
            {
                return index - 2
            }
            position = index + 1
        }
        return nil
    }

    /// Whether an H.264 SEI NAL unit holds a recovery point message (payload type 6, §D.1.8)
    /// whose recovery_frame_cnt is 0.
    static func hasRecoveryPointWithoutDelay(_ unit: UnsafeRawBufferPointer) -> Bool {
        var reader = BitReader(nalUnit: unit, from: 1)
        while reader.hasMore {
            var type = 0
            var byte = reader.bits(8)
            while byte == 0xFF, !reader.isExhausted {
                type += 255
                byte = reader.bits(8)
            }
            type += Int(byte)
            var size = 0
            byte = reader.bits(8)
            while byte == 0xFF, !reader.isExhausted {
                size += 255
                byte = reader.bits(8)
            }
            size += Int(byte)
            guard !reader.isExhausted else { return false }
            if type == 6 {
                return reader.unsigned() == 0
            }
            // Payloads are byte-aligned; skip this one.
            reader.skip(size * 8)
            if reader.isExhausted { return false }
            // rbsp_trailing_bits: a lone 0x80 ends the message list.
            if reader.bitPosition % 8 == 0 {
                var peek = reader
                if peek.bits(8) == 0x80, !peek.hasMore { return false }
            }
        }
        return false
    }
}

/// The parameter sets of a video stream in force, one per identifier and kind, in identifier
/// order: what a configuration record (`avcC`, `hvcC`) lists.
struct ParameterSets: Sendable, Hashable, Codable {
    /// A kind of parameter set.
    enum Kind: Sendable {
        /// HEVC's video parameter set.
        case video
        /// A sequence parameter set.
        case sequence
        /// A picture parameter set.
        case picture
    }

    /// Video parameter sets by identifier (HEVC only).
    var video: [UInt32: Data] = [:]
    /// Sequence parameter sets by identifier.
    var sequence: [UInt32: Data] = [:]
    /// Picture parameter sets by identifier.
    var picture: [UInt32: Data] = [:]

    /// The largest identifier a set of `kind` may have: H.264's SPS 31 and PPS 255 (ISO/IEC
    /// 14496-10 §7.4.2.1.1, §7.4.2.2), HEVC's VPS and SPS 15 and PPS 63 (ISO/IEC 23008-2
    /// §7.4.3.1–§7.4.3.3). A larger one is not a stream a decoder reads, and would let a hostile
    /// one keep sets without bound. `nil` for a kind the codec does not have.
    static func largestIdentifier(_ kind: Kind, codec: MediaCodec) -> UInt32? {
        switch (codec, kind) {
        case (.hevc, .video), (.hevc, .sequence): 15
        case (.hevc, .picture): 63
        case (_, .sequence): 31
        case (_, .picture): 255
        case (_, .video): nil
        }
    }

    /// Keeps `unit` as the set of its identifier, and says whether that changed anything.
    ///
    /// - Throws: ``ContainerError/Kind/malformedVideo(reason:)`` for an identifier over
    ///   ``largestIdentifier(_:codec:)``.
    mutating func insert(_ unit: Data, kind: Kind, codec: MediaCodec) throws(ContainerError) -> Bool {
        let id = Self.identifier(of: unit, kind: kind, codec: codec)
        let largest = Self.largestIdentifier(kind, codec: codec)
        guard let largest, id <= largest else {
            let most = largest.map { "over the \($0) allowed" } ?? "not one \(codec) has"
            throw ContainerError(.malformedVideo(reason: "a \(kind) parameter set numbered \(id), \(most)"))
        }
        switch kind {
        case .video: return video.updateValue(unit, forKey: id) != unit
        case .sequence: return sequence.updateValue(unit, forKey: id) != unit
        case .picture: return picture.updateValue(unit, forKey: id) != unit
        }
    }

    /// The identifier of the sequence parameter set that picture parameter set `picture` refers
    /// to (`seq_parameter_set_id` after `pic_parameter_set_id`, H.264 §7.3.2.2, HEVC §7.3.2.3),
    /// when both are here.
    func sequenceID(ofPicture picture: UInt32, codec: MediaCodec) -> UInt32? {
        guard let set = self.picture[picture] else { return nil }
        var bits = BitReader(nalUnit: set, from: codec == .hevc ? 2 : 1)
        guard bits.unsigned() != nil, let sequence = bits.unsigned(), self.sequence[sequence] != nil else { return nil }
        return sequence
    }

    /// The sets of `kind` in identifier order.
    func ordered(_ kind: Kind) -> [Data] {
        let sets =
            switch kind {
            case .video: video
            case .sequence: sequence
            case .picture: picture
            }
        return sets.keys.sorted().compactMap { sets[$0] }
    }

    /// A parameter set's identifier (0 when it cannot be read, so an unreadable set still
    /// replaces its predecessor rather than piling up).
    static func identifier(of unit: Data, kind: Kind, codec: MediaCodec) -> UInt32 {
        switch (codec, kind) {
        case (.hevc, .video):
            return unit.count > 2 ? UInt32(unit[unit.startIndex + 2] >> 4) : 0
        case (.hevc, .sequence):
            var bits = BitReader(nalUnit: unit, from: 2)
            _ = bits.bits(4)
            let subLayers = Int(bits.bits(3))
            _ = bits.bits(1)
            VideoFormat.skipProfileTierLevel(&bits, subLayers: subLayers)
            return bits.unsigned() ?? 0
        case (.hevc, .picture):
            var bits = BitReader(nalUnit: unit, from: 2)
            return bits.unsigned() ?? 0
        case (_, .sequence):
            var bits = BitReader(nalUnit: unit, from: 1)
            _ = bits.bits(24)  // profile, constraint flags, level
            return bits.unsigned() ?? 0
        default:
            var bits = BitReader(nalUnit: unit, from: 1)
            return bits.unsigned() ?? 0
        }
    }
}

/// The remuxer's start-code search, seen from the package's benchmarks, which time it beside a
/// byte loop that skips ahead as ffmpeg's `avpriv_find_start_code` does.
package enum StartCodeSearch {
    /// The number of start codes (`00 00 01`) in `bytes`, found as the remuxer finds them; a
    /// search goes on three bytes past each one found.
    ///
    /// - Complexity: O(*n*).
    package static func count(in bytes: UnsafeRawBufferPointer) -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        var found = 0
        var position = 0
        while let code = AccessUnitConverter.nextStartCode(base, count: bytes.count, from: position) {
            found += 1
            position = code + 3
        }
        return found
    }
}
