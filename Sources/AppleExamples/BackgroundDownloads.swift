// The article *Downloading in the background*: the app delegate that gives the library the
// session's wake-ups, and the SwiftUI app that hands its downloads over when it leaves the
// foreground. Compiled where UIKit and SwiftUI exist (the Apple check type-checks it for
// iOS 17); empty elsewhere. ArchitectureTests holds the documentation to the lines between the
// `example` markers.

#if canImport(UIKit) && canImport(SwiftUI)
    import Downloads
    import OfflineLessons
    import Foundation
    import SwiftUI
    import UIKit

    // example: begin background-app-delegate
    /// The app's one library, whose downloads go on in the session `Lessons.sessionIdentifier`.
    enum Lessons {
        static let sessionIdentifier = "com.example.lessons.downloads"
        static let library = OfflineLibrary(
            directory: URL.applicationSupportDirectory.appendingPathComponent("Lessons"),
            downloader: MediaDownloader(engine: DownloadEngine()),
            background: BackgroundTransferOptions(
                identifier: sessionIdentifier, allowsExpensiveNetworkAccess: false))
    }

    final class AppDelegate: NSObject, UIApplicationDelegate {
        func application(
            _ application: UIApplication, handleEventsForBackgroundURLSession identifier: String,
            completionHandler: @escaping () -> Void
        ) {
            guard identifier == Lessons.sessionIdentifier else { return completionHandler() }
            let finished = { @MainActor @Sendable in completionHandler() }
            Task { await Lessons.library.handleBackgroundEvents(completion: finished) }
        }
    }
    // example: end background-app-delegate

    // example: begin background-swiftui-app
    struct LessonsApp: App {
        @UIApplicationDelegateAdaptor(AppDelegate.self) var appDelegate
        @Environment(\.scenePhase) var scenePhase

        var body: some Scene {
            WindowGroup { Text("Lessons") }
                .onChange(of: scenePhase) { _, phase in
                    if phase == .active {
                        // Back in the foreground, faster than the system's schedule.
                        Task { _ = await Lessons.library.continueInForeground() }
                    }
                    guard phase == .background else { return }
                    // The pause waits for each download's transfers to stop; the hand-over saves
                    // a journal and submits one batch. The extra time ends when it is done, or
                    // when the system says it is up.
                    let time = BackgroundTime()
                    time.begin()
                    Task {
                        _ = await Lessons.library.continueInBackground()
                        time.end()
                    }
                }
        }
    }

    /// Extra time in the background, ended once (by the work, or by the system's expiration).
    @MainActor final class BackgroundTime {
        private var task = UIBackgroundTaskIdentifier.invalid

        func begin() {
            task = UIApplication.shared.beginBackgroundTask(withName: "Hand over downloads") { self.end() }
        }

        func end() {
            guard task != .invalid else { return }
            UIApplication.shared.endBackgroundTask(task)
            task = .invalid
        }
    }
// example: end background-swiftui-app
#endif
