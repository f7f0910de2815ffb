import Downloads
import Foundation

@testable import OfflineLessons

/// The background transfers' machine inside a model of the system around it: the session's
/// tasks (which outlive the process), their events waiting to be delivered, the files they
/// landed, the staged bodies and the journal on disk, the submissions being awaited, and the
/// app's wake-ups with the completion handlers the system gives.
///
/// A kill loses what only the process held (the machine's withdrawn labels and wake-up, the
/// submissions awaited, the handlers given), keeps the rest, and launches again as
/// ``BackgroundTransfers`` does: the journal read and reconciled with what was staged, then a
/// resubmission of what is due. A force-quit also stops every running task, whose events then
/// say so.
struct HandoverWorld: Hashable {
    /// What a task of the system is doing.
    enum TaskState: Hashable {
        case running
        /// Ended; its event is still to be delivered.
        case ended(Outcome)
    }

    /// One task of the system: its label, and which of the tasks made with that label it is
    /// (a request submitted again has a task of the same label).
    struct TaskKey: Hashable, Comparable, CustomStringConvertible {
        var label: String
        var serial: Int

        static func < (lhs: TaskKey, rhs: TaskKey) -> Bool {
            (lhs.label, lhs.serial) < (rhs.label, rhs.serial)
        }

        var description: String { "\(label.suffix(8))#\(serial)" }
    }

    /// How a task ended.
    enum Outcome: Hashable {
        /// With a response of `status` (its body landed).
        case response(status: Int)
        /// A task resumed from resume data, with a `206` whose `Content-Range` is the rest of
        /// the part (`bytes 4-9/10`): its body the whole part, as the system may deliver it, or
        /// only the rest. Apple does not document which.
        case resumed(wholePart: Bool)
        /// With a failure, and resume data.
        case failure(BackgroundTransferFailure)
    }

    /// One thing that can happen next.
    enum Step: Hashable, CustomStringConvertible {
        /// The library hands the download `key` over.
        case handOver(String)
        /// The library takes it back (or, removing what it staged, finishes it).
        case withdraw(String, removingStaged: Bool)
        /// The session's `submit` returns.
        case submitReturns(Int)
        /// A running task ends.
        case end(TaskKey, Outcome)
        /// A task's event is delivered.
        case deliver(TaskKey)
        /// The system delivers the end of the wake-up's events.
        case eventsDelivered
        /// The system gives the app its completion handler.
        case giveHandler
        /// The process is killed (force-quit by the learner, or ended by the system), after
        /// `marks` effects of `step` that leave a mark, then launched again.
        indirect case kill(during: Step?, marks: Int, forceQuit: Bool)

        var description: String {
            switch self {
            case .handOver(let key): "handOver(\(key))"
            case .withdraw(let key, let removing): removing ? "finish(\(key))" : "withdraw(\(key))"
            case .submitReturns(let number): "submitReturns(\(number))"
            case .end(let task, let outcome): "end(\(task), \(outcome))"
            case .deliver(let task): "deliver(\(task))"
            case .eventsDelivered: "eventsDelivered"
            case .giveHandler: "giveHandler"
            case .kill(nil, _, let forceQuit): forceQuit ? "force-quit" : "kill"
            case .kill(let step?, let marks, let forceQuit):
                "\(forceQuit ? "force-quit" : "kill") after \(marks) marks of \(step)"
            }
        }
    }

    /// A submission being awaited: its labels, and the effects after it.
    struct Submission: Hashable {
        var number: Int
        var key: String
        var labels: [String]
        var rest: [HandoverMachine<Int>.Effect]
    }

    let keys: [String]
    var machine = HandoverMachine<Int>(maximumAttempts: 2)
    /// The journal on disk.
    var saved = BackgroundTransfers.Journal()
    var tasks: [TaskKey: TaskState] = [:]
    /// How many tasks were made with each label.
    var serials: [String: Int] = [:]
    /// The tasks' landed files still there, by path, with their label and status: one whose
    /// event a process received and died before recording is delivered again at the next
    /// launch, as ``BackgroundLanding`` leftovers are.
    var landed: [String: Landed] = [:]

    struct Landed: Hashable {
        var task: TaskKey
        var status: Int
        /// For a resumed task's `206`: whether the body is the whole part.
        var wholePart: Bool?
    }

    /// The bytes of its part that each label's staged body must say it holds: `nil` for the
    /// whole part, the rest for a resumed task that brought only the rest.
    var expectedStagedRange: [String: ByteRange?] = [:]
    /// How many times each label's body was staged.
    var stagedCount: [String: Int] = [:]
    var submissions: [Submission] = []
    var nextSubmission = 0
    /// The hand-overs made, by key (a withdrawal forgets it).
    var handedOver: [String: UInt64] = [:]
    /// The settled announcements made in this process.
    var settledAnnounced: Set<BackgroundTransfers.Settled> = []
    /// This process's wake-up: whether the system launched it for events, gave its handler,
    /// and delivered the end of the events.
    var isWakeUp = false
    var handlerGiven = false
    var eventsEnded = false
    var nextHandler = 0
    /// The handlers given in this process and the times each was called.
    var handlerCalls: [Int: Int] = [:]
    /// The requests a launch found due for a submission though the system had their tasks, with
    /// their events still to come (a kill between their submission and its save): the machine
    /// cannot see those, so submitting them again, and once more for a failure their old task
    /// reports, is a kill's cost in bytes, not a rule broken (each body is still staged once).
    var unmarkedAtLaunch: Set<String> = []
    var violations: [String] = []

    init(keys: [String]) {
        self.keys = keys
    }

    static func destination(of key: String) -> URL { URL(fileURLWithPath: "/lessons/\(key).mp4") }

    /// Where `task` lands its body.
    static func landing(of task: TaskKey) -> URL {
        URL(fileURLWithPath: "/landing/" + task.label.replacingOccurrences(of: "/", with: "_") + "#\(task.serial)")
    }

    /// Whether the system has a task of `label`, running or with its event to come.
    func hasTask(_ label: String) -> Bool {
        tasks.keys.contains { $0.label == label }
    }

    /// Whether the system fetches (or fetched) `label`'s body in a task: running, or ended with
    /// a response whose event is still to come. A task stopped or failed fetches no more.
    func isFetching(_ label: String) -> Bool {
        tasks.contains { task, state in
            guard task.label == label else { return false }
            switch state {
            case .running: return true
            case .ended(.response(let status)): return (200..<300).contains(status)
            case .ended(.resumed): return true
            case .ended(.failure): return false
            }
        }
    }

    // MARK: What can happen

    func steps(statuses: [Int]) -> [Step] {
        var steps: [Step] = []
        for key in keys {
            if handedOver[key] == nil { steps.append(.handOver(key)) }
            if handedOver[key] != nil {
                steps.append(.withdraw(key, removingStaged: false))
                steps.append(.withdraw(key, removingStaged: true))
            }
        }
        steps += submissions.map { .submitReturns($0.number) }
        for (task, state) in tasks.sorted(by: { $0.key < $1.key }) {
            switch state {
            case .running:
                steps += statuses.map { .end(task, .response(status: $0)) }
                steps.append(.end(task, .failure(.network(code: URLError.networkConnectionLost.rawValue))))
                // A task submitted again goes on from its resume data.
                if task.serial > 1 { steps += [true, false].map { .end(task, .resumed(wholePart: $0)) } }
            case .ended:
                steps.append(.deliver(task))
            }
        }
        if isWakeUp, !handlerGiven { steps.append(.giveHandler) }
        if isWakeUp, !eventsEnded, !tasks.values.contains(where: { $0 != .running }) { steps.append(.eventsDelivered) }
        return steps
    }

    /// The kills during `step`, after each of its effects that leaves a mark but the last.
    func kills(during step: Step) -> [Step] {
        var copy = self
        let marks = copy.take(step, budget: nil)
        return (0..<max(marks - 1, 0)).flatMap { performed in
            [false, true].map { Step.kill(during: step, marks: performed + 1, forceQuit: $0) }
        }
    }

    // MARK: Taking a step

    /// Takes `step`; with a `budget`, the process dies after that many effects that leave a
    /// mark. Returns how many it performed.
    @discardableResult
    mutating func take(_ step: Step, budget: Int? = nil) -> Int {
        var left = budget
        var marks = 0
        switch step {
        case .handOver(let key):
            let generation = machine.journal.nextGeneration ?? 1
            let requests = (0..<2).map { index in
                BackgroundTransferRequest(
                    url: URL(fileURLWithPath: "/cdn/\(key)/\(index).ts"), byteRange: nil,
                    label: BackgroundTaskLabel(download: key, parts: [index], generation: generation),
                    partRanges: [nil], expectedBodyBytes: 10)
            }
            do {
                let given = try machine.handOver(
                    key, destination: Self.destination(of: key), requests: requests, network: .any, available: nil,
                    reserve: 0, generation: generation)
                handedOver[key] = given
                perform([.save, .submit(key: key, machine.tasksToSubmit(of: key))], left: &left, marks: &marks)
            } catch {
                violations.append("hand-over of \(key) refused: \(error)")
            }
        case .withdraw(let key, let removingStaged):
            let generation = handedOver.removeValue(forKey: key)
            let running = Set(tasks.filter { $0.value == .running }.keys.map(\.label))
            perform(
                machine.handle(
                    .withdraw(key: key, generation: generation, running: running, removingStaged: removingStaged)),
                left: &left, marks: &marks)
        case .submitReturns(let number):
            guard let index = submissions.firstIndex(where: { $0.number == number }) else { break }
            let submission = submissions.remove(at: index)
            perform(
                machine.handle(.submitted(key: submission.key, labels: submission.labels)) + submission.rest,
                left: &left, marks: &marks)
        case .end(let task, let outcome):
            tasks[task] = .ended(outcome)
            switch outcome {
            case .response(let status): landed[Self.landing(of: task).path] = Landed(task: task, status: status)
            case .resumed(let whole):
                landed[Self.landing(of: task).path] = Landed(task: task, status: 206, wholePart: whole)
            case .failure: break
            }
        case .deliver(let task):
            guard case .ended(let outcome)? = tasks.removeValue(forKey: task) else { break }
            // Another event: the wake-up goes on, and its end comes again.
            eventsEnded = false
            let label = task.label
            switch outcome {
            case .response(let status):
                expectedStagedRange[label] = .some(nil)
                perform(
                    machine.handle(
                        .finished(
                            label: label, status: status, contentRange: nil, headers: [:],
                            file: Self.landing(of: task),
                            bodyLength: landed[Self.landing(of: task).path] != nil ? 10 : nil)),
                    left: &left, marks: &marks)
            case .resumed(let whole):
                let present = landed[Self.landing(of: task).path] != nil
                expectedStagedRange[label] = whole ? .some(nil) : ByteRange(length: 6, offset: 4)
                perform(
                    machine.handle(
                        .finished(
                            label: label, status: 206, contentRange: "bytes 4-9/10", headers: [:],
                            file: Self.landing(of: task), bodyLength: present ? (whole ? 10 : 6) : nil)),
                    left: &left, marks: &marks)
            case .failure(let failure):
                perform(
                    machine.handle(.failed(label: label, failure, resumeData: Data("resume".utf8))), left: &left,
                    marks: &marks)
            }
        case .eventsDelivered:
            eventsEnded = true
            perform(machine.handle(.eventsDelivered), left: &left, marks: &marks)
        case .giveHandler:
            handlerGiven = true
            nextHandler += 1
            handlerCalls[nextHandler] = 0
            perform(machine.handle(.handlerGiven(nextHandler)), left: &left, marks: &marks)
        case .kill(let during, let performed, let forceQuit):
            if let during { take(during, budget: performed) }
            relaunch(forceQuit: forceQuit)
        }
        return marks
    }

    private mutating func perform(_ effects: [HandoverMachine<Int>.Effect], left: inout Int?, marks: inout Int) {
        for (position, effect) in effects.enumerated() {
            if left == 0 { return }
            switch effect {
            case .save:
                saved = machine.journal
            case .submit(let key, let requests):
                let labels = requests.map(\.label)
                // Never while the system has its task, unless the journal could not know it did:
                // a kill during its submission, before it was saved as submitted, costs that
                // part's bytes again.
                for label in labels where isFetching(label) && !unmarkedAtLaunch.contains(label) {
                    violations.append("\(label) submitted while the system still fetches it")
                }
                for label in labels {
                    serials[label, default: 0] += 1
                    tasks[TaskKey(label: label, serial: serials[label, default: 0])] = .running
                }
                // The rest waits for the submission's return.
                nextSubmission += 1
                submissions.append(
                    Submission(
                        number: nextSubmission, key: key, labels: labels, rest: Array(effects[(position + 1)...])))
                marks += 1
                if let budget = left { left = budget - 1 }
                return
            case .cancel(let labels):
                for (task, state) in tasks where labels.contains(task.label) && state == .running {
                    tasks[task] = .ended(.failure(.cancelled))
                }
            case .stage(let label, _, _, let range, _, _):
                // Judged by what was asked and the length received, whatever the status.
                let expected = expectedStagedRange[label] ?? nil
                if range != expected {
                    violations.append(
                        "\(label) staged as \(String(describing: range)), not \(String(describing: expected))")
                }
                stagedCount[label, default: 0] += 1
                if stagedCount[label, default: 0] > 1 { violations.append("\(label) staged twice") }
                marks += 1
                if let budget = left { left = budget - 1 }
                if left == 0 { return }
                perform(machine.handle(.staged(label: label, succeeded: true)), left: &left, marks: &marks)
                continue
            case .removeLanded(let file):
                landed[file.path] = nil
            case .removeFailureRecord:
                break
            case .removeStaged:
                break
            case .settled(let settled):
                if !settledAnnounced.insert(settled).inserted {
                    violations.append("\(settled.key) announced settled twice")
                }
            case .callHandlers(let handlers):
                if !eventsEnded { violations.append("a completion handler called before the events ended") }
                for handler in handlers {
                    handlerCalls[handler, default: 0] += 1
                    if handlerCalls[handler, default: 0] > 1 { violations.append("handler \(handler) called twice") }
                }
            }
            switch effect {
            case .save, .cancel, .removeLanded, .removeStaged:
                marks += 1
                if let budget = left { left = budget - 1 }
            default:
                break
            }
        }
    }

    /// A launch after a kill, as ``BackgroundTransfers`` starts.
    private mutating func relaunch(forceQuit: Bool) {
        submissions = []
        for file in landed.values where tasks[file.task] == nil {
            tasks[file.task] = .ended(file.wholePart.map { .resumed(wholePart: $0) } ?? .response(status: file.status))
        }
        if forceQuit {
            for (task, state) in tasks where state == .running { tasks[task] = .ended(.failure(.forceQuit)) }
        }
        // The journal read, its requests whose bodies were staged (a kill before the save) done.
        var journal = saved
        for index in journal.handovers.indices {
            journal.handovers[index].requests.removeAll { stagedCount[$0.label, default: 0] > 0 }
        }
        machine = HandoverMachine<Int>(maximumAttempts: machine.maximumAttempts)
        machine.load(journal)
        handedOver = [:]
        for handover in journal.handovers { handedOver[handover.key] = handover.generation }
        settledAnnounced = Set(machine.settled)
        isWakeUp = tasks.values.contains { $0 != .running }
        handlerGiven = false
        eventsEnded = false
        handlerCalls = [:]
        var left: Int?
        var marks = 0
        let running = Set(tasks.filter { $0.value == .running }.keys.map(\.label))
        // Kept from earlier launches while their requests are listed: the old task's events may
        // come in any later process.
        let listed = Set(journal.handovers.flatMap(\.requests).map(\.label))
        unmarkedAtLaunch = unmarkedAtLaunch.intersection(listed).union(
            Set(journal.handovers.flatMap(\.requests).filter(\.needsSubmission).map(\.label)).filter(hasTask))
        perform(machine.handle(.resubmit(running: running)), left: &left, marks: &marks)
    }

    // MARK: Settling

    /// Lets the world run by itself: every submission returns, every task ends with a 200,
    /// every event is delivered, the wake-up ends with its handler given. Returns what is wrong
    /// then.
    func settled(bound: Int = 200) -> [String] {
        var world = self
        for _ in 0..<bound {
            guard let step = world.nextSettlingStep() else { return world.settleViolations() }
            world.take(step)
        }
        return ["did not settle in \(bound) steps"]
    }

    private func nextSettlingStep() -> Step? {
        if let submission = submissions.first { return .submitReturns(submission.number) }
        for (task, state) in tasks.sorted(by: { $0.key < $1.key }) {
            switch state {
            case .running: return .end(task, .response(status: 200))
            case .ended: return .deliver(task)
            }
        }
        if isWakeUp, !handlerGiven { return .giveHandler }
        if isWakeUp, !eventsEnded { return .eventsDelivered }
        return nil
    }

    private func settleViolations() -> [String] {
        var wrong = violations
        for handover in machine.journal.handovers {
            if !handover.isSettled { wrong.append("\(handover.key) never settled: \(handover.requests)") }
            let settled = BackgroundTransfers.Settled(key: handover.key, generation: handover.generation)
            if !settledAnnounced.contains(settled) { wrong.append("\(handover.key) settled unannounced") }
        }
        for (handler, calls) in handlerCalls where calls != 1 {
            wrong.append("handler \(handler) called \(calls) times")
        }
        if !landed.isEmpty { wrong.append("landed files left: \(landed.keys.sorted())") }
        // Every body the system brought for a hand-over still listed is staged, once.
        for (key, generation) in handedOver {
            guard let handover = machine.journal.handovers.first(where: { $0.key == key }) else { continue }
            if handover.generation != generation { wrong.append("\(key) is another hand-over") }
        }
        return wrong
    }
}
