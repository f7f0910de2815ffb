public import Foundation

/// Writes AAC frames into an MPEG-4 audio file (`.m4a`, ISO/IEC 14496-12 and -14) that
/// `AVAudioPlayer`, `AVPlayer`, ExoPlayer and ffmpeg open and seek in.
///
/// Frames are written to the file as they are appended, so memory holds only the sample table
/// (four bytes per frame: about 170 KB for an hour of 44.1 kHz audio). The file is laid out as
/// `ftyp`, `mdat` (the frames, with a 64-bit size), then `moov` with one sound track: `stsd`
/// with an `mp4a` entry and its `esds` (the AudioSpecificConfig), `stts` (1,024 samples per
/// frame), `stsc` (one chunk), `stsz` (each frame's size) and `co64` (the chunk's offset). A
/// player seeks through these sample tables; nothing is fragmented.
///
/// The writer writes to `destination` directly; write to a temporary file and rename it into
/// place to publish the result atomically.
public struct MP4AudioWriter: ~Copyable {
    private let handle: FileHandle
    private let destination: URL
    private var format: AACFormat?
    private var sampleSizes: [UInt32] = []
    private var pending: [UInt8] = []
    private var mdatStart: UInt64 = 0
    private var written: UInt64 = 0

    /// Creates (or truncates) `destination` and writes the file's header.
    ///
    /// - Throws: ``ContainerError/Kind/writeFailed(reason:)``.
    public init(destination: URL) throws(ContainerError) {
        self.destination = destination
        guard FileManager.default.createFile(atPath: destination.path, contents: nil) else {
            throw ContainerError(.writeFailed(reason: "cannot create \(destination.path)"))
        }
        do {
            handle = try FileHandle(forWritingTo: destination)
        } catch {
            throw ContainerError(.writeFailed(reason: error.localizedDescription))
        }
        var header = BoxWriter()
        header.begin("ftyp")
        header.appendType("M4A ")
        header.append32(0x200)
        for brand in ["M4A ", "isom", "iso2", "mp41"] { header.appendType(brand) }
        header.end()
        mdatStart = UInt64(header.bytes.count)
        // A 64-bit `mdat` (size 1, then the real size), patched when the file is finished.
        header.append32(1)
        header.appendType("mdat")
        header.append64(0)
        pending = header.bytes
        written = 0
    }

    /// The number of frames appended so far.
    public var frameCount: Int { sampleSizes.count }

    /// The stream's format: the first frame's.
    public var audioFormat: AACFormat? { format }

    /// Appends one frame.
    ///
    /// - Throws: ``ContainerError/Kind/audioFormatChanged(from:to:)`` for a frame whose format
    ///   differs from the first one's, or ``ContainerError/Kind/writeFailed(reason:)``.
    public mutating func append(_ frame: ADTSFrame) throws(ContainerError) {
        var failure: ContainerError?
        frame.payload.withUnsafeBytes { bytes in
            do throws(ContainerError) {
                try append(format: frame.format, payload: bytes)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    /// Appends one frame given as its format and raw AAC bytes (the remuxer's copy-free path).
    mutating func append(format frameFormat: AACFormat, payload: UnsafeRawBufferPointer) throws(ContainerError) {
        if let format, format != frameFormat {
            throw ContainerError(.audioFormatChanged(from: format.description, to: frameFormat.description))
        }
        format = frameFormat
        sampleSizes.append(UInt32(payload.count))
        pending.append(contentsOf: payload)
        if pending.count >= 1 << 18 { try flush() }
    }

    /// Writes the sample tables and closes the file.
    ///
    /// - Returns: The duration in seconds.
    /// - Throws: ``ContainerError/Kind/noSupportedAudio`` when no frame was appended, or
    ///   ``ContainerError/Kind/writeFailed(reason:)``.
    @discardableResult
    public consuming func finish() throws(ContainerError) -> Double {
        defer { try? handle.close() }
        guard let format, !sampleSizes.isEmpty, format.sampleRate > 0 else {
            throw ContainerError(.noSupportedAudio)
        }
        try flush()
        let dataStart = mdatStart + 16
        let dataSize = UInt64(sampleSizes.reduce(0) { $0 + UInt64($1) })
        let samples = UInt64(sampleSizes.count) * 1_024
        let seconds = Double(samples) / Double(format.sampleRate)
        let movieDuration = UInt32(clamping: Int64((seconds * 1_000).rounded(.up)))
        let bitrate = UInt32(clamping: Int64((Double(dataSize) * 8 / max(seconds, 1e-9)).rounded()))
        let moov = Self.movie(
            format: format, sampleSizes: sampleSizes, samples: samples, movieDuration: movieDuration,
            bitrate: bitrate, chunkOffset: dataStart)
        do {
            try handle.write(contentsOf: Data(moov))
            var size = BoxWriter()
            size.append64(16 + dataSize)
            try handle.seek(toOffset: mdatStart + 8)
            try handle.write(contentsOf: Data(size.bytes))
            try handle.synchronize()
        } catch {
            throw ContainerError(.writeFailed(reason: error.localizedDescription))
        }
        return seconds
    }

    private mutating func flush() throws(ContainerError) {
        guard !pending.isEmpty else { return }
        do {
            try pending.withUnsafeBytes { try handle.write(contentsOf: $0) }
        } catch {
            throw ContainerError(.writeFailed(reason: error.localizedDescription))
        }
        written += UInt64(pending.count)
        pending.removeAll(keepingCapacity: true)
    }

    /// The `mp4a` sample entry with its `esds` (ISO/IEC 14496-14 §5.6): the channels, the sample
    /// rate, and the AudioSpecificConfig in a DecoderSpecificInfo.
    static func sampleEntry(format: AACFormat, bitrate: UInt32) -> [UInt8] {
        var box = BoxWriter()
        box.begin("mp4a")
        box.appendZeros(6)
        box.append16(1)  // data reference index
        box.appendZeros(8)
        box.append16(UInt16(clamping: format.channelCount))
        box.append16(16)  // sample size
        box.append16(0)
        box.append16(0)
        box.append32(format.sampleRate <= 0xFFFF ? UInt32(format.sampleRate) << 16 : 0)
        box.beginFull("esds")
        var decoderConfig: [UInt8] = [0x40, 0x15]  // MPEG-4 audio; an audio stream
        decoderConfig += [0, 0x18, 0]  // buffer size: 6,144 bytes, an AAC frame's maximum
        for value in [bitrate, bitrate] {
            decoderConfig += [
                UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF),
            ]
        }
        var specific = BoxWriter()
        specific.appendDescriptor(tag: 0x05, Array(format.audioSpecificConfig))
        decoderConfig += specific.bytes
        var esContent: [UInt8] = [0, 0, 0]  // ES ID 0, no flags
        var config = BoxWriter()
        config.appendDescriptor(tag: 0x04, decoderConfig)
        esContent += config.bytes
        var sl = BoxWriter()
        sl.appendDescriptor(tag: 0x06, [0x02])
        esContent += sl.bytes
        box.appendDescriptor(tag: 0x03, esContent)
        box.end()  // esds
        box.end()  // mp4a
        return box.bytes
    }

    /// The `moov` box for one AAC track whose frames form one chunk at `chunkOffset`.
    ///
    /// - Complexity: O(*n*) in the number of frames.
    static func movie(
        format: AACFormat, sampleSizes: [UInt32], samples: UInt64, movieDuration: UInt32, bitrate: UInt32,
        chunkOffset: UInt64
    ) -> [UInt8] {
        var box = BoxWriter()
        box.begin("moov")
        box.beginFull("mvhd")
        box.append32(0)  // creation time
        box.append32(0)  // modification time
        box.append32(1_000)  // timescale: milliseconds
        box.append32(movieDuration)
        box.append32(0x0001_0000)  // rate 1.0
        box.append16(0x0100)  // volume 1.0
        box.appendZeros(10)
        box.appendUnityMatrix()
        box.appendZeros(24)
        box.append32(2)  // next track ID
        box.end()

        box.begin("trak")
        box.beginFull("tkhd", flags: 0x3)  // enabled, in movie
        box.append32(0)
        box.append32(0)
        box.append32(1)  // track ID
        box.append32(0)
        box.append32(movieDuration)
        box.appendZeros(8)
        box.append16(0)  // layer
        box.append16(1)  // alternate group: the audio tracks
        box.append16(0x0100)  // volume 1.0
        box.append16(0)
        box.appendUnityMatrix()
        box.append32(0)  // width
        box.append32(0)  // height
        box.end()

        box.begin("mdia")
        box.beginFull("mdhd")
        box.append32(0)
        box.append32(0)
        box.append32(UInt32(format.sampleRate))
        box.append32(UInt32(clamping: samples))
        box.append16(0x55C4)  // language "und", packed ISO-639-2/T
        box.append16(0)
        box.end()
        box.beginFull("hdlr")
        box.append32(0)
        box.appendType("soun")
        box.appendZeros(12)
        box.append(Array("SoundHandler".utf8) + [0])
        box.end()

        box.begin("minf")
        box.beginFull("smhd")
        box.append16(0)  // balance
        box.append16(0)
        box.end()
        box.begin("dinf")
        box.beginFull("dref")
        box.append32(1)
        box.beginFull("url ", flags: 0x1)  // the data is in this file
        box.end()
        box.end()
        box.end()

        box.begin("stbl")
        box.beginFull("stsd")
        box.append32(1)
        box.append(sampleEntry(format: format, bitrate: bitrate))
        box.end()  // stsd

        box.beginFull("stts")
        box.append32(1)
        box.append32(UInt32(clamping: sampleSizes.count))
        box.append32(1_024)
        box.end()
        box.beginFull("stsc")
        box.append32(1)
        box.append32(1)  // first chunk
        box.append32(UInt32(clamping: sampleSizes.count))
        box.append32(1)  // sample description
        box.end()
        box.beginFull("stsz")
        box.append32(0)  // sizes vary
        box.append32(UInt32(clamping: sampleSizes.count))
        for size in sampleSizes { box.append32(size) }
        box.end()
        box.beginFull("co64")
        box.append32(1)
        box.append64(chunkOffset)
        box.end()
        box.end()  // stbl
        box.end()  // minf
        box.end()  // mdia
        box.end()  // trak
        box.end()  // moov
        return box.bytes
    }
}
