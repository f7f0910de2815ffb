import Foundation

/// The header of an AC-3 or E-AC-3 syncframe (ETSI TS 102 366 §4.4.1 and Annex E §E.1.2), as far
/// as a muxer needs it: the frame's length, its audio blocks, the stream's rate and channels, and
/// the fields the `dac3` and `dec3` boxes repeat.
struct AC3Header: Hashable, Sendable {
    /// Whether the frame is E-AC-3 (bsid 11 to 16) rather than AC-3 (bsid 10 or less).
    var isEnhanced: Bool
    /// The frame's length in bytes.
    var frameLength: Int
    /// The audio blocks of 256 samples in the frame (6 for AC-3).
    var blocks: Int
    /// The sample rate in hertz.
    var sampleRate: Int
    /// fscod: the sample rate code (3 for E-AC-3's reduced rates).
    var sampleRateCode: UInt8
    /// bsid.
    var bitstreamID: UInt8
    /// bsmod: the service type.
    var bitstreamMode: UInt8
    /// acmod: the channel layout of the main channels.
    var audioCodingMode: UInt8
    /// lfeon: whether a low-frequency effects channel is present.
    var hasLFE: Bool
    /// AC-3: frmsizecod >> 1, the bit rate code of `dac3`.
    var bitRateCode: UInt8
    /// E-AC-3: strmtyp (0 independent, 1 dependent, 2 AC-3 converted to independent).
    var streamType: UInt8
    /// E-AC-3: substreamid.
    var substreamID: UInt8
    /// E-AC-3 dependent substreams: the custom channel map (chanmap), when one is given.
    var channelMap: UInt16?

    /// The main channels of each acmod (Table 4.3), before the LFE.
    static let mainChannels: [Int] = [2, 1, 2, 3, 3, 4, 4, 5]

    /// The channels, the LFE included.
    var channelCount: Int { Self.mainChannels[Int(audioCodingMode & 0x07)] + (hasLFE ? 1 : 0) }

    /// Words (16 bits) per AC-3 syncframe by frmsizecod / 2, for 48, 44.1 and 32 kHz (Table 4.13);
    /// at 44.1 kHz an odd frmsizecod adds one word.
    private static let words48: [Int] = [
        64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448, 512, 640, 768, 896, 1_024, 1_152, 1_280,
    ]
    private static let words44: [Int] = [
        69, 87, 104, 121, 139, 174, 208, 243, 278, 348, 417, 487, 557, 696, 835, 975, 1_114, 1_253, 1_393,
    ]
    private static let words32: [Int] = [
        96, 120, 144, 168, 192, 240, 288, 336, 384, 480, 576, 672, 768, 960, 1_152, 1_344, 1_536, 1_728, 1_920,
    ]

    /// Reads the syncframe header at `index` of `bytes`; `nil` when fewer than 8 bytes remain.
    ///
    /// - Throws: ``ContainerError/Kind/malformedAudio(codec:reason:)`` for a missing syncword or a
    ///   reserved code.
    static func read(_ bytes: UnsafeRawBufferPointer, at index: Int, offset: Int) throws(ContainerError) -> AC3Header? {
        guard bytes.count - index >= 8 else { return nil }
        guard bytes[index] == 0x0B, bytes[index + 1] == 0x77 else {
            throw ContainerError(.malformedAudio(codec: .ac3, reason: "no syncword 0x0B77"), offset: offset + index)
        }
        let bitstreamID = bytes[index + 5] >> 3
        if bitstreamID > 10 {
            guard bitstreamID <= 16 else {
                throw ContainerError(
                    .malformedAudio(codec: .eac3, reason: "bitstream id \(bitstreamID)"), offset: offset + index)
            }
            return try enhanced(bytes, at: index, offset: offset)
        }
        var bits = BitReader(Array(UnsafeRawBufferPointer(rebasing: bytes[(index + 4)..<(index + 8)])))
        let sampleRateCode = UInt8(bits.bits(2))
        let frameSizeCode = Int(bits.bits(6))
        guard sampleRateCode != 3, frameSizeCode < 38 else {
            throw ContainerError(
                .malformedAudio(codec: .ac3, reason: "reserved fscod \(sampleRateCode) or frmsizecod \(frameSizeCode)"),
                offset: offset + index)
        }
        _ = bits.bits(5)  // bsid
        let mode = UInt8(bits.bits(3))
        let acmod = UInt8(bits.bits(3))
        if acmod & 0x01 != 0, acmod != 1 { _ = bits.bits(2) }  // cmixlev
        if acmod & 0x04 != 0 { _ = bits.bits(2) }  // surmixlev
        if acmod == 2 { _ = bits.bits(2) }  // dsurmod
        let lfe = bits.flag()
        let words: Int
        switch sampleRateCode {
        case 0: words = words48[frameSizeCode / 2]
        case 1: words = words44[frameSizeCode / 2] + frameSizeCode % 2
        default: words = words32[frameSizeCode / 2]
        }
        // bsid 9 and 10 are the half- and quarter-rate variants.
        let rate = [48_000, 44_100, 32_000][Int(sampleRateCode)] >> max(Int(bitstreamID) - 8, 0)
        return AC3Header(
            isEnhanced: false, frameLength: words * 2, blocks: 6, sampleRate: rate,
            sampleRateCode: sampleRateCode, bitstreamID: bitstreamID, bitstreamMode: mode, audioCodingMode: acmod,
            hasLFE: lfe, bitRateCode: UInt8(frameSizeCode / 2), streamType: 0, substreamID: 0, channelMap: nil)
    }

    /// Reads an E-AC-3 syncframe header (Annex E §E.1.2.2).
    private static func enhanced(_ bytes: UnsafeRawBufferPointer, at index: Int, offset: Int) throws(ContainerError)
        -> AC3Header
    {
        let end = min(bytes.count, index + 16)
        var bits = BitReader(Array(UnsafeRawBufferPointer(rebasing: bytes[(index + 2)..<end])))
        let streamType = UInt8(bits.bits(2))
        let substreamID = UInt8(bits.bits(3))
        let frameSize = Int(bits.bits(11))
        let sampleRateCode = UInt8(bits.bits(2))
        var blocks = 6
        var sampleRate: Int
        if sampleRateCode == 3 {
            let reduced = Int(bits.bits(2))
            guard reduced != 3 else {
                throw ContainerError(.malformedAudio(codec: .eac3, reason: "reserved fscod2"), offset: offset + index)
            }
            sampleRate = [24_000, 22_050, 16_000][reduced]
        } else {
            blocks = [1, 2, 3, 6][Int(bits.bits(2))]
            sampleRate = [48_000, 44_100, 32_000][Int(sampleRateCode)]
        }
        let acmod = UInt8(bits.bits(3))
        let lfe = bits.flag()
        let bitstreamID = UInt8(bits.bits(5))
        _ = bits.bits(5)  // dialnorm
        if bits.flag() { _ = bits.bits(8) }  // compre, compr
        if acmod == 0 {
            _ = bits.bits(5)  // dialnorm2
            if bits.flag() { _ = bits.bits(8) }  // compr2e, compr2
        }
        var channelMap: UInt16?
        if streamType == 1, bits.flag() { channelMap = UInt16(bits.bits(16)) }
        guard streamType != 3, frameSize >= 2 else {
            throw ContainerError(
                .malformedAudio(codec: .eac3, reason: "reserved stream type or a frame of \(frameSize + 1) words"),
                offset: offset + index)
        }
        return AC3Header(
            isEnhanced: true, frameLength: (frameSize + 1) * 2, blocks: blocks, sampleRate: sampleRate,
            sampleRateCode: sampleRateCode, bitstreamID: bitstreamID, bitstreamMode: 0, audioCodingMode: acmod,
            hasLFE: lfe, bitRateCode: 0, streamType: streamType, substreamID: substreamID, channelMap: channelMap)
    }

    /// The `ac-3` sample entry with its `dac3` box (Annex F.4): fscod, bsid, bsmod, acmod, lfeon
    /// and the bit rate code, timed at the sample rate, 1,536 samples a frame.
    var ac3Description: SampleDescription {
        var bits: UInt32 = UInt32(sampleRateCode) << 22 | UInt32(bitstreamID & 0x1F) << 17
        bits |= UInt32(bitstreamMode & 0x07) << 14 | UInt32(audioCodingMode & 0x07) << 11
        bits |= (hasLFE ? 1 : 0) << 10 | UInt32(bitRateCode & 0x1F) << 5
        var dac3 = BoxWriter()
        dac3.begin("dac3")
        dac3.append([UInt8(bits >> 16 & 0xFF), UInt8(bits >> 8 & 0xFF), UInt8(bits & 0xFF)])
        dac3.end()
        return SampleDescription(
            kind: .audio, codec: .ac3,
            sampleEntry: SampleEntries.audio(
                format: "ac-3", channelCount: 2, sampleRate: sampleRate, children: dac3.bytes),
            timescale: sampleRate, sampleRate: sampleRate, channelCount: channelCount, frameDuration: 1_536)
    }

    /// The `ec-3` sample entry with its `dec3` box (Annex F.6) for an independent substream
    /// (`self`) and its dependent substreams' channel maps, at `dataRate` kbit/s.
    func enhancedDescription(dependents: [AC3Header], dataRate: Int) -> SampleDescription {
        var bits = BitWriter()
        bits.write(UInt32(min(max(dataRate, 0), 0x1FFF)), 13)
        bits.write(0, 3)  // num_ind_sub: one independent substream
        bits.write(UInt32(sampleRateCode), 2)
        bits.write(UInt32(bitstreamID & 0x1F), 5)
        bits.write(0, 1)  // reserved
        bits.write(0, 1)  // asvc
        bits.write(UInt32(bitstreamMode & 0x07), 3)
        bits.write(UInt32(audioCodingMode & 0x07), 3)
        bits.write(hasLFE ? 1 : 0, 1)
        bits.write(0, 3)  // reserved
        bits.write(UInt32(min(dependents.count, 15)), 4)
        if dependents.isEmpty {
            bits.write(0, 1)  // reserved
        } else {
            // chan_loc (Table F.6.1): the locations beyond the five front channels that the
            // dependent substreams' channel maps name, Lc/Rc in the lowest bit (as Dolby's
            // reference muxer numbers them).
            let map = dependents.reduce(UInt16(0)) { $0 | ($1.channelMap ?? 0) }
            var locations: UInt32 = 0
            for bit in 0..<8 where map & (0x8000 >> UInt16(5 + bit)) != 0 { locations |= 1 << UInt32(bit) }
            if map & (0x8000 >> 14) != 0 { locations |= 0x100 }
            bits.write(locations, 9)
        }
        var dec3 = BoxWriter()
        dec3.begin("dec3")
        dec3.append(bits.bytes)
        dec3.end()
        let channels = channelCount + dependents.reduce(0) { $0 + Self.extraChannels(of: $1) }
        return SampleDescription(
            kind: .audio, codec: .eac3,
            // ETSI TS 102 366 Annex F: the entry's channel count is always 2; decoders read the
            // layout from the specific box.
            sampleEntry: SampleEntries.audio(
                format: "ec-3", channelCount: 2, sampleRate: sampleRate, children: dec3.bytes),
            timescale: sampleRate, sampleRate: sampleRate, channelCount: channels, frameDuration: 1_536)
    }

    /// The channels a dependent substream adds beyond those of the independent one: the
    /// locations its channel map names (a pair location counts twice).
    private static func extraChannels(of dependent: AC3Header) -> Int {
        guard let map = dependent.channelMap else { return 0 }
        // chanmap bits 0–15 from the most significant: L, C, R, Ls, Rs, Lc/Rc pair, Lrs/Rrs
        // pair, Cs, Ts, Lsd/Rsd pair, Lw/Rw pair, Lvh/Rvh pair, Cvh, reserved, LFE2, LFE.
        let pairs: Set<Int> = [5, 6, 9, 10, 11]
        var count = 0
        for bit in 5..<16 where map & (0x8000 >> UInt16(bit)) != 0 { count += pairs.contains(bit) ? 2 : 1 }
        return count
    }
}

/// Writes fields most significant bit first into bytes.
struct BitWriter {
    private(set) var bytes: [UInt8] = []
    private var used = 0

    /// Appends the low `count` bits of `value`.
    mutating func write(_ value: UInt32, _ count: Int) {
        for shift in stride(from: count - 1, through: 0, by: -1) {
            if used == 0 { bytes.append(0) }
            if value >> UInt32(shift) & 1 == 1 { bytes[bytes.count - 1] |= 0x80 >> UInt8(used) }
            used = (used + 1) % 8
        }
    }
}
