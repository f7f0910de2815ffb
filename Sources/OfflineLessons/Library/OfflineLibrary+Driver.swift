import Downloads
import Foundation

/// The driver of the library's machine: it performs each action, and feeds each await's
/// result back as an event.
extension OfflineLibrary {
    // MARK: Driving the machine

    /// Handles `event` and performs what it leads to.
    func send(_ event: LibraryMachine.Event) {
        perform(machine.handle(event))
        switch event {
        case .ended(let id, _, _), .submitted(let id, _, _), .pause(let id), .cancel(let id), .remove(let id, _):
            answerHandOverWaiters(of: id)
        default:
            break
        }
    }

    /// Performs `actions` in order. What takes an await (the background transfers' work) goes
    /// in the item's chain, in order, and reports back as an event where the machine needs it.
    func perform(_ actions: [LibraryMachine.Action]) {
        // The failure of a save among these actions, for the removal they end.
        var saveFailure: LibraryError?
        for action in actions {
            switch action {
            case .save:
                do {
                    try save()
                    send(.saved(nil))
                } catch {
                    saveFailure = error
                    send(.saved(error))
                }
            case .saveRemoving(let id, let remote):
                var records = machine.savedRecords
                records[id] = Entry(remoteURL: remote, state: .notDownloaded, isBeingRemoved: true)
                do {
                    try save(records)
                    send(.saved(nil))
                } catch {
                    saveFailure = error
                    send(.saved(error))
                }
            case .announce(let id, let state):
                broadcast.yield((id, state))
            case .start(let id, let generation, let remote, let reportsPlan):
                // The machine holds a start back until the item's background work has ended.
                startRun(id, generation: generation, remote: remote, reportsPlan: reportsPlan)
            case .pauseRun(_, let generation):
                jobs[generation]?.pause()
            case .cancelRun(_, let generation):
                jobs[generation]?.cancel()
            case .submit(let id, let generation, let network, let replacing):
                submit(id, generation: generation, network: network, replacing: replacing)
            case .withdraw(let id, let generation):
                chain(id) { library in await library.background?.withdraw(id, generation: generation) }
            case .finishHandOver(let id, let generation):
                chain(id) { library in await library.background?.finish(id, generation: generation) }
            case .removeFiles(let id, let remote):
                store.removeFiles(of: id, remote: remote)
            case .removeDownloaded(_, let fileName):
                store.removeDownloaded(fileName)
            case .keepDownloaded(let id, let fileName, let remote):
                // What background transfers staged for it, even when their hand-over was
                // withdrawn before this run (``continueInForeground()``): it is in the file.
                store.removeStagedBodies(of: id, remote: remote)
                fileOptions.apply(to: file(named: fileName))
                // The record that finds this download again should the state file be damaged.
                store.writeRecord(of: id, fileName: fileName, remote: remote)
            case .forgetProgress(let id):
                progressBroadcast.forget(key: id)
            case .announceWait(let id, let reason):
                waitBroadcast.yield((id, reason))
            case .removed(let id):
                for waiter in removalWaiters.removeValue(forKey: id) ?? [] { waiter.resume(returning: saveFailure) }
            }
        }
    }

    /// Starts run `generation` of item `id`, with the tasks that read its progress and its end;
    /// a stop asked while it waited to start is applied at once.
    func startRun(_ id: String, generation: UInt64, remote: URL, reportsPlan: Bool) {
        let fileName = LibraryStore.fileName(for: id, remote: remote)
        let job = start(remote, file(named: fileName))
        jobs[generation] = job
        send(.jobStarted(id, generation: generation))
        if reportsPlan {
            own { library in
                guard await job.waitUntilPlanned() else { return }
                await library.send(.planned(id, generation: generation))
            }
        }
        own { library in
            for await progress in job.progress { await library.progressed(id, generation: generation, progress) }
        }
        let directory = directory
        outcomes[generation] = own { library in
            let outcome: LibraryMachine.Outcome
            do throws(DownloadError) {
                let result = try await job.result()
                // The downloader may choose the extension (an HLS lesson becomes an `.mp4`):
                // keep the name of the file it wrote, when that file is in the library's folder.
                let written = result.file.lastPathComponent
                let inFolder =
                    result.file.deletingLastPathComponent().standardizedFileURL.path
                    == directory.standardizedFileURL.path && LibraryStore.isPlainFileName(written)
                outcome = .downloaded(fileName: inFolder ? written : fileName, byteCount: result.byteCount)
            } catch {
                switch error.kind {
                case .cancelled: outcome = .cancelled
                case .paused: outcome = .paused
                default: outcome = .failed(DownloadFailure(error))
                }
            }
            await library.ended(id, generation: generation, outcome)
        }
    }

    func progressed(_ id: String, generation: UInt64, _ progress: DownloadProgress) {
        guard machine.run(of: id)?.generation == generation else { return }
        progressBroadcast.yield((id, progress))
        send(.progress(id, generation: generation, fraction: progress.fraction))
    }

    func ended(_ id: String, generation: UInt64, _ outcome: LibraryMachine.Outcome) {
        send(.ended(id, generation: generation, outcome))
        jobs[generation] = nil
        outcomes[generation] = nil
    }

    /// Hands run `generation`'s remaining parts to the background transfers, in the item's chain.
    func submit(_ id: String, generation: UInt64, network: DownloadRequirements.Network, replacing: UInt64?) {
        // Read now: the job ends as this is called.
        let remainder = jobs[generation]?.remaining
        chain(id) { library in
            let result = await library.submitted(id, remainder: remainder, network: network, replacing: replacing)
            await library.send(.submitted(id, generation: generation, result))
        }
    }

    func submitted(
        _ id: String, remainder: DownloadJob.Remainder?, network: DownloadRequirements.Network, replacing: UInt64?
    ) async -> LibraryMachine.Submitted {
        guard let background else { return .unknownRemainder }
        guard let remainder else { return .unknownRemainder }
        let parts = remainder.remaining
        guard !parts.isEmpty else { return .nothingLeft }
        do {
            // The item's earlier hand-over, whose staged bodies the run read, gives way, by its
            // generation (the transfers replace a settled one of an earlier version themselves).
            if let replacing { await background.withdraw(id, generation: replacing) }
            let generation = try await background.handOver(
                id, destination: remainder.destination, parts: parts, network: network)
            return .handedOver(generation: generation)
        } catch {
            return .refused(Self.state(refusedBy: error))
        }
    }

    /// Runs `work` after what item `id`'s chain already holds: the item's background work, one
    /// piece after the other in the order the machine asked, each end reported to it.
    func chain(_ id: String, _ work: @escaping @Sendable (OfflineLibrary) async -> Void) {
        let previous = chains[id]
        nextLink += 1
        let link = nextLink
        chains[id] = own { library in
            await previous?.value
            await work(library)
            await library.chainEnded(id, link: link)
        }
        chainLinks[id] = link
    }

    /// One link of `id`'s chain has ended: the machine hears of it (a start it held may come
    /// now), and the chain goes once its last link has.
    func chainEnded(_ id: String, link: UInt64) {
        if chainLinks[id] == link {
            chains[id] = nil
            chainLinks[id] = nil
        }
        send(.backgroundWorkEnded(id))
    }

    /// Starts `work` in a task the library owns: kept until it ends, cancelled with the library.
    @discardableResult
    func own(_ work: @escaping @Sendable (OfflineLibrary) async -> Void) -> Task<Void, Never> {
        nextTask += 1
        let number = nextTask
        let task = Task { [weak self] in
            guard let self else { return }
            await work(self)
            await self.taskEnded(number)
        }
        tasks[number] = task
        return task
    }

    /// Follows `sequence` in a task the library owns, handing each element to `body`. Between
    /// two elements the task holds the library weakly, so a library no longer used goes (and
    /// cancels its tasks, this one with them) though the sequence never ends.
    func own<Elements: AsyncSequence & Sendable>(
        following sequence: Elements, _ body: @escaping @Sendable (OfflineLibrary, Elements.Element) async -> Void
    ) where Elements.Element: Sendable {
        nextTask += 1
        let number = nextTask
        tasks[number] = Task { [weak self] in
            do {
                for try await element in sequence {
                    guard let library = self else { return }
                    await body(library, element)
                }
            } catch {
                // The sequence failed or was cancelled: nothing more to follow.
            }
            await self?.taskEnded(number)
        }
    }

    func taskEnded(_ number: UInt64) {
        tasks[number] = nil
    }

    /// Tells the callers of ``continueInBackground()`` waiting for `id` whether it was handed
    /// over, once its hand-over is no longer under way.
    func answerHandOverWaiters(of id: String) {
        guard handOverWaiters[id] != nil else { return }
        switch machine.items[id]?.activity {
        case .running(let run)? where run.isHandingOver: return
        case .submitting?: return
        default: break
        }
        let handed = machine.isHandedOver(id)
        for answer in handOverWaiters.removeValue(forKey: id) ?? [] { answer(handed) }
    }

}
