import Dispatch
import Foundation
import HLS
import Locking
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

    /// Remuxes step `step` whole and checkpoints it.
    ///
    /// - Returns: The media data's length after the step.
    func remux(
        step: Int, segments: [SegmentRemuxer.Segment], bytesReceived: UInt64, fractionFloor: Double
    ) throws -> UInt64 {
        do {
            try remuxer.append(segments)
        } catch {
            throw Self.typed(error, segment: segments.first?.index, output: output.url)
        }
        return try checkpoint(
            step: step, bytesReceived: bytesReceived, fractionFloor: fractionFloor, segment: segments.first?.index)
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

    func close() {
        journal.close()
    }
}

/// The progress of a lesson download: bytes received against the expected size, which is
/// refined from the segments done when it is an estimate.
final class LessonProgress: Sendable {
    private struct State {
        var received: UInt64
        var inFlight: UInt64 = 0
        var written: UInt64
        var partsDone: Int
        var secondsDone: Double
        var floor: Double
    }

    private let plan: LessonPlan
    private let job: DownloadJob
    private let state: Locked<State>

    init(plan: LessonPlan, job: DownloadJob, received: UInt64, written: UInt64, stepsDone: Int, floor: Double) {
        self.plan = plan
        self.job = job
        let partsDone = plan.firstPart(ofStep: stepsDone)
        state = Locked(
            State(
                received: received, written: written, partsDone: partsDone,
                secondsDone: plan.parts.prefix(partsDone).reduce(0) { $0 + $1.duration }, floor: floor))
    }

    /// The fraction last shown, which a checkpoint keeps so a resume never shows less.
    var shownFraction: Double { state.withLock { $0.floor } }

    /// The source bytes of the steps done.
    var bytesOfStepsDone: UInt64 { state.withLock { $0.received } }

    /// Notes bytes in flight (negative when a transfer failed) and reports.
    func arriving(_ bytes: UInt64) {
        state.withLock { $0.inFlight = bytes }
        publish()
    }

    /// Notes a step remuxed: its parts' source bytes and seconds, and the file's new length.
    func stepDone(bytes: UInt64, seconds: Double, parts: Int, written: UInt64) {
        state.withLock { state in
            state.received += bytes
            state.inFlight = state.inFlight > bytes ? state.inFlight - bytes : 0
            state.secondsDone += seconds
            state.partsDone += parts
            state.written = written
        }
        publish()
    }

    /// The expected size: exact, or the bandwidth estimate blended toward the rate of the
    /// segments done as more of the lesson is done.
    private func expected(_ state: State) -> UInt64? {
        if plan.isExact { return plan.expectedBytes }
        let partSeconds = plan.parts.reduce(0) { $0 + $1.duration }
        guard state.secondsDone > 0, partSeconds > 0 else { return plan.expectedBytes }
        let observed = Double(state.received) / state.secondsDone
        let share = min(state.secondsDone / partSeconds, 1)
        let initial = plan.expectedBytes.map { Double($0) / partSeconds } ?? observed
        let rate = share * observed + (1 - share) * initial
        return saturatingBytes(
            max(Double(state.received) + (partSeconds - state.secondsDone) * rate, Double(state.received)))
    }

    /// The expected size of the source now: exact, from the playlist's bandwidth, or from the
    /// segments done; `nil` before any of those is known.
    var estimatedBytes: UInt64? { expected(state.current) }

    /// Publishes a report; its fraction stays below 1 until ``complete(byteCount:)``.
    func publish() {
        let report = state.withLock { state in
            let expected = expected(state)
            let bytes = state.received + state.inFlight
            var fraction: Double
            if let expected, expected > 0 {
                fraction = Double(bytes) / Double(expected)
            } else {
                fraction = plan.parts.isEmpty ? 0 : Double(state.partsDone) / Double(plan.parts.count)
            }
            fraction = min(max(fraction, state.floor), 0.999)
            state.floor = fraction
            return DownloadProgress(
                bytesWritten: state.written, partsCompleted: state.partsDone, partCount: plan.parts.count,
                bytesExpected: expected, bytesReceived: bytes, isEstimate: !plan.isExact, fraction: fraction)
        }
        job.report(report)
    }

    /// Publishes the finished download.
    func complete(byteCount: UInt64) {
        let bytes = state.withLock { $0.received }
        job.report(
            DownloadProgress(
                bytesWritten: byteCount, partsCompleted: plan.parts.count, partCount: plan.parts.count,
                bytesExpected: bytes, bytesReceived: bytes, isEstimate: false, fraction: 1))
    }
}

/// Runs a planned lesson download in one pass: the engine's transfers fetch the parts (with
/// their retries), each step is remuxed into the file's media data when its turn comes and
/// checkpointed, and the finished file is renamed over the destination.
struct LessonRun<C: Clock>: Sendable where C.Duration == Duration {
    let engine: DownloadEngine<C>
    let plan: LessonPlan
    let destination: URL
    let decryptor: (any SegmentDecryptor)?
    /// What becomes of a gap in the audio.
    var audioGaps: SegmentRemuxer.GapPolicy = .keepTimestamps
    /// What becomes of the plan's subtitle renditions.
    var subtitles: SubtitleHandling = []
    /// Fetches a subtitle rendition's cues on its media's clock.
    var subtitleCues: (@Sendable (LessonPlan.Subtitle) async throws -> [SubtitleCue])?

    /// What one task of the run brings back.
    private enum Event: Sendable {
        /// A part arrived: its bytes, when they were decrypted (otherwise its flow holds them or
        /// handed them on), and its source size.
        case fetched(index: Int, data: Data?, bytes: UInt64)
        case remuxed(step: Int, dataLength: UInt64)
    }

    func run(job: DownloadJob) async throws -> DownloadResult {
        // Keys first: a refused or malformed key fails the download before anything is written.
        let keys = try await LessonKeys.fetch(for: plan, engine: engine)
        let decryption = LessonDecryption(keys: keys, decryptor: decryptor, renditions: plan.renditions)
        let fileSystem = engine.fileSystem
        let files = RemuxFiles(destination: destination, fileSystem: fileSystem)
        let key = destination.standardizedFileURL.path
        try await DestinationLocks.shared.acquire(key)
        defer { DestinationLocks.shared.release(key) }
        let staging = StagingFiles(destination: destination, plan: try DownloadPlan([]), fileSystem: fileSystem)
        try staging.createFolder()
        let processLock = try DestinationFileLock.acquire(for: destination)
        defer { processLock.release() }
        do {
            return try await runLocked(files: files, job: job, decryption: decryption)
        } catch {
            // A cancellation removes the partial download; a pause or a failure keeps it to resume.
            if (error is CancellationError || Task.isCancelled) && !job.isPauseRequested { files.remove() }
            // Too little space: what was written only takes more of it.
            if case .insufficientStorage? = (error as? DownloadError)?.kind { files.remove() }
            throw error
        }
    }

    private func runLocked(files: RemuxFiles, job: DownloadJob, decryption: LessonDecryption) async throws
        -> DownloadResult
    {
        let fileSystem = files.fileSystem
        let existed = FileManager.default.fileExists(atPath: files.partial.path)
        // The gap policy is part of what a checkpoint continues: a run with another one starts again.
        let policy = audioGaps == .keepTimestamps ? "" : " gaps=\(audioGaps.rawValue)"
        // v2: audio placed on exact times, E-AC-3's rounded data rate and silent MPEG audio and
        // AC-3 frames; a v1 checkpoint would resume with other rules than it started with.
        let header = "mediacore-remux v2 \(plan.fingerprint) \(plan.steps.count)\(policy)"
        // Killed after the rename, before the journal was removed: the file is in place.
        if !existed, let done = RemuxJournal.completion(at: files.journal, header: header),
            let size = (try? FileManager.default.attributesOfItem(atPath: destination.path))?[.size] as? NSNumber,
            size.uint64Value == done.byteCount
        {
            fileSystem.remove(files.journal)
            LessonProgress(plan: plan, job: job, received: 0, written: done.byteCount, stepsDone: 0, floor: 0)
                .complete(byteCount: done.byteCount)
            return DownloadResult(
                file: destination, byteCount: done.byteCount, partsFetched: 0, peakBufferedBytes: 0,
                omissions: DownloadResult.Omission.remuxed(
                    ignoredStreams: done.ignoredStreams, framesTrimmed: done.framesTrimmed,
                    undecodableSamples: done.undecodableSamples))
        }
        let output = try RemuxOutput(url: files.partial, fileSystem: fileSystem)
        let journal = try RemuxJournal.open(
            url: files.journal, header: header, partial: existed ? output : nil, fileSystem: fileSystem)
        let remuxer: SegmentRemuxer
        let checkpoint = journal.last
        do {
            if let checkpoint {
                remuxer = try SegmentRemuxer(output: output, resuming: checkpoint.state)
            } else {
                remuxer = try SegmentRemuxer(
                    output: output, brand: plan.brand, renditions: plan.renditions, gaps: audioGaps,
                    keepingRecords: false)
            }
        } catch {
            journal.close()
            throw DownloadError.file("start", error, path: files.partial.path)
        }
        let session = RemuxSession(
            remuxer: remuxer, output: output, journal: journal, stepsDone: checkpoint?.stepsDone ?? 0)
        defer { session.close() }
        // The file about to be written must fit: the source's size, less what is written.
        let written = MP4Writer.headerLength + (checkpoint?.dataLength ?? 0)
        if let expected = plan.expectedBytes {
            let needed = StorageSpace.room(forSource: expected, written: written)
            if needed > 0 {
                try StorageSpace.check(
                    needed, in: destination.deletingLastPathComponent(), for: destination, fileSystem: fileSystem)
            }
        }
        let progress = LessonProgress(
            plan: plan, job: job, received: checkpoint?.bytesReceived ?? 0, written: written,
            stepsDone: session.stepsDone, floor: max(checkpoint?.fractionFloor ?? 0, journal.notedFloor ?? 0))
        progress.publish()
        let fetched: (parts: Int, peak: UInt64)
        do {
            fetched = try await fetchAndRemux(session: session, progress: progress, decryption: decryption)
        } catch {
            // The fraction shown may be past the last checkpoint's (a segment was in flight):
            // the journal notes it, so the resume starts there and never shows less.
            let shown = progress.shownFraction
            _ = try? await session.perform { $0.noteFloor(shown) }
            throw error
        }
        let skipped = try await addSubtitles(session: session)
        let summary = try await session.perform { try $0.finish() }
        let report = try await session.perform { $0.report }
        let completion = RemuxJournal.Completion(
            byteCount: summary.byteCount, ignoredStreams: report.ignoredStreams, framesTrimmed: report.framesTrimmed,
            undecodableSamples: report.undecodableSamples)
        try await session.perform { try $0.markDone(completion) }
        // rename(2) replaces the destination atomically: it is the complete file or absent.
        do {
            try fileSystem.willPerform(.rename, on: destination)
        } catch {
            throw DownloadError.file("move into place", error, path: destination.path)
        }
        guard rename(files.partial.path, destination.path) == 0 else {
            throw DownloadError.file("move into place", errno: errno, path: destination.path)
        }
        fileSystem.remove(files.journal)
        progress.complete(byteCount: summary.byteCount)
        let omissions =
            DownloadResult.Omission.remuxed(
                ignoredStreams: report.ignoredStreams, framesTrimmed: report.framesTrimmed,
                undecodableSamples: report.undecodableSamples) + skipped
        return DownloadResult(
            file: destination, byteCount: summary.byteCount, partsFetched: fetched.parts,
            peakBufferedBytes: fetched.peak,
            omissions: omissions)
    }

    /// Adds the plan's subtitle renditions once the media is written: each one not yet in the
    /// file (a resume after they were added keeps them) is fetched, and becomes a track, a
    /// sidecar file or both, as ``subtitles`` says; the tracks are checkpointed before the file
    /// is finished.
    ///
    /// - Returns: The renditions left out and why; a failure here never fails the lesson, but a
    ///   cancellation or pause still stops it.
    private func addSubtitles(session: RemuxSession) async throws -> [DownloadResult.Omission] {
        guard !subtitles.isEmpty, !plan.subtitles.isEmpty, let subtitleCues else { return [] }
        let present = try await session.perform { session in
            Set(session.remuxer.tracks.filter { $0.kind == .text }.compactMap(\.name))
        }
        var omissions: [DownloadResult.Omission] = []
        var fetched: [(subtitle: LessonPlan.Subtitle, cues: [SubtitleCue])] = []
        for subtitle in plan.subtitles
        where subtitles.contains(.sidecarFiles) || !present.contains(subtitle.name) {
            do {
                fetched.append((subtitle, try await subtitleCues(subtitle)))
            } catch {
                try Task.checkCancellation()
                if case .cancelled? = (error as? DownloadError)?.kind { throw error }
                if error is CancellationError { throw error }
                omissions.append(.subtitles(language: subtitle.label, reason: "\(error)"))
            }
        }
        let embedding =
            subtitles.contains(.embedded)
            ? fetched.filter { !present.contains($0.subtitle.name) }.map {
                RemuxSession.SubtitleTrack(
                    rendition: SegmentRemuxer.Rendition(
                        language: $0.subtitle.language, name: $0.subtitle.name, isDefault: $0.subtitle.isDefault,
                        kinds: [.text]),
                    isForced: $0.subtitle.isForced, cues: $0.cues)
            } : []
        if !embedding.isEmpty { try await session.perform { try $0.embed(embedding) } }
        guard subtitles.contains(.sidecarFiles) else { return omissions }
        let base = destination.deletingPathExtension()
        var used = Set<String>()
        for (subtitle, cues) in fetched {
            let placed = try await session.perform { $0.remuxer.placed(cues) }
            let first = MediaDownloader<C>.safeLanguage(subtitle.label) + (subtitle.isForced ? ".forced" : "")
            var stem = first
            // Two renditions of one language: the next gets its name, then a number.
            var attempt = 1
            while !used.insert(stem).inserted {
                stem = first + "." + MediaDownloader<C>.safeLanguage(subtitle.name) + (attempt > 1 ? "\(attempt)" : "")
                attempt += 1
            }
            let file = base.appendingPathExtension(stem).appendingPathExtension("vtt")
            let document = WebVTTDocument(
                cues: placed.map { cue in
                    // 90 kHz ticks to milliseconds, to the nearest.
                    WebVTTCue(start: (cue.start + 45) / 90, end: (cue.end + 45) / 90, text: cue.text)
                })
            do {
                try Data(document.text.utf8).write(to: file, options: .atomic)
            } catch {
                omissions.append(
                    .subtitles(language: subtitle.label, reason: "\(file.path): \(error.localizedDescription)"))
            }
        }
        return omissions
    }

    /// Fetches the parts of the steps not done, at most ``DownloadEngine/concurrency`` at once and
    /// within a few steps of the one being remuxed, and remuxes the steps in order, one at a time.
    ///
    /// A step of one segment whose place on the timeline is known streams: its bytes go to the
    /// remuxer as they arrive (after those that came while it waited its turn), so the segment
    /// being remuxed is not held whole (unless every segment of its discontinuity before it held
    /// no sample, so that its place on the timeline is still open: `SegmentRemuxer.begin` then
    /// holds it). A step that starts a discontinuity, or whose parts are decrypted, is remuxed
    /// whole when all its parts are in.
    private func fetchAndRemux(session: RemuxSession, progress: LessonProgress, decryption: LessonDecryption)
        async throws -> (parts: Int, peak: UInt64)
    {
        let plan = plan
        let engine = engine
        let concurrency = engine.concurrency
        var nextStep = session.stepsDone
        guard nextStep < plan.steps.count else { return (0, 0) }
        var nextToStart = plan.firstPart(ofStep: nextStep)
        let meter = ByteMeter(clock: engine.clock, written: 0, completed: 0) { _, _, inFlight in
            progress.arriving(inFlight)
        }
        var flows: [Int: PartFlow] = [:]
        var done: [Int: (data: Data?, bytes: UInt64)] = [:]
        var fetchedParts = 0
        var spaceChecked = plan.expectedBytes != nil
        let destination = destination
        let gauge = BufferGauge()
        try await withThrowingTaskGroup(of: Event.self) { group in
            var inFlight = 0
            var remuxing = false
            var streamingStep: Int?
            func startMore() {
                while inFlight < concurrency, nextToStart < plan.parts.count {
                    // Parts are fetched ahead of the step being remuxed by a few steps only, so
                    // memory holds a bounded number of segments however long the lesson.
                    let base = remuxing || streamingStep != nil ? nextStep + 1 : nextStep
                    let windowEnd = plan.steps[min(base + concurrency - 1, plan.steps.count - 1)].upperBound
                    guard nextToStart < windowEnd else { break }
                    let index = nextToStart
                    nextToStart += 1
                    inFlight += 1
                    let part = plan.parts[index]
                    let flow = PartFlow(session: session, gauge: gauge)
                    flows[index] = flow
                    group.addTask {
                        let fetched = try await engine.fetchWithRetry(
                            part.downloadPart, index: index, meter: meter, receiver: flow)
                        guard part.decryption != nil else {
                            return .fetched(index: index, data: nil, bytes: fetched.fetched)
                        }
                        let clear = try await decryption.clear(flow.takeBuffered(), part: part, index: index)
                        return .fetched(index: index, data: clear, bytes: fetched.fetched)
                    }
                }
            }
            /// The bytes and seconds of a step's parts, once all are in.
            func totals(_ range: Range<Int>) -> (bytes: UInt64, seconds: Double) {
                range.reduce((0, 0)) { ($0.0 + (done[$1]?.bytes ?? 0), $0.1 + plan.parts[$1].duration) }
            }
            func finishStep(_ step: Int, _ work: @escaping @Sendable (RemuxSession, UInt64, Double) throws -> UInt64) {
                let range = plan.steps[step]
                let (bytes, seconds) = totals(range)
                let receivedAfter = progress.bytesOfStepsDone + bytes
                let floor = progress.shownFraction
                remuxing = true
                group.addTask {
                    let length = try await session.perform { try work($0, receivedAfter, floor) }
                    // The step's bytes move from arriving to done.
                    meter.received(-Int64(clamping: bytes))
                    progress.stepDone(
                        bytes: bytes, seconds: seconds, parts: range.count, written: MP4Writer.headerLength + length)
                    return .remuxed(step: step, dataLength: length)
                }
            }
            func advance() {
                guard !remuxing, nextStep < plan.steps.count else { return }
                let step = nextStep
                let range = plan.steps[step]
                if streamingStep == step {
                    guard range.allSatisfy({ done[$0] != nil }) else { return }
                    finishStep(step) { session, received, floor in
                        try session.endStreaming(step: step, bytesReceived: received, fractionFloor: floor)
                    }
                    return
                }
                let segments = range.filter { plan.parts[$0].role != .initialization }
                if segments.count == 1, let segment = segments.first, plan.streamable[step],
                    range.filter({ $0 != segment }).allSatisfy({ done[$0] != nil }), let flow = flows[segment]
                {
                    var initialization: Data?
                    for index in range where plan.parts[index].role == .initialization {
                        initialization = done[index]?.data ?? flows[index]?.takeBuffered()
                    }
                    let part = plan.parts[segment]
                    guard case .segment(let number) = part.role else { return }
                    flow.stream(
                        SegmentRemuxer.Segment(
                            data: Data(), rendition: part.rendition, discontinuity: part.discontinuity,
                            initialization: initialization, resourceOffset: part.resourceOffset, index: number))
                    streamingStep = step
                    advance()
                    return
                }
                guard range.allSatisfy({ done[$0] != nil }) else { return }
                var whole: [SegmentRemuxer.Segment] = []
                var initialization: [Int: Data] = [:]
                for index in range {
                    let part = plan.parts[index]
                    let data = done[index]?.data ?? flows[index]?.takeBuffered() ?? Data()
                    switch part.role {
                    case .initialization:
                        initialization[part.rendition] = data
                    case .segment(let number):
                        whole.append(
                            SegmentRemuxer.Segment(
                                data: data, rendition: part.rendition, discontinuity: part.discontinuity,
                                initialization: initialization[part.rendition], resourceOffset: part.resourceOffset,
                                index: number))
                    }
                }
                let wholeSegments = whole
                finishStep(step) { session, received, floor in
                    try session.remux(
                        step: step, segments: wholeSegments, bytesReceived: received, fractionFloor: floor)
                }
            }
            startMore()
            while let event = try await group.next() {
                switch event {
                case .fetched(let index, let data, let bytes):
                    inFlight -= 1
                    fetchedParts += 1
                    done[index] = (data, bytes)
                case .remuxed(let step, let dataLength):
                    // A playlist without BANDWIDTH gives no size up front: the first segment
                    // done gives an estimate, checked against the free space once.
                    if !spaceChecked, let estimate = progress.estimatedBytes {
                        spaceChecked = true
                        let written = MP4Writer.headerLength + dataLength
                        let needed = StorageSpace.room(forSource: estimate, written: written)
                        if needed > 0 {
                            try StorageSpace.check(
                                needed, in: destination.deletingLastPathComponent(), for: destination,
                                fileSystem: engine.fileSystem)
                        }
                    }
                    remuxing = false
                    streamingStep = nil
                    for index in plan.steps[step] {
                        flows[index] = nil
                        done[index] = nil
                    }
                    nextStep = step + 1
                }
                advance()
                startMore()
            }
        }
        return (fetchedParts, gauge.peak)
    }
}

/// One part's bytes on their way: held while the part waits its turn, or handed to the remuxer as
/// they arrive once its step streams (what was held first, in order).
final class PartFlow: PartReceiver, Sendable {
    private struct State {
        var held: [Data] = []
        var heldBytes = 0
        var streaming = false
        /// Bytes handed to the remuxer's queue and not yet remuxed.
        var queued = 0
    }

    private let session: RemuxSession
    private let gauge: BufferGauge
    private let state = Locked(State())

    /// The most bytes waiting on the remuxer's queue before a transfer waits for it.
    static let queueLimit = 2 << 20

    init(session: RemuxSession, gauge: BufferGauge) {
        self.session = session
        self.gauge = gauge
    }

    deinit {
        gauge.release(state.withLock { $0.heldBytes })
    }

    func receive(_ bytes: Data) async {
        if take(bytes) { _ = try? await session.perform { _ in () } }
    }

    /// Holds `bytes`, or hands them to the remuxer's queue; returns whether the queue is so full
    /// that the transfer should wait for it.
    private func take(_ bytes: Data) -> Bool {
        state.withLock { state in
            guard state.streaming else {
                state.held.append(bytes)
                state.heldBytes += bytes.count
                gauge.hold(bytes.count)
                return false
            }
            state.queued += bytes.count
            let count = bytes.count
            session.enqueue { session in
                session.feedStreaming(bytes)
                self.fed(count)
            }
            return state.queued > Self.queueLimit
        }
    }

    func restart() async {
        startOver()
    }

    /// Drops what an earlier attempt sent: the held bytes, or the remuxed part of the segment.
    private func startOver() {
        state.withLock { state in
            if state.streaming {
                session.enqueue { $0.restartStreaming() }
            } else {
                gauge.release(state.heldBytes)
                state.held = []
                state.heldBytes = 0
            }
        }
    }

    /// Starts handing the part to the remuxer as `segment`: what was held first, then each piece
    /// as it arrives.
    func stream(_ segment: SegmentRemuxer.Segment) {
        state.withLock { state in
            state.streaming = true
            let pieces = state.held
            state.held = []
            gauge.release(state.heldBytes)
            state.heldBytes = 0
            session.enqueue { $0.beginStreaming(segment) }
            for piece in pieces {
                state.queued += piece.count
                session.enqueue { session in
                    session.feedStreaming(piece)
                    self.fed(piece.count)
                }
            }
        }
    }

    /// The bytes held, joined (a part remuxed whole, or decrypted first).
    func takeBuffered() -> Data {
        state.withLock { state in
            gauge.release(state.heldBytes)
            state.heldBytes = 0
            defer { state.held = [] }
            if state.held.count == 1, let only = state.held.first { return only }
            var joined = Data(capacity: state.held.reduce(0) { $0 + $1.count })
            for piece in state.held { joined.append(piece) }
            return joined
        }
    }

    private func fed(_ count: Int) {
        state.withLock { $0.queued -= count }
    }
}
