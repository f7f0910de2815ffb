import Downloads
import Foundation

@testable import OfflineLessons

/// The library's machine inside a model of everything around it: the jobs its actions start,
/// the hand-overs being submitted, the background session's tasks (which outlive the process),
/// the downloaded files on disk, the state file, the device's network, and the learner's last
/// word per item.
///
/// A ``Step`` is one thing that can happen next; ``steps(learnerEvents:)`` lists those that can,
/// and ``take(_:)`` takes one, checking the rules as the machine's actions are performed. A kill
/// loses what only the process held, keeps the files, the saved state and the system's tasks,
/// and reloads the machine from the state file, as a launch does.
struct LibraryWorld: Hashable {
    /// A job an action started.
    struct Job: Hashable {
        var generation: UInt64
        var pauseAsked = false
        var cancelAsked = false
        /// Its file is in place: it can only end downloaded.
        var filePlaced = false
        /// It reports its plan (for a hand-over at once) before anything else.
        var reportsPlan: Bool
    }

    /// What the learner said last of an item.
    enum Word: Hashable {
        case download, pause, cancel, delete, discard
    }

    /// One thing that can happen next.
    enum Step: Hashable, CustomStringConvertible {
        /// The learner's call (a download, pause, cancel, delete or discard), the app leaving the
        /// foreground, or coming back.
        case learner(LibraryMachine.Event)
        case handOver
        case takeBack
        /// A job has its parts planned (with hand-over always).
        case planned(String)
        /// A job's file is put in place.
        case placeFile(String)
        /// A job ends.
        case end(String, LibraryMachine.Outcome)
        /// A submission ends (a hand-over's generation is the world's to give: the one in the
        /// step is a placeholder).
        case submitted(String, LibraryMachine.Submitted)
        /// The piece of background work at the head of the item's chain (a withdrawal or a
        /// finish) ends, and the driver says so.
        case workEnds(String)
        /// The device's network changes.
        case network(NetworkPath)
        /// The system's tasks of a hand-over all end.
        case tasksFinish(String)
        /// The background transfers report that a hand-over has settled.
        case tasksEnded(String)
        /// A downloaded file goes missing (the system purged it, the learner removed it), and
        /// the library notices.
        case fileGone(String)
        /// The process is killed once the transition of `event` has performed `performed` of
        /// its actions (`nil`: with no event, between two transitions), then launched again.
        indirect case kill(during: Step?, performed: Int)

        var description: String {
            switch self {
            case .learner(let event): "\(event)"
            case .handOver: "handOver"
            case .takeBack: "takeBack"
            case .planned(let id): "planned(\(id))"
            case .placeFile(let id): "placeFile(\(id))"
            case .end(let id, let outcome): "end(\(id), \(outcome))"
            case .submitted(let id, let result): "submitted(\(id), \(result))"
            case .workEnds(let id): "workEnds(\(id))"
            case .network(let path): "network(\(path == .unmetered ? "Wi-Fi" : "cellular"))"
            case .tasksFinish(let id): "tasksFinish(\(id))"
            case .tasksEnded(let id): "tasksEnded(\(id))"
            case .fileGone(let id): "fileGone(\(id))"
            case .kill(nil, _): "kill"
            case .kill(let step?, let performed): "kill after \(performed) actions of \(step)"
            }
        }
    }

    let ids: [String]
    var machine: LibraryMachine
    /// The state file's records (empty until the first save).
    var saved: [String: LibraryMachine.Record] = [:]
    var jobs: [String: Job] = [:]
    /// Submissions under way, by the generation of the run handed over.
    var submissions: [String: UInt64] = [:]
    /// Starts waiting in their item's chain, behind a withdrawal of the same transition.
    var work: [String: [Work]] = [:]

    /// A piece of an item's background work, as the driver's chain runs them: one after the
    /// other, in the order asked.
    enum Work: Hashable {
        /// A submission, which ends with its ``Step/submitted(_:_:)``.
        case submit
        /// A withdrawal or a finish.
        case other
    }
    /// The hand-over whose tasks are alive in the system, by item, with its generation (the
    /// background transfers' journal, which outlives the process).
    var system: [String: UInt64] = [:]
    /// Hand-overs whose tasks have all ended, not yet reported, with their generations.
    var settledUnreported: [String: UInt64] = [:]
    /// The device's network, when the world changes it (``Step/network(_:)``).
    var path: NetworkPath?
    /// The wait reasons announced since the launch, by item.
    var announcedWaits: [String: WaitReason] = [:]
    /// Items whose downloaded file is on disk.
    var files: Set<String> = []
    var words: [String: Word] = [:]
    /// Items whose learner's Download met a kill or a failure since: it may end paused or failed.
    var shaken: Set<String> = []
    /// Deletes and discards that have not returned.
    var removalsWaiting: Set<String> = []
    /// What broke the rules, in the order found.
    var violations: [String] = []
    /// Whether the app is known to be in the foreground: at first, and since its latest
    /// take-back; not after a hand-over or a kill (a relaunch may be in the background).
    var isInForeground = true

    /// A world of items `ids`; with `networks`, background transfers wait for a network that
    /// is not expensive, and the device's network goes between Wi-Fi and cellular.
    init(ids: [String], handsOverAlways: Bool = false, networks: Bool = false) {
        self.ids = ids
        machine = LibraryMachine(
            hasBackground: true, handsOverAlways: handsOverAlways, waitOptions: networks ? Self.wifiOnly : nil)
        if networks {
            path = .unmetered
            apply(machine.handle(.network(.unmetered)))
        }
    }

    static let wifiOnly = BackgroundTransferOptions(identifier: "world", allowsExpensiveNetworkAccess: false)

    /// Hashable with the pending starts' tuples.
    static func == (lhs: LibraryWorld, rhs: LibraryWorld) -> Bool {
        lhs.ids == rhs.ids && lhs.machine == rhs.machine && lhs.saved == rhs.saved && lhs.jobs == rhs.jobs
            && lhs.submissions == rhs.submissions && lhs.system == rhs.system
            && lhs.settledUnreported == rhs.settledUnreported && lhs.path == rhs.path
            && lhs.announcedWaits == rhs.announcedWaits && lhs.files == rhs.files && lhs.words == rhs.words
            && lhs.shaken == rhs.shaken && lhs.removalsWaiting == rhs.removalsWaiting
            && lhs.violations == rhs.violations && lhs.isInForeground == rhs.isInForeground
            && lhs.work == rhs.work
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(machine)
        hasher.combine(saved)
        hasher.combine(jobs)
        hasher.combine(system)
        hasher.combine(words)
        hasher.combine(isInForeground)
        hasher.combine(work)
    }

    /// The generation the next hand-over gets: above every one the world still names, as the
    /// transfers' journal never gives one twice while it can matter.
    private var nextHandOver: UInt64 {
        let named =
            Array(system.values) + Array(settledUnreported.values)
            + machine.records.values.compactMap(\.background?.generation)
            + saved.values.compactMap(\.background?.generation)
        return (named.max() ?? 0) + 1
    }

    static func remote(of id: String) -> URL {
        URL(fileURLWithPath: "/lessons/\(id)/master.m3u8")
    }

    static func fileName(of id: String) -> String { "\(id).mp4" }

    static let failure = DownloadFailure(category: .server, message: "503")

    // MARK: What can happen

    /// The steps that can happen next: every world step, a kill at every boundary, and with
    /// `learnerEvents` the learner's calls (`discard` too when `discards`).
    func steps(learnerEvents: Bool, discards: Bool = false, submissionOutcomes: [LibraryMachine.Submitted])
        -> [Step]
    {
        var steps: [Step] = []
        if learnerEvents {
            for id in ids {
                steps.append(.learner(.download(id, remote: Self.remote(of: id), network: nil)))
                // A queue's Download, with its Wi-Fi-only rule, where the network changes.
                if path != nil {
                    steps.append(.learner(.download(id, remote: Self.remote(of: id), network: .notExpensive)))
                }
                steps.append(.learner(.pause(id)))
                steps.append(.learner(.cancel(id)))
                steps.append(.learner(.remove(id, keepsDownloaded: false)))
                if discards { steps.append(.learner(.remove(id, keepsDownloaded: true))) }
            }
            if !runningToHandOver.isEmpty { steps.append(.handOver) }
            if !isInForeground || ids.contains(where: machine.isHandedOver) { steps.append(.takeBack) }
            if let path { steps.append(.network(path == .unmetered ? .cellular : .unmetered)) }
            // A file goes missing once it is the library's: downloaded, nothing running.
            for id in ids where files.contains(id) && !machine.isBusy(id) {
                if case .downloaded = machine.state(of: id) { steps.append(.fileGone(id)) }
            }
        }
        steps += worldSteps(submissionOutcomes: submissionOutcomes)
        return steps
    }

    /// What the process and the system do by themselves.
    func worldSteps(submissionOutcomes: [LibraryMachine.Submitted]) -> [Step] {
        var steps: [Step] = []
        for id in ids {
            if let job = jobs[id] {
                if job.reportsPlan {
                    steps.append(.planned(id))
                } else if job.filePlaced {
                    steps.append(.end(id, .downloaded(fileName: Self.fileName(of: id), byteCount: 1)))
                } else {
                    steps.append(.placeFile(id))
                    if job.cancelAsked { steps.append(.end(id, .cancelled)) }
                    if job.pauseAsked { steps.append(.end(id, .paused)) }
                    steps.append(.end(id, .failed(Self.failure)))
                }
            }
            if submissions[id] != nil, work[id]?.first == .submit {
                steps += submissionOutcomes.map { .submitted(id, $0) }
            }
            if work[id]?.first == .other { steps.append(.workEnds(id)) }
            if system[id] != nil { steps.append(.tasksFinish(id)) }
            if settledUnreported[id] != nil { steps.append(.tasksEnded(id)) }
        }
        return steps
    }

    /// The runs `continueInBackground()` hands over.
    var runningToHandOver: [String] { machine.runsToHandOver }

    /// The kills during `step`: after each action of its transition that leaves a mark outside
    /// the process (a save, a withdrawal, a file removed), but the last.
    func kills(during step: Step) -> [Step] {
        var copy = self
        guard let event = copy.event(of: step) else { return [] }
        let actions = copy.machine.handle(event)
        return actions.indices.dropLast().filter { Self.leavesAMark(actions[$0]) }.map {
            .kill(during: step, performed: $0 + 1)
        }
    }

    private static func leavesAMark(_ action: LibraryMachine.Action) -> Bool {
        switch action {
        case .save, .saveRemoving, .withdraw, .finishHandOver, .removeDownloaded, .start, .submit: true
        default: false
        }
    }

    // MARK: Taking a step

    /// The machine's event for `step`, with the world's part of it done (a job gone, tasks
    /// made); `nil` for a step with no event.
    private mutating func event(of step: Step) -> LibraryMachine.Event? {
        switch step {
        case .learner(let event):
            switch event {
            case .download(let id, _, _): setWord(.download, of: id)
            case .pause(let id): setWord(.pause, of: id)
            case .cancel(let id): setWord(.cancel, of: id)
            case .remove(let id, let keepsDownloaded):
                setWord(keepsDownloaded ? .discard : .delete, of: id)
                removalsWaiting.insert(id)
            default: break
            }
            return event
        case .handOver:
            isInForeground = false
            return .handOver(runningToHandOver)
        case .takeBack:
            isInForeground = true
            return .takeBack
        case .planned(let id):
            guard let job = jobs[id] else { return nil }
            jobs[id]?.reportsPlan = false
            return .planned(id, generation: job.generation)
        case .placeFile(let id):
            jobs[id]?.filePlaced = true
            files.insert(id)
            return nil
        case .end(let id, let outcome):
            guard let job = jobs.removeValue(forKey: id) else { return nil }
            if case .failed = outcome { shaken.insert(id) }
            return .ended(id, generation: job.generation, outcome)
        case .submitted(let id, var result):
            guard let generation = submissions.removeValue(forKey: id) else { return nil }
            switch result {
            case .handedOver:
                let handOver = nextHandOver
                result = .handedOver(generation: handOver)
                system[id] = handOver
            case .refused, .unknownRemainder: shaken.insert(id)
            case .nothingLeft: break
            }
            return .submitted(id, generation: generation, result)
        case .workEnds(let id):
            guard work[id]?.first == .other else { return nil }
            popWork(of: id)
            return .backgroundWorkEnded(id)
        case .network(let path):
            self.path = path
            return .network(path)
        case .tasksFinish(let id):
            settledUnreported[id] = system.removeValue(forKey: id)
            return nil
        case .tasksEnded(let id):
            guard let generation = settledUnreported.removeValue(forKey: id) else { return nil }
            return .tasksEnded(id, generation: generation)
        case .fileGone(let id):
            files.remove(id)
            // Like any loss the learner did not ask for: a Download may end not downloaded.
            shaken.insert(id)
            return .fileMissing(id)
        case .kill:
            return nil
        }
    }

    private mutating func setWord(_ word: Word, of id: String) {
        words[id] = word
        shaken.remove(id)
    }

    /// Takes `step`, performing the actions it leads to and checking the rules.
    mutating func take(_ step: Step) {
        if case .kill(let during, let performed) = step {
            if let during, let event = event(of: during) {
                apply(Array(machine.handle(event).prefix(performed)), complete: false)
            }
            relaunch()
            return
        }
        guard let event = event(of: step) else { return }
        apply(machine.handle(event))
        // A submission is a piece of background work: the driver says it ended once its result
        // is in.
        if case .submitted(let id, _) = step, work[id]?.first == .submit {
            popWork(of: id)
            apply(machine.handle(.backgroundWorkEnded(id)))
        }
    }

    private mutating func popWork(of id: String) {
        work[id]?.removeFirst()
        if work[id]?.isEmpty == true { work[id] = nil }
    }

    /// Performs `actions` in order, as the driver does, and checks the rules they must keep
    /// (those of a whole transition only when it is `complete`, not cut short by a kill).
    private mutating func apply(_ actions: [LibraryMachine.Action], complete: Bool = true) {
        for action in actions {
            switch action {
            case .withdraw(let id, let generation), .finishHandOver(let id, let generation):
                // No generation but the item's own: a withdrawal names one, unless the item has
                // no hand-over, and never that of the hand-over the machine still waits for.
                if generation == nil, system[id] != nil || settledUnreported[id] != nil {
                    violations.append("a withdrawal of \(id) names no generation")
                }
                if system[id] == generation || settledUnreported[id] == generation, generation != nil {
                    system[id] = nil
                    settledUnreported[id] = nil
                }
                if let handedOver = machine.handOver(of: id), handedOver.generation == generation {
                    violations.append("withdrew the hand-over \(id) waits for")
                }
                work[id, default: []].append(.other)
            case .start(let id, _, _, _) where work[id]?.isEmpty == false:
                violations.append("\(id) started before its background work ended")
                perform(action)
            default:
                perform(action)
            }
        }
        // A run a removal waits for is asked to stop once its job exists.
        for (id, job) in jobs where complete && !job.cancelAsked {
            if case .removing(let removal)? = machine.items[id]?.activity, removal.generation == job.generation {
                violations.append("the job of \(id) runs on under its removal")
            }
        }
        // Back in the foreground, nothing waits for the system's tasks (unless every download
        // is handed over, foreground or not): a take-back is never lost.
        for id in ids where complete && isInForeground && !machine.handsOverAlways {
            if system[id] != nil, machine.isHandedOver(id) {
                violations.append("\(id) waits for background transfers with the app in the foreground")
            }
        }
        // Under the Wi-Fi-only options, an item handed over waits exactly while the device is on
        // cellular, and the screen was told so.
        // (Once the machine has heard of the network: a launch tells it last.)
        if complete, machine.waitOptions != nil, let path = machine.networkPath {
            for id in ids {
                let waits = machine.isHandedOver(id) && path == .cellular
                if waits != (announcedWaits[id] != nil) {
                    violations.append(
                        "\(id) \(waits ? "waits for Wi-Fi" : "does not wait") but shows \(String(describing: announcedWaits[id]))"
                    )
                }
            }
        }
        // The wait reasons announced are the machine's.
        for id in ids where complete && announcedWaits[id] != machine.waitReason(of: id) {
            violations.append(
                "\(id) shows \(String(describing: announcedWaits[id])), not \(String(describing: machine.waitReason(of: id)))"
            )
        }
    }

    private mutating func checkStart(of id: String) {
        if jobs[id] != nil { violations.append("a second job of \(id) started") }
        if words[id] != .download {
            violations.append("\(id) started against the learner's \(String(describing: words[id]))")
        }
    }

    private mutating func makeJob(_ id: String, generation: UInt64, reportsPlan: Bool) {
        jobs[id] = Job(generation: generation, reportsPlan: reportsPlan)
    }

    private mutating func perform(_ action: LibraryMachine.Action) {
        switch action {
        case .save:
            saved = machine.savedRecords
        case .saveRemoving(let id, let remote):
            saved = machine.savedRecords
            saved[id] = LibraryMachine.Record(remoteURL: remote, state: .notDownloaded, isBeingRemoved: true)
        case .start(let id, let generation, _, let reportsPlan):
            checkStart(of: id)
            makeJob(id, generation: generation, reportsPlan: reportsPlan)
            // The driver reports the job at once: a stop asked while its start was held comes
            // now.
            for asked in machine.handle(.jobStarted(id, generation: generation)) { perform(asked) }
        case .pauseRun(let id, let generation):
            if jobs[id]?.generation == generation { jobs[id]?.pauseAsked = true }
        case .cancelRun(let id, let generation):
            if jobs[id]?.generation == generation { jobs[id]?.cancelAsked = true }
        case .submit(let id, let generation, _, let replacing):
            if submissions[id] != nil { violations.append("a second submission of \(id)") }
            if jobs[id] != nil { violations.append("\(id) submitted while its job runs") }
            submissions[id] = generation
            work[id, default: []].append(.submit)
            // The hand-over it replaces gives way (the driver withdraws it first); one whose
            // tasks have all ended goes too (the transfers replace it). One still running
            // would be refused as a duplicate: the machine must have withdrawn it.
            if let live = system[id], live != replacing {
                violations.append("\(id) submitted beside its live hand-over \(live)")
            }
            system[id] = nil
            settledUnreported[id] = nil
        case .withdraw, .finishHandOver:
            break  // in ``apply(_:)``
        case .announceWait(let id, let reason):
            announcedWaits[id] = reason
        case .removeDownloaded(let id, let fileName):
            if fileName == Self.fileName(of: id) {
                files.remove(id)
            } else {
                violations.append("removed \(fileName) for \(id)")
            }
        case .removed(let id):
            removalsWaiting.remove(id)
        case .announce, .removeFiles, .keepDownloaded, .forgetProgress:
            break
        }
    }

    /// A launch after a kill: what the process held is gone; the machine is loaded from the
    /// state file and the files, and the background transfers give up the hand-overs of items
    /// that no longer wait for them, and report those whose tasks ended.
    private mutating func relaunch() {
        var fresh = LibraryMachine(
            hasBackground: machine.hasBackground, handsOverAlways: machine.handsOverAlways,
            waitOptions: machine.waitOptions)
        var found: [String: (fileName: String, byteCount: UInt64)] = [:]
        var missing: Set<String> = []
        for (id, record) in saved {
            let isDownloaded = if case .downloaded = record.state { true } else { false }
            if !isDownloaded, files.contains(id) { found[id] = (Self.fileName(of: id), 1) }
            if case .downloaded = record.state, !files.contains(id) { missing.insert(id) }
        }
        jobs = [:]
        submissions = [:]
        work = [:]
        isInForeground = false
        removalsWaiting = []
        announcedWaits = [:]
        shaken.formUnion(ids.filter { words[$0] == .download })
        machine = fresh
        let actions = fresh.load(saved, downloaded: found, missingFiles: missing, badFileNames: [:])
        machine = fresh
        for action in actions { perform(action) }
        // The library saves what it loaded, then hears which hand-overs the transfers know
        // (those settled report again at their start), then the network.
        saved = machine.savedRecords
        var known: [String: UInt64?] = [:]
        for (id, generation) in system { known[id] = generation }
        for (id, generation) in settledUnreported { known[id] = generation }
        apply(machine.handle(.launched(handOvers: known)))
        if let path { apply(machine.handle(.network(path))) }
    }

    // MARK: Settling

    /// Lets the world run by itself (jobs end as asked, or downloaded; submissions hand over;
    /// tasks end), at most `bound` steps, and returns what is wrong once nothing is left to
    /// happen.
    func settled(bound: Int = 200) -> [String] {
        var world = self
        for _ in 0..<bound {
            guard let step = world.nextSettlingStep() else { return world.settleViolations() }
            world.take(step)
        }
        return ["did not settle in \(bound) steps"]
    }

    private func nextSettlingStep() -> Step? {
        for id in ids {
            if let job = jobs[id] {
                if job.reportsPlan { return .planned(id) }
                if job.filePlaced { return .end(id, .downloaded(fileName: Self.fileName(of: id), byteCount: 1)) }
                if job.cancelAsked { return .end(id, .cancelled) }
                if job.pauseAsked { return .end(id, .paused) }
                return .placeFile(id)
            }
            if work[id]?.first == .other { return .workEnds(id) }
            if submissions[id] != nil, work[id]?.first == .submit { return .submitted(id, .handedOver(generation: 0)) }
            if system[id] != nil { return .tasksFinish(id) }
            if settledUnreported[id] != nil { return .tasksEnded(id) }
        }
        return nil
    }

    private func settleViolations() -> [String] {
        var wrong = violations
        for id in ids {
            let state = machine.state(of: id)
            if machine.isBusy(id) {
                wrong.append("\(id) still busy: \(String(describing: machine.items[id]?.activity))")
            }
            if machine.isHandedOver(id) { wrong.append("\(id) still waits for background transfers") }
            if removalsWaiting.contains(id) { wrong.append("the removal of \(id) never returned") }
            let isDownloaded = if case .downloaded = state { true } else { false }
            if files.contains(id) != isDownloaded {
                wrong.append("\(id) is \(state) with its file \(files.contains(id) ? "on disk" : "absent")")
            }
            switch (words[id], state) {
            case (nil, _): break
            case (.download?, .downloaded): break
            case (.download?, .notDownloaded) where shaken.contains(id): break  // its file went missing
            case (.download?, .paused), (.download?, .failed):
                if !shaken.contains(id) { wrong.append("the learner's Download of \(id) ended \(state)") }
            case (.pause?, .downloading), (.cancel?, .downloading), (.cancel?, .paused), (.cancel?, .failed):
                wrong.append("the learner's \(words[id].map { "\($0)" } ?? "") of \(id) ended \(state)")
            case (.pause?, _), (.cancel?, _): break
            case (.delete?, _):
                if machine.items[id] != nil { wrong.append("\(id) deleted but still known as \(state)") }
            case (.discard?, .downloaded), (.discard?, .notDownloaded): break
            default:
                wrong.append("the learner's \(words[id].map { "\($0)" } ?? "") of \(id) ended \(state)")
            }
        }
        return wrong
    }

    // MARK: The state file

    /// What is wrong with the latest save: it must read back as written, and a launch must load
    /// it to the same states, a download the kill interrupted paused.
    func saveViolations() -> [String] {
        var wrong: [String] = []
        do {
            let data = try JSONEncoder().encode(saved)
            let read = try JSONDecoder().decode([String: LibraryMachine.Record].self, from: data)
            if read != saved { wrong.append("the state file reads back as \(read), not \(saved)") }
        } catch {
            wrong.append("the state file does not encode: \(error)")
        }
        var loaded = LibraryMachine(hasBackground: machine.hasBackground)
        _ = loaded.load(saved, downloaded: [:], missingFiles: [], badFileNames: [:])
        for (id, record) in saved {
            var expected: LibraryMachine.Record? = record
            switch record.state {
            case _ where record.isBeingRemoved == true:
                expected = nil  // a removal a kill interrupted: finished at the launch
            case .downloading where record.background == nil:
                expected?.state = .paused
                expected?.background = nil
            default:
                break
            }
            if loaded.records[id] != expected {
                wrong.append("\(id) saved as \(record) loads as \(String(describing: loaded.records[id]))")
            }
        }
        if !Set(loaded.records.keys).isSubset(of: saved.keys) { wrong.append("a load adds items") }
        return wrong
    }
}
