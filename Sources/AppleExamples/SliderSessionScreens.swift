// SliderFlow's SwiftUI screens, as the article *Running a slider session* and
// SliderSessionModel's doc comment show them. Compiled where SwiftUI exists (the Apple check
// type-checks them for iOS 17 and macOS 14); empty elsewhere. ArchitectureTests holds the
// documentation to the lines between the `example` markers.

#if canImport(SwiftUI)
    import Foundation

    /// The API the article's screens talk to.
    private let apiURL = URL(string: "https://slider.example/api/") ?? URL(fileURLWithPath: "/")

    // example: begin slider-screen
    import SliderFlow
    import SwiftUI

    @MainActor
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
    @MainActor
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
#endif
