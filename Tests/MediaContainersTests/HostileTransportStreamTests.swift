import Foundation
import MediaContainers
import TestSupport
import Testing

/// Hostile transport streams written packet by packet: a PES that never ends, stuffing where a
/// table section would start, and H.264 parameter sets that would trap the arithmetic (bit
/// depths, cropping windows, lengths past the configuration record's 16 bits), each a typed
/// ``ContainerError`` or read as the standard says.
@Suite("Hostile transport streams (ISO/IEC 13818-1, ITU-T H.264 §7.3.2.1)")
struct HostileTransportStreamTests {
    @Test("§2.4.3.7: a PES packet that never ends is refused at its bound, not held in memory without limit")
    func endlessPES() throws {
        var (builder, bytes) = H264TestStream.videoStream()
        bytes += builder.packets(pid: 0x100, payload: H264TestStream.videoHeader + [0, 0, 0, 1, 0x09, 0xF0])
        // 40 MiB of continuation, no unit start ever again.
        let filler = [UInt8](repeating: 0x5A, count: 184)
        for _ in 0..<(40 << 20) / 184 { bytes += builder.packets(pid: 0x100, payload: filler, unitStart: false) }
        var demuxer = TransportStreamDemuxer()
        do {
            _ = try demuxer.startSegment(0)
            _ = try demuxer.append(Data(bytes))
            _ = try demuxer.finish()
            Issue.record("a 40 MiB PES was accepted")
        } catch {
            guard case .tooLarge = error.kind else {
                Issue.record("unexpected \(error)")
                return
            }
        }
    }

    @Test(
        "H.264 §7.4.2.1.1: a bit depth beyond 14 bits is a typed error, not an overflow",
        arguments: [(0, false), (6, false), (7, true), (1 << 20, true), (1 << 40, true)] as [(UInt64, Bool)])
    func hugeBitDepth(depth: UInt64, refused: Bool) throws {
        let segment = H264TestStream.videoSegment(sps: H264TestStream.sequenceParameterSet(lumaDepthMinus8: depth))
        let reason = try H264TestStream.refusal(segment).reason ?? ""
        #expect(reason.contains("bit depth") == refused, "bit_depth_luma_minus8 \(depth): \(reason)")
    }

    @Test(
        "H.264 §7.4.2.1.1, §7.4.2.2: an SPS numbered over 31 or a PPS numbered over 255 is a typed error, so a stream cannot keep sets without bound",
        arguments: [(31, 255, false), (32, 0, true), (0, 256, true), (1 << 20, 0, true), (0, 1 << 30, true)]
            as [(UInt64, UInt64, Bool)])
    func parameterSetNumbers(sequence: UInt64, picture: UInt64, refused: Bool) throws {
        let sps = H264TestStream.sequenceParameterSet(id: sequence, columns: 40, rows: 23, crop: nil)
        let pps = H264TestStream.pictureParameterSet(id: picture, sequence: sequence)
        let segment = H264TestStream.segment(accessUnits: [
            [0, 0, 0, 1] + sps + [0, 0, 0, 1] + pps + [0, 0, 0, 1, 0x65, 0x88, 0x84, 0x00]
        ])
        let reason = try H264TestStream.refusal(segment).reason ?? ""
        #expect(reason.contains("parameter set numbered") == refused, "SPS \(sequence), PPS \(picture): \(reason)")
    }

    @Test(
        "ISO/IEC 23008-2 §7.4.3.2.1, ISO/IEC 14496-15 §8.3.3.1.2: an HEVC bit depth the hvcC record cannot say (16 bits) is a typed error, not a record that says 8",
        arguments: [(0, false), (2, false), (7, false), (8, true), (1 << 20, true)] as [(UInt64, Bool)])
    func hevcBitDepth(depth: UInt64, refused: Bool) throws {
        // A VPS numbered 0 (its body is not read), the SPS, a PPS 0 of SPS 0, and the start of an
        // IDR_W_RADL slice on PPS 0: the SPS is read when that first picture arrives.
        let vps: [UInt8] = [0, 0, 0, 1, 0x40, 0x01, 0x0C, 0x01, 0xFF, 0xFF]
        let sps = [0, 0, 0, 1] + H264TestStream.hevcSequenceParameterSet(lumaDepthMinus8: depth)
        let pps: [UInt8] = [0, 0, 0, 1, 0x44, 0x01, 0xC1]
        let idr: [UInt8] = [0, 0, 0, 1, 0x26, 0x01, 0xAF, 0x00]
        let segment = H264TestStream.segment(accessUnits: [vps + sps + pps + idr], hevc: true)
        let (reason, result) = try H264TestStream.refusal(segment)
        if refused {
            #expect(reason?.contains("bit depth") == true, "bit_depth_luma_minus8 \(depth): \(reason ?? "accepted")")
        } else {
            // Accepted, and the hvcC record says the depth (§8.3.3.1.2: after 17 bytes of the
            // record, 0xF8 | bitDepthLumaMinus8).
            let entry = try #require(result?.file.tracks("vide").first?.entries.first, "\(reason ?? "")")
            // The boxes after the visual sample entry's 78 bytes of fields (ISO/IEC 14496-12 §12.1.3).
            let record = try #require(MP4BoxReader(bytes: entry).boxes(from: 86).first { $0.type == "hvcC" })
            #expect(entry[record.start + 8 + 17] == 0xF8 | UInt8(depth), "bit_depth_luma_minus8 \(depth)")
        }
    }

    @Test(
        "ISO/IEC 14496-12 §8.5.2: a stream that changes its picture size at every picture is refused after 256 sample descriptions, not given an entry each",
        arguments: [200, 300])
    func descriptionsWithoutBound(pictures: Int) throws {
        let pps = H264TestStream.pictureParameterSet(id: 0, sequence: 0)
        let units = (0..<pictures).map { index in
            let sps = H264TestStream.sequenceParameterSet(columns: 2 + UInt64(index), rows: 2, crop: nil)
            return [0, 0, 0, 1] + sps + [0, 0, 0, 1] + pps + [0, 0, 0, 1, 0x65, 0x88, 0x84, 0x00]
        }
        do {
            let result = try Remux.run([H264TestStream.segment(accessUnits: units)])
            #expect(pictures <= 256, "\(pictures) sizes were written")
            #expect(result.file.tracks("vide").first?.entries.count == pictures)
        } catch let error as ContainerError {
            guard case .unsupportedFormat(let reason) = error.kind else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(pictures > 256, "\(reason)")
        }
    }

    /// A cropping window and the picture it leaves, or `nil` where the SPS must be refused.
    struct Cropping: Sendable, CustomTestStringConvertible {
        var columns: UInt64
        var rows: UInt64
        var crop: (UInt64, UInt64, UInt64, UInt64)?
        var picture: (width: Int, height: Int)?
        var testDescription: String {
            let window = crop.map { "crop \($0.0),\($0.1),\($0.2),\($0.3)" } ?? "no crop"
            return "\(columns)×\(rows) macroblocks, \(window)"
        }
    }

    static let croppings: [Cropping] = [
        Cropping(columns: 120, rows: 68, crop: nil, picture: (1920, 1088)),
        Cropping(columns: 120, rows: 68, crop: (0, 0, 0, 4), picture: (1920, 1080)),
        Cropping(columns: 40, rows: 23, crop: (1, 1, 2, 2), picture: (636, 360)),
        Cropping(columns: 1, rows: 1, crop: nil, picture: (16, 16)),
        // A window that leaves nothing, or less than nothing, and offsets that overflow 32 bits
        // once doubled into luma samples.
        Cropping(columns: 120, rows: 68, crop: (480, 480, 0, 0), picture: nil),
        Cropping(columns: 120, rows: 68, crop: (0, 0, 300, 300), picture: nil),
        Cropping(columns: 120, rows: 68, crop: (1 << 31, 0, 0, 0), picture: nil),
        Cropping(columns: 120, rows: 68, crop: (0, 0, (1 << 32) - 2, (1 << 32) - 2), picture: nil),
        // A picture wider than an MP4 sample entry's 16 bits.
        Cropping(columns: 4_096, rows: 1, crop: nil, picture: nil),
        Cropping(columns: 1 << 28, rows: 1, crop: nil, picture: nil),
    ]

    @Test(
        "H.264 §7.4.2.1.1: the cropping window's arithmetic is checked, an impossible picture is a typed error",
        arguments: croppings)
    func cropping(case cropping: Cropping) throws {
        let sps = H264TestStream.sequenceParameterSet(
            columns: cropping.columns, rows: cropping.rows, crop: cropping.crop)
        let (reason, result) = try H264TestStream.refusal(H264TestStream.videoSegment(sps: sps))
        guard let picture = cropping.picture else {
            #expect(reason != nil, "accepted")
            return
        }
        #expect(reason == nil)
        let entry = try #require(result?.file.tracks("vide").first?.entries.first)
        // VisualSampleEntry (ISO/IEC 14496-12 §12.1.3): width and height after 24 bytes of fields.
        let width = Int(entry[32]) << 8 | Int(entry[33])
        let height = Int(entry[34]) << 8 | Int(entry[35])
        #expect(width == picture.width && height == picture.height, "\(width)×\(height)")
    }

    @Test(
        "ISO/IEC 14496-15 §5.3.3.1: a parameter set fits the record's 16-bit length or is a typed error",
        arguments: [(65_535, true), (65_536, false), (200_000, false)])
    func parameterSetLength(length: Int, fits: Bool) throws {
        // A real SPS, then filler the parser never reads: it ends after the fields it needs.
        let head = H264TestStream.sequenceParameterSet(columns: 40, rows: 23, crop: nil)
        let sps = head + [UInt8](repeating: 0x5A, count: length - head.count)
        do {
            let result = try Remux.run([H264TestStream.videoSegment(sps: sps)])
            #expect(fits, "a parameter set of \(length) bytes was written")
            let entry = try #require(result.file.tracks("vide").first?.entries.first)
            // avcC after the 86-byte visual entry: version, profile, compatibility, level, length
            // size, SPS count, then the first SPS's 16-bit length.
            let recorded = Int(entry[86 + 8 + 6]) << 8 | Int(entry[86 + 8 + 7])
            #expect(recorded == length)
        } catch let error as ContainerError {
            guard case .tooLarge(let what, let bytes, _) = error.kind else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(!fits && what == "a parameter set" && bytes == length, "\(error)")
        }
    }

    @Test(
        "§2.4.4.1: stuffing (0xFF) where a table_id would be ends the section; what follows it is not a table, and the next tables are read"
    )
    func stuffingWhereASectionStarts() throws {
        var builder = TransportStreamBuilder()
        var bytes: [UInt8] = []
        // A PAT packet of nothing but stuffing after its pointer field, continued by packets of
        // bytes that would read as an endless section if the stuffing were taken for a table.
        bytes += builder.packets(pid: 0, payload: [0] + [UInt8](repeating: 0xFF, count: 183))
        for _ in 0..<64 {
            bytes += builder.packets(pid: 0, payload: [UInt8](repeating: 0x30, count: 184), unitStart: false)
        }
        bytes += builder.packets(pid: builder.mapPID, payload: [0] + [UInt8](repeating: 0xFF, count: 183))
        bytes += builder.tables()
        for index in 0..<4 { bytes += builder.audioPES(pts: 90_000 + Int64(index) * 2_090) }
        var demuxer = TransportStreamDemuxer()
        _ = try demuxer.startSegment(0)
        let frames = try demuxer.append(Data(bytes)) + demuxer.finish()
        #expect(demuxer.declaredStreams.map(\.pid) == [builder.audioPID])
        #expect(frames.count == 4)
    }
}
