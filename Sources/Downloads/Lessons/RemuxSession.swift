import Dispatch
import Foundation
import MediaContainers

/// The remux state of one lesson download, touched only on its own serial queue, so that demuxing
/// and file writes (with their flushes) never hold a thread of Swift's cooperative pool.
///
/// `@unchecked Sendable`: every read and write of its state runs on `queue`, through
/// ``perform(_:)`` and `enqueue(_:)`.
final class RemuxSession: @unchecked Sendable {
    private let queue = DispatchQueue(label: "MediaCore.Downloads.remux")
    private(set) var remuxer: SegmentRemuxer
    let output: RemuxOutput
    private(set) var journal: RemuxJournal
    /// Steps remuxed and checkpointed.
    private(set) var stepsDone: Int

    init(remuxer: SegmentRemuxer, output: RemuxOutput, journal: RemuxJournal, stepsDone: Int) {
        self.remuxer = remuxer
        self.output = output
        self.journal = journal
        self.stepsDone = stepsDone
    }

    /// Runs `body` on the session's queue.
    func perform<Value: Sendable>(_ body: @escaping @Sendable (RemuxSession) throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                do {
                    continuation.resume(returning: try body(self))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    /// Remuxes step `step` whole and checkpoints it, taking the segments' bytes: each piece is
    /// let go once read.
    ///
    /// - Returns: The media data's length after the step.
    func remux(
        step: Int, segments: inout [SegmentRemuxer.Segment], bytesReceived: UInt64, fractionFloor: Double
    ) throws -> UInt64 {
        let first = segments.first?.index
        do {
            try remuxer.append(taking: &segments)
        } catch {
            throw Self.typed(error, segment: first, output: output.url)
        }
        return try checkpoint(step: step, bytesReceived: bytesReceived, fractionFloor: fractionFloor, segment: first)
    }

    /// Checkpoints step `step`: the media data flushed, then its journal record appended and
    /// flushed.
    private func checkpoint(step: Int, bytesReceived: UInt64, fractionFloor: Double, segment: Int?) throws -> UInt64 {
        do {
            let checkpoint = try remuxer.checkpoint()
            try output.synchronize()
            let digest = output.takeDigest()
            try journal.append(
                checkpoint, stepsDone: step + 1, dataDigest: digest, bytesReceived: bytesReceived,
                fractionFloor: fractionFloor)
            stepsDone = step + 1
            return checkpoint.dataLength
        } catch {
            throw Self.typed(error, segment: segment, output: output.url)
        }
    }

    /// A subtitle track to add: its settings and its cues on the media's clock.
    struct SubtitleTrack: Sendable {
        var rendition: SegmentRemuxer.Rendition
        var isForced: Bool
        var cues: [SubtitleCue]
    }

    /// Adds subtitle tracks after the media and checkpoints them (the steps done unchanged), so
    /// that a resume finds them in the file.
    func embed(_ tracks: [SubtitleTrack]) throws {
        do {
            for track in tracks {
                try remuxer.appendSubtitles(track.cues, rendition: track.rendition, isForced: track.isForced)
            }
        } catch {
            throw Self.typed(error, segment: nil, output: output.url)
        }
        let last = journal.last
        _ = try checkpoint(
            step: stepsDone - 1, bytesReceived: last?.bytesReceived ?? 0, fractionFloor: last?.fractionFloor ?? 0,
            segment: nil)
    }

    /// Records in the journal that the file is finished, before it is renamed.
    func markDone(_ completion: RemuxJournal.Completion) throws {
        try journal.markDone(completion)
    }

    /// Notes the fraction last shown in the journal, for the next resume (best effort).
    func noteFloor(_ floor: Double) {
        journal.noteFloor(floor)
    }

    /// Writes the file's index from the journal's records and flushes it.
    func finish() throws -> MP4Writer.Summary {
        do {
            let journal = journal
            return try remuxer.finish(replaying: { visit throws(ContainerError) in try journal.replay(visit) })
        } catch {
            if case .writeFailed(let reason, let code) = error.kind {
                throw DownloadError(
                    .file(operation: "write the index of", reason: reason, code: code), path: output.url.path)
            }
            throw DownloadError(.container(error), path: output.url.path)
        }
    }

    // MARK: Streaming

    /// The remuxer as it was before the segment being streamed, to go back to when its transfer
    /// starts over.
    private var rollbackPoint: SegmentRemuxer?
    /// The segment being streamed.
    private var streamed: SegmentRemuxer.Segment?
    /// The first failure of the segment being streamed, reported when it ends.
    private var streamFailure: (any Error)?

    /// Runs `body` on the session's queue, in the order of the calls, without waiting.
    func enqueue(_ body: @escaping @Sendable (RemuxSession) -> Void) {
        queue.async { body(self) }
    }

    /// Starts streaming `segment` (on the queue).
    func beginStreaming(_ segment: SegmentRemuxer.Segment) {
        rollbackPoint = remuxer.snapshot()
        streamed = segment
        streamFailure = nil
        do {
            try remuxer.begin(segment)
        } catch {
            streamFailure = error
        }
    }

    /// Feeds the streamed segment's next bytes (on the queue).
    func feedStreaming(_ bytes: Data) {
        guard streamFailure == nil else { return }
        do {
            try remuxer.feed(bytes)
        } catch {
            streamFailure = error
        }
    }

    /// Goes back to before the streamed segment and starts it again, for a transfer that starts
    /// over (on the queue).
    func restartStreaming() {
        guard let point = rollbackPoint, let segment = streamed else { return }
        remuxer = point
        do {
            try output.truncate(to: MP4Writer.headerLength + point.dataLength)
        } catch {
            streamFailure = error
            return
        }
        _ = output.takeDigest()
        beginStreaming(segment)
    }

    /// Ends the streamed segment and checkpoints its step.
    func endStreaming(step: Int, bytesReceived: UInt64, fractionFloor: Double) throws -> UInt64 {
        defer {
            rollbackPoint = nil
            streamed = nil
        }
        let index = streamed?.index
        if let failure = streamFailure {
            streamFailure = nil
            throw Self.typed(failure, segment: index, output: output.url)
        }
        do {
            try remuxer.end()
        } catch {
            throw Self.typed(error, segment: index, output: output.url)
        }
        return try checkpoint(step: step, bytesReceived: bytesReceived, fractionFloor: fractionFloor, segment: index)
    }

    /// A remux failure as the download reports it.
    static func typed(_ error: any Error, segment: Int?, output: URL) -> any Error {
        guard let error = error as? ContainerError else { return error }
        if case .writeFailed(let reason, let code) = error.kind {
            return DownloadError(.file(operation: "write", reason: reason, code: code), path: output.path)
        }
        return DownloadError(.container(error), part: segment)
    }

    /// What the remux left out.
    var report: SegmentRemuxer.Report { remuxer.report }

    /// Closes the journal on the queue, after the work queued before.
    func close() {
        enqueue { $0.journal.close() }
    }
}
