// SliderFlow's SwiftUI examples (the article *Running a slider session* and SliderSessionModel's
// doc comment), compiled where SwiftUI exists. The architecture tests check that the
// documentation shows exactly the lines between the `example` markers.

#if canImport(SwiftUI)
    import Foundation

    /// The API the article's screens talk to.
    private let apiURL = URL(string: "https://slider.example/api/") ?? URL(fileURLWithPath: "/")

    // example: begin slider-screen
    import SliderFlow
    import SwiftUI

    struct SliderSessionScreen: View {
        @State var model = SliderSessionModel(service: HTTPSliderService(baseURL: apiURL))

        var body: some View {
            VStack(spacing: 24) {
                if model.isFinished {
                    List(model.summaryRows) { row in
                        LabeledContent("Step \(row.stepCount)", value: row.displayedValue)
                    }
                    Button("Start over") { model.startOver() }
                } else if model.ticks.isEmpty {
                    Button("Start") { model.start() }.disabled(model.isBusy)
                } else {
                    Text(model.displayedValue).font(.largeTitle)  // scales with Dynamic Type
                    Slider(value: $model.sliderPosition, in: 0...model.sliderUpperBound, step: 1)
                        .accessibilityLabel(model.accessibilityLabel)
                        .accessibilityValue(model.accessibilityValue)
                        .disabled(model.isBusy)
                    Button("Next") { model.submit() }.disabled(!model.canSubmit)
                }
                if let message = model.errorMessage {
                    Text(message).foregroundStyle(.red)  // wraps; never truncated
                }
                if model.isBusy { ProgressView() }
            }
            .padding()
        }
    }
    // example: end slider-screen

    // example: begin slider-preview
    extension SliderSessionScreen {
        /// The screen on the in-process reference server, for previews and UI tests.
        static func onReferenceServer(steps: Int = 3) -> SliderSessionScreen {
            let server = SliderReferenceServer(stepsPerSession: steps)
            let service = HTTPSliderService(
                baseURL: SliderReferenceServer.baseURL, clock: ContinuousClock(), transport: server)
            return SliderSessionScreen(model: SliderSessionModel(service: service))
        }
    }
    // example: end slider-preview

    // example: begin slider-model-view
    struct SliderScreen: View {
        @State private var model = SliderSessionModel(service: HTTPSliderService(baseURL: apiURL))

        var body: some View {
            VStack {
                Text(model.displayedValue).font(.largeTitle)
                Slider(value: $model.sliderPosition, in: 0...model.sliderUpperBound, step: 1)
                    .accessibilityValue(model.accessibilityValue)
                Button("Next", action: model.submit).disabled(!model.canSubmit)
            }
            .task { model.start() }
        }
    }
    // example: end slider-model-view

    import Testing

    @Suite("Documentation examples on Apple platforms")
    @MainActor
    struct SliderScreenExampleTests {
        @Test("the article's screen is built on the in-process server, at rest before its first step")
        func screens() {
            let screen = SliderSessionScreen.onReferenceServer(steps: 2)
            #expect(screen.model.ticks.isEmpty)
            #expect(!screen.model.isBusy)
        }
    }
#endif
