// The article *Keeping a course offline*: a course's offline screen over CourseDownloadsModel, and
// the queue that follows the device's network. Compiled where SwiftUI and Network exist (the
// Apple check type-checks it for iOS 17 and macOS 14); empty elsewhere. ArchitectureTests holds
// the documentation to the lines between the `example` markers.

#if canImport(SwiftUI) && canImport(Network)
    import Downloads
    import OfflineLessons
    import Foundation
    import Player
    import Progress
    import SwiftUI

    // example: begin course-offline-screen
    struct CourseOfflineScreen: View {
        @State var model: CourseDownloadsModel

        var body: some View {
            List {
                Section {
                    LabeledContent("Course", value: bytes(model.totalBytes, estimate: model.isEstimate))
                    ProgressView(value: model.fraction)
                    if let left = model.remainingTime {
                        LabeledContent("Time left", value: left.formatted(.units(allowed: [.hours, .minutes])))
                    }
                    LabeledContent("On this device", value: bytes(model.usedBytes, estimate: false))
                    Button("Download the course") { Task { try? await model.downloadCourse() } }
                }
                ForEach(model.sections) { section in
                    Section(section.title) {
                        ForEach(section.rows) { row in
                            HStack {
                                Text(row.title)
                                Spacer()
                                Text(words(for: row.state)).foregroundStyle(.secondary)
                            }
                            .swipeActions {
                                Button("Remove", role: .destructive) { Task { try? await model.remove(row.id) } }
                                Button(row.isPinned ? "Unpin" : "Pin") {
                                    Task { try? await row.isPinned ? model.unpin(row.id) : model.pin(row.id) }
                                }
                            }
                        }
                    }
                }
            }
            .task { await model.observe() }
        }

        func bytes(_ count: UInt64, estimate: Bool) -> String {
            (estimate ? "about " : "") + ByteCountFormatter.string(fromByteCount: Int64(count), countStyle: .file)
        }

        func words(for state: QueuedLessonState?) -> String {
            switch state {
            case nil: "Not downloaded"
            case .downloading(let fraction)?: fraction.formatted(.percent.precision(.fractionLength(0)))
            case .downloaded?: "Downloaded"
            case .failed(let failure)?: failure.category.summary
            case .waiting(.network)?: "Waiting for Wi-Fi"
            case .waiting(.storage)?, .waiting(.quota)?: "Waiting for space"
            case .waiting(.turn(let position))?: "Queued (\(position))"
            case .waiting(.pausedByLearner)?: "Paused"
            }
        }
    }
    // example: end course-offline-screen

    /// The screen of `course`, its lessons downloaded into `folder` on Wi-Fi only, keeping the
    /// next three unwatched lessons ready as the learner goes.
    @MainActor
    func courseOfflineScreen(course: OfflineCourse, folder: URL, progress: ProgressStore) async throws
        -> CourseOfflineScreen
    {
        // example: begin course-offline-queue
        let downloader = MediaDownloader(engine: DownloadEngine())
        let library = OfflineLibrary(directory: folder, downloader: downloader)
        let queue = DownloadQueue(
            library: library, file: folder.appendingPathComponent("queue.json"),
            requirements: DownloadRequirements(network: .notExpensive, quotaBytes: 5_000_000_000),
            network: SystemNetworkPathMonitor(),
            estimator: { url in try await downloader.estimateLesson(from: url) })
        try await queue.start()
        let lessons = course.sections.flatMap { section in
            section.lessons.map { QueuedLesson(id: $0.id, remoteURL: $0.remoteURL, group: section.id) }
        }
        try await queue.keepReady(
            lessons, policy: SmartDownloadPolicy(lessonsAhead: 3), watched: ProgressWatchedLessons(store: progress))
        let screen = CourseOfflineScreen(model: CourseDownloadsModel(queue: queue, course: course))
        // example: end course-offline-queue
        return screen
    }
#endif
