import Downloads
import Foundation
import TestSupport
import Testing

@testable import OfflineLessons

/// The background transfers' machine, checked in every order of events (``HandoverWorld``):
/// hand-overs and withdrawals, submissions returning late, tasks ending every way they can,
/// events delivered in any order, the wake-up's handler given before or after its events end,
/// and a kill or a force-quit between any two effects.
@Suite("The background hand-over's state machine, in every order of events")
struct HandoverMachineTests {
    static func explore(_ start: HandoverWorld, depth: Int, statuses: [Int]) -> (violations: [String], visited: Int) {
        var visited: Set<HandoverWorld> = [start]
        var frontier: [(world: HandoverWorld, trace: [HandoverWorld.Step])] = [(start, [])]
        var violations: [String] = []
        for _ in 0..<depth {
            var next: [(world: HandoverWorld, trace: [HandoverWorld.Step])] = []
            for (world, trace) in frontier {
                let steps = world.steps(statuses: statuses)
                let kills: [HandoverWorld.Step] = [
                    .kill(during: nil, marks: 0, forceQuit: false), .kill(during: nil, marks: 0, forceQuit: true),
                ]
                for step in steps + kills + steps.flatMap(world.kills) {
                    var after = world
                    after.take(step)
                    guard visited.insert(after).inserted else { continue }
                    let path = trace + [step]
                    let wrong = after.violations + after.settled()
                    if !wrong.isEmpty {
                        violations.append("\(wrong) after \(path.map(\.description).joined(separator: " → "))")
                        if violations.count >= 5 { return (violations, visited.count) }
                        continue
                    }
                    next.append((after, path))
                }
            }
            frontier = next
        }
        return (violations, visited.count)
    }

    @Test(
        "one download, every order of events to depth 6 with a kill or force-quit between any two effects, resumed tasks answering 206 with the whole part or the rest (Apple documents neither): each body staged once, as the bytes it holds, no task submitted while the system fetches its part, each completion handler called exactly once after the events, every hand-over settles and says so"
    )
    func exhaustive() {
        let (violations, visited) = Self.explore(HandoverWorld(keys: ["a"]), depth: 6, statuses: [200, 503])
        #expect(violations.isEmpty, "\(violations.joined(separator: "\n"))")
        #expect(visited > 50_000, "\(visited) worlds")
    }

    @Test(
        "two downloads, every order of events to depth 5 with a kill or force-quit between any two effects: the same rules hold across downloads"
    )
    func exhaustiveTwoDownloads() {
        let (violations, visited) = Self.explore(HandoverWorld(keys: ["a", "b"]), depth: 5, statuses: [200, 503])
        #expect(violations.isEmpty, "\(violations.joined(separator: "\n"))")
        #expect(visited > 10_000, "\(visited) worlds")
    }

    @Test(
        "seeded: two downloads, random walks of 80 steps through every event, withdrawal and kill: the same rules hold at every step and at the end",
        arguments: [0x4A4D_0001, 0x4A4D_0002, 0x4A4D_0003] as [UInt64]
    )
    func seeded(seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        var violations: [String] = []
        for walk in 0..<200 {
            var world = HandoverWorld(keys: ["a", "b"])
            var trace: [HandoverWorld.Step] = []
            for _ in 0..<80 {
                let steps = world.steps(statuses: [200, 206, 503, 404])
                var choices = steps + [.kill(during: nil, marks: 0, forceQuit: walk % 2 == 0)]
                if Int.random(in: 0..<3, using: &generator) == 0 { choices += steps.flatMap(world.kills) }
                let step = choices[Int.random(in: 0..<choices.count, using: &generator)]
                world.take(step)
                trace.append(step)
                if !world.violations.isEmpty { break }
            }
            let wrong = world.violations + world.settled()
            if !wrong.isEmpty {
                violations.append("walk \(walk): \(wrong) after \(trace.map(\.description).joined(separator: " → "))")
            }
            if violations.count >= 3 { break }
        }
        #expect(violations.isEmpty, "seed \(seed): \(violations.joined(separator: "\n"))")
    }

    @Test("the checker catches a broken rule: a body delivered twice is staged twice")
    func checkerCatches() throws {
        var world = HandoverWorld(keys: ["a"])
        world.take(.handOver("a"))
        let submission = try #require(world.submissions.first)
        world.take(.submitReturns(submission.number))
        let label = try #require(submission.labels.first)
        let task = HandoverWorld.TaskKey(label: label, serial: 1)
        world.take(.end(task, .response(status: 200)))
        world.take(.deliver(task))
        #expect(world.violations.isEmpty)
        #expect(world.stagedCount[label] == 1)
        // The same body again, as if the journal had not dropped its request.
        var broken = world
        broken.machine.load(broken.saved)
        var replay = HandoverMachine<Int>(maximumAttempts: 2)
        replay.load(
            BackgroundTransfers.Journal(
                handovers: [
                    BackgroundTransfers.Handover(
                        key: "a", generation: 1, destination: HandoverWorld.destination(of: "a"),
                        requests: [
                            BackgroundTransfers.Handed(
                                label: label, url: URL(fileURLWithPath: "/cdn/a/0.ts"), range: nil, expectedBytes: 10,
                                attempts: 1, state: .submitted)
                        ])
                ], nextGeneration: 2))
        broken.machine = replay
        broken.tasks[task] = .ended(.response(status: 200))
        broken.landed[HandoverWorld.landing(of: task).path] = HandoverWorld.Landed(task: task, status: 200)
        broken.take(.deliver(task))
        #expect(broken.violations.contains("\(label) staged twice"))
    }
}

/// What the model check found, each pinned.
extension HandoverMachineTests {
    /// A machine with one hand-over of "a" (two whole-file requests) and the labels it submits.
    static func handedOver() throws -> (HandoverMachine<Int>, [String]) {
        var machine = HandoverMachine<Int>(maximumAttempts: 3)
        let requests = (0..<2).map { index in
            BackgroundTransferRequest(
                url: URL(fileURLWithPath: "/cdn/a/\(index).ts"), byteRange: nil,
                label: BackgroundTaskLabel(download: "a", parts: [index], generation: 1), partRanges: [nil],
                expectedBodyBytes: 10)
        }
        _ = try machine.handOver(
            "a", destination: HandoverWorld.destination(of: "a"), requests: requests, network: .any, available: nil,
            reserve: 0, generation: 1)
        return (machine, machine.tasksToSubmit(of: "a").map(\.label))
    }

    @Test(
        "a first submission returning after its task failed and was submitted again marks the request and cancels nothing; the retry's own return cancels nothing either (found by the model check)"
    )
    func lateSubmissionReturn() throws {
        var (machine, labels) = try Self.handedOver()
        let retried = machine.handle(
            .finished(
                label: labels[0], status: 503, contentRange: nil, headers: [:],
                file: URL(fileURLWithPath: "/landing/0"), bodyLength: 4))
        #expect(retried.contains { if case .submit = $0 { true } else { false } })
        #expect(
            !machine.handle(.submitted(key: "a", labels: labels)).contains {
                if case .cancel = $0 { true } else { false }
            })
        #expect(
            !machine.handle(.submitted(key: "a", labels: [labels[0]])).contains {
                if case .cancel = $0 { true } else { false }
            })
        #expect(machine.journal.handovers.first?.requests.allSatisfy { $0.state == .submitted } == true)
    }

    @Test(
        "a force-quit's event for a request this process submitted again (its first submission unmarked at a kill) is an older task's: dropped, not a third task"
    )
    func forceQuitOfAnOlderTask() throws {
        var (machine, labels) = try Self.handedOver()
        // A kill before the submission was saved: the launch submits both again.
        var relaunched = HandoverMachine<Int>(maximumAttempts: 3)
        relaunched.load(machine.journal)
        machine = relaunched
        let resubmitted = machine.handle(.resubmit(running: []))
        #expect(resubmitted.contains { if case .submit(_, let due) = $0 { due.count == 2 } else { false } })
        _ = machine.handle(.submitted(key: "a", labels: labels))
        let stale = machine.handle(.failed(label: labels[0], .forceQuit, resumeData: Data("old".utf8)))
        #expect(!stale.contains { if case .submit = $0 { true } else { false } })
        #expect(machine.journal.handovers.first?.requests.first?.state == .submitted)
    }

    @Test("an event of a request given up (another task of its label outlived a kill) stages nothing")
    func givenUpRequestStagesNothing() throws {
        var (machine, labels) = try Self.handedOver()
        _ = machine.handle(.submitted(key: "a", labels: labels))
        _ = machine.handle(
            .finished(
                label: labels[0], status: 404, contentRange: nil, headers: [:],
                file: URL(fileURLWithPath: "/landing/0"), bodyLength: 4))
        #expect(machine.journal.handovers.first?.requests.first?.failure == .notFound)
        let late = machine.handle(
            .finished(
                label: labels[0], status: 200, contentRange: nil, headers: [:],
                file: URL(fileURLWithPath: "/landing/0b"), bodyLength: 10))
        #expect(!late.contains { if case .stage = $0 { true } else { false } })
        #expect(late.contains { if case .removeLanded = $0 { true } else { false } })
    }
}
