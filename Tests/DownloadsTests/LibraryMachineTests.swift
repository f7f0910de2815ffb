import Downloads
import Foundation
import TestSupport
import Testing

@testable import OfflineLessons

/// The library's state machine, checked in every order of events (``LibraryWorld``): the
/// learner's calls, the app leaving and coming back, jobs ending every way they can, hand-overs
/// submitted and settling, and a kill with a relaunch between any two actions.
@Suite("The offline library's state machine, in every order of events")
struct LibraryMachineTests {
    /// Explores every order of steps from `start` to `depth`, the kills included, visiting each
    /// world once, and returns what broke a rule (with the steps that led there) and how many
    /// worlds were visited.
    ///
    /// At every world: at most one job per item and none started against the learner's word
    /// (checked as actions are performed), the last save reads back and loads to the same
    /// states, and left to itself the world settles with the learner's last word in effect.
    static func explore(
        _ start: LibraryWorld, depth: Int, submissionOutcomes: [LibraryMachine.Submitted]
    ) -> (violations: [String], visited: Int) {
        var visited: Set<LibraryWorld> = [start]
        var frontier: [(world: LibraryWorld, trace: [LibraryWorld.Step])] = [(start, [])]
        var checkedSaves: Set<[String: LibraryMachine.Record]> = []
        var violations: [String] = []
        for _ in 0..<depth {
            var next: [(world: LibraryWorld, trace: [LibraryWorld.Step])] = []
            for (world, trace) in frontier {
                let steps = world.steps(learnerEvents: true, submissionOutcomes: submissionOutcomes)
                for step in steps + [.kill(during: nil, performed: 0)] + steps.flatMap(world.kills) {
                    var after = world
                    after.take(step)
                    guard visited.insert(after).inserted else { continue }
                    let path = trace + [step]
                    var wrong = after.violations + after.settled()
                    if checkedSaves.insert(after.saved).inserted { wrong += after.saveViolations() }
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
        "two items, every order of events to depth 8 with a kill between any two actions: one job per item, the learner's last word wins, every save reloads, every item settles"
    )
    func exhaustive() {
        let start = LibraryWorld(ids: ["a", "b"])
        let (violations, visited) = Self.explore(start, depth: 8, submissionOutcomes: [.handedOver, .nothingLeft])
        #expect(violations.isEmpty, "\(violations.joined(separator: "\n"))")
        #expect(visited > 20_000)
    }

    @Test(
        "one item, every order of events to depth 10 with every way a submission ends and hand-over always",
        arguments: [false, true]
    )
    func exhaustiveOneItem(handsOverAlways: Bool) {
        let start = LibraryWorld(ids: ["a"], handsOverAlways: handsOverAlways)
        let (violations, visited) = Self.explore(
            start, depth: 10,
            submissionOutcomes: [.handedOver, .nothingLeft, .unknownRemainder, .refused(.failed(LibraryWorld.failure))])
        #expect(violations.isEmpty, "\(violations.joined(separator: "\n"))")
        #expect(visited > 300)
    }

    @Test(
        "seeded: three items, random walks of 60 steps through every event and kill, discards included: the same rules hold at every step and at the end",
        arguments: [0x5EED_0001, 0x5EED_0002, 0x5EED_0003, 0x5EED_0004] as [UInt64]
    )
    func seeded(seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        var violations: [String] = []
        for walk in 0..<150 {
            var world = LibraryWorld(ids: ["a", "b", "c"], handsOverAlways: walk % 3 == 0)
            var trace: [LibraryWorld.Step] = []
            for _ in 0..<60 {
                let steps = world.steps(
                    learnerEvents: true, discards: true,
                    submissionOutcomes: [.handedOver, .nothingLeft, .unknownRemainder, .refused(.paused)])
                var choices = steps + [.kill(during: nil, performed: 0)]
                if Int.random(in: 0..<4, using: &generator) == 0 { choices += steps.flatMap(world.kills) }
                let step = choices[Int.random(in: 0..<choices.count, using: &generator)]
                world.take(step)
                trace.append(step)
                let wrong = world.violations + world.saveViolations()
                if !wrong.isEmpty {
                    violations.append(
                        "walk \(walk): \(wrong) after \(trace.map(\.description).joined(separator: " → "))")
                    break
                }
            }
            let unsettled = world.settled()
            if !unsettled.isEmpty {
                violations.append(
                    "walk \(walk): \(unsettled) after \(trace.map(\.description).joined(separator: " → "))")
            }
            if violations.count >= 3 { break }
        }
        #expect(violations.isEmpty, "seed \(seed): \(violations.joined(separator: "\n"))")
    }

    @Test("the checker catches a broken rule: a job started beside another, a cancel that a save forgot")
    func checkerCatches() {
        let download = LibraryWorld.Step.learner(.download("a", remote: LibraryWorld.remote(of: "a"), network: nil))
        // A job the machine does not know of is running: the machine's start is a second one.
        var doubled = LibraryWorld(ids: ["a"])
        doubled.jobs["a"] = LibraryWorld.Job(generation: 99, reportsPlan: false)
        doubled.take(download)
        #expect(doubled.violations.contains("a second job of a started"))
        // The learner's cancel, and a state file that forgot it: the relaunch shows it paused.
        var forgetful = LibraryWorld(ids: ["a"])
        forgetful.take(download)
        forgetful.take(.learner(.cancel("a")))
        #expect(forgetful.saved["a"]?.state == .cancelled, "the cancel is saved before the run stops")
        forgetful.saved["a"]?.state = .downloading(fraction: 0)
        forgetful.take(.kill(during: nil, performed: 0))
        #expect(forgetful.settled().contains { $0.contains("cancel of a ended paused") })
    }
}

extension LibraryMachineTests {
    @Test(
        "a record not downloaded (its file went missing) loads as it was, saved or not; only one saved as being removed is finished and forgotten (found by the offline-library fuzz target)"
    )
    func notDownloadedIsNotARemoval() {
        let remote = LibraryWorld.remote(of: "a")
        let records: [String: LibraryMachine.Record] = [
            "gone": LibraryMachine.Record(remoteURL: remote, state: .notDownloaded),
            "removing": LibraryMachine.Record(remoteURL: remote, state: .notDownloaded, isBeingRemoved: true),
        ]
        var machine = LibraryMachine(hasBackground: false)
        let actions = machine.load(records, downloaded: [:], missingFiles: [], badFileNames: [:])
        #expect(machine.records.keys.sorted() == ["gone"])
        #expect(actions.contains(.removeFiles("removing", remote: remote)))
        #expect(!actions.contains(.removeFiles("gone", remote: remote)))
        var again = LibraryMachine(hasBackground: false)
        _ = again.load(machine.savedRecords, downloaded: [:], missingFiles: [], badFileNames: [:])
        #expect(again.records == machine.records)
    }
}
