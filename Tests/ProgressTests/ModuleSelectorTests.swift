import Foundation
import Progress
import Testing

/// A type of the test's own with the module's name, as apps declare their own `Progress`.
private struct Progress {
    var note = "the app's own"
}

@Suite("Names that clash with the module's")
struct ModuleSelectorTests {
    @Test(
        "the README's module selectors compile: Progress::WatchTracker beside Foundation::Progress and a local Progress"
    )
    func moduleSelectors() {
        // example: begin module-selectors
        let tracker = Progress::WatchTracker(deviceID: "ipad", duration: 600)
        let upload = Foundation::Progress(totalUnitCount: 10)
        // example: end module-selectors
        let mine = Progress()
        #expect(tracker.progress.duration == 600)
        #expect(upload.totalUnitCount == 10)
        #expect(mine.note == "the app's own")
    }
}
