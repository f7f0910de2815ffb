import BenchmarkHarness
import Downloads
import Foundation
import OfflineLessons
import Player
import Progress

/// The download queue's cases (issue #49): a long queue saved at every change, the library's
/// check of its files at launch, and a smart-download pass over a long course.
enum QueueBenchmarks {
    static func cases(quick: Bool) -> [Benchmark] {
        [
            transitions(lessons: quick ? 100 : 1_000),
            reconcile(lessons: quick ? 100 : 1_000),
            smartPass(lessons: quick ? 100 : 500),
            estimates(lessons: 100, latency: quick ? .milliseconds(20) : .milliseconds(200)),
        ]
    }

    /// A course of `count` lessons queued, each lesson's size estimated by two requests (its
    /// master and media playlists) that each take `latency` to answer, as a slow network
    /// would: the queue makes ``DownloadQueue/estimateConcurrency`` estimates at once. Beside
    /// it, the same estimates one at a time, as the queue made them before (issue #58).
    /// Target: at least 3× faster.
    static func estimates(lessons count: Int, latency: Duration) -> Benchmark {
        let all = lessons(count).map { lesson in
            var unestimated = lesson
            unestimated.estimate = nil
            return unestimated
        }
        let estimator: DownloadQueue.Estimator = { _ in
            try await Task.sleep(for: latency)  // the master playlist
            try await Task.sleep(for: latency)  // the media playlist
            return DownloadEstimate(bytes: 150_000_000, basis: .bandwidth)
        }
        let milliseconds = Int(latency / .milliseconds(1))
        return Benchmark(
            group: "Downloads",
            name: "a course of \(count) lessons queued, its sizes estimated over \(milliseconds) ms per request",
            items: count,
            maximumSamples: 1,
            setup: {
                return {
                    _ = DownloadBenchmarks.runBlocking {
                        let place = folder.appendingPathComponent("estimates-\(UUID().uuidString)")
                        let queue = DownloadQueue(
                            library: library(in: place), file: place.appendingPathComponent("queue.json"),
                            network: FixedNetworkPathMonitor(.offline), estimator: estimator,
                            freeSpace: { _ in 1 << 40 })
                        try await queue.start()
                        try await queue.enqueue(all)
                        return await queue.lessons.filter { $0.estimate != nil }.count
                    }
                }
            },
            baselines: [
                .init(name: "the same estimates one at a time", target: .atLeast(3)) {
                    return {
                        _ = DownloadBenchmarks.runBlocking {
                            var known = 0
                            for lesson in all where (try? await estimator(lesson.remoteURL)) != nil { known += 1 }
                            return known
                        }
                    }
                }
            ]
        )
    }

    /// Removes every file the cases wrote.
    static func removeFiles() {
        try? FileManager.default.removeItem(at: folder)
    }

    static let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
        "mediacore-queue-bench-\(ProcessInfo.processInfo.processIdentifier)")

    /// A library whose downloads never start (the queue is offline in these cases).
    static func library(in folder: URL) -> OfflineLibrary {
        OfflineLibrary(directory: folder, downloader: MediaDownloader(engine: DownloadEngine()), preferredLanguages: [])
    }

    static func lessons(_ count: Int) -> [QueuedLesson] {
        (0..<count).map { index in
            QueuedLesson(
                id: "lesson-\(index)",
                remoteURL: URL(string: "https://lessons.example/course/\(index)/index.m3u8") ?? folder,
                group: "section-\(index / 20)", estimate: DownloadEstimate(bytes: 150_000_000, basis: .bandwidth))
        }
    }

    /// The learner pausing each lesson of a long queue in turn: every change is saved (the whole
    /// queue, atomically) and decided again before it is announced. Beside it, the save alone:
    /// the same lessons encoded and written atomically as many times. Target: a change costs at
    /// most 3× its save, so that deciding stays cheap beside the disk.
    static func transitions(lessons count: Int) -> Benchmark {
        let all = lessons(count)
        return Benchmark(
            group: "Downloads",
            name: "a queue of \(count.formatted) lessons, each paused in turn, saved at every change",
            items: count,
            maximumSamples: 3,
            setup: {
                let place = folder.appendingPathComponent("transitions-\(UUID().uuidString)")
                let queue = DownloadQueue(
                    library: library(in: place), file: place.appendingPathComponent("queue.json"),
                    network: FixedNetworkPathMonitor(.offline), freeSpace: { _ in 1 << 40 })
                _ = DownloadBenchmarks.runBlocking {
                    try await queue.start()
                    try await queue.enqueue(all)
                }
                return {
                    _ = DownloadBenchmarks.runBlocking {
                        for lesson in all { try await queue.pause(lesson.id) }
                        for lesson in all { try await queue.resume(lesson.id) }
                    }
                }
            },
            baselines: [
                .init(name: "the same saves alone (JSON, atomic write)", target: .within(3)) {
                    let file = folder.appendingPathComponent("saves-\(UUID().uuidString).json")
                    try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                    return {
                        var lessons = all
                        for index in 0..<(2 * count) {
                            lessons[index % count].isPausedByLearner.toggle()
                            let data = try? JSONEncoder().encode(lessons)
                            try? data?.write(to: file, options: .atomic)
                        }
                    }
                }
            ]
        )
    }

    /// A library of downloaded lessons opened at launch: its state file read, every file
    /// checked (a purged one becomes not downloaded), leftovers of interrupted downloads
    /// removed. Beside it, asking the file system whether each file is there. Target: 20,000
    /// lessons a second (1,000 in 50 ms).
    static func reconcile(lessons count: Int) -> Benchmark {
        let place = folder.appendingPathComponent("reconcile")
        return Benchmark(
            group: "Downloads",
            name: "the library's launch check of \(count.formatted) downloaded lessons",
            items: count,
            maximumSamples: 5,
            setup: {
                prepareLibrary(at: place, count: count)
                return {
                    _ = DownloadBenchmarks.runBlocking {
                        let library = library(in: place)
                        _ = try await library.load()
                        return await library.states.count
                    }
                }
            },
            baselines: [
                .init(name: "a fileExists per file", target: .itemsPerSecond(20_000)) {
                    prepareLibrary(at: place, count: count)
                    return {
                        var found = 0
                        for index in 0..<count
                        where FileManager.default.fileExists(
                            atPath: place.appendingPathComponent("lesson-\(index).mp4").path)
                        {
                            found += 1
                        }
                        blackHole(found)
                    }
                }
            ]
        )
    }

    /// A folder of `count` downloaded lessons as the library saves them: the state file and
    /// each lesson's (small) file.
    static func prepareLibrary(at place: URL, count: Int) {
        guard !FileManager.default.fileExists(atPath: place.appendingPathComponent("offline-library.json").path)
        else { return }
        try? FileManager.default.createDirectory(at: place, withIntermediateDirectories: true)
        var items: [String] = []
        for index in 0..<count {
            let name = "lesson-\(index).mp4"
            try? Data(count: 64).write(to: place.appendingPathComponent(name))
            items.append(
                "\"lesson-\(index)\":{\"remoteURL\":\"https://lessons.example/\(index).m3u8\","
                    + "\"state\":{\"downloaded\":{\"fileName\":\"\(name)\",\"byteCount\":64}}}")
        }
        let json = "{\"version\":1,\"items\":{" + items.joined(separator: ",") + "}}"
        try? Data(json.utf8).write(to: place.appendingPathComponent("offline-library.json"))
    }

    /// A smart-download pass over a long course whose every lesson has watched progress in a
    /// `ProgressStore`, once the course is as the policy wants it (the steady state: the pass
    /// decides and changes nothing). Beside it, reading the same progress from the store. Target:
    /// the pass at most 2× the reads, so that the decisions never cost more than the progress.
    static func smartPass(lessons count: Int) -> Benchmark {
        let place = folder.appendingPathComponent("smart-\(count)")
        let course = lessons(count)
        let store = ProgressStore(directory: place.appendingPathComponent("progress"))
        let watched = ProgressWatchedLessons(store: store)
        let marker = place.appendingPathComponent("progress-ready")
        /// Writes each lesson's progress once (the first half watched to the end, the rest
        /// partly), when a side is first measured rather than when the cases are listed.
        let prepare: @Sendable () -> Void = {
            guard !FileManager.default.fileExists(atPath: marker.path) else { return }
            _ = DownloadBenchmarks.runBlocking {
                for (index, lesson) in course.enumerated() {
                    var progress = WatchProgress(duration: 600)
                    progress.recordWatched(0..<(index < count / 2 ? 600 : Double(index % 300 + 1)))
                    try await store.save(progress, for: lesson.id)
                }
            }
            try? Data().write(to: marker)
        }
        return Benchmark(
            group: "Downloads",
            name: "a smart-download pass over a course of \(count.formatted) lessons with their progress",
            items: count,
            maximumSamples: 5,
            setup: {
                prepare()
                let queue = DownloadQueue(
                    library: library(in: place.appendingPathComponent("library-\(UUID().uuidString)")),
                    file: place.appendingPathComponent("queue-\(UUID().uuidString).json"),
                    network: FixedNetworkPathMonitor(.offline), freeSpace: { _ in 1 << 40 })
                _ = DownloadBenchmarks.runBlocking {
                    try await queue.start()
                    try await queue.keepReady(course, watched: watched)
                }
                return {
                    blackHole(DownloadBenchmarks.runBlocking { try await queue.keepReady(course, watched: watched) })
                }
            },
            baselines: [
                .init(name: "the progress read alone", target: .within(2)) {
                    prepare()
                    return {
                        blackHole(DownloadBenchmarks.runBlocking { await watched.watched(course.map(\.id)).count })
                    }
                }
            ]
        )
    }
}
