import Foundation
import MediaContainers
import TestSupport
import Testing

/// A step remuxed whole from the pieces its bytes arrived in lets each piece go once read, so it
/// is not held while the step is written.
@Suite("A step remuxed whole, in pieces")
struct WholeStepMemoryTests {
    /// Counts pieces freed, and notes the count when the remuxer first writes media.
    final class Watch: MP4Output, @unchecked Sendable {
        // `@unchecked`: every field is read and written under `lock`.
        private let lock = NSLock()
        private let file: MP4FileOutput
        private var freed = 0
        private var watching = false
        private(set) var freedAtFirstWrite: Int?

        init(file: MP4FileOutput) { self.file = file }

        func pieceFreed() { lock.withLock { freed += 1 } }
        func startWatching() { lock.withLock { watching = true } }

        func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
            lock.withLock {
                if watching, freedAtFirstWrite == nil { freedAtFirstWrite = freed }
            }
            try file.write(bytes, at: offset)
        }
        func read(at offset: UInt64, count: Int) throws -> Data { try file.read(at: offset, count: count) }
        func truncate(to length: UInt64) throws { try file.truncate(to: length) }
        func synchronize() throws { try file.synchronize() }
    }

    @Test("every piece of a step remuxed whole is freed before the step's first media write")
    func piecesFreedBeforeWriting() throws {
        let seed = [UInt8](try Lessons.data("bench-720p/seg0.ts"))
        let copies = max(1, (3 << 20) / seed.count)
        let stream = syntheticTransportStream(rangeLengths: [copies * seed.count], seed: seed).bytes
        let folder = temporaryFolder("whole-step")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let watch = Watch(file: try MP4FileOutput(url: folder.appendingPathComponent("lesson.mp4")))
        var remuxer = try SegmentRemuxer(output: watch, brand: .movie)
        watch.startWatching()
        var segments = [SegmentRemuxer.Segment(data: Data(), discontinuity: 0, index: 0)]
        let pieceSize = 256 << 10
        let starts = Array(stride(from: 0, to: stream.count, by: pieceSize))
        // Each piece owns its buffer and says when it is freed.
        segments[0].pieces = starts.map { start in
            let count = min(pieceSize, stream.count - start)
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 16)
            UnsafeMutableRawBufferPointer(start: buffer, count: count).copyBytes(from: stream[start..<(start + count)])
            return Data(
                bytesNoCopy: buffer, count: count,
                deallocator: .custom { pointer, _ in
                    pointer.deallocate()
                    watch.pieceFreed()
                })
        }
        try remuxer.append(taking: &segments)
        _ = try remuxer.finish()
        // More than a write buffer's worth of media, so the step is written while appended.
        #expect(stream.count > 2 << 20)
        #expect(watch.freedAtFirstWrite == starts.count)
    }
}
