import Foundation
import HTTPSupport
import Testing

/// The batching of a streamed body's pieces, driven piece by piece on a clock the test sets:
/// batch sizes, splits, the window after a pause, and the timers.
@Suite("Gathering a body's pieces into batches")
struct BodyGatheringTests {
    /// Drives a ``BodyGathering`` with real buffers, recording the timers it sets.
    struct Driver {
        var gathering = BodyGathering(now: 0)
        var timers: [Int] = []
        var handedOver: [Data] = []

        mutating func add(_ piece: Data, at now: UInt64) {
            var started: [Int] = []
            let chunks = gathering.add(
                piece, now: now, take: { .allocate(byteCount: BodyGathering.limit, alignment: 16) },
                handOver: Self.chunk, startTimer: { started.append($0) })
            timers += started
            handedOver += chunks
        }

        mutating func fire(_ generation: Int?, at now: UInt64) {
            if let chunk = gathering.flush(generation: generation, now: now, handOver: Self.chunk) {
                handedOver.append(chunk)
            }
        }

        /// A batch's bytes as a chunk that frees its buffer.
        static func chunk(_ buffer: UnsafeMutableRawPointer, _ count: Int) -> Data {
            Data(bytesNoCopy: buffer, count: count, deallocator: .custom { pointer, _ in pointer.deallocate() })
        }
    }

    static func piece(_ count: Int, from start: Int) -> Data {
        Data((start..<(start + count)).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 17) })
    }

    static let millisecond: UInt64 = 1_000_000

    @Test(
        "pieces arriving together fill batches of exactly 256 KiB, a piece that does not fit split across two, bytes in order",
        arguments: [16_384, 1_448, 100_000, 262_143])
    func batchesFillExactly(pieceSize: Int) {
        var driver = Driver()
        var sent = Data()
        // A burst: every piece within a millisecond of the body's start.
        for index in 0..<40 {
            let piece = Self.piece(pieceSize, from: index * pieceSize)
            sent += piece
            driver.add(piece, at: 1 + UInt64(index) * 1_000)
        }
        driver.fire(nil, at: 2 * Self.millisecond)
        #expect(driver.handedOver.reduce(Data(), +) == sent)
        #expect(driver.handedOver.dropLast().allSatisfy { $0.count == BodyGathering.limit })
        #expect((driver.handedOver.last?.count ?? 0) <= BodyGathering.limit)
        // One timer per batch begun.
        #expect(driver.timers == Array(1...driver.handedOver.count))
    }

    @Test("a piece of 256 KiB or more goes on whole, after what was gathered")
    func largePieceWhole() {
        var driver = Driver()
        let small = Self.piece(1_000, from: 0)
        let large = Self.piece(BodyGathering.limit + 5_000, from: 1_000)
        driver.add(small, at: 1)
        driver.add(large, at: 2)
        #expect(driver.handedOver.map(\.count) == [1_000, BodyGathering.limit + 5_000])
        #expect(driver.handedOver.reduce(Data(), +) == small + large)
        #expect(driver.gathering.gathered == nil)
    }

    @Test("the first piece after a pause of the window goes on at once; a batch's timer hands on what it holds")
    func slowBody() {
        var driver = Driver()
        let window = BodyGathering.window
        // The first piece comes a window after the request: on at once, no timer.
        driver.add(Self.piece(16_384, from: 0), at: window)
        #expect(driver.handedOver.count == 1)
        #expect(driver.timers.isEmpty)
        // The next comes soon after: gathered, with a timer for its batch.
        driver.add(Self.piece(16_384, from: 16_384), at: window + Self.millisecond)
        #expect(driver.handedOver.count == 1)
        #expect(driver.timers == [1])
        // The timer fires: the batch goes on as it is.
        driver.fire(1, at: 2 * window)
        #expect(driver.handedOver.map(\.count) == [16_384, 16_384])
        // A later timer of the same, gone batch hands on nothing.
        driver.fire(1, at: 3 * window)
        #expect(driver.handedOver.count == 2)
    }

    @Test("a timer set for a batch already handed on does not hand on the next one")
    func staleTimer() {
        var driver = Driver()
        let piece = Self.piece(BodyGathering.limit / 2, from: 0)
        for index in 0..<3 { driver.add(piece, at: 1 + UInt64(index)) }
        // Batch 1 went on full; batch 2 holds half a batch.
        #expect(driver.handedOver.count == 1)
        #expect(driver.timers == [1, 2])
        driver.fire(1, at: 50 * Self.millisecond)
        #expect(driver.handedOver.count == 1)
        driver.fire(2, at: 60 * Self.millisecond)
        #expect(driver.handedOver.map(\.count) == [BodyGathering.limit, BodyGathering.limit / 2])
    }

    @Test("bytes gathered for longer than the window go on with the next piece, without waiting for the timer")
    func windowPassedOnArrival() {
        var driver = Driver()
        driver.add(Self.piece(1_000, from: 0), at: 1)
        driver.add(Self.piece(1_000, from: 1_000), at: 1 + BodyGathering.window)
        #expect(driver.handedOver.map(\.count) == [2_000])
    }

    @Test("an empty piece hands on nothing, after a pause or while gathering")
    func emptyPieces() {
        var driver = Driver()
        driver.add(Data(), at: 1)
        driver.add(Data(), at: 2 * BodyGathering.window)
        driver.fire(nil, at: 3 * BodyGathering.window)
        #expect(driver.handedOver.isEmpty)
        #expect(driver.timers.isEmpty)
        driver.add(Self.piece(10, from: 0), at: 3 * BodyGathering.window + 1)
        driver.add(Data(), at: 3 * BodyGathering.window + 2)
        driver.fire(nil, at: 3 * BodyGathering.window + 3)
        #expect(driver.handedOver.map(\.count) == [10])
    }
}
