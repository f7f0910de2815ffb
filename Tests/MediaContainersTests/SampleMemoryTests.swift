import Foundation
import TestSupport
import Testing

@testable import MediaContainers

/// What the remuxer keeps in memory between samples: the arenas video samples are converted into,
/// and the writer's one buffer (and what a write it cannot make leaves in it).
@Suite("Memory between samples")
struct SampleMemoryTests {
    @Test("of the arenas no sample holds, one is kept spare and the rest let go")
    func arenasBeyondOneSpareAreLetGo() throws {
        var arenas = ArenaSet()
        var samples: [Data] = []
        var made: Set<ObjectIdentifier> = []
        // A segment read whole: five arenas filled, each held by its samples.
        for _ in 0..<5 {
            let arena = arenas.arena(for: 1024, size: 1024)
            made.insert(ObjectIdentifier(arena))
            samples.append(try #require(arena.write(maximum: 1024) { _ in 1024 }))
        }
        #expect(made.count == 5)
        #expect(arenas.count == 5)
        // Written and let go: the next sample reuses one arena, one more stays spare.
        samples = []
        let next = arenas.arena(for: 1024, size: 1024)
        #expect(made.contains(ObjectIdentifier(next)))
        #expect(arenas.count == 2)
    }

    @Test("an arena a sample still holds is kept, and never written over")
    func heldArenasAreKept() throws {
        var arenas = ArenaSet()
        let first = arenas.arena(for: 1024, size: 1024)
        let held = try #require(
            first.write(maximum: 1024) { pointer in
                pointer.initializeMemory(as: UInt8.self, repeating: 7, count: 1024)
                return 1024
            })
        for _ in 0..<3 {
            let arena = arenas.arena(for: 1024, size: 1024)
            #expect(ObjectIdentifier(arena) != ObjectIdentifier(first))
            _ = arena.write(maximum: 1024) { pointer in
                pointer.initializeMemory(as: UInt8.self, repeating: 9, count: 1024)
                return 1024
            }
        }
        #expect(held.allSatisfy { $0 == 7 })
    }

    /// Records the size of every write.
    final class Writes: MP4Output, @unchecked Sendable {
        // `@unchecked`: every field is read and written under `lock`.
        private let lock = NSLock()
        private var file = [UInt8]()
        private var sizes: [Int] = []
        private var refusing = false

        /// Whether writes fail (as a full disk's would).
        var refusesWrites: Bool {
            get { lock.withLock { refusing } }
            set { lock.withLock { refusing = newValue } }
        }
        struct Refused: Error {}

        var writeSizes: [Int] { lock.withLock { sizes } }
        var bytes: [UInt8] { lock.withLock { file } }

        func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
            try lock.withLock {
                if refusing { throw Refused() }
                sizes.append(bytes.count)
                let end = Int(offset) + bytes.count
                if file.count < end { file += [UInt8](repeating: 0, count: end - file.count) }
                file.replaceSubrange(Int(offset)..<end, with: bytes)
            }
        }
        func read(at offset: UInt64, count: Int) throws -> Data {
            lock.withLock { Data(file[Int(offset)..<min(file.count, Int(offset) + count)]) }
        }
        func truncate(to length: UInt64) throws { lock.withLock { file.removeLast(max(0, file.count - Int(length))) } }
        func synchronize() throws {}
    }

    @Test(
        "the write buffer goes to the file before a sample would take it past its size (seeded sample sizes)",
        arguments: [UInt64(1), 2, 3])
    func writesStayWithinTheBuffer(seed: UInt64) throws {
        var generator = SplitMix64(seed: seed)
        let output = Writes()
        var writer = try MP4Writer(output: output, brand: .audio)
        let track = writer.addTrack(MP4Writer.Track(kind: .audio, timescale: 1000))
        let description = SampleDescription(
            kind: .audio, codec: .aac, sampleEntry: Data(repeating: 0, count: 16), timescale: 1000)
        var media: [UInt8] = []
        var oversized: Set<Int> = []
        for index in 0..<60 {
            // Mostly under a quarter of the buffer; now and then one larger than all of it.
            let size =
                index % 17 == 16
                ? MP4Writer.bufferLimit + Int.random(in: 0..<4096, using: &generator)
                : Int.random(in: 1..<(MP4Writer.bufferLimit / 4), using: &generator)
            if size >= MP4Writer.bufferLimit { oversized.insert(size) }
            let sample = (0..<size).map { UInt8(truncatingIfNeeded: $0 &+ index) }
            media += sample
            try writer.append(
                Data(sample), to: track, description: description, decodeTime: Int64(index) * 20,
                presentationTime: Int64(index) * 20, isSync: true)
        }
        _ = try writer.checkpoint()
        let mediaWrites = output.writeSizes.dropFirst()
        for size in mediaWrites where size > MP4Writer.bufferLimit {
            #expect(oversized.contains(size), "a write of \(size) bytes")
        }
        #expect(mediaWrites.reduce(0, +) == media.count)
        let start = Int(MP4Writer.headerLength)
        #expect(Array(output.bytes[start..<(start + media.count)]) == media)
    }

    @Test(
        "a sample whose bytes the output refuses is not indexed: the writer goes on as if it had never been appended",
        arguments: [MP4Writer.bufferLimit / 3, MP4Writer.bufferLimit + 100])
    func refusedSampleIsNotIndexed(size: Int) throws {
        let output = Writes()
        var writer = try MP4Writer(output: output, brand: .audio)
        let track = writer.addTrack(MP4Writer.Track(kind: .audio, timescale: 1000))
        let description = SampleDescription(
            kind: .audio, codec: .aac, sampleEntry: Data(repeating: 0, count: 16), timescale: 1000)
        func sample(_ index: Int) -> [UInt8] { (0..<size).map { UInt8(truncatingIfNeeded: $0 &+ index) } }
        var kept: [[UInt8]] = []
        var refusals = 0
        for index in 0..<8 {
            // The fourth sample is refused: it is the one whose append writes (a buffer it would
            // overfill, or a sample larger than the buffer, written on its own).
            output.refusesWrites = index == 3
            do {
                try writer.append(
                    Data(sample(index)), to: track, description: description, decodeTime: Int64(index) * 20,
                    presentationTime: Int64(index) * 20, isSync: true)
                kept.append(sample(index))
            } catch {
                #expect(error.kind.isWriteFailure, "\(error)")
                refusals += 1
            }
        }
        output.refusesWrites = false
        #expect(refusals == 1)
        let checkpoint = try writer.checkpoint()
        #expect(checkpoint.records.map(\.size) == kept.map { UInt32($0.count) })
        #expect(checkpoint.records.map(\.decodeTime) == [0, 20, 40, 80, 100, 120, 140])
        let start = Int(MP4Writer.headerLength)
        let media = kept.flatMap { $0 }
        #expect(Array(output.bytes[start..<(start + media.count)]) == media)
    }
}

extension ContainerError.Kind {
    fileprivate var isWriteFailure: Bool {
        if case .writeFailed = self { return true }
        return false
    }
}
