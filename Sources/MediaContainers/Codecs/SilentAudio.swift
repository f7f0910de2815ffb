import Foundation

/// Coded silence, for filling a gap in an audio track so that the sound after it stays where the
/// source places it.
enum SilentAudio {
    /// One AAC-LC raw data block that decodes to 1,024 samples of digital silence per channel, for
    /// channel configurations 1 to 6 (ISO/IEC 14496-3 §4.4.2): each channel element codes its one
    /// scale factor band with the zero codebook, so it has no spectral data and no sample rate of
    /// its own. The bytes were checked by decoding them with ffmpeg's AAC decoder: every sample is
    /// exactly zero.
    private static let lowComplexityFrames: [Int: [UInt8]] = [
        1: [0x00, 0xC8, 0x00, 0x80, 0x23, 0x80],
        2: [0x21, 0x00, 0x49, 0x90, 0x02, 0x19, 0x00, 0x23, 0x80],
        3: [0x00, 0xC8, 0x00, 0x80, 0x20, 0x84, 0x01, 0x26, 0x40, 0x08, 0x64, 0x00, 0x8E],
        4: [
            0x00, 0xC8, 0x00, 0x80, 0x20, 0x84, 0x01, 0x26, 0x40, 0x08, 0x64, 0x00, 0x80, 0x2C, 0x80, 0x08, 0x02, 0x38,
        ],
        5: [
            0x00, 0xC8, 0x00, 0x80, 0x20, 0x84, 0x01, 0x26, 0x40, 0x08, 0x64, 0x00, 0x82, 0x30, 0x04, 0x99, 0x00, 0x21,
            0x90, 0x02, 0x38,
        ],
        6: [
            0x00, 0xC8, 0x00, 0x80, 0x20, 0x84, 0x01, 0x26, 0x40, 0x08, 0x64, 0x00, 0x82, 0x30, 0x04, 0x99, 0x00, 0x21,
            0x90, 0x02, 0x00, 0xB2, 0x00, 0x20, 0x08, 0xE0,
        ],
    ]

    /// A silent frame for samples of `description`, to go before `next` (the frame after the
    /// gap), or `nil` when the codec or profile has none this module can make (an AAC profile
    /// other than LC signalled explicitly, E-AC-3 other than one independent substream of six
    /// blocks).
    static func frame(for description: SampleDescription, before next: Data) -> Data? {
        switch description.codec {
        case .aac: lowComplexityFrame(for: description)
        case .mp3: mpegAudioFrame(like: next)
        case .ac3: ac3Frame(like: next)
        case .eac3: enhancedAC3Frame(like: next)
        default: nil
        }
    }

    /// The exponent groups of a full-bandwidth channel coded over its narrowest bandwidth
    /// (`chbwcod` 0, mantissas 0 to 72, ETSI TS 102 366 §7.1.3): 24 groups of three deltas with
    /// the D15 strategy, 6 with D45 (each delta then covering four mantissas); and the LFE's 2
    /// D15 groups. Each group's three deltas (−2…2) are stored as 25·m1 + 5·m2 + m3 with
    /// m = delta + 2: from an absolute 15, up by 6 and then by 3 to 24, the quietest exponent,
    /// then flat.
    private static func exponentGroups(count: Int) -> [UInt32] {
        [124, 117] + [UInt32](repeating: 62, count: count - 2)
    }

    /// Writes the first audio block's bandwidth codes and exponents for `channels` full-bandwidth
    /// channels (`groups` exponent groups each) and, when `lfe`, the LFE: the quietest exponents
    /// everywhere, so that with the bit allocation's largest SNR offset down no mantissa gets a
    /// bit.
    private static func writeSilentExponents(channels: Int, lfe: Bool, groups: Int, into bits: inout BitWriter) {
        for _ in 0..<channels { bits.write(0, 6) }  // chbwcod 0
        for _ in 0..<channels {
            bits.write(15, 4)
            for group in exponentGroups(count: groups) { bits.write(group, 7) }
            bits.write(0, 2)  // gainrng
        }
        if lfe {
            bits.write(15, 4)
            for group in exponentGroups(count: 2) { bits.write(group, 7) }
        }
    }

    /// An E-AC-3 syncframe (ETSI TS 102 366 Annex E) of `next`'s rate, frame size, bitstream ID,
    /// channel layout and LFE that decodes to silence: an independent substream of six blocks
    /// with no coupling, spectral extension, adaptive hybrid transform, block switching or
    /// transient processing, dither off in every block; the default bit allocation with frame
    /// SNR offsets of 0; each
    /// channel's exponents sent in the first block (the quietest, as for AC-3) and reused in the
    /// others, so that no mantissa gets a bit; zeros after, and the frame's CRC (`crc2`) set.
    /// `nil` for a dependent substream, an access unit of several substreams, reduced sample
    /// rates or fewer than six blocks, whose frames are not coded here.
    static func enhancedAC3Frame(like next: Data) -> Data? {
        guard let header = syncframeHeader(of: next), header.isEnhanced, header.streamType == 0,
            header.blocks == 6, header.sampleRateCode != 3, header.frameLength == next.count
        else { return nil }
        let acmod = UInt32(header.audioCodingMode & 0x07)
        let channels = AC3Header.mainChannels[Int(acmod)]
        let lfe = header.hasLFE
        var bits = BitWriter()
        bits.write(0x0B77, 16)
        // bsi: an independent substream 0 of the same size, rate, six blocks (numblkscod 3).
        bits.write(0, 5)
        bits.write(UInt32(header.frameLength / 2 - 1), 11)
        bits.write(UInt32(header.sampleRateCode), 2)
        bits.write(3, 2)
        bits.write(acmod, 3)
        bits.write(lfe ? 1 : 0, 1)
        bits.write(UInt32(header.bitstreamID), 5)
        bits.write(31 << 1, 6)  // dialnorm 31, compre 0
        if acmod == 0 { bits.write(31 << 1, 6) }  // dialnorm2, compr2e 0
        bits.write(0, 3)  // mixmdate, infomdate, addbsie
        // audfrm: block exponent strategies (expstre 1), no AHT, frame SNR offsets
        // (snroffststr 0), no transient processing or block switching, dither flags sent
        // (dithflage 1: left out, every channel would be dithered), and no bit allocation model,
        // fast gain codes, delta bit allocation, skip fields or spectral extension.
        bits.write(0b10, 2)
        bits.write(0, 2)
        bits.write(0b0010_0000, 8)
        if acmod > 1 { bits.write(0, 6) }  // cplinu 0 in block 0, cplstre 0 in the others
        for block in 0..<6 {
            for _ in 0..<channels { bits.write(block == 0 ? 1 : 0, 2) }  // chexpstr: D15, then reuse
        }
        if lfe {
            for block in 0..<6 { bits.write(block == 0 ? 1 : 0, 1) }  // lfeexpstr
        }
        for _ in 0..<channels { bits.write(0, 5) }  // convexpstr (numblkscod 3: always sent)
        bits.write(0, 10)  // frmcsnroffst, frmfsnroffst
        bits.write(0, 1)  // blkstrtinfoe
        for block in 0..<6 {
            bits.write(0, channels)  // dithflag 0
            bits.write(0, 1)  // dynrnge
            if acmod == 0 { bits.write(0, 1) }  // dynrng2e
            bits.write(0, 1)  // spxinu in block 0, spxstre after
            if acmod == 2 { block == 0 ? bits.write(0, 4) : bits.write(0, 1) }  // rematflg, rematstr
            if block == 0 { writeSilentExponents(channels: channels, lfe: lfe, groups: 24, into: &bits) }
            bits.write(0, 1)  // convsnroffste
        }
        guard var frame = padded(bits, to: header.frameLength) else { return nil }
        setTrailingCRC(of: &frame, from: 2)
        return Data(frame)
    }

    /// An AC-3 syncframe of `next`'s rate, bit rate, bitstream ID and mode, channel layout and
    /// LFE that decodes to silence (ETSI TS 102 366 §4.3): no block switching, dither, dynamic
    /// range, coupling or rematrixing; in the first audio block every channel's exponents climb
    /// from 15 to the quietest, 24, over its narrowest bandwidth (D45 exponents, `chbwcod` 0), and
    /// the bit allocation is told the largest SNR offset down, so every mantissa gets no bits and
    /// is zero; the other five blocks reuse all of it. Zeros fill the rest, and both CRCs are set
    /// (crc1 over the first five eighths, §4.4.1.2, crc2 over the frame). `nil` for an E-AC-3
    /// frame, which ``enhancedAC3Frame(like:)`` writes.
    static func ac3Frame(like next: Data) -> Data? {
        guard let header = syncframeHeader(of: next), !header.isEnhanced else { return nil }
        let acmod = UInt32(header.audioCodingMode & 0x07)
        let channels = AC3Header.mainChannels[Int(acmod)]
        let lfe = header.hasLFE
        var bits = BitWriter()
        bits.write(0x0B77, 16)
        bits.write(0, 16)  // crc1, set below
        bits.write(UInt32(next[next.startIndex + 4]), 8)  // fscod and frmsizecod
        bits.write(UInt32(header.bitstreamID), 5)
        bits.write(UInt32(header.bitstreamMode), 3)
        bits.write(acmod, 3)
        if acmod & 0x01 != 0, acmod != 1 { bits.write(0, 2) }  // cmixlev
        if acmod & 0x04 != 0 { bits.write(0, 2) }  // surmixlev
        if acmod == 2 { bits.write(0, 2) }  // dsurmod
        bits.write(lfe ? 1 : 0, 1)
        // dialnorm 31, and no compression, language or production information.
        bits.write(31, 5)
        bits.write(0, 3)
        if acmod == 0 {
            bits.write(31, 5)
            bits.write(0, 3)
        }
        // copyrightb 0, origbs 1, and no time codes (or extended information) nor additional bsi.
        bits.write(0b01000, 5)
        var firstTwoBlocksEnd = 0
        for block in 0..<6 {
            bits.write(0, channels)  // blksw
            bits.write(0, channels)  // dithflag
            bits.write(0, 1)  // dynrnge
            if acmod == 0 { bits.write(0, 1) }  // dynrng2e
            if block == 0 {
                bits.write(0b10, 2)  // cplstre 1, cplinu 0
            } else {
                bits.write(0, 1)
            }
            if acmod == 2 { block == 0 ? bits.write(0b10000, 5) : bits.write(0, 1) }  // rematstr, rematflg
            // chexpstr: D45 (the fewest exponent bits, so that blocks 0 and 1 end well inside the
            // first five eighths of the frame, as the standard requires), then reuse.
            for _ in 0..<channels { bits.write(block == 0 ? 3 : 0, 2) }
            if lfe { bits.write(block == 0 ? 1 : 0, 1) }  // lfeexpstr
            if block == 0 {
                writeSilentExponents(channels: channels, lfe: lfe, groups: 6, into: &bits)
                // baie: sdcycod 2, fdcycod 1, sgaincod 1, dbpbcod 2, floorcod 0.
                bits.write(1, 1)
                bits.write(0b1001_0110, 8)
                bits.write(0, 3)
                // snroffste: csnroffst 0, and each channel's fsnroffst 0, fgaincod 4.
                bits.write(1, 1)
                bits.write(0, 6)
                for _ in 0..<(channels + (lfe ? 1 : 0)) { bits.write(0b0000_100, 7) }
            } else {
                bits.write(0, 2)  // baie, snroffste
            }
            bits.write(0, 2)  // deltbaie, skiple
            if block == 1 { firstTwoBlocksEnd = bits.bytes.count }
        }
        // crc1 makes the CRC of the first five eighths (after the syncword) zero; crc2 that of
        // the rest, and so of the whole frame. Blocks 0 and 1 must end inside the first part.
        let fiveEighths = ((header.frameLength >> 2) + (header.frameLength >> 4)) << 1
        guard firstTwoBlocksEnd <= fiveEighths, var frame = padded(bits, to: header.frameLength) else { return nil }
        let crc1 = Self.crcPrefix(making: Self.crc16(frame[4..<fiveEighths]), zeroAfter: fiveEighths - 4)
        frame[2] = UInt8(crc1 >> 8)
        frame[3] = UInt8(crc1 & 0xFF)
        setTrailingCRC(of: &frame, from: fiveEighths)
        return Data(frame)
    }

    /// The AC-3 or E-AC-3 syncframe header at the start of `next`, or `nil` when it has none.
    private static func syncframeHeader(of next: Data) -> AC3Header? {
        guard next.count >= 8 else { return nil }
        return try? next.withUnsafeBytes { raw throws(ContainerError) in try AC3Header.read(raw, at: 0, offset: 0) }
    }

    /// The bytes `bits` wrote, padded with zeros to a syncframe of `length` bytes, or `nil` when
    /// they leave no room for the frame's last CRC.
    private static func padded(_ bits: BitWriter, to length: Int) -> [UInt8]? {
        guard bits.bytes.count + 3 <= length else { return nil }
        return bits.bytes + [UInt8](repeating: 0, count: length - bits.bytes.count)
    }

    /// Sets a syncframe's last two bytes (`crc2`) so that the CRC of its bytes from `start` to its
    /// end is zero.
    private static func setTrailingCRC(of frame: inout [UInt8], from start: Int) {
        let crc = crc16(frame[start..<(frame.count - 2)])
        frame[frame.count - 2] = UInt8(crc >> 8)
        frame[frame.count - 1] = UInt8(crc & 0xFF)
    }

    /// The CRC-16 of ETSI TS 102 366 §4.4.1.2 and Annex A (x¹⁶ + x¹⁵ + x² + 1, most significant
    /// bit first, from 0) of `bytes`, continuing from `start`.
    ///
    /// - Complexity: O(*n*) in the bytes.
    static func crc16<Bytes: Sequence>(_ bytes: Bytes, from start: UInt16 = 0) -> UInt16 where Bytes.Element == UInt8 {
        var crc = start
        for byte in bytes {
            crc ^= UInt16(byte) << 8
            for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x8005 : crc << 1 }
        }
        return crc
    }

    /// The two bytes `x` such that the CRC of `x` followed by `length` bytes whose own CRC is
    /// `tail` is zero: the CRC is linear, so `x` solves CRC(x · 0ˡᵉⁿᵍᵗʰ) = `tail`, found by
    /// Gaussian elimination over the images of the 16 unit vectors.
    ///
    /// - Complexity: O(16 · *length* + 16²).
    static func crcPrefix(making tail: UInt16, zeroAfter length: Int) -> UInt16 {
        let zeros = [UInt8](repeating: 0, count: length)
        // Row i: the image of bit i of x, and that bit.
        var rows: [(image: UInt16, input: UInt16)] = (0..<16).map { bit in
            let x = UInt16(1) << UInt16(bit)
            return (crc16(zeros, from: crc16([UInt8(x >> 8), UInt8(x & 0xFF)])), x)
        }
        var target = (image: tail, input: UInt16(0))
        for pivot in (0..<16).reversed() {
            let mask = UInt16(1) << UInt16(pivot)
            guard let at = rows.firstIndex(where: { $0.image & mask != 0 }) else { continue }
            let row = rows.remove(at: at)
            for index in rows.indices where rows[index].image & mask != 0 {
                rows[index].image ^= row.image
                rows[index].input ^= row.input
            }
            if target.image & mask != 0 {
                target.image ^= row.image
                target.input ^= row.input
            }
        }
        return target.input
    }

    /// An MPEG audio frame of `next`'s version, layer, rate, bit rate and channel mode that
    /// decodes to silence: its header without CRC or padding (ISO/IEC 11172-3 §2.4.2.3), then
    /// zeros. Zeros are a layer I or II frame with no bits allocated to any subband, and a
    /// layer III frame whose side information gives every granule no main data (the bit
    /// reservoir's `main_data_begin` 0, `part2_3_length` 0), so no spectral value is coded.
    /// Checked by decoding with ffmpeg: after the previous frame's overlap, every sample is zero.
    /// A layer III frame after the silence that draws on the bit reservoir of the frames before
    /// the gap (a gap inside one encode) finds zeros where that data was: ffmpeg's decoder skips
    /// such frames (silence until the reservoir refills), another decoder may glitch on them. After
    /// a discontinuity, the new encode starts with an empty reservoir.
    static func mpegAudioFrame(like next: Data) -> Data? {
        guard next.count >= 4 else { return nil }
        var header = [UInt8](next.prefix(4))
        header[1] |= 0x01  // protection_bit 1: no CRC follows
        header[2] &= ~0x02  // padding_bit 0
        guard let parsed = header.withUnsafeBytes({ MPEGAudioHeader.read($0, at: 0) }) else { return nil }
        return Data(header + [UInt8](repeating: 0, count: parsed.frameLength - 4))
    }

    /// An AAC-LC silent block for `description`'s channel configuration.
    private static func lowComplexityFrame(for description: SampleDescription) -> Data? {
        guard let config = audioSpecificConfig(in: description.sampleEntry), config.count >= 2 else { return nil }
        let objectType = config[0] >> 3
        let channels = Int((config[1] >> 3) & 0x0F)
        // AAC LC (object type 2). An HE-AAC stream signalled implicitly (ADTS) says LC too; a
        // frame without SBR data then decodes as silence at the core rate, which the decoder's
        // SBR tool upsamples like any other.
        guard objectType == 2, let bytes = lowComplexityFrames[channels] else { return nil }
        return Data(bytes)
    }

    /// The AudioSpecificConfig inside an `mp4a` entry's `esds`, found by its descriptor tag 0x05.
    static func audioSpecificConfig(in entry: Data) -> [UInt8]? {
        let bytes = [UInt8](entry)
        guard bytes.count > 36, String(decoding: bytes[4..<8], as: UTF8.self) == "mp4a" else { return nil }
        var index = 36
        while index + 8 <= bytes.count {
            let size =
                Int(bytes[index]) << 24 | Int(bytes[index + 1]) << 16 | Int(bytes[index + 2]) << 8
                | Int(bytes[index + 3])
            guard size >= 8, index + size <= bytes.count else { return nil }
            if String(decoding: bytes[(index + 4)..<(index + 8)], as: UTF8.self) == "esds" {
                var at = index + 12
                while at + 2 <= index + size {
                    let tag = bytes[at]
                    at += 1
                    var length = 0
                    for _ in 0..<4 {
                        guard at < bytes.count else { return nil }
                        let byte = bytes[at]
                        at += 1
                        length = length << 7 | Int(byte & 0x7F)
                        if byte & 0x80 == 0 { break }
                    }
                    switch tag {
                    case 0x03: at += 3  // ES_ID and flags (none set by this module's writer)
                    case 0x04: at += 13  // objectTypeIndication … avgBitrate
                    case 0x05:
                        guard at + length <= bytes.count else { return nil }
                        return Array(bytes[at..<(at + length)])
                    default: at += length
                    }
                }
                return nil
            }
            index += size
        }
        return nil
    }
}

/// Converts a time from one timescale to another, rounding to the nearest tick, without overflow
/// for any time a track can hold.
@inline(__always)
func rescale(_ value: Int64, from source: Int, to target: Int) -> Int64 {
    guard source != target, source > 0, target > 0 else { return value }
    if target % source == 0 {
        let (product, overflow) = value.multipliedReportingOverflow(by: Int64(target / source))
        if !overflow { return product }
    }
    if source % target == 0 {
        let divisor = Int64(source / target)
        let half = divisor / 2
        return value >= 0 ? (value + half) / divisor : -((-value + half) / divisor)
    }
    let wide = value.multipliedFullWidth(by: Int64(target))
    let divisor = Int64(source)
    // |value × target| < 2⁶³ × |source| keeps the quotient in range; a time of centuries does not.
    guard wide.high == 0 || wide.high == -1 || abs(wide.high) < divisor / 2 else {
        // Beyond any real lesson: clamped where later sums cannot overflow, so the timeline's
        // checks report it instead of a trap.
        let scaled = (Double(value) * Double(target) / Double(source)).rounded()
        let limit = Double(Int64.max / 4)
        guard scaled.isFinite else { return value < 0 ? -Int64.max / 4 : Int64.max / 4 }
        return Int64(min(max(scaled, -limit), limit))
    }
    let (quotient, remainder) = divisor.dividingFullWidth(wide)
    if remainder * 2 >= divisor { return quotient + 1 }
    if remainder * 2 <= -divisor { return quotient - 1 }
    return quotient
}

/// `raw`, a 33-bit MPEG timestamp (90 kHz, ISO/IEC 13818-1 §2.4.3.7), in the period of 2³³
/// nearest `reference`: a clock that wraps past 2³³ carries on instead of going back 26.5 hours.
func unwrapped33(_ raw: Int64, near reference: Int64) -> Int64 {
    let period: Int64 = 1 << 33
    var value = raw + (reference / period) * period
    if value - reference > period / 2 { value -= period } else if reference - value > period / 2 { value += period }
    return value
}
