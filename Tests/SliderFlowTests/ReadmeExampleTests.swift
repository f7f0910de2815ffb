import Foundation
import SliderFlow
import Testing

/// The README's SliderFlow example, compiled and run. `.ci/run` checks that the README shows
/// exactly the lines between the `README` markers.
@MainActor
@Suite("README examples")
struct ReadmeExampleTests {
    @Test("the SliderFlow example runs a session against the in-process server")
    func sliderFlowExample() async {
        // README: begin SliderFlow
        // The in-process server; use HTTPSliderService() alone for the real API.
        let server = SliderReferenceServer(stepsPerSession: 2)
        let service = HTTPSliderService(clock: ContinuousClock()) { try await server.respond(to: $0) }
        let model = SliderSessionModel(service: service, locale: Locale(identifier: "en_US"))

        model.start()
        await model.waitUntilSettled()
        model.selectedIndex = 3
        let shown = model.displayedValue  // "-89.04" (the server sent -89.03999999999999)
        model.submit()
        await model.waitUntilSettled()
        model.submit()
        await model.waitUntilSettled()
        let summary = model.summaryRows.map(\.displayedValue)  // ["-89.04", "-71.32"]: step 2 kept the middle tick
        // README: end SliderFlow
        #expect(shown == "-89.04")
        #expect(summary == ["-89.04", "-71.32"])
        #expect(model.isFinished)
    }
}
