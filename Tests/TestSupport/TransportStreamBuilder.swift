/// Builds small MPEG-2 transport streams (ISO/IEC 13818-1) of AAC audio for tests and
/// benchmarks: a PAT, a PMT, and PES packets of ADTS frames with the PTS given, split into
/// 188-byte packets with adaptation-field stuffing. The AAC payloads are pseudo-random bytes:
/// a demuxer and a remuxer never decode them.
public struct TransportStreamBuilder {
    /// The audio stream's PID.
    public let audioPID: UInt16
    /// The program map table's PID.
    public let mapPID: UInt16
    private var counters: [UInt16: UInt8] = [:]
    private var generator: SplitMix64

    /// Creates a builder whose payload bytes come from `seed`.
    public init(audioPID: UInt16 = 0x101, mapPID: UInt16 = 0x1000, seed: UInt64 = 1) {
        self.audioPID = audioPID
        self.mapPID = mapPID
        generator = SplitMix64(seed: seed)
    }

    /// The PAT and PMT announcing one stream of `streamType` (AAC in ADTS by default) on
    /// ``audioPID``.
    public mutating func tables(streamType: UInt8 = 0x0F) -> [UInt8] {
        let pat: [UInt8] = [
            0x00, 0xB0, 0x0D, 0x00, 0x01, 0xC1, 0x00, 0x00, 0x00, 0x01,
            0xE0 | UInt8(mapPID >> 8), UInt8(mapPID & 0xFF), 0, 0, 0, 0,
        ]
        let pmt: [UInt8] = [
            0x02, 0xB0, 0x12, 0x00, 0x01, 0xC1, 0x00, 0x00, 0xE0 | UInt8(audioPID >> 8), UInt8(audioPID & 0xFF),
            0xF0, 0x00, streamType, 0xE0 | UInt8(audioPID >> 8), UInt8(audioPID & 0xFF), 0xF0, 0x00, 0, 0, 0, 0,
        ]
        return packets(pid: 0, payload: [0] + pat) + packets(pid: mapPID, payload: [0] + pmt)
    }

    /// One PES packet of `frameCount` ADTS frames (AAC LC, stereo, at `sampleRate`: 44.1 kHz
    /// by default, or 48 kHz) of `frameSize` payload bytes each, presented at `pts` (90 kHz; only
    /// its low 33 bits are written).
    public mutating func audioPES(
        pts: Int64, frameCount: Int = 1, frameSize: Int = 200, sampleRate: Int = 44_100
    ) -> [UInt8] {
        // ADTS byte 2: profile 1 (LC) in two bits, the sampling frequency index (ISO/IEC 14496-3
        // §1.6.3.4: 3 is 48 kHz, 4 is 44.1 kHz) in four, then the channel configuration's top bit.
        let rateByte: UInt8 = sampleRate == 48_000 ? 0x4C : 0x50
        var frames: [UInt8] = []
        for _ in 0..<frameCount {
            let length = frameSize + 7
            frames += [
                0xFF, 0xF1, rateByte, 0x80 | UInt8((length >> 11) & 0x03), UInt8((length >> 3) & 0xFF),
                UInt8((length & 0x07) << 5) | 0x1F, 0xFC,
            ]
            frames += (0..<frameSize).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        }
        return packets(pid: audioPID, payload: Self.pes(streamID: 0xC0, pts: pts, payload: frames))
    }

    /// A PES packet (ISO/IEC 13818-1 §2.4.3.6) of stream `streamID` carrying `payload`, with a
    /// PTS of `pts` (90 kHz; only its low 33 bits are written) and no DTS.
    public static func pes(streamID: UInt8, pts: Int64, payload: [UInt8]) -> [UInt8] {
        let stamp = pts & ((1 << 33) - 1)
        let timestamp: [UInt8] = [
            0x21 | UInt8((stamp >> 29) & 0x0E), UInt8((stamp >> 22) & 0xFF), UInt8((stamp >> 14) & 0xFE) | 1,
            UInt8((stamp >> 7) & 0xFF), UInt8((stamp << 1) & 0xFE) | 1,
        ]
        let length = 3 + timestamp.count + payload.count
        // PES_packet_length 0 (unbounded, as video allows) when the packet is longer than 16 bits hold.
        let declared = length <= 0xFFFF ? length : 0
        let header: [UInt8] = [0, 0, 1, streamID, UInt8(declared >> 8), UInt8(declared & 0xFF), 0x80, 0x80, 0x05]
        return header + timestamp + payload
    }

    /// A whole stream: the tables, then `pesCount` PES packets of `framesPerPES` frames, their
    /// PTS advancing by 1,024 samples per frame at 44.1 kHz from `startPTS`.
    public static func audioStream(
        pesCount: Int, framesPerPES: Int = 1, startPTS: Int64 = 126_000, seed: UInt64 = 1
    ) -> [UInt8] {
        var builder = TransportStreamBuilder(seed: seed)
        var bytes = builder.tables()
        for index in 0..<pesCount {
            let pts = startPTS + Int64(index * framesPerPES) * 1_024 * 90_000 / 44_100
            bytes += builder.audioPES(pts: pts, frameCount: framesPerPES)
        }
        return bytes
    }

    /// `payload` as transport packets of `pid` with continuity counters that never skip, the
    /// first marked as a unit start (unless `unitStart` is false), the last filled out with an
    /// adaptation field of stuffing.
    public mutating func packets(pid: UInt16, payload: [UInt8], unitStart: Bool = true) -> [UInt8] {
        var bytes: [UInt8] = []
        var start = 0
        while start < payload.count {
            let chunk = min(184, payload.count - start)
            let counter = (counters[pid, default: 15] &+ 1) & 0x0F
            counters[pid] = counter
            let startFlag: UInt8 = start == 0 && unitStart ? 0x40 : 0
            bytes += [0x47, startFlag | UInt8(pid >> 8), UInt8(pid & 0xFF)]
            if chunk == 184 {
                bytes.append(0x10 | counter)
            } else {
                bytes.append(0x30 | counter)
                let fieldLength = 183 - chunk
                bytes.append(UInt8(fieldLength))
                if fieldLength > 0 {
                    bytes.append(0x00)
                    bytes += [UInt8](repeating: 0xFF, count: fieldLength - 1)
                }
            }
            bytes += payload[start..<(start + chunk)]
            start += chunk
        }
        return bytes
    }
}
