import Downloads
import Foundation

/// How the queue takes in changes (the library's, the network's, its own) and plans what runs.
extension DownloadQueue {
    // MARK: Changes

    func setPaused(_ id: String, _ paused: Bool) async throws(QueueError) {
        try load()
        guard let index = lessons.firstIndex(where: { $0.id == id }), lessons[index].isPausedByLearner != paused
        else {
            await replan()
            return
        }
        let previous = lessons
        lessons[index].isPausedByLearner = paused
        try await commit(restoring: previous)
    }

    /// Saves the lessons (restoring `previous` when that fails) and re-plans.
    func commit(restoring previous: [QueuedLesson]) async throws(QueueError) {
        do {
            try save()
        } catch {
            lessons = previous
            throw error
        }
        await replan()
    }

    func backgroundWaitChanged(_ id: String, _ reason: WaitReason?) async {
        guard backgroundWaits[id] != reason else { return }
        backgroundWaits[id] = reason
        guard lessons.contains(where: { $0.id == id }) else { return }
        await replan()
    }

    func libraryChanged(_ id: String, _ state: OfflineLibrary.ItemState) async {
        let previous = libraryStates[id]
        libraryStates[id] = state
        if case .downloading = state {} else { written[id] = nil }
        reports[id, default: 0] += 1
        if case .downloading = state, retrying.remove(id) != nil { try? save() }
        guard lessons.contains(where: { $0.id == id }) else { return }
        // A download's progress changes no decision: it is shown as it is.
        if case .downloading(let fraction) = state, case .downloading? = previous,
            case .downloading? = states[id], backgroundWaits[id] == nil
        {
            announce(id, .downloading(fraction: fraction))
            return
        }
        await replan()
    }

    /// Refines a lesson's estimate from its download's own figure, when that figure moves by
    /// 1% or more (kept in memory, and saved with the next change).
    func progressed(_ id: String, _ report: DownloadProgress) {
        written[id] = report.bytesWritten
        guard let expected = report.bytesExpected, expected > 0,
            let index = lessons.firstIndex(where: { $0.id == id }), lessons[index].estimate?.isExact != true
        else { return }
        if let current = lessons[index].estimate?.bytes, lessons[index].estimate?.basis == .refined,
            abs(Double(expected) - Double(current)) < Double(current) / 100
        {
            return
        }
        lessons[index].estimate = DownloadEstimate(bytes: expected, basis: .refined)
    }

    func networkChanged(_ new: NetworkPath) async {
        guard new != path else { return }
        path = new
        await replan()
        if new != .offline { estimateUnestimated() }
    }

    /// Decides again and does what the decision says, one decision at a time: a change that
    /// arrives while a decision is carried out (across its awaits) has the queue decide again
    /// once it is done, and the caller waits for that.
    func replan() async {
        planAgain = true
        if let planning {
            await planning.value
            return
        }
        let task = Task { await self.planUntilSettled() }
        planning = task
        await task.value
    }

    func planUntilSettled() async {
        while planAgain {
            planAgain = false
            await planOnce()
        }
        planning = nil
    }

    /// Decides and does what the decision says: stops first, then starts, each start checked
    /// against the lesson and the network as they are by then.
    func planOnce() async {
        let used = await library.totalBytes
        let decision = QueuePlanner.plan(
            lessons, library: libraryStates,
            conditions: QueuePlanner.Conditions(
                network: path, freeBytes: freeSpace(library.directory), usedBytes: used),
            requirements: requirements, concurrency: concurrency, retrying: retrying,
            backgroundWaits: backgroundWaits,
            counted: QueueSizes.counted(lessons, states: libraryStates, estimated: estimated, written: written),
            written: written, estimating: toEstimateOrEstimating)
        var decided = decision.states
        // The reports the decision saw: a state is assumed below only for a lesson that has had
        // none since (any await of this pass lets reports in, not only the ask itself).
        let seen = reports
        for id in decision.stop {
            // A download handed to background transfers waits for its network there: only the
            // learner's pause takes it back.
            let byLearner = lessons.first { $0.id == id }?.isPausedByLearner ?? false
            if !byLearner, await library.isHandedOver(id) { continue }
            await library.pause(id)
            // Until the library's own report arrives, the lesson counts as paused.
            if reports[id] == seen[id] { libraryStates[id] = .paused }
        }
        for id in decision.start {
            // An await above may have let the learner pause it or the network change.
            guard let lesson = lessons.first(where: { $0.id == id }), !lesson.isPausedByLearner,
                requirements.network.allows(path)
            else {
                planAgain = true
                continue
            }
            do {
                try await library.download(id, from: lesson.remoteURL, network: requirements.network)
                // Until the library's own report arrives, the lesson counts as downloading.
                if reports[id] == seen[id] { libraryStates[id] = .downloading(fraction: 0) }
            } catch {
                decided[id] = .failed(DownloadFailure(error))
            }
        }
        for (id, state) in decided where states[id] != state { announce(id, state) }
    }

    func announce(_ id: String, _ state: QueuedLessonState) {
        states[id] = state
        broadcast.yield((id, state))
    }

    /// How many estimates run at once: each is a few small requests, mostly waiting for the
    /// network, so a handful at once shows a long course's sizes that many times sooner without
    /// crowding the downloads.
    static let estimateConcurrency = 4

    /// Estimates the lessons' sizes, ``estimateConcurrency`` at a time, saving and announcing
    /// each as it is known. An estimate that fails (no network, a server error) is left unknown
    /// and tried again at the next start and when the network comes back; the estimates under
    /// way end with the task that runs them (``stop()`` cancels it, and the cancellation reaches
    /// their requests).
    ///
    /// Lessons asked for while estimates are made join the ones being made.
    func estimateSizes(of ids: [String]) async {
        guard let estimator else { return }
        toEstimate.append(contentsOf: ids.filter { !toEstimate.contains($0) && !estimatingNow.contains($0) })
        guard !isEstimating, !toEstimate.isEmpty else { return }
        isEstimating = true
        await withTaskGroup(of: (String, DownloadEstimate?).self) { group in
            var running = 0
            while true {
                while running < Self.estimateConcurrency, !toEstimate.isEmpty, !Task.isCancelled {
                    let id = toEstimate.removeFirst()
                    guard let lesson = lessons.first(where: { $0.id == id }), lesson.estimate == nil else { continue }
                    estimatingNow.insert(id)
                    let url = lesson.remoteURL
                    group.addTask { (id, try? await estimator(url)) }
                    running += 1
                }
                guard let (id, estimate) = await group.next() else { break }
                running -= 1
                estimatingNow.remove(id)
                guard let estimate, let index = lessons.firstIndex(where: { $0.id == id }) else { continue }
                lessons[index].estimate = estimate
                if estimate.basis != .refined { estimated[id] = estimate }
                try? save()  // should this fail, the estimate is made again at the next start
                // Its size is shown at once: its state again, with the new figure beside it; and
                // the queue decides again, so that a lesson waiting for it starts now.
                if let state = states[id] { broadcast.yield((id, state)) }
                await replan()
            }
        }
        if Task.isCancelled { toEstimate = [] }
        isEstimating = false
        for waiter in estimateWaiters { waiter.resume() }
        estimateWaiters = []
        await replan()
    }

    /// Estimates `ids` in a task of its own, which ``stop()`` cancels.
    func estimateInBackground(_ ids: [String]) {
        guard estimator != nil, !ids.isEmpty else { return }
        watchers.append(Task { [weak self] in await self?.estimateSizes(of: ids) })
    }

    /// Estimates, in a task of its own, the lessons whose estimate failed earlier.
    func estimateUnestimated() {
        estimateInBackground(unestimated)
    }

    /// The lessons whose size is asked for or being estimated now.
    var toEstimateOrEstimating: Set<String> {
        estimatingNow.union(toEstimate)
    }

    /// The lessons not downloaded whose size is not known yet.
    var unestimated: [String] {
        lessons.filter { lesson in
            guard lesson.estimate == nil else { return false }
            if case .downloaded? = libraryStates[lesson.id] { return false }
            return true
        }.map(\.id)
    }

    func save() throws(QueueError) {
        try load()
        do {
            let data = try JSONEncoder().encode(
                QueueFile(
                    version: 1, lessons: lessons, requirements: requirements,
                    removing: removing.isEmpty ? nil : removing, retrying: retrying.isEmpty ? nil : retrying.sorted(),
                    estimated: estimated.isEmpty ? nil : estimated))
            try library.fileSystem.willPerform(.write, on: file)
            try StateFileWriting.write(data, to: file)
            library.fileSystem.didPerform(.write, on: file)
        } catch {
            throw QueueError(
                .saveFailed(reason: error.localizedDescription, code: DownloadError.fileErrorCode(of: error)),
                path: file.path)
        }
    }
}
