import Foundation
import SliderFlow
import Testing

/// The README's SliderFlow example, compiled and run. `DocumentationExampleTests` checks that
/// the README shows exactly the lines between the `example` markers.
@MainActor
@Suite("README examples")
struct ReadmeExampleTests {
    @Test("the SliderFlow example runs a session against the in-process server")
    func sliderFlowExample() async throws {
        // example: begin SliderFlow
        // The in-process server stands in for the real API: an app passes its own base URL and
        // leaves the transport to URLSession.
        let server = SliderReferenceServer(stepsPerSession: 2)
        let service = HTTPSliderService(
            baseURL: SliderReferenceServer.baseURL, clock: ContinuousClock(), transport: server)

        let first = try await service.start()  // .step: session 3448, step 1, fifteen ticks
        let second = try await service.next(sessionID: first.sessionID, choice: 3)  // .step: step 2
        let end = try await service.next(sessionID: second.sessionID, choice: 7)  // .complete(sessionID: 3448)

        // A screen binds SliderSessionModel instead, which runs the same calls through a state machine.
        let model = SliderSessionModel(service: service, locale: Locale(identifier: "en_US"))
        model.start()  // the model shows a spinner until the first step arrives
        // example: end SliderFlow
        guard case .step(let step) = first else {
            Issue.record("expected a step, got \(first)")
            return
        }
        #expect(step.ticks == SliderReferenceServer.sampleTicks)
        #expect(second == .step(SliderStep(sessionID: 3448, stepCount: 2, ticks: SliderReferenceServer.sampleTicks)))
        #expect(end == .complete(sessionID: 3448))
        #expect(model.isBusy)
        await model.waitUntilSettled()
        #expect(model.displayedValue == "-71.32")  // the middle tick is selected first
    }
}
