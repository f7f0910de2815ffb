import Foundation
import HTTPSupport
import SliderFlow
import TestSupport
import Testing

/// End-to-end sessions: the model, the HTTP service, and the reference server behind it.
@MainActor
@Suite("SliderSessionModel")
struct SliderSessionModelTests {
    let clock = ManualClock()

    func model(
        server: SliderReferenceServer, locale: Locale = Locale(identifier: "en_US")
    ) -> SliderSessionModel {
        let service = HTTPSliderService(
            baseURL: URL(literal: "https://slider.example"), timeout: .seconds(30), startRetry: .none, clock: clock,
            transport: server)
        return SliderSessionModel(service: service, locale: locale)
    }

    @Test(
        "a full session end to end, with either body encoding",
        arguments: [SliderReferenceServer.BodyEncoding.object, .doubleEncoded]
    )
    func fullSession(encoding: SliderReferenceServer.BodyEncoding) async {
        let server = SliderReferenceServer(stepsPerSession: 3, encoding: encoding, clock: clock)
        let model = model(server: server)
        model.start()
        #expect(model.isBusy)
        await model.waitUntilSettled()
        #expect(model.stepNumber == 1)
        #expect(model.ticks == SliderReferenceServer.sampleTicks)
        #expect(model.sliderUpperBound == 14)
        for index in [3, 0, 14] {
            model.selectedIndex = index
            model.submit()
            await model.waitUntilSettled()
        }
        #expect(model.isFinished)
        #expect(model.summaryRows.map(\.index) == [3, 0, 14])
        #expect(model.summaryRows.map(\.displayedValue) == ["-89.04", "-96.33", "-40.31"])
        #expect(model.summaryRows.map(\.stepCount) == [1, 2, 3])
        #expect(await server.choices(ofSession: 3448) == [3, 0, 14])
        model.startOver()
        #expect(model.state == .idle(error: nil))
        #expect(model.summaryRows.isEmpty)
    }

    @Test("shows the value above the slider rounded, in the user's locale, and for accessibility")
    func display() async {
        let server = SliderReferenceServer(clock: clock)
        let model = model(server: server, locale: Locale(identifier: "de_DE"))
        model.start()
        await model.waitUntilSettled()
        model.sliderPosition = 2.6
        #expect(model.selectedIndex == 3)
        #expect(model.displayedValue == "-89,04")
        #expect(model.accessibilityValue == "-89,04, 4 of 15")
        #expect(model.accessibilityLabel == "Value for step 1")
        model.sliderPosition = .nan
        #expect(model.selectedIndex == 3)
        // Far outside the slider: clamped, not trapped in `Int.init`.
        model.sliderPosition = 1e300
        #expect(model.selectedIndex == 14)
        model.sliderPosition = -1e300
        #expect(model.selectedIndex == 0)
    }

    @Test("a server error while submitting keeps the selection; the retry succeeds")
    func retryAfterError() async {
        let server = SliderReferenceServer(clock: clock)
        let model = model(server: server)
        model.start()
        await model.waitUntilSettled()
        model.selectedIndex = 5
        await server.inject(.httpStatus(503), on: .next)
        model.submit()
        await model.waitUntilSettled()
        #expect(model.selectedIndex == 5)
        #expect(model.stepNumber == 1)
        #expect(model.errorMessage?.contains("503") == true)
        model.submit()
        await model.waitUntilSettled()
        #expect(model.errorMessage == nil)
        #expect(model.stepNumber == 2)
        #expect(model.summaryRows.map(\.index) == [5])
    }

    @Test("cancelling a slow submission drops its late answer")
    func cancelSlowSubmission() async {
        let server = SliderReferenceServer(clock: clock)
        let model = model(server: server)
        model.start()
        await model.waitUntilSettled()
        await server.inject(.delay(.seconds(5)), on: .next)
        model.submit()
        #expect(model.isBusy)
        await clock.waitForSleeper(until: clock.now.advanced(by: .seconds(5)))
        model.cancel()
        #expect(!model.isBusy)
        #expect(model.stepNumber == 1)
        clock.advance(by: .seconds(5))
        await model.waitUntilSettled()
        #expect(model.stepNumber == 1)
        #expect(model.summaryRows.isEmpty)
    }

    @Test("starting over while a start is in flight returns to idle for good")
    func startOverWhileStarting() async {
        let server = SliderReferenceServer(clock: clock)
        let model = model(server: server)
        await server.inject(.delay(.seconds(2)), on: .start)
        model.start()
        await clock.waitForSleeper(until: clock.now.advanced(by: .seconds(2)))
        model.startOver()
        clock.advance(by: .seconds(2))
        await model.waitUntilSettled()
        #expect(model.state == .idle(error: nil))
        #expect(model.ticks.isEmpty)
    }

    @Test(
        "every failure gets a message a learner can act on",
        arguments: [
            SliderReferenceServer.Fault.httpStatus(500), .httpStatus(400), .errorBody("expired"),
            .transport(.notConnectedToInternet), .rawBody(Data("<html>".utf8)), .wrongSessionID,
        ]
    )
    func failureMessages(fault: SliderReferenceServer.Fault) async {
        let server = SliderReferenceServer(clock: clock)
        let model = model(server: server)
        model.start()
        await model.waitUntilSettled()
        await server.inject(fault, on: .next)
        model.submit()
        await model.waitUntilSettled()
        let message = model.errorMessage ?? ""
        #expect(!message.isEmpty, "\(fault)")
        #expect(model.stepNumber == 1, "\(fault)")
        #expect(model.canSubmit, "\(fault)")
    }

    @Test("a failed start shows the error and lets the user start again")
    func failedStart() async {
        let server = SliderReferenceServer(clock: clock)
        let model = model(server: server)
        await server.inject(.transport(.timedOut), on: .start)
        model.start()
        await model.waitUntilSettled()
        #expect(model.errorMessage != nil)
        #expect(!model.canSubmit)
        model.start()
        await model.waitUntilSettled()
        #expect(model.stepNumber == 1)
    }

    @Test("a tap that does not apply is recorded as a rejection, not acted on")
    func rejectedTap() {
        let model = model(server: SliderReferenceServer(clock: clock))
        model.submit()
        #expect(model.lastRejection != nil)
        #expect(model.state == .idle(error: nil))
    }
}
