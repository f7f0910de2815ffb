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
        "two items, every order of events to depth 8 with a kill between any two actions: one job per item, the learner's last word wins, every save reloads, no generation but the item's own is withdrawn, every item settles"
    )
    func exhaustive() {
        let start = LibraryWorld(ids: ["a", "b"])
        let (violations, visited) = Self.explore(
            start, depth: 8, submissionOutcomes: [.handedOver(generation: 0), .nothingLeft])
        #expect(violations.isEmpty, "\(violations.joined(separator: "\n"))")
        #expect(visited > 20_000)
    }

    @Test(
        "one item, every order of events to depth 10 with every way a submission ends, with hand-over always, and with the network going between Wi-Fi and cellular under a Wi-Fi-only rule",
        arguments: [(false, false), (true, false), (false, true)]
    )
    func exhaustiveOneItem(handsOverAlways: Bool, networks: Bool) {
        let start = LibraryWorld(ids: ["a"], handsOverAlways: handsOverAlways, networks: networks)
        let (violations, visited) = Self.explore(
            start, depth: 10,
            submissionOutcomes: [
                .handedOver(generation: 0), .nothingLeft, .unknownRemainder, .refused(.failed(LibraryWorld.failure)),
            ])
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
            var world = LibraryWorld(ids: ["a", "b", "c"], handsOverAlways: walk % 3 == 0, networks: walk % 2 == 0)
            var trace: [LibraryWorld.Step] = []
            for _ in 0..<60 {
                let steps = world.steps(
                    learnerEvents: true, discards: true,
                    submissionOutcomes: [
                        .handedOver(generation: 0), .nothingLeft, .unknownRemainder, .refused(.paused),
                    ])
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

extension LibraryMachineTests {
    @Test(
        "a record's background mark is saved under the keys of earlier versions, and read back from files of today, of the version before generations, and of none",
        arguments: [
            (#"{"inBackground":true,"handOver":5}"#, LibraryMachine.BackgroundMark(generation: 5)),
            (#"{"inBackground":true}"#, LibraryMachine.BackgroundMark(generation: nil)),
            (#"{}"#, nil),
            (#"{"inBackground":false,"handOver":5}"#, nil),
        ] as [(String, LibraryMachine.BackgroundMark?)])
    func backgroundMarkReadsEveryVersion(keys: String, mark: LibraryMachine.BackgroundMark?) throws {
        let fields = keys.dropFirst().dropLast()
        let json =
            #"{"remoteURL":"https://media.example/a.m3u8","state":{"downloading":{"fraction":0.5}}"#
            + (fields.isEmpty ? "" : ",\(fields)") + "}"
        let record = try JSONDecoder().decode(LibraryMachine.Record.self, from: Data(json.utf8))
        #expect(record.background == mark)
        let again = try JSONDecoder().decode(LibraryMachine.Record.self, from: JSONEncoder().encode(record))
        #expect(again == record)
        let written = try #require(
            try JSONSerialization.jsonObject(with: JSONEncoder().encode(record)) as? [String: Any])
        #expect((written["inBackground"] as? Bool) == (mark == nil ? nil : true))
        #expect((written["handOver"] as? NSNumber)?.uint64Value == mark?.generation)
    }
}

/// Hand-overs named by their generations: no event or action of one is taken for another's.
extension LibraryMachineTests {
    /// A machine with item "a" handed over as hand-over `generation`.
    static func handedOver(generation: UInt64) throws -> LibraryMachine {
        var machine = LibraryMachine(hasBackground: true)
        _ = machine.handle(.download("a", remote: LibraryWorld.remote(of: "a"), network: nil))
        let run = try #require(machine.run(of: "a"))
        #expect(machine.handle(.handOver(["a"])) == [.pauseRun("a", generation: run.generation)])
        _ = machine.handle(.ended("a", generation: run.generation, .paused))
        _ = machine.handle(.submitted("a", generation: run.generation, .handedOver(generation: generation)))
        _ = machine.handle(.backgroundWorkEnded("a"))  // the submission's end, as the driver says it
        #expect(machine.backgroundWork.isEmpty)
        #expect(machine.handOver(of: "a") == LibraryMachine.HandedOver(generation: generation))
        #expect(machine.savedRecords["a"]?.background?.generation == generation, "the generation is saved")
        return machine
    }

    @Test("a settled report of an earlier hand-over does not start the run of the later one; its own does")
    func staleSettledReport() throws {
        var machine = try Self.handedOver(generation: 7)
        #expect(machine.handle(.tasksEnded("a", generation: 6)).isEmpty)
        #expect(machine.isHandedOver("a"))
        #expect(
            machine.handle(.tasksEnded("a", generation: 7)).contains { if case .start = $0 { true } else { false } })
    }

    @Test("a take-back and a pause withdraw the item's own hand-over by its generation")
    func withdrawalsNameTheirGeneration() throws {
        var taken = try Self.handedOver(generation: 7)
        #expect(taken.handle(.takeBack).first == .withdraw("a", generation: 7))
        var paused = try Self.handedOver(generation: 7)
        #expect(paused.handle(.pause("a")).contains(.withdraw("a", generation: 7)))
        #expect(paused.savedRecords["a"]?.background == nil)
    }

    @Test(
        "at a launch: a hand-over of another generation than the item's is given up by its own, and the item runs again; one the transfers do not know runs again; one of a deleted item is finished"
    )
    func launchReconciles() throws {
        var other = try Self.handedOver(generation: 7)
        let actions = other.handle(.launched(handOvers: ["a": 6, "gone": 3]))
        #expect(actions.contains(.finishHandOver("gone", generation: 3)))
        #expect(actions.contains(.withdraw("a", generation: 6)))
        #expect(!actions.contains(.withdraw("a", generation: 7)))
        #expect(other.run(of: "a")?.readsStaged == true)
        var unknown = try Self.handedOver(generation: 7)
        #expect(unknown.handle(.launched(handOvers: [:])).contains { if case .start = $0 { true } else { false } })
        var known = try Self.handedOver(generation: 7)
        #expect(known.handle(.launched(handOvers: ["a": 7])).isEmpty)
        #expect(known.isHandedOver("a"))
    }

    /// Where a hand-over is when the app comes back.
    enum TakeBackMoment: String, CaseIterable, CustomTestStringConvertible {
        /// Its run is pausing for it.
        case pausing
        /// Its parts are being submitted.
        case submitting
        var testDescription: String { rawValue }
    }

    @Test(
        "the app back while a hand-over is being made (its run pausing, its parts submitting): the take-back is kept, what was submitted is withdrawn by its generation, and the download goes on in the foreground (found by review)",
        arguments: TakeBackMoment.allCases)
    func takeBackWhileHandingOver(moment: TakeBackMoment) throws {
        var machine = LibraryMachine(hasBackground: true)
        _ = machine.handle(.download("a", remote: LibraryWorld.remote(of: "a"), network: nil))
        let run = try #require(machine.run(of: "a"))
        _ = machine.handle(.handOver(["a"]))
        var actions: [LibraryMachine.Action]
        switch moment {
        case .pausing:
            #expect(machine.handle(.takeBack).isEmpty)
            actions = machine.handle(.ended("a", generation: run.generation, .paused))
            #expect(!actions.contains { if case .submit = $0 { true } else { false } })
        case .submitting:
            _ = machine.handle(.ended("a", generation: run.generation, .paused))
            #expect(machine.handle(.takeBack).isEmpty)
            actions = machine.handle(.submitted("a", generation: run.generation, .handedOver(generation: 9)))
            #expect(actions.contains(.withdraw("a", generation: 9)))
            // The run starts once the submission and the withdrawal have ended, in that order.
            #expect(!actions.contains { if case .start = $0 { true } else { false } })
            #expect(machine.handle(.backgroundWorkEnded("a")).isEmpty)
            actions += machine.handle(.backgroundWorkEnded("a"))
        }
        #expect(actions.contains { if case .start = $0 { true } else { false } })
        #expect(!actions.contains(.announce("a", .paused)))
        #expect(!machine.isHandedOver("a"))
        let next = try #require(machine.run(of: "a"))
        #expect(next.generation != run.generation)
        #expect(next.readsStaged == (moment == .submitting))
        #expect(machine.state(of: "a") == .downloading(fraction: 0))
    }

    @Test(
        "the app back, then gone again, while a hand-over is being made: the hand-over stands",
        arguments: TakeBackMoment.allCases)
    func handOverAgainAfterTakeBack(moment: TakeBackMoment) throws {
        var machine = LibraryMachine(hasBackground: true)
        _ = machine.handle(.download("a", remote: LibraryWorld.remote(of: "a"), network: nil))
        let run = try #require(machine.run(of: "a"))
        _ = machine.handle(.handOver(["a"]))
        if moment == .submitting { _ = machine.handle(.ended("a", generation: run.generation, .paused)) }
        _ = machine.handle(.takeBack)
        #expect(machine.runsToHandOver == ["a"])
        #expect(machine.handle(.handOver(["a"])).isEmpty, "the pause asked first is under way")
        if moment == .pausing {
            #expect(
                machine.handle(.ended("a", generation: run.generation, .paused)).contains {
                    if case .submit = $0 { true } else { false }
                })
        }
        _ = machine.handle(.submitted("a", generation: run.generation, .handedOver(generation: 4)))
        #expect(machine.handOver(of: "a") == LibraryMachine.HandedOver(generation: 4))
    }

    @Test(
        "a run's start is held until the item's background work (a take-back's withdrawal) has ended; a stop asked meanwhile ends it at once, and it never starts"
    )
    func stopWhileTheStartIsHeld() throws {
        var machine = try Self.handedOver(generation: 7)
        let takeBack = machine.handle(.takeBack)
        #expect(takeBack.contains(.withdraw("a", generation: 7)))
        #expect(!takeBack.contains { if case .start = $0 { true } else { false } })
        let run = try #require(machine.run(of: "a"))
        #expect(machine.state(of: "a") == .downloading(fraction: 0))
        var started = machine
        #expect(
            started.handle(.backgroundWorkEnded("a")) == [
                .start("a", generation: run.generation, remote: LibraryWorld.remote(of: "a"), reportsPlan: false)
            ])
        let paused = machine.handle(.pause("a"))
        #expect(paused.contains(.announce("a", .paused)))
        #expect(machine.state(of: "a") == .paused)
        #expect(machine.run(of: "a") == nil)
        #expect(machine.handle(.backgroundWorkEnded("a")).isEmpty, "started after the pause")
        var cancelled = try Self.handedOver(generation: 7)
        _ = cancelled.handle(.takeBack)
        #expect(cancelled.handle(.cancel("a")).contains(.announce("a", .cancelled)))
        #expect(cancelled.handle(.backgroundWorkEnded("a")).isEmpty, "started after the cancel")
    }

    @Test(
        "a delete while a run's start is held behind the item's background work ends the run at once: the delete does not wait for the whole download, and the run never starts (found by review, then by the model check)"
    )
    func deleteWhileTheStartIsHeld() throws {
        var machine = try Self.handedOver(generation: 7)
        _ = machine.handle(.takeBack)
        #expect(machine.run(of: "a") != nil)
        let removal = machine.handle(.remove("a", keepsDownloaded: false))
        #expect(removal.contains(.removed("a")))
        #expect(machine.items["a"] == nil)
        #expect(machine.handle(.backgroundWorkEnded("a")).isEmpty)
        #expect(machine.heldStarts.isEmpty)
    }

    @Test(
        "wait reasons come from the machine: an item handed over under a Wi-Fi-only rule waits on cellular, and no longer once back on Wi-Fi or taken back"
    )
    func waitReasonsFromTheMachine() throws {
        var machine = LibraryMachine(hasBackground: true, waitOptions: LibraryWorld.wifiOnly)
        #expect(machine.handle(.network(.cellular)).isEmpty)
        _ = machine.handle(.download("a", remote: LibraryWorld.remote(of: "a"), network: nil))
        let run = try #require(machine.run(of: "a"))
        _ = machine.handle(.handOver(["a"]))
        _ = machine.handle(.ended("a", generation: run.generation, .paused))
        let handedOver = machine.handle(.submitted("a", generation: run.generation, .handedOver(generation: 1)))
        #expect(handedOver.last == .announceWait("a", .network(required: .notExpensive)))
        #expect(machine.handle(.network(.unmetered)) == [.announceWait("a", nil)])
        #expect(machine.handle(.network(.cellular)) == [.announceWait("a", .network(required: .notExpensive))])
        #expect(machine.handle(.takeBack).last == .announceWait("a", nil))
        #expect(machine.waitReason(of: "a") == nil)
    }
}
