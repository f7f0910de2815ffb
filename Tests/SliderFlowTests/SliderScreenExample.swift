#if canImport(SwiftUI)
    import Foundation
    import SliderFlow
    import SwiftUI

    /// The server's base URL, as the doc comment's `apiURL` stands for it.
    private let apiURL = URL(string: "https://slider.example/api") ?? URL(fileURLWithPath: "/")

    /// The view in `SliderSessionModel`'s doc comment, line for line, type-checked wherever
    /// SwiftUI exists.
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
#endif
