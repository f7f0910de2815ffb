import Foundation
import HLS
import Locking
import MediaContainers

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
    private enum Outcome: Sendable {
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
        let stepsDone = checkpoint?.stepsDone ?? 0
        publishPlan(to: job, stepsDone: stepsDone)
        let session = RemuxSession(remuxer: remuxer, output: output, journal: journal, stepsDone: stepsDone)
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
            stepsDone: stepsDone, floor: max(checkpoint?.fractionFloor ?? 0, journal.notedFloor ?? 0))
        progress.publish()
        let fetched: (parts: Int, peak: UInt64)
        do {
            fetched = try await fetchAndRemux(
                session: session, progress: progress, decryption: decryption, firstStep: stepsDone, job: job)
        } catch {
            // The fraction shown may be past the last checkpoint's (a segment was in flight):
            // the journal notes it, so the resume starts there and never shows less.
            let shown = progress.shownFraction
            _ = try? await session.perform { $0.noteFloor(shown) }
            // The steps the journal holds, whether or not their report came back before the stop.
            if let journaled = try? await session.perform({ $0.stepsDone }) {
                for range in plan.steps.prefix(journaled) { job.partsDone(range) }
            }
            throw error
        }
        // Every media step is in the journal: a stop from here on (while subtitles are fetched)
        // leaves only the keys for a hand-over, not the parts this run wrote.
        for range in plan.steps { job.partsDone(range) }
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
        engine.downloadDone?()
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
                try engine.fileSystem.willPerform(.write, on: file)
                try Data(document.text.utf8).write(to: file, options: .atomic)
            } catch {
                omissions.append(
                    .subtitles(language: subtitle.label, reason: "\(file.path): \(error.localizedDescription)"))
            }
        }
        return omissions
    }

    /// Fetches the parts of the steps not done and remuxes the steps in order, one at a time,
    /// performing what a ``LessonScheduler`` asks for: the task group runs the transfers and the
    /// remux steps, and each one's outcome goes back to the scheduler as an event.
    ///
    /// A step of one segment whose place on the timeline is known streams: its bytes go to the
    /// remuxer as they arrive (after those that came while it waited its turn), so the segment
    /// being remuxed is not held whole (unless every segment of its discontinuity before it held
    /// no sample, so that its place on the timeline is still open: `SegmentRemuxer.begin` then
    /// holds it). A step that starts a discontinuity, or whose parts are decrypted, is remuxed
    /// whole when all its parts are in.
    private func fetchAndRemux(
        session: RemuxSession, progress: LessonProgress, decryption: LessonDecryption, firstStep: Int,
        job: DownloadJob
    ) async throws -> (parts: Int, peak: UInt64) {
        let plan = plan
        let engine = engine
        var scheduler = LessonScheduler(plan: plan, concurrency: engine.concurrency, firstStep: firstStep)
        let meter = ByteMeter(clock: engine.clock, written: 0, completed: 0) { _, _, inFlight in
            progress.arriving(inFlight)
        }
        var flows: [Int: PartFlow] = [:]
        var done: [Int: (data: Data?, bytes: UInt64)] = [:]
        var fetchedParts = 0
        var spaceChecked = plan.expectedBytes != nil
        let gauge = BufferGauge()
        try await withThrowingTaskGroup(of: Outcome.self) { group in
            /// A part's bytes: as decrypted, or as its flow holds them.
            func data(of index: Int) -> Data {
                done[index]?.data ?? flows[index]?.takeBuffered() ?? Data()
            }
            /// Remuxes step `step` on the session's queue with `work`, then reports it.
            func remux(_ step: Int, _ work: @escaping @Sendable (RemuxSession, UInt64, Double) throws -> UInt64) {
                let range = plan.steps[step]
                let bytes = range.reduce(0) { $0 + (done[$1]?.bytes ?? 0) }
                let seconds = range.reduce(0) { $0 + plan.parts[$1].duration }
                let receivedAfter = progress.bytesOfStepsDone + bytes
                let floor = progress.shownFraction
                group.addTask {
                    let length = try await session.perform { try work($0, receivedAfter, floor) }
                    // The step's bytes move from arriving to done.
                    meter.received(-Int64(clamping: bytes))
                    progress.stepDone(
                        bytes: bytes, seconds: seconds, parts: range.count, written: MP4Writer.headerLength + length)
                    return .remuxed(step: step, dataLength: length)
                }
            }
            func perform(_ action: LessonScheduler.Action) {
                switch action {
                case .fetch(let index):
                    let part = plan.parts[index]
                    let flow = PartFlow(session: session, gauge: gauge)
                    flows[index] = flow
                    group.addTask {
                        let fetched = try await engine.fetchWithRetry(
                            part.downloadPart, index: index, meter: meter, receiver: flow)
                        flow.finish()
                        guard part.decryption != nil else {
                            return .fetched(index: index, data: nil, bytes: fetched.fetched)
                        }
                        let clear = try await decryption.clear(flow.takeBuffered(), part: part, index: index)
                        return .fetched(index: index, data: clear, bytes: fetched.fetched)
                    }
                case .stream(let index, let step):
                    let part = plan.parts[index]
                    var initialization: Data?
                    for other in plan.steps[step] where plan.parts[other].role == .initialization {
                        initialization = data(of: other)
                    }
                    guard case .segment(let number) = part.role else { return }
                    flows[index]?.stream(
                        SegmentRemuxer.Segment(
                            data: Data(), rendition: part.rendition, discontinuity: part.discontinuity,
                            initialization: initialization, resourceOffset: part.resourceOffset, index: number))
                case .checkpoint(let step):
                    remux(step) { session, received, floor in
                        try session.endStreaming(step: step, bytesReceived: received, fractionFloor: floor)
                    }
                case .remuxWhole(let step):
                    var whole: [SegmentRemuxer.Segment] = []
                    var initialization: [Int: Data] = [:]
                    for index in plan.steps[step] {
                        let part = plan.parts[index]
                        switch part.role {
                        case .initialization:
                            initialization[part.rendition] = data(of: index)
                        case .segment(let number):
                            var segment = SegmentRemuxer.Segment(
                                data: Data(), rendition: part.rendition, discontinuity: part.discontinuity,
                                initialization: initialization[part.rendition], resourceOffset: part.resourceOffset,
                                index: number)
                            // A clear part goes in the pieces it arrived in, read and let go
                            // one by one; a decrypted one is already whole.
                            if let clear = done[index]?.data {
                                segment.data = clear
                                done[index]?.data = nil
                            } else {
                                segment.pieces = flows[index]?.takePieces() ?? []
                            }
                            whole.append(segment)
                        }
                    }
                    // Handed over, not shared: the remux takes the only copy of the pieces out of
                    // the box, so each is freed as soon as it is read.
                    let handed = Locked(whole)
                    // The remux may start on its queue before this scope ends.
                    whole = []
                    remux(step) { session, received, floor in
                        var segments = handed.withLock { segments in
                            defer { segments = [] }
                            return segments
                        }
                        return try session.remux(
                            step: step, segments: &segments, bytesReceived: received, fractionFloor: floor)
                    }
                case .stop:
                    // The transfers and remux steps in flight are cancelled; the last
                    // checkpoint is what a resume continues from.
                    group.cancelAll()
                case .finish:
                    break
                }
            }
            var actions = scheduler.handle(.start)
            while !actions.contains(.finish) {
                actions.forEach(perform)
                let outcome: Outcome?
                do {
                    outcome = try await group.next()
                } catch {
                    // The group cancels the transfers in flight as it ends with the error.
                    scheduler.handle(error is CancellationError && job.isPauseRequested ? .paused : .failed)
                        .forEach(perform)
                    throw error
                }
                switch outcome {
                case .fetched(let index, let data, let bytes)?:
                    fetchedParts += 1
                    done[index] = (data, bytes)
                    actions = scheduler.handle(.partFetched(index))
                case .remuxed(let step, let dataLength)?:
                    // A playlist without BANDWIDTH gives no size up front: the first segment
                    // done gives an estimate, checked against the free space once.
                    if !spaceChecked, let estimate = progress.estimatedBytes {
                        spaceChecked = true
                        try checkSpace(forSource: estimate, written: MP4Writer.headerLength + dataLength)
                    }
                    for index in plan.steps[step] {
                        // Checkpointed: the journal keeps the step's parts.
                        engine.partKept?(plan.parts[index].downloadPart)
                        flows[index] = nil
                        done[index] = nil
                    }
                    actions = scheduler.handle(.stepRemuxed(step))
                case nil:
                    // Nothing in flight and nothing to do: only a plan whose steps leave parts out
                    // could get here, and the file would miss them.
                    throw DownloadError(
                        .unusablePlaylist(reason: "its steps stop at step \(scheduler.nextStep) of \(plan.steps.count)")
                    )
                }
            }
        }
        return (fetchedParts, gauge.peak)
    }

    /// Tells `job` the plan's parts (then its keys, which every run fetches again) and those
    /// the journal holds, for a hand-over to background transfers.
    ///
    /// - Complexity: O(*s*) for the *s* steps done; the parts are listed only if a hand-over
    ///   asks for them.
    private func publishPlan(to job: DownloadJob, stepsDone: Int) {
        let plan = plan
        let done = plan.steps.prefix(stepsDone).reduce(into: Set<Int>()) { $0.formUnion($1) }
        job.planned(into: destination, done: done) {
            // A segment without a byte range: its share of the plan's estimate (BANDWIDTH times
            // duration), so that the free space is checked and the scheduler told what to expect.
            let perSecond = plan.expectedBytes.flatMap { plan.duration > 0 ? Double($0) / plan.duration : nil }
            var parts = plan.parts.enumerated().map { index, part in
                let estimate = perSecond.flatMap {
                    part.duration > 0 ? UInt64(($0 * part.duration).rounded(.up)) : nil
                }
                return PlannedPart(
                    index: index, part: part.downloadPart, expectedBytes: part.byteRange?.length ?? estimate)
            }
            for (offset, url) in LessonKeys.keyURLs(of: plan).enumerated() {
                parts.append(
                    PlannedPart(
                        index: plan.parts.count + offset, part: DownloadPart(url: url), expectedBytes: 16))
            }
            return parts
        }
    }

    /// Fails with insufficient storage when the file the source makes does not fit beside what
    /// is written.
    private func checkSpace(forSource expected: UInt64, written: UInt64) throws {
        let needed = StorageSpace.room(forSource: expected, written: written)
        guard needed > 0 else { return }
        try StorageSpace.check(
            needed, in: destination.deletingLastPathComponent(), for: destination, fileSystem: engine.fileSystem)
    }
}
